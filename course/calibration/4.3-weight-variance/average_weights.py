import numpy as np


def weight_variance(current, old, prompt):
    ratio = current.response_probs(prompt) / old.response_probs(prompt)
    mean = np.average(ratio, weights=old.response_probs(prompt))
    return float(np.average((ratio - mean) ** 2, weights=old.response_probs(prompt)))
