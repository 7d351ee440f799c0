def value_of_prefix(policy, reward, prompt, prefix):
    prefix = tuple(prefix)
    # a complete response: its value is its reward
    if len(prefix) == policy.length:
        return reward(prompt, prefix)
    probs = policy.next_token_probs(prompt, prefix)
    total = 0.0
    for a in range(policy.n_actions):
        total += probs[a] * value_of_prefix(policy, reward, prompt, prefix + (a,))
    return total
