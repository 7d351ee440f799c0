import numpy as np
import toy


def advantages(policy, reward, prompt, response):
    result = np.zeros(len(response))
    for t in range(len(response)):
        v_now = toy.value(policy, reward, prompt, tuple(response[:t]))
        v_next = toy.value(policy, reward, prompt, tuple(response[:t + 1]))
        result[t] = v_next - v_now
    return result
