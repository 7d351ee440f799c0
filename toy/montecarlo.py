"""Monte Carlo values from resets: because any state is recreated by feeding its prefix, the value of a prefix
can be estimated by restarting k rollouts from it (the idea behind VinePPO's value estimates)."""

from __future__ import annotations

import numpy as np

from . import checks
from .policy import Policy, check_policy
from .rewards import get_reward, reward_table


def rollouts_from(policy: Policy, prompt, prefix, k: int, rng=None) -> np.ndarray:
    """k complete responses that start with ``prefix`` and continue with π: int array (k, length)."""
    check_policy("policy", policy)
    prompt = checks.prompt("prompt", prompt)
    prefix = checks.prefix("prefix", prefix, policy.length, policy.eos)
    k = checks.positive_int("k", k, low=1, high=checks.MAX_ENUMERATION // policy.length)
    rng = checks.rng("rng", rng)
    ys = np.zeros((k, policy.length), dtype=int)
    ys[:, : len(prefix)] = prefix
    for t in range(len(prefix), policy.length):
        probs = np.broadcast_to(policy.prefix_probs(prompt, t)[tuple(ys[:, :t].T)], (k, policy.n_actions))
        u = rng.random((k, 1))
        ys[:, t] = np.minimum((probs.cumsum(axis=1) < u).sum(axis=1), policy.n_actions - 1)
    return ys


def mc_value(policy: Policy, reward, prompt, prefix=(), k: int = 9, rng=None) -> float:
    """V̂(s) = (1/k) Σ_i r(x, y^(i)), the mean reward of k rollouts restarted from s = (prompt, prefix).

    Unbiased for V^π(s); its variance is Var_π[r | s] / k. (VinePPO's configs use k = 9; the paper calls it K.)
    """
    check_policy("policy", policy, responses=True)
    table = reward_table(get_reward(reward), prompt, policy.length, policy.n_actions)
    ys = rollouts_from(policy, prompt, prefix, k, rng)
    return float(table[tuple(ys.T)].mean())
