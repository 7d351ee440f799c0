import numpy as np


def gae_advantages(rewards, values, lam):
    r = np.asarray(rewards, dtype=float)
    V = np.asarray(values, dtype=float)
    delta = r + np.concatenate([V[1:], [0.0]]) - V
    i, j = np.indices((len(r), len(r)))
    weights = np.where(j >= i, float(lam) ** np.maximum(j - i, 0), 0.0)
    return weights @ delta
