import math


def behaviour_cloning_cost(eps, horizon):
    """Geometric series: sum_{t=1}^T (1-eps)^t = (1-eps)(1 - (1-eps)^T) / eps."""
    if eps == 0:
        return 0.0
    if eps == 1:
        return float(horizon)
    q = 1.0 - eps
    one_minus_qT = -math.expm1(horizon * math.log1p(-eps))  # accurate for tiny eps
    return horizon - q * one_minus_qT / eps
