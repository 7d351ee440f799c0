import numpy as np


def sft_next_token_probs(demos, base, prompt, prefix, alpha):
    D = np.asarray(demos, dtype=int)
    depth = len(prefix)
    through = D[np.all(D[:, :depth] == prefix, axis=1)] if depth else D
    N = np.zeros(base.n_actions)
    np.add.at(N, through[:, depth], 1)
    pi_0 = base.next_token_probs(prompt, tuple(prefix))
    if N.sum() + alpha == 0:
        return pi_0
    return (N + alpha * pi_0) / (N.sum() + alpha)
