import numpy as np


def behaviour_cloning_cost(eps, horizon):
    on_path = np.cumprod(np.full(horizon, 1.0 - eps))
    return float(horizon - on_path.sum())
