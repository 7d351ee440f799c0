import numpy as np


def sft_next_token_probs(demos, base, prompt, prefix, alpha):
    prefix = tuple(int(a) for a in prefix)
    k = len(prefix)
    counts = [0] * base.n_actions
    n = 0
    for demo in demos:
        if tuple(int(a) for a in demo[:k]) == prefix:
            n += 1
            counts[int(demo[k])] += 1
    pi0 = base.next_token_probs(prompt, prefix)
    if n == 0:
        return pi0
    return (np.array(counts) + alpha * pi0) / (n + alpha)
