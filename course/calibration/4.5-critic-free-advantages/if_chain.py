import numpy as np
import toy


def critic_free_advantages(method, rewards, greedy_reward):
    rewards = np.asarray(rewards, dtype=float)
    n = rewards.size
    if method == "rloo":
        baseline = (rewards.sum() - rewards) / (n - 1)  # leave one out
        return rewards - baseline
    elif method == "grpo":
        return (rewards - rewards.mean()) / (np.std(rewards, ddof=1) + toy.estimators.GRPO_EPS)
    elif method == "remax":
        return rewards - greedy_reward
    else:
        raise ValueError(method)
