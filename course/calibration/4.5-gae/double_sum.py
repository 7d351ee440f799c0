import numpy as np


def gae_advantages(rewards, values, lam):
    n = len(rewards)
    td = [rewards[t] + (values[t + 1] if t + 1 < n else 0) - values[t] for t in range(n)]
    # A_t = sum_l lam^l delta_{t+l}
    return np.array([sum(lam ** l * td[t + l] for l in range(n - t)) for t in range(n)])
