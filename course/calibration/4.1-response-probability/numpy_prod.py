import numpy as np


def response_probability(policy, prompt, response):
    response = list(response)
    token_probs = [policy.next_token_probs(prompt, tuple(response[:t]))[response[t]] for t in range(len(response))]
    return float(np.prod(token_probs))
