import numpy as np
import toy


def critic_free_advantages(method, rewards, greedy_reward):
    r = np.asarray(rewards, dtype=float)
    if method == "remax":
        return r - greedy_reward
    if method == "rloo":
        n = len(r)
        return r - (np.sum(r) - r) / (n - 1)
    if method == "grpo":
        return (r - np.mean(r)) / (np.std(r, ddof=1) + toy.estimators.GRPO_EPS)
    raise ValueError("unknown method " + method)
