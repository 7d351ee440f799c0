def value_of_prefix(policy, reward, prompt, prefix):
    # depth-first over the completions, carrying the probability of the path so far
    stack = [(tuple(prefix), 1.0)]
    expected = 0.0
    while stack:
        state, weight = stack.pop()
        if len(state) == policy.length:
            expected += weight * reward(prompt, state)
        else:
            dist = policy.next_token_probs(prompt, state)
            for token, p in enumerate(dist):
                stack.append((state + (token,), weight * p))
    return expected
