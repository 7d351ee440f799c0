def response_probability(policy, prompt, response):
    # chain rule: pi(y|x) = prod_t pi(y_t | x, y_<t)
    result = 1
    for i, y in enumerate(response):
        result *= policy.next_token_probs(prompt, tuple(response[:i]))[y]
    return result
