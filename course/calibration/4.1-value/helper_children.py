def children(policy, prompt, state):
    """Each next token's probability and the state it leads to."""
    probs = policy.next_token_probs(prompt, state)
    return [(probs[a], state + (a,)) for a in range(policy.n_actions)]


def value_of_prefix(policy, reward, prompt, prefix):
    state = tuple(prefix)
    if len(state) < policy.length:
        return sum(p * value_of_prefix(policy, reward, prompt, child) for p, child in children(policy, prompt, state))
    return reward(prompt, state)
