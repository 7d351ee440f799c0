import numpy as np


def value_of_prefix(policy, reward, prompt, prefix):
    prefix = tuple(prefix)
    if len(prefix) == policy.length:
        return reward(prompt, prefix)
    probs = policy.next_token_probs(prompt, prefix)
    return sum(probs[a] * value_of_prefix(policy, reward, prompt, prefix + (a,)) for a in range(policy.n_actions))


def advantages(policy, reward, prompt, response):
    values = np.array([value_of_prefix(policy, reward, prompt, response[:t]) for t in range(len(response) + 1)])
    return np.diff(values)
