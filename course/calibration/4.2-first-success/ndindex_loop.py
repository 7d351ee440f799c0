import numpy as np
import toy


def first_success_within(policy, reward, prompt, n):
    rewards = toy.reward_table(reward, prompt, policy.length, policy.n_actions)
    response_probs = policy.response_probs(prompt)
    p_success = 0.0
    for y in np.ndindex(*rewards.shape):
        if rewards[y] > 0:
            p_success += response_probs[y]
    # P(no success in n tries) = (1 - p)^n
    return 1.0 - (1.0 - p_success) ** n
