import numpy as np


def reset_mse(policy, reward, prompt, prefix, k):
    def moments(s):
        # E[r | s] and E[r^2 | s] together, by backward induction
        if len(s) == policy.length:
            r = reward(prompt, s)
            return np.array([r, r ** 2])
        probs = policy.next_token_probs(prompt, s)
        return sum(probs[a] * moments(s + (a,)) for a in range(policy.n_actions))

    m1, m2 = moments(tuple(prefix))
    return (m2 - m1 ** 2) / k
