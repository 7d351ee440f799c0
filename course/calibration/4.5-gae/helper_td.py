import numpy as np


def td_errors(rewards, values):
    """delta_t = r_t + V(s_{t+1}) - V(s_t), with V(s_L) = 0."""
    nxt = list(values[1:]) + [0.0]
    return [r + vn - v for r, vn, v in zip(rewards, nxt, values)]


def gae_advantages(rewards, values, lam):
    advs = []
    running = 0.0
    for d in reversed(td_errors(rewards, values)):
        running = d + lam * running
        advs.insert(0, running)
    return np.array(advs)
