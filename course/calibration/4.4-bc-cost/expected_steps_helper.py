def prob_off_path(eps, t):
    """At least one mistake in the first t steps."""
    return 1.0 - (1.0 - eps) ** t


def behaviour_cloning_cost(eps, horizon):
    total = 0.0
    for t in range(horizon):
        total += prob_off_path(eps, t + 1)
    return total
