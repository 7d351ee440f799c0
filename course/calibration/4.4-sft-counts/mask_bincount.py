import numpy as np


def sft_next_token_probs(demos, base, prompt, prefix, alpha):
    demos = np.asarray(demos)
    t = len(prefix)
    prior = base.next_token_probs(prompt, tuple(prefix))
    matching = demos[(demos[:, :t] == np.array(prefix, dtype=int)).all(axis=1)]
    n_s = matching.shape[0]
    if n_s == 0:
        return prior  # nothing to learn from here
    counts = np.bincount(matching[:, t], minlength=base.n_actions)
    return (counts + alpha * prior) / (n_s + alpha)
