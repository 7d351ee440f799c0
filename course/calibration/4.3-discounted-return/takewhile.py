from itertools import takewhile

import toy


def discounted_return(reward, prompt, response, gamma):
    digits = tuple(takewhile(lambda a: a != toy.EOS, response))
    T = min(len(digits) + 1, len(response))
    return reward(prompt, digits) * gamma ** (T - 1)
