import numpy as np


def sft_next_token_probs(demos, base, prompt, prefix, alpha):
    # N(s) and N(s.a) for every s of the right length, in one pass
    t = len(prefix)
    visits, follows = {}, {}
    for y in np.asarray(demos):
        s, a = tuple(int(v) for v in y[:t]), int(y[t])
        visits[s] = visits.get(s, 0) + 1
        follows[s + (a,)] = follows.get(s + (a,), 0) + 1
    key = tuple(int(v) for v in prefix)
    pi0 = base.next_token_probs(prompt, key)
    n = visits.get(key, 0)
    if not n:
        return pi0
    return np.array([(follows.get(key + (a,), 0) + alpha * pi0[a]) / (n + alpha) for a in range(base.n_actions)])
