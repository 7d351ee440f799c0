def reset_mse(policy, reward, prompt, prefix, k):
    def moments(s):
        # returns (E[r | s], E[r^2 | s])
        if len(s) == policy.length:
            r = reward(prompt, s)
            return r, r * r
        dist = policy.next_token_probs(prompt, s)
        m1 = m2 = 0.0
        for a in range(policy.n_actions):
            c1, c2 = moments(s + (a,))
            m1 += dist[a] * c1
            m2 += dist[a] * c2
        return m1, m2

    first, second = moments(tuple(prefix))
    variance = second - first ** 2
    return variance / k
