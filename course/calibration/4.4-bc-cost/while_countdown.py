def behaviour_cloning_cost(eps, horizon):
    cost = 0.0
    stay = 1.0
    t = horizon
    while t > 0:
        stay = stay * (1 - eps)
        cost = cost + (1 - stay)
        t -= 1
    return cost
