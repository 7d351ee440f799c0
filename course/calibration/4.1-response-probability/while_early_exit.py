def response_probability(policy, prompt, response):
    answer, t = 1.0, 0
    while t < len(response) and answer > 0:
        dist = policy.next_token_probs(prompt, tuple(response[:t]))
        answer *= dist[response[t]]
        t += 1
    return answer
