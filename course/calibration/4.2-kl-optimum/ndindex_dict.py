import numpy as np
import toy


def kl_optimum(policy, reward, prompt, beta):
    p_ref = policy.response_probs(prompt)
    rewards = toy.reward_table(reward, prompt, policy.length, policy.n_actions)
    best = rewards.max()
    out = np.zeros_like(p_ref)
    for y in np.ndindex(p_ref.shape):
        out[y] = p_ref[y] * np.exp((rewards[y] - best) / beta)
    out /= out.sum()
    return out
