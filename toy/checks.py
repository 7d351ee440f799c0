"""Input checks shared by the package: every bad value becomes a ValueError that names it and what is allowed."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

import numpy as np


def choose(kind: str, name, allowed: Mapping):
    """Return ``allowed[name]``, or raise ValueError listing the allowed names."""
    try:
        return allowed[name]
    except (KeyError, TypeError):
        names = ", ".join(repr(k) for k in allowed)
        raise ValueError(f"unknown {kind} {name!r}; allowed: {names}") from None


def positive_finite(name: str, value) -> float:
    """A real number > 0 that is neither NaN nor infinite (temperatures, KL coefficients...)."""
    try:
        x = float(value)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be a positive finite number, got {value!r}") from None
    if not math.isfinite(x) or x <= 0:
        raise ValueError(f"{name} must be a positive finite number, got {value!r}")
    return x


def in_range(name: str, value, low: float, high: float) -> float:
    """A finite real number with low <= value <= high."""
    try:
        x = float(value)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be a number in [{low}, {high}], got {value!r}") from None
    if not (low <= x <= high):
        raise ValueError(f"{name} must be a number in [{low}, {high}], got {value!r}")
    return x


def positive_int(name: str, value, low: int = 1, high: int | None = None) -> int:
    """An integer with low <= value (<= high when given)."""
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise ValueError(f"{name} must be an integer >= {low}, got {value!r}")
    if value < low or (high is not None and value > high):
        upper = f" and <= {high}" if high is not None else ""
        raise ValueError(f"{name} must be an integer >= {low}{upper}, got {value!r}")
    return int(value)


def tokens(name: str, seq, n_actions: int) -> tuple[int, ...]:
    """A sequence of token ids, each an integer in range(n_actions)."""
    if isinstance(seq, (str, bytes)) or not isinstance(seq, (Sequence, np.ndarray)):
        raise ValueError(f"{name} must be a sequence of token ids, got {seq!r}")
    out = []
    for tok in seq:
        if isinstance(tok, bool) or not isinstance(tok, (int, np.integer)) or not 0 <= tok < n_actions:
            raise ValueError(
                f"{name} {tuple(seq)!r} has token {tok!r}; allowed tokens are the integers 0 to {n_actions - 1}"
            )
        out.append(int(tok))
    return tuple(out)
