"""Resetting is free: Monte Carlo values from k rollouts restarted at a prefix, and how fast they converge.

Because the transition only appends a token, any state s = (x, y_<t) is recreated exactly by feeding its prefix,
so its value can be estimated by k fresh completions from it (VinePPO's estimator, ``toy.montecarlo.mc_value``):
V̂_k(s) = (1/k) Σ_i r(x, y^(i)). It is unbiased, and its root-mean-square error is exactly sqrt(Var[r | s] / k).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple

import numpy as np

from . import checks
from .exact import return_variances, values
from .montecarlo import rollouts_from
from .policy import Policy, check_policy
from .rewards import reward_table


def value_and_variance(policy: Policy, reward, prompt, prefix=()) -> tuple[float, float]:
    """V(s) = E[r | s] and Var[r | s] for s = (prompt, prefix), exactly (by enumerating the completions)."""
    check_policy("policy", policy)
    prefix = checks.prefix("prefix", prefix, policy.length, policy.eos)
    depth = len(prefix)
    return (float(values(policy, reward, prompt)[depth][prefix]),
            float(return_variances(policy, reward, prompt)[depth][prefix]))


class ResetEstimates(NamedTuple):
    """Monte Carlo values from resets at one state, for several k."""

    ks: np.ndarray  # (m,) rollouts per estimate
    estimates: np.ndarray  # (repeats, m): independent estimates V̂_K, one row per repeat
    rmse: np.ndarray  # (m,) root-mean-square error of the estimates against the exact V
    exact_rmse: np.ndarray  # (m,) sqrt(Var[r | s] / k)
    value: float  # the exact V(s)


def reset_estimates(policy: Policy, reward, prompt, prefix, ks, repeats: int = 50, rng=None) -> ResetEstimates:
    """``repeats`` independent estimates V̂_k(s) for each k in ``ks``, each from k fresh rollouts restarted at s.

    Rollouts come from ``toy.montecarlo.rollouts_from`` (seeded: rng or seed 0); estimates for different k use
    different rollouts.
    """
    check_policy("policy", policy)
    repeats = checks.positive_int("repeats", repeats, low=1)
    if isinstance(ks, (str, bytes)) or not isinstance(ks, (Sequence, np.ndarray)) or len(ks) == 0:
        raise checks.fail("ks", "a non-empty sequence of rollout counts", ks)
    ks = np.array([checks.positive_int("ks entry", k, low=1) for k in ks])
    checks.enumeration(f"{repeats} repeats of {int(ks.sum()):,} rollouts", repeats * int(ks.sum()) * policy.length,
                       smaller="fewer repeats or smaller ks")
    v, var = value_and_variance(policy, reward, prompt, prefix)
    r = reward_table(reward, prompt, policy.length, policy.n_actions)
    rng = checks.rng("rng", rng)
    ys = rollouts_from(policy, prompt, prefix, int(ks.sum()) * repeats, rng)
    returns = r[tuple(ys.T)].reshape(repeats, -1)
    bounds = np.concatenate([[0], np.cumsum(ks)])
    est = np.stack([returns[:, bounds[i]: bounds[i + 1]].mean(axis=1) for i in range(len(ks))], axis=1)
    rmse = np.sqrt(((est - v) ** 2).mean(axis=0))
    return ResetEstimates(ks, est, rmse, np.sqrt(var / ks), v)
