def value_of_prefix(policy, reward, prompt, prefix):
    """Backward induction: V(s) = sum_a pi(a|s) V(s.a), and the reward at the end."""
    s = tuple(prefix)
    if len(s) >= policy.length:
        return reward(prompt, s)
    pi = policy.next_token_probs(prompt, s)
    return sum(pi[token] * value_of_prefix(policy, reward, prompt, (*s, token)) for token in range(policy.n_actions))
