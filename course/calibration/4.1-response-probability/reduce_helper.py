from functools import reduce


def token_prob(policy, prompt, response, t):
    """pi(y_t | x, y_<t)"""
    return policy.next_token_probs(prompt, tuple(response[:t]))[response[t]]


def response_probability(policy, prompt, response):
    return reduce(lambda acc, t: acc * token_prob(policy, prompt, response, t), range(len(response)), 1.0)
