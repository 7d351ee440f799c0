import math

import toy


def first_success_within(policy, reward, prompt, n):
    probs = policy.response_probs(prompt)
    table = toy.reward_table(reward, prompt, policy.length, policy.n_actions)
    p = probs[table > 0].sum()
    # the first success is geometric: P(first success at trial <= n)
    if p == 0 or n == 0:
        return 0.0
    return -math.expm1(n * math.log1p(-p)) if p < 1 else 1.0
