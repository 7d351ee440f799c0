import numpy as np
import toy


def advantages(policy, reward, prompt, response):
    # V(s_0), ..., V(s_L): the values of every prefix of the response
    vals = [toy.value(policy, reward, prompt, tuple(response[:k])) for k in range(len(response) + 1)]
    vals = np.array(vals)
    return vals[1:] - vals[:-1]
