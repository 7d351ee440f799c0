import itertools

import numpy as np


def reset_mse(policy, reward, prompt, prefix, k):
    prefix = tuple(prefix)
    probs, rewards = [], []
    for tail in itertools.product(range(policy.n_actions), repeat=policy.length - len(prefix)):
        p, state = 1.0, prefix
        for a in tail:
            p *= policy.next_token_probs(prompt, state)[a]
            state += (a,)
        probs.append(p)
        rewards.append(reward(prompt, state))
    probs, rewards = np.array(probs), np.array(rewards, dtype=float)
    mean = np.sum(probs * rewards)
    return np.sum(probs * (rewards - mean) ** 2) / k
