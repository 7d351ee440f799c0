import itertools


def value_of_prefix(policy, reward, prompt, prefix):
    """Sum over every way to finish the response: P(completion) * reward."""
    start = tuple(prefix)
    remaining = policy.length - len(start)
    value = 0.0
    for tail in itertools.product(range(policy.n_actions), repeat=remaining):
        prob, state = 1.0, start
        for tok in tail:
            prob *= policy.next_token_probs(prompt, state)[tok]
            state = state + (tok,)
        value += prob * reward(prompt, state)
    return value
