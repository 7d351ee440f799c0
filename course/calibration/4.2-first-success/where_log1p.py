import numpy as np
import toy


def first_success_within(policy, reward, prompt, n):
    r = toy.reward_table(reward, prompt, policy.length, policy.n_actions)
    p = float(np.where(r > 0, policy.response_probs(prompt), 0.0).sum())
    if n == 0:
        return 0.0
    if p >= 1.0:
        return 1.0
    return float(-np.expm1(n * np.log1p(-p)))
