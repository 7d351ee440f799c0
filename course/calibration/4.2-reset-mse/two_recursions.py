def expected(policy, reward, prompt, prefix, power):
    """E[r^power | prefix] by backward induction."""
    if len(prefix) == policy.length:
        return reward(prompt, prefix) ** power
    probs = policy.next_token_probs(prompt, prefix)
    return sum(probs[a] * expected(policy, reward, prompt, prefix + (a,), power) for a in range(policy.n_actions))


def reset_mse(policy, reward, prompt, prefix, k):
    prefix = tuple(prefix)
    mean = expected(policy, reward, prompt, prefix, 1)
    mean_sq = expected(policy, reward, prompt, prefix, 2)
    return (mean_sq - mean * mean) / k
