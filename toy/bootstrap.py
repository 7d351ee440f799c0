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
from .policy import Policy, check_policy, check_prompt
from .rewards import reward_table


def critic_tables(critic, prompt, length: int) -> list[np.ndarray]:
    """V̂ at every non-terminal prefix, as L arrays of shape (K,)*t: from a Critic, or a list given as is."""
    prompt = check_prompt(prompt)
    if isinstance(critic, Critic):
        length = checks.positive_int("length", length, low=1, high=critic.length)
        return [critic.table(prompt, t) for t in range(length)]
    length = checks.positive_int("length", length, low=1)
    if isinstance(critic, (str, bytes, np.ndarray)) or not isinstance(critic, (list, tuple)):
        raise checks.fail("critic", "a toy.critic.Critic or a list of value arrays, one per depth", critic)
    if len(critic) != length:
        raise ValueError(f"critic values must be given for depths 0..{length - 1}, got {len(critic)} arrays")
    tables = [checks.array(f"critic[{t}]", v, ndim=t) for t, v in enumerate(critic)]
    K = {a.shape[0] for a in tables if a.ndim}
    if len(K) > 1 or any(a.shape != (a.shape[0],) * a.ndim for a in tables if a.ndim):
        raise ValueError(f"critic values at depth t must have shape (K,)*t, got {[a.shape for a in tables]}")
    return tables


def lambda_returns(tables: list[np.ndarray], rewards: np.ndarray, lam: float) -> list[np.ndarray]:
    """G^λ_t for every response and t = 0..L−1: L arrays of shape (K,)*L (``rewards`` is the (K,)*L reward table)."""
    lam = checks.discount("lam", lam)
    rewards = checks.array("rewards", rewards, min_ndim=1)
    L = rewards.ndim
    K = rewards.shape[0]
    if rewards.shape != (K,) * L:
        raise ValueError(f"rewards must be a reward table of shape (K,)*L, got {rewards.shape}")
    if isinstance(tables, (str, bytes, np.ndarray)) or not isinstance(tables, (list, tuple)) or len(tables) != L:
        raise checks.fail("tables", f"a list of {L} value arrays, one per depth 0..{L - 1}", tables)
    tables = [checks.array(f"tables[{t}]", v, shape=(K,) * t) for t, v in enumerate(tables)]
    checks.enumeration("λ-return tables", K**L * L)

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
    check_policy("policy", policy, responses=True)
    x = check_prompt(prompt)
    lam = checks.discount("lam", lam)
    L, K = policy.length, policy.n_actions
    tables = [checks.array(f"critic values at depth {t}", v, shape=(K,) * t)
              for t, v in enumerate(critic_tables(critic, x, L))]
    bias_sq, variance = _target_errors(policy, reward, x, tables, [lam])[0]
    return TargetError(float(bias_sq), float(variance))


def _target_errors(policy: Policy, reward, x: int, tables: list[np.ndarray], lams) -> np.ndarray:
    """``target_error`` for several λ at once, from checked inputs: shape (len(lams), 2), columns bias² and
    variance. The λ-returns of every λ are computed together, along a leading axis."""
    L, K = policy.length, policy.n_actions
    r = reward_table(reward, x, L, K)
    lams = np.asarray(lams, dtype=float)
    checks.enumeration("λ-return tables", K**L * L * lams.size)
    lam = lams.reshape((-1,) + (1,) * L)

    def at_full(t: int) -> np.ndarray:  # V̂(s_t) broadcast to every full response
        return tables[t].reshape((K,) * t + (1,) * (L - t))

    probs = [policy.prefix_probs(x, t) for t in range(L)]
    reach = [np.ones(())]
    for t in range(L):
        reach.append(reach[t][..., None] * probs[t])
    out = np.zeros((lams.size, 2))
    for t in range(L):
        G = lam ** (L - t - 1) * r  # the λ-return from s_t, for every λ and every response
        for n in range(1, L - t):
            G = G + (1 - lam) * lam ** (n - 1) * at_full(t + n)
        m1, m2, v = G, G**2, r
        for u in reversed(range(t, L)):  # conditional expectations given the prefix y_<t
            m1, m2, v = ((probs[u] * a).sum(axis=-1) for a in (m1, m2, v))
        axes = tuple(range(1, t + 1))
        out[:, 0] += (reach[t] * (m1 - v) ** 2).sum(axis=axes)
        out[:, 1] += (reach[t] * np.maximum(m2 - m1**2, 0.0)).sum(axis=axes)
    return out / L
