import numpy as np


def weight_variance(current, old, prompt):
    p = current.response_probs(prompt)
    q = old.response_probs(prompt)
    w = p / q
    e_w2 = np.sum(q * w ** 2)
    e_w = np.sum(q * w)  # = 1
    return e_w2 - e_w ** 2
