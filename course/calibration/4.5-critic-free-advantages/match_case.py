import numpy as np
import toy


def critic_free_advantages(method, rewards, greedy_reward):
    r = np.array(rewards, dtype=float)
    match method:
        case "rloo":
            # algebra: r_i - (S - r_i)/(n-1) = n/(n-1) * (r_i - mean)
            n = len(r)
            return n / (n - 1) * (r - r.mean())
        case "grpo":
            return (r - r.mean()) / (r.std(ddof=1) + toy.estimators.GRPO_EPS)
        case "remax":
            return r - float(greedy_reward)
    raise ValueError(f"no such method: {method}")
