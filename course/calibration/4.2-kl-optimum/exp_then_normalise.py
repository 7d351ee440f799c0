import numpy as np
import toy


def kl_optimum(policy, reward, prompt, beta):
    rewards = toy.reward_table(reward, prompt, policy.length, policy.n_actions)
    unnorm = policy.response_probs(prompt) * np.exp((rewards - np.max(rewards)) / beta)
    return unnorm / np.sum(unnorm)
