import numpy as np
import toy


def advantages(policy, reward, prompt, response):
    prefixes = [tuple(response[:i]) for i in range(len(response) + 1)]
    v = [toy.value(policy, reward, prompt, p) for p in prefixes]
    return np.array([after - before for before, after in zip(v, v[1:])])
