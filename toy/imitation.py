"""Compounding errors: behaviour cloning against a learner trained on its own states (DAgger).

The toy of Ross and Bagnell's analysis. An episode has T steps. On the expert's path the learner makes a mistake
with probability ε at each step.

* **Behaviour cloning** learned only on the expert's states. After its first mistake it is on states it never saw,
  never gets back, and pays 1 at every remaining step. Its expected cost is

      J_BC(T) = Σ_{t=1..T} P(off the path by step t) = Σ_{t=1..T} [1 − (1 − ε)^t]
              = T − ((1 − ε)/ε)·(1 − (1 − ε)^T)          ≈ ε·T(T + 1)/2 while εT ≪ 1, and → T as εT grows.

* **DAgger** trained on the states it visits itself, so it knows how to recover: a mistake costs the step it is made
  in and nothing after. Its expected cost is J_DAgger(T) = ε·T.

``simulate`` draws the same per-step mistakes for both learners, so the two costs differ only in what a mistake
leads to.
"""

from __future__ import annotations

import numpy as np

from . import checks

LEARNERS = {
    "behaviour_cloning": "trained on the expert's states: after a mistake it stays off the path, paying 1 per step",
    "dagger": "trained on its own states: a mistake costs its own step, then it recovers",
}
"""Names of the two learners, with what a mistake does to each."""


MAX_CURVE = 10_000_000
"""Longest horizon ``cost_curves`` tabulates step by step, and most (episode, step) pairs ``simulate`` draws."""


def _check(eps, horizon, name: str = "horizon", high: int | None = None) -> tuple[float, int]:
    eps = checks.probability("eps", eps)
    horizon = checks.horizon(name, horizon, high=high)
    return eps, horizon


def _off_path(eps: float, T: np.ndarray) -> np.ndarray:
    """1 − (1 − ε)^T, accurate for tiny ε: −expm1(T·log1p(−ε))."""
    if eps == 1.0:
        return np.ones(np.shape(T))
    return -np.expm1(T * np.log1p(-eps))


def behaviour_cloning_cost(eps: float, horizon: int) -> float:
    """J_BC(T) = Σ_{t=1..T} [1 − (1 − ε)^t], the expected cost of a learner that never recovers from a mistake.

    Exact to rounding for any ε and T: while εT < 1 it sums the alternating series
    J = Σ_{k≥1} (−1)^(k+1) C(T+1, k+1) ε^k (whose terms shrink by a factor εT/3 or faster), and beyond that it
    uses the closed form T − ((1 − ε)/ε)·(1 − (1 − ε)^T), where the subtraction no longer cancels.
    """
    eps, horizon = _check(eps, horizon)
    if eps == 0.0:
        return 0.0
    T = float(horizon)
    if eps * T < 1.0:
        term = T * (T + 1.0) / 2.0 * eps  # C(T+1, 2)·ε
        total, k = 0.0, 1
        while term != 0.0 and abs(term) > 1e-17 * abs(total) and k <= horizon:
            total += term
            term *= -eps * (T - k) / (k + 2)  # C(T+1, k+2)ε^(k+1) / (C(T+1, k+1)ε^k) with the sign flipped
            k += 1
        return float(total)
    return float(T - (1.0 - eps) / eps * _off_path(eps, T))


def dagger_cost(eps: float, horizon: int) -> float:
    """J_DAgger(T) = ε·T: every mistake costs one step and is then recovered from."""
    eps, horizon = _check(eps, horizon)
    return eps * horizon


def quadratic_approximation(eps: float, horizon: int) -> float:
    """ε·T(T + 1)/2: the first-order expansion of J_BC(T) in ε, accurate while εT ≪ 1 (it overshoots after)."""
    eps, horizon = _check(eps, horizon)
    return eps * horizon * (horizon + 1) / 2


def cost_curves(eps: float, max_horizon: int) -> dict[str, np.ndarray]:
    """The three curves above for T = 1..max_horizon, as arrays of shape (max_horizon,).

    Keys: ``horizon``, ``behaviour_cloning``, ``dagger``, ``quadratic``. ``max_horizon`` is at most ``MAX_CURVE``
    (for a single longer horizon, ``behaviour_cloning_cost`` needs no table).
    """
    eps, max_horizon = _check(eps, max_horizon, "max_horizon")
    checks.enumeration(f"cost curves up to horizon {max_horizon:,}", max_horizon, limit=MAX_CURVE,
                       smaller="a smaller max_horizon (behaviour_cloning_cost gives one long horizon exactly)")
    T = np.arange(1, max_horizon + 1)
    per_step = _off_path(eps, T.astype(float))  # P(off the path by step t)
    return {
        "horizon": T.astype(float),
        "behaviour_cloning": np.cumsum(per_step),
        "dagger": eps * T,
        "quadratic": eps * T * (T + 1) / 2,
    }


def simulate(eps: float, horizon: int, episodes: int = 2000, rng=None) -> dict[str, np.ndarray]:
    """Seeded episodes of both learners with the same mistakes: cost after each step, shape (episodes, horizon).

    ``mistakes[i, t]`` is drawn once (True with probability ε). Behaviour cloning pays 1 at step t when any
    mistake happened at or before t; DAgger pays 1 at step t when a mistake happened at t. Returns the cumulative
    costs under keys ``behaviour_cloning`` and ``dagger``: entry [i, t] is the cost of episode i over a horizon
    of t + 1 steps.
    """
    eps, horizon = _check(eps, horizon)
    episodes = checks.positive_int("episodes", episodes, low=1)
    checks.enumeration(f"simulating {episodes:,} episodes of {horizon:,} steps", episodes * horizon,
                       limit=MAX_CURVE, smaller="fewer episodes or a shorter horizon")
    rng = checks.rng("rng", rng)
    mistakes = rng.random((episodes, horizon)) < eps
    off_path = np.logical_or.accumulate(mistakes, axis=1)
    return {
        "behaviour_cloning": np.cumsum(off_path, axis=1).astype(float),
        "dagger": np.cumsum(mistakes, axis=1).astype(float),
    }


def simulated_cost(eps: float, horizon: int, episodes: int = 2000, rng=None) -> dict[str, np.ndarray]:
    """Mean cost and its standard error at every horizon T = 1..horizon, from ``simulate``.

    Keys: ``behaviour_cloning``, ``dagger`` (means, shape (horizon,)) and ``behaviour_cloning_se``,
    ``dagger_se`` (standard errors of those means, sd / √episodes).
    """
    costs = simulate(eps, horizon, episodes, rng)
    out = {}
    for name, c in costs.items():
        out[name] = c.mean(axis=0)
        out[f"{name}_se"] = c.std(axis=0, ddof=1) / np.sqrt(len(c)) if len(c) > 1 else np.zeros(c.shape[1])
    return out
