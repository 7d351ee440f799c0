def value_of_prefix(policy, reward, prompt, prefix):
    # true backward induction: values of the longest states first, then one level up at a time
    prefix = tuple(prefix)
    layers = [[prefix]]
    while len(layers[-1][0]) < policy.length:
        layers.append([s + (a,) for s in layers[-1] for a in range(policy.n_actions)])
    V = {s: reward(prompt, s) for s in layers[-1]}
    for layer in reversed(layers[:-1]):
        for s in layer:
            probs = policy.next_token_probs(prompt, s)
            V[s] = sum(probs[a] * V[s + (a,)] for a in range(policy.n_actions))
    return V[prefix]
