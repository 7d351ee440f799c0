import numpy as np
import toy


def kl_optimum(policy, reward, prompt, beta):
    pi_ref = policy.response_probs(prompt)
    r = toy.reward_table(reward, prompt, policy.length, policy.n_actions)
    weights = pi_ref * np.exp((r - r.max()) / beta)  # subtracting max(r) keeps exp from overflowing
    Z = weights.sum()
    return weights / Z
