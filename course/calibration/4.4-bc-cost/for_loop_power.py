def behaviour_cloning_cost(eps, horizon):
    cost = 0.0
    for t in range(1, horizon + 1):
        cost += 1 - (1 - eps) ** t  # P(at least one mistake in the first t steps)
    return cost
