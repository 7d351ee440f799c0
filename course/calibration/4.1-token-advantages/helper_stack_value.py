import numpy as np


def expected_reward(policy, reward, prompt, start):
    """E[r | start], walking every completion with an explicit stack."""
    todo, total = [(start, 1.0)], 0.0
    while todo:
        s, w = todo.pop()
        if len(s) == policy.length:
            total += w * reward(prompt, s)
            continue
        probs = policy.next_token_probs(prompt, s)
        todo.extend((s + (a,), w * probs[a]) for a in range(policy.n_actions))
    return total


def advantages(policy, reward, prompt, response):
    response = tuple(response)
    values = [expected_reward(policy, reward, prompt, response[:t]) for t in range(len(response) + 1)]
    return np.asarray(values[1:]) - np.asarray(values[:-1])
