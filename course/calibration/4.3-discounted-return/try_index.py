import toy


def discounted_return(reward, prompt, response, gamma):
    tokens = list(response)
    try:
        end = tokens.index(toy.EOS)
        n_actions = end + 1
    except ValueError:
        end = n_actions = len(tokens)
    return reward(prompt, tuple(tokens[:end])) * gamma ** (n_actions - 1)
