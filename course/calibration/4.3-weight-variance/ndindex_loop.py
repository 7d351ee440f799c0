import numpy as np


def weight_variance(current, old, prompt):
    new_probs, old_probs = current.response_probs(prompt), old.response_probs(prompt)
    second = 0.0
    for y in np.ndindex(old_probs.shape):
        if old_probs[y] > 0:
            w = new_probs[y] / old_probs[y]
            second += old_probs[y] * w * w
    # E_old[w] = 1, so Var[w] = E_old[w^2] - 1
    return second - 1.0
