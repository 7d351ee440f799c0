"""Section 4.5's checked exercises: critic-free advantages (RLOO, GRPO, ReMax) and GAE(λ)."""

from __future__ import annotations

import numpy as np

from .. import estimators, gae
from .registry import Case, allow, forbid, register

CRITIC_FREE = ("rloo", "grpo", "remax")
"""The methods the advantage exercise asks for."""


def _group(rng, n: int, kind: str) -> np.ndarray:
    if kind == "0/1":
        return rng.integers(0, 2, size=n).astype(float)
    if kind == "equal":
        return np.full(n, float(rng.integers(0, 2)))
    return np.round(rng.normal(0.0, 2.0, size=n), 3)


def _advantage_cases(rng):
    """Each method on 0/1 rewards, on real-valued rewards, and on a group whose rewards are all equal; group sizes
    from the smallest each method allows up to 16."""
    plan = [("rloo", 4, "0/1"), ("grpo", 4, "0/1"), ("remax", 4, "0/1"),
            ("rloo", 2, "real"), ("grpo", 2, "real"), ("remax", 1, "real"),
            ("rloo", 5, "equal"), ("grpo", 6, "equal"), ("remax", 3, "equal")]
    for _ in range(9):
        method = CRITIC_FREE[int(rng.integers(3))]
        plan.append((method, int(rng.integers(2, 17)), ["0/1", "real"][int(rng.integers(2))]))
    cases = []
    for method, n, kind in plan:
        rewards = _group(rng, n, kind)
        greedy = float(rng.choice([0.0, 1.0])) if kind != "real" else float(np.round(rng.normal(0.0, 2.0), 3))
        greedy = greedy if method == "remax" else None
        shown = np.array2string(rewards, separator=", ", max_line_width=10_000)
        extra = f", greedy reward {greedy:g}" if method == "remax" else ""
        cases.append(Case((method, rewards, greedy), f"method {method!r}, rewards {shown} (n = {n}){extra}"))
    return cases


def _gae_cases(rng):
    """Responses of 1 to 8 tokens; λ at both ends (0 and 1) and in between. Per-token rewards are a small KL-like
    penalty on every token plus a score on the last one, or all zero but the last."""
    lambdas = [0.0, 1.0, 0.95, 0.0, 1.0, 0.5]
    lambdas += [float(np.round(rng.uniform(0, 1), 3)) for _ in range(8)]
    cases = []
    for i, lam in enumerate(lambdas):
        L = [1, 1, 4, 4, 6, 8][i] if i < 6 else int(rng.integers(1, 9))
        rewards = np.zeros(L)
        if rng.random() < 0.6:
            rewards += np.round(-0.1 * rng.normal(size=L), 4)  # -β·log(π/π_ref) on every token
        rewards[-1] += float(rng.integers(0, 2))
        values = np.round(rng.uniform(0, 1, size=L), 4)
        shown = [np.array2string(a, separator=", ", max_line_width=10_000) for a in (rewards, values)]
        cases.append(Case((rewards, values, lam), f"rewards {shown[0]}, values {shown[1]}, λ = {lam:g}"))
    return cases


register("4.5-critic-free-advantages", "RLOO, GRPO and ReMax advantages for one group", _advantage_cases,
         estimators.advantages, kind="array")
register("4.5-gae", "GAE(λ) advantages along one response (γ = 1)", _gae_cases,
         lambda rewards, values, lam: gae.gae(rewards, values, lam), kind="array")

allow("4.5-critic-free-advantages", "nothing of toy but its constants (toy.estimators.GRPO_EPS)")
allow("4.5-gae", "nothing of toy but its constants")

forbid("4.5-critic-free-advantages", "each method's baseline written out", "toy.estimators.advantages")
forbid("4.5-gae", "GAE(λ) from the TD errors", "toy.gae.gae", "toy.gae.gae_table")
