import math


def response_probability(policy, prompt, response):
    """Add log-probabilities (no underflow on long responses), exponentiate at the end."""
    log_p = 0.0
    for t, token in enumerate(response):
        q = policy.next_token_probs(prompt, tuple(response[:t]))[token]
        if q == 0:
            return 0.0
        log_p += math.log(q)
    return math.exp(log_p)
