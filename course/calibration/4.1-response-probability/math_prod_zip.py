import math


def response_probability(policy, prompt, response):
    prefixes = [tuple(response[:k]) for k in range(len(response))]
    return math.prod(policy.next_token_probs(prompt, s)[y] for s, y in zip(prefixes, response))
