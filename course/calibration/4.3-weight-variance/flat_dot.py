import numpy as np


def weight_variance(current, old, prompt):
    """Var_old[w] = E_old[w^2] - (E_old[w])^2 = sum(pi_theta^2 / pi_old) - 1."""
    theta = current.response_probs(prompt).ravel()
    behaviour = old.response_probs(prompt).ravel()
    w = theta / behaviour
    return float(np.dot(behaviour, w * w) - 1)
