"""Bootstrapping: regression targets for V(s_t) that lean on a critic's own estimates, against Monte Carlo returns.

With γ = 1 and one terminal reward, the n-step target for state s_t is V̂(s_{t+n}) if t + n < L, else r(x, y);
the λ-return mixes them (TD(λ), the target GAE(λ) implies)::

    G^λ_t = (1 − λ) Σ_{n=1}^{L−t−1} λ^(n−1) V̂(s_{t+n})  +  λ^(L−t−1) r(x, y)

λ = 1 is the Monte Carlo return r (unbiased, noisy); λ = 0 is the TD(0) target V̂(s_{t+1}) (as noisy as one token,
but as wrong as the critic). The bias E[G^λ_t | s_t] − V(s_t) and the variance Var[G^λ_t | s_t] are computed
exactly here by enumerating completions.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from . import checks
from .critic import Critic
from .policy import Policy, check_prompt
from .rewards import reward_table


def critic_tables(critic, prompt, length: int) -> list[np.ndarray]:
    """V̂ at every non-terminal prefix, as L arrays of shape (K,)*t: from a Critic, or a list given as is."""
    if isinstance(critic, Critic):
        return [critic.table(prompt, t) for t in range(length)]
    tables = [np.asarray(v, dtype=float) for v in critic]
    if len(tables) != length:
        raise ValueError(f"critic values must be given for depths 0..{length - 1}, got {len(tables)} arrays")
    return tables


def lambda_returns(tables: list[np.ndarray], rewards: np.ndarray, lam: float) -> list[np.ndarray]:
    """G^λ_t for every response and t = 0..L−1: L arrays of shape (K,)*L (``rewards`` is the (K,)*L reward table)."""
    lam = checks.in_range("lambda", lam, 0.0, 1.0)
    L = rewards.ndim
    K = rewards.shape[0] if L else 1

    def at_full(t: int) -> np.ndarray:  # V̂(s_t) broadcast to every full response
        return np.broadcast_to(tables[t].reshape((K,) * t + (1,) * (L - t)), (K,) * L)

    out = []
    for t in range(L):
        G = lam ** (L - t - 1) * rewards
        for n in range(1, L - t):
            G = G + (1 - lam) * lam ** (n - 1) * at_full(t + n)
        out.append(G)
    return out


class TargetError(NamedTuple):
    """Visit-weighted averages over the states s_0..s_{L−1} of a target's error as an estimate of V(s_t)."""

    bias_sq: float  # E_s (E[G | s] − V(s))²
    variance: float  # E_s Var[G | s]

    @property
    def mse(self) -> float:
        """bias² + variance: the mean squared error of one target."""
        return self.bias_sq + self.variance


def target_error(policy: Policy, reward, prompt, critic, lam: float) -> TargetError:
    """Exact bias² and variance of the λ-return targets under π, averaged over positions and visited states."""
    if not isinstance(policy, Policy):
        raise ValueError(f"policy must be a toy Policy, got {policy!r}")
    x = check_prompt(prompt)
    L = policy.length
    r = reward_table(reward, x, L, policy.n_actions)
    targets = lambda_returns(critic_tables(critic, x, L), r, lam)
    probs = [policy.prefix_probs(x, t) for t in range(L)]
    reach = [np.ones(())]
    for t in range(L):
        reach.append(reach[t][..., None] * probs[t])
    bias_sq = variance = 0.0
    for t in range(L):
        m1, m2, v = targets[t], targets[t] ** 2, r
        for u in reversed(range(t, L)):  # conditional expectations given the prefix y_<t
            m1, m2, v = ((probs[u] * a).sum(axis=-1) for a in (m1, m2, v))
        bias_sq += float((reach[t] * (m1 - v) ** 2).sum())
        variance += float((reach[t] * np.maximum(m2 - m1**2, 0.0)).sum())
    return TargetError(bias_sq / L, variance / L)
