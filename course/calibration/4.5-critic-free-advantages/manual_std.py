import math

import numpy as np
import toy


def critic_free_advantages(method, rewards, greedy_reward):
    r = [float(x) for x in rewards]
    n = len(r)
    mean = sum(r) / n
    if method == "grpo":
        sample_var = sum((x - mean) ** 2 for x in r) / (n - 1)
        scale = math.sqrt(sample_var) + toy.estimators.GRPO_EPS
        return np.array([(x - mean) / scale for x in r])
    if method == "rloo":
        # mean of the others = (n * mean - r_i) / (n - 1)
        return np.array([x - (n * mean - x) / (n - 1) for x in r])
    return np.array([x - greedy_reward for x in r])
