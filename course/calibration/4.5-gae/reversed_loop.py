import numpy as np


def gae_advantages(rewards, values, lam):
    n = len(rewards)
    adv = np.zeros(n)
    last = 0.0
    for t in reversed(range(n)):
        v_next = values[t + 1] if t < n - 1 else 0.0
        delta = rewards[t] + v_next - values[t]
        last = delta + lam * last
        adv[t] = last
    return adv
