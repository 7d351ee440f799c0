import numpy as np


def behaviour_cloning_cost(eps, horizon):
    steps = np.arange(1, horizon + 1)
    p_off = 1.0 - (1.0 - eps) ** steps  # P(off the path at step t)
    return float(p_off.sum())
