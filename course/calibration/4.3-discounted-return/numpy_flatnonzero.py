import numpy as np
import toy


def discounted_return(reward, prompt, response, gamma):
    y = np.asarray(response, dtype=int)
    eos_positions = np.flatnonzero(y == toy.EOS)
    if eos_positions.size:
        first = int(eos_positions[0])
        digits, steps = y[:first], first + 1
    else:
        digits, steps = y, len(y)
    r = reward(prompt, tuple(int(d) for d in digits))
    return float(r * np.power(gamma, steps - 1))
