def response_probability(policy, prompt, response):
    prob = 1.0
    for t in range(len(response)):
        prob = prob * policy.next_token_probs(prompt, tuple(response[:t]))[response[t]]
    return prob
