import numpy as np


def value_of_prefix(policy, reward, prompt, prefix):
    prefix = list(prefix)
    if len(prefix) == policy.length:
        return float(reward(prompt, tuple(prefix)))
    child_values = np.array([value_of_prefix(policy, reward, prompt, prefix + [a])
                             for a in range(policy.n_actions)])
    return float(np.dot(policy.next_token_probs(prompt, tuple(prefix)), child_values))
