from functools import lru_cache


def value_of_prefix(policy, reward, prompt, prefix):
    @lru_cache(maxsize=None)
    def v(state):
        if len(state) == policy.length:
            return reward(prompt, state)
        p = policy.next_token_probs(prompt, state)
        return sum(p[a] * v(state + (a,)) for a in range(policy.n_actions))

    return v(tuple(prefix))
