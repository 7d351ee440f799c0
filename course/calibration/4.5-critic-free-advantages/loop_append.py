import statistics

import numpy as np
import toy


def critic_free_advantages(method, rewards, greedy_reward):
    values = list(map(float, rewards))
    result = []
    if method == "grpo":
        mu, sd = statistics.mean(values), statistics.stdev(values)
    for i, x in enumerate(values):
        if method == "rloo":
            rest = values[:i] + values[i + 1:]
            result.append(x - sum(rest) / len(rest))
        elif method == "grpo":
            result.append((x - mu) / (sd + toy.estimators.GRPO_EPS))
        else:
            result.append(x - greedy_reward)
    return np.array(result)
