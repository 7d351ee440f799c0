import numpy as np


def gae_advantages(rewards, values, lam):
    rewards = np.asarray(rewards, dtype=float)
    v = np.append(np.asarray(values, dtype=float), 0.0)  # V(s_L) = 0
    deltas = rewards + v[1:] - v[:-1]
    adv = np.zeros_like(deltas)
    acc = 0.0
    for t in range(len(deltas) - 1, -1, -1):
        acc = deltas[t] + lam * acc
        adv[t] = acc
    return adv
