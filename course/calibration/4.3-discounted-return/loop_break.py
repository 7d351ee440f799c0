import toy


def discounted_return(reward, prompt, response, gamma):
    digits = []
    T = 0
    for token in response:
        T += 1  # every token up to and including the first EOS is an action
        if token == toy.EOS:
            break
        digits.append(token)
    return gamma ** (T - 1) * reward(prompt, tuple(digits))
