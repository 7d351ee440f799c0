def response_probability(policy, prompt, response):
    response = tuple(response)
    if len(response) == 0:
        return 1.0
    *head, last = response
    head = tuple(head)
    return response_probability(policy, prompt, head) * policy.next_token_probs(prompt, head)[last]
