import math

import numpy as np
import toy


def kl_optimum(policy, reward, prompt, beta):
    ref = policy.response_probs(prompt)
    r = toy.reward_table(reward, prompt, policy.length, policy.n_actions)
    flat_ref, flat_r = ref.flatten(), r.flatten()
    top = max(flat_r)
    weights = []
    for p, rew in zip(flat_ref, flat_r):
        weights.append(p * math.exp((rew - top) / beta))
    z = sum(weights)
    return np.array([w / z for w in weights]).reshape(ref.shape)
