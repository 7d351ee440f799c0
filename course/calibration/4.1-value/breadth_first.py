def value_of_prefix(policy, reward, prompt, prefix):
    # probability of reaching each state, one token at a time, then average the rewards at the leaves
    frontier = {tuple(prefix): 1.0}
    for _ in range(policy.length - len(prefix)):
        nxt = {}
        for state, reach in frontier.items():
            dist = policy.next_token_probs(prompt, state)
            for a in range(policy.n_actions):
                nxt[state + (a,)] = reach * dist[a]
        frontier = nxt
    return sum(reach * reward(prompt, state) for state, reach in frontier.items())
