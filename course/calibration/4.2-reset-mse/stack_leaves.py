def reset_mse(policy, reward, prompt, prefix, k):
    stack = [(tuple(prefix), 1.0)]
    e_r = e_r2 = 0.0
    while stack:
        s, w = stack.pop()
        if len(s) == policy.length:
            r = reward(prompt, s)
            e_r += w * r
            e_r2 += w * r ** 2
            continue
        probs = policy.next_token_probs(prompt, s)
        for a in range(policy.n_actions):
            stack.append((s + (a,), w * probs[a]))
    return (e_r2 - e_r ** 2) / k
