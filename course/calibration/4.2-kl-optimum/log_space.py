import numpy as np
import toy


def kl_optimum(policy, reward, prompt, beta):
    with np.errstate(divide="ignore"):
        logits = np.log(policy.response_probs(prompt)) + toy.reward_table(
            reward, prompt, policy.length, policy.n_actions) / beta
    logits -= logits.max()
    unnormalised = np.exp(logits)
    return unnormalised / unnormalised.sum()
