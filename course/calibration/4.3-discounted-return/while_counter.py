import toy


def discounted_return(reward, prompt, response, gamma):
    t = 0
    while t < len(response) and response[t] != toy.EOS:
        t += 1
    # t digits; the EOS at position t (if there is one) is the last action
    actions = t + 1 if t < len(response) else t
    return gamma ** (actions - 1) * reward(prompt, tuple(response[:t]))
