import numpy as np
import toy


def _rloo(r, greedy):
    return np.array([r[i] - (np.sum(r) - r[i]) / (len(r) - 1) for i in range(len(r))])


def _grpo(r, greedy):
    return (r - np.mean(r)) / (np.std(r, ddof=1) + toy.estimators.GRPO_EPS)


def _remax(r, greedy):
    return r - greedy


METHODS = {"rloo": _rloo, "grpo": _grpo, "remax": _remax}


def critic_free_advantages(method, rewards, greedy_reward):
    return METHODS[method](np.asarray(rewards, dtype=float), greedy_reward)
