import numpy as np
import toy


def kl_optimum(policy, reward, prompt, beta):
    probs = policy.response_probs(prompt)
    rewards = toy.reward_table(reward, prompt, policy.length, policy.n_actions)
    # exp(r / beta) overflows for small beta: shift by the largest reward, the constant cancels
    tilted = probs * np.exp((rewards - np.max(rewards)) / beta)
    return tilted / np.sum(tilted)
