import numpy as np
import toy


def softmax(x):
    e = np.exp(x - x.max())
    return e / e.sum()


def kl_optimum(policy, reward, prompt, beta):
    # pi* = softmax(log pi_ref + r / beta); log of zero probabilities becomes -inf, i.e. weight zero
    pi_ref = policy.response_probs(prompt)
    r = toy.reward_table(reward, prompt, policy.length, policy.n_actions)
    scores = np.where(pi_ref > 0, np.log(np.where(pi_ref > 0, pi_ref, 1.0)) + r / beta, -np.inf)
    return softmax(scores)
