"""γ and λ inside the advantage estimator: the exact bias and variance of GAE(γ, λ) advantages.

Section 4.3's discount experiment puts γ into the objective. Classically γ has a second role (Schulman et al.'s
GAE): inside the advantage estimator, as a variance knob. With per-token rewards r_t (here only the last is non-zero)
and a critic V̂ (V̂ after the last token is 0),

    δ_t = r_t + γ V̂(s_{t+1}) − V̂(s_t),        Â_t = Σ_{l ≥ 0} (γλ)^l δ_{t+l}.

The target is the objective's own advantage, undiscounted: A(s_t, y_t) = V(s_{t+1}) − V(s_t) with γ = 1. For every
position t and every prefix y_{≤t} (state and token), the completions after token t decide Â_t, so exactly

    bias_t(y_{≤t}) = E[Â_t | y_{≤t}] − A(s_t, y_t),        var_t(y_{≤t}) = Var[Â_t | y_{≤t}],

by enumerating every response. Both are averaged over positions and over y_{≤t} ~ π. Discounting later TD errors
by γ shrinks the variance they bring (as λ does) and, unless V̂ is exact and γ = 1, adds bias. With the exact V,
γ biases Â_t by discounting what lies ahead of token t. At λ = 0 that is the next state's value:
Â_t = δ_t = γ·V(s_{t+1}) − V(s_t) before the last token, off by (γ − 1)·V(s_{t+1}), and exact at the last token
(Â_{L−1} = r(x, y) − V(s_{L−1})). At λ = 1 the bias comes from discounting the reward, not from the values: the sum
telescopes to Â_t = γ^(L−1−t)·r(x, y) − V(s_t), whose mean given y_{≤t} is γ^(L−1−t)·V(s_{t+1}) − V(s_t).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from . import checks
from .exact import advantage_table, values
from .gae import gae_table
from .policy import Policy, check_policy, check_prompt
from .rewards import get_reward, reward_table


class AdvantageError(NamedTuple):
    """Bias² and variance of Â_t against A(s_t, y_t), per position t (shape (L,)) and averaged over positions."""

    bias_sq: np.ndarray
    variance: np.ndarray

    @property
    def mean_bias_sq(self) -> float:
        return float(self.bias_sq.mean())

    @property
    def mean_variance(self) -> float:
        return float(self.variance.mean())

    @property
    def mse(self) -> float:
        """E[(Â_t − A_t)²] averaged over positions: bias² + variance."""
        return self.mean_bias_sq + self.mean_variance


def _value_tables(value_tables, L: int, K: int) -> list[np.ndarray]:
    """``value_tables`` as L finite float arrays of shapes (), (K,), (K, K), ... (one per depth), or ValueError."""
    if isinstance(value_tables, (str, bytes, np.ndarray)) or not isinstance(value_tables, (list, tuple)):
        raise checks.fail("value_tables", f"a list of {L} arrays, one per depth", value_tables)
    if len(value_tables) != L:
        raise ValueError(f"value_tables must be {L} arrays (one per depth 0..{L - 1}), got {len(value_tables)}")
    return [checks.array(f"value_tables[{t}]", vt, shape=(K,) * t) for t, vt in enumerate(value_tables)]


def advantage_error(policy: Policy, reward, prompt, value_tables: list[np.ndarray], gamma: float,
                    lam: float) -> AdvantageError:
    """Exact bias² and variance of GAE(γ, λ) advantages from critic values ``value_tables`` (L arrays of shape
    (K,)*t), against the undiscounted exact A(s_t, y_t), weighted by π over the prefixes y_{≤t}."""
    check_policy("policy", policy, responses=True)
    get_reward(reward)
    prompt = check_prompt(prompt)
    gamma = checks.in_range("gamma", gamma, 0.0, 1.0)
    lam = checks.in_range("lam", lam, 0.0, 1.0)
    L, K = policy.length, policy.n_actions
    value_tables = _value_tables(value_tables, L, K)
    P = policy.response_probs(prompt)
    A_hat = gae_table(value_tables, reward_table(reward, prompt, L, K), lam, gamma)
    A = advantage_table(policy, reward, prompt)
    bias_sq, variance = np.zeros(L), np.zeros(L)
    for t in range(L):
        later = tuple(range(t + 1, L))  # the completion after token t
        p_prefix = P.sum(axis=later)  # P(y_{≤t}), shape (K,)*(t+1)
        safe = np.where(p_prefix > 0, p_prefix, 1.0)
        mean = (P * A_hat[..., t]).sum(axis=later) / safe
        second = (P * A_hat[..., t] ** 2).sum(axis=later) / safe
        target = A[..., t][(Ellipsis,) + (0,) * len(later)] if later else A[..., t]  # A_t depends on y_{≤t} only
        bias_sq[t] = float((p_prefix * (mean - target) ** 2).sum())
        variance[t] = float((p_prefix * np.maximum(second - mean**2, 0.0)).sum())
    return AdvantageError(bias_sq, variance)


def exact_critic(policy: Policy, reward, prompt) -> list[np.ndarray]:
    """The exact V at depths 0..L−1: the value tables of a perfect critic."""
    check_policy("policy", policy, responses=True)
    get_reward(reward)
    return values(policy, reward, check_prompt(prompt))[:-1]
