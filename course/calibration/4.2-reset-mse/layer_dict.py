def reset_mse(policy, reward, prompt, prefix, k):
    # probability of each complete response that starts with the prefix, one layer at a time
    reach = {tuple(prefix): 1.0}
    while len(next(iter(reach))) < policy.length:
        new = {}
        for s, q in reach.items():
            pi = policy.next_token_probs(prompt, s)
            for a in range(policy.n_actions):
                new[s + (a,)] = q * pi[a]
        reach = new
    mean = sum(q * reward(prompt, s) for s, q in reach.items())
    var = sum(q * (reward(prompt, s) - mean) ** 2 for s, q in reach.items())
    return var / k
