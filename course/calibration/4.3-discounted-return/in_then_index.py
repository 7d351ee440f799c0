import toy


def discounted_return(reward, prompt, response, gamma):
    response = tuple(response)
    if toy.EOS in response:
        first_eos = response.index(toy.EOS)
        digits, T = response[:first_eos], first_eos + 1
    else:
        digits, T = response, len(response)
    return gamma ** (T - 1) * reward(prompt, digits)
