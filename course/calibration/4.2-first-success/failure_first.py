import toy


def first_success_within(policy, reward, prompt, n):
    """Compute the chance that a sample fails, then that all n fail."""
    probs = policy.response_probs(prompt).ravel()
    rewards = toy.reward_table(reward, prompt, policy.length, policy.n_actions).ravel()
    fail = 1.0 - sum(q for q, r in zip(probs, rewards) if r > 0)
    all_fail = fail ** n
    return 1.0 - all_fail
