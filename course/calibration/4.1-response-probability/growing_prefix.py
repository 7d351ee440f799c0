def response_probability(policy, prompt, response):
    p = 1.0
    prefix = ()
    for token in response:
        p *= policy.next_token_probs(prompt, prefix)[token]
        prefix = prefix + (token,)
    return p
