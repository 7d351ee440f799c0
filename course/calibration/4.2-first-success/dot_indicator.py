import numpy as np
import toy


def success_chance(policy, reward, prompt):
    hit = (toy.reward_table(reward, prompt, policy.length, policy.n_actions) > 0).astype(float)
    return float(np.dot(hit.flatten(), policy.response_probs(prompt).flatten()))


def first_success_within(policy, reward, prompt, n):
    p = success_chance(policy, reward, prompt)
    return 1.0 - pow(1.0 - p, n)
