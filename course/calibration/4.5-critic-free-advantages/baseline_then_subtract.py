import numpy as np
from toy.estimators import GRPO_EPS


def baseline(method, r, greedy_reward):
    """What each method subtracts from r_i."""
    if method == "rloo":
        others = np.ones((len(r), len(r))) - np.eye(len(r))
        return others @ r / (len(r) - 1)
    if method == "grpo":
        return np.full(len(r), r.mean())
    return np.full(len(r), float(greedy_reward))


def critic_free_advantages(method, rewards, greedy_reward):
    r = np.asarray(rewards, dtype=float)
    adv = r - baseline(method, r, greedy_reward)
    if method == "grpo":
        adv = adv / (np.sqrt(np.sum((r - r.mean()) ** 2) / (len(r) - 1)) + GRPO_EPS)
    return adv
