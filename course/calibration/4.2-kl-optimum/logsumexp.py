import numpy as np
import toy


def log_normalise(log_w):
    """log_w - log(sum(exp(log_w))), computed stably."""
    m = np.max(log_w)
    return log_w - (m + np.log(np.sum(np.exp(log_w - m))))


def kl_optimum(policy, reward, prompt, beta):
    pi_ref = policy.response_probs(prompt)
    table = toy.reward_table(reward, prompt, policy.length, policy.n_actions)
    with np.errstate(divide="ignore"):
        log_w = np.log(pi_ref) + table / beta
    return np.exp(log_normalise(log_w))
