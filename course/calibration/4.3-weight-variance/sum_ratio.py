import numpy as np


def weight_variance(current, old, prompt):
    pi_theta = current.response_probs(prompt)
    pi_old = old.response_probs(prompt)
    # E_old[w^2] = sum pi_theta^2 / pi_old and E_old[w] = 1
    return np.sum(pi_theta ** 2 / pi_old) - 1
