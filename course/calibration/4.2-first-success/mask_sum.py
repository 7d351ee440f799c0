import numpy as np
import toy


def first_success_within(policy, reward, prompt, n):
    table = toy.reward_table(reward, prompt, policy.length, policy.n_actions)
    probs = policy.response_probs(prompt)
    p = np.sum(probs[table > 0])  # chance that one sample is rewarded
    return 1 - (1 - p) ** n
