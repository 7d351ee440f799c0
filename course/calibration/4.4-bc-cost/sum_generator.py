def behaviour_cloning_cost(eps, horizon):
    return sum(1 - (1 - eps) ** t for t in range(1, horizon + 1))
