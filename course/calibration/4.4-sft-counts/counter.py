from collections import Counter

import numpy as np


def sft_next_token_probs(demos, base, prompt, prefix, alpha):
    s = tuple(prefix)
    nxt = Counter(int(row[len(s)]) for row in np.asarray(demos).tolist() if tuple(row[:len(s)]) == s)
    total = sum(nxt.values())
    base_probs = base.next_token_probs(prompt, s)
    if total == 0:
        return base_probs
    n_sa = np.array([nxt[a] for a in range(base.n_actions)], dtype=float)
    return (n_sa + alpha * base_probs) / (total + alpha)
