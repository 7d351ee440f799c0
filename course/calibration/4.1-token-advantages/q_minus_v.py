import numpy as np
import toy


def advantages(policy, reward, prompt, response):
    """A(s, a) = Q(s, a) - V(s), with Q(s, a) = V(s.a) and V(s) = sum_a pi(a|s) Q(s, a)."""
    out = []
    for t, token in enumerate(response):
        state = tuple(response[:t])
        q = np.array([toy.value(policy, reward, prompt, state + (a,)) for a in range(policy.n_actions)])
        v = policy.next_token_probs(prompt, state) @ q
        out.append(q[token] - v)
    return np.array(out)
