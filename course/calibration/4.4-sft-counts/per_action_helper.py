import numpy as np


def demos_through(demos, prefix):
    """The demonstrations that begin with prefix."""
    demos = np.asarray(demos)
    keep = [i for i in range(len(demos)) if list(demos[i][:len(prefix)]) == list(prefix)]
    return demos[keep]


def sft_next_token_probs(demos, base, prompt, prefix, alpha):
    rows = demos_through(demos, prefix)
    prior = np.asarray(base.next_token_probs(prompt, tuple(prefix)))
    if len(rows) == 0:
        return prior
    t = len(prefix)
    counts = np.array([np.sum(rows[:, t] == a) for a in range(base.n_actions)])
    return (counts + alpha * prior) / (len(rows) + alpha)
