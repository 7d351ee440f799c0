import numpy as np


def reset_mse(policy, reward, prompt, prefix, k):
    def moments(prefix):
        """[E[r | prefix], E[r^2 | prefix]]"""
        if len(prefix) == policy.length:
            r = reward(prompt, prefix)
            return np.array([r, r * r])
        probs = policy.next_token_probs(prompt, prefix)
        total = np.zeros(2)
        for a in range(policy.n_actions):
            total += probs[a] * moments(prefix + (a,))
        return total

    mean, mean_sq = moments(tuple(prefix))
    return (mean_sq - mean ** 2) / k
