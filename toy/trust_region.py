"""The clipped surrogate objective of PPO, with DAPO's asymmetric "clip-higher" as an option.

For a token with probability ratio ρ = π_θ(a | s) / π_old(a | s) and advantage A, PPO maximises::

    min(ρ·A, clip(ρ, 1 − ε_low, 1 + ε_high)·A)

with ε_low = ε_high = 0.2; DAPO raises ε_high to 0.28 so that rare tokens can grow.
"""

from __future__ import annotations

import numpy as np

from . import checks


def _check(ratio, advantage, eps_low, eps_high):
    eps_low = checks.in_range("eps_low", eps_low, 0.0, 1.0)
    eps_high = checks.non_negative_finite("eps_high", eps_high)
    ratio, advantage = checks.array("ratio", ratio), checks.array("advantage", advantage)
    if np.any(ratio < 0):
        raise checks.fail("ratio", "probability ratios >= 0", ratio)
    checks.broadcastable(("ratio", "advantage"), ratio, advantage)
    return ratio, advantage, eps_low, eps_high


def clipped_objective(ratio, advantage, eps_low: float = 0.2, eps_high: float = 0.2) -> np.ndarray:
    """min(ρ·A, clip(ρ, 1 − ε_low, 1 + ε_high)·A), elementwise (broadcasting ratio and advantage)."""
    ratio, advantage, eps_low, eps_high = _check(ratio, advantage, eps_low, eps_high)
    return np.minimum(ratio * advantage, np.clip(ratio, 1 - eps_low, 1 + eps_high) * advantage)


def clipped_gradient_mask(ratio, advantage, eps_low: float = 0.2, eps_high: float = 0.2) -> np.ndarray:
    """1 where the clipped objective still passes gradient to ρ (the unclipped term is the min), else 0."""
    ratio, advantage, eps_low, eps_high = _check(ratio, advantage, eps_low, eps_high)
    clipped = ((advantage > 0) & (ratio > 1 + eps_high)) | ((advantage < 0) & (ratio < 1 - eps_low))
    return (~clipped).astype(float)
