def mean_and_var(policy, reward, prompt, s):
    """(E[r|s], Var[r|s]) by the law of total variance: Var = E[Var child] + Var[E child]."""
    if len(s) == policy.length:
        return reward(prompt, s), 0.0
    probs = policy.next_token_probs(prompt, s)
    kids = [mean_and_var(policy, reward, prompt, s + (a,)) for a in range(policy.n_actions)]
    mean = sum(p * m for p, (m, _) in zip(probs, kids))
    within = sum(p * v for p, (_, v) in zip(probs, kids))
    between = sum(p * (m - mean) ** 2 for p, (m, _) in zip(probs, kids))
    return mean, within + between


def reset_mse(policy, reward, prompt, prefix, k):
    return mean_and_var(policy, reward, prompt, tuple(prefix))[1] / k
