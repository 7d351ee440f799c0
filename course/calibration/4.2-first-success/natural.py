import toy


def first_success_within(policy, reward, prompt, n):
    probs = policy.response_probs(prompt)
    rewards = toy.reward_table(reward, prompt, policy.length, policy.n_actions)
    p = probs[rewards > 0].sum()
    return 1 - (1 - p) ** n
