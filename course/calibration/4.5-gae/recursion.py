import numpy as np


def gae_advantages(rewards, values, lam):
    L = len(rewards)

    def A(t):
        if t == L:
            return 0.0
        v_next = values[t + 1] if t < L - 1 else 0.0
        delta = rewards[t] + v_next - values[t]
        return delta + lam * A(t + 1)

    return np.array([A(t) for t in range(L)])
