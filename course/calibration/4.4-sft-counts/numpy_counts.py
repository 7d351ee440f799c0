import numpy as np


def sft_next_token_probs(demos, base, prompt, prefix, alpha):
    demos = np.asarray(demos)
    k = len(prefix)
    pi0 = base.next_token_probs(prompt, tuple(prefix))
    rows = demos[np.all(demos[:, :k] == np.asarray(prefix, dtype=int), axis=1)]
    if len(rows) == 0:
        return pi0
    n_sa = np.bincount(rows[:, k], minlength=base.n_actions)
    return (n_sa + alpha * pi0) / (len(rows) + alpha)
