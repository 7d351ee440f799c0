import numpy as np


def gae_advantages(rewards, values, lam):
    out = []
    gae = 0.0
    t = len(rewards) - 1
    next_v = 0.0  # the response is over after the last token
    while t >= 0:
        delta = rewards[t] + next_v - values[t]
        gae = delta + lam * gae
        out.append(gae)
        next_v = values[t]
        t -= 1
    return np.array(out[::-1])
