import numpy as np
import toy

_cache = {}


def cached_value(policy, reward, prompt, prefix):
    key = (id(policy), id(reward), prompt, prefix)
    if key not in _cache:
        _cache[key] = (policy, reward, toy.value(policy, reward, prompt, prefix))
    return _cache[key][2]


def advantages(policy, reward, prompt, response):
    adv = np.empty(len(response), dtype=float)
    previous = cached_value(policy, reward, prompt, ())
    for t in range(len(response)):
        current = cached_value(policy, reward, prompt, tuple(response[:t + 1]))
        adv[t] = current - previous
        previous = current
    return adv
