import toy


def split_at_eos(response):
    """(the digits, the number of actions T)"""
    for i, a in enumerate(response):
        if a == toy.EOS:
            return tuple(response[:i]), i + 1
    return tuple(response), len(response)


def discounted_return(reward, prompt, response, gamma):
    digits, T = split_at_eos(response)
    discount = 1.0
    for _ in range(T - 1):
        discount *= gamma
    return discount * reward(prompt, digits)
