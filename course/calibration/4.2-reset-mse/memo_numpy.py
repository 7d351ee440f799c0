from functools import cache

import numpy as np


def reset_mse(policy, reward, prompt, prefix, k):
    @cache
    def moments(state):
        if len(state) == policy.length:
            r = float(reward(prompt, state))
            return np.array([r, r ** 2])
        children = np.array([moments(state + (a,)) for a in range(policy.n_actions)])
        return policy.next_token_probs(prompt, state) @ children

    e1, e2 = moments(tuple(prefix))
    return (e2 - e1 ** 2) / k
