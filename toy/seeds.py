"""Numbers from random experiments, over seeds: what the prose quotes when a result depends on the draw.

A sampled experiment run once gives one draw of a random number. The book quotes such a number with its spread
over seeds, and a trend with how often it holds::

    final = toy.seeds.over_seeds(lambda s: run_critic(64, seed=s), seeds=range(20))
    toy.glue("critic_error", final)            # quoted with "{eval}`toy.quote("critic_error", ".3f")`"
    # -> "0.195 (0.140 to 0.288 over 20 seeds)"
    wins = toy.seeds.rate(lambda s: td_error(s) < mc_error(s), seeds=range(20))
    toy.glue("td_wins", wins)                  # -> "17 of 20 seeds"

``Spread`` formats as ``mean (min to max over n seeds)``, each number with the given format specification;
``Rate`` as ``k of n seeds`` (spec ``"%"``: ``85%``). Both keep their per-seed values, so a test can check what a
sentence says about them.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass

import numpy as np

from . import checks

__all__ = ["Rate", "Spread", "over_seeds", "rate"]


def _seed_list(seeds) -> tuple[int, ...]:
    try:
        out = tuple(seeds)
    except TypeError:
        raise checks.fail("seeds", "an iterable of integer seeds, such as range(20)", seeds) from None
    if not out or not all(isinstance(s, (int, np.integer)) and not isinstance(s, bool) for s in out):
        raise checks.fail("seeds", "a non-empty iterable of integer seeds, such as range(20)", seeds)
    if len(set(out)) != len(out):
        raise checks.fail("seeds", "distinct seeds (a repeated seed repeats its draw)", seeds)
    return tuple(int(s) for s in out)


def _at_each_seed(fn, name: str, allowed: str, seeds, checked) -> tuple[tuple[int, ...], tuple]:
    """``fn(s)`` at each seed ``s``, each result passed through ``checked(s, result)``: (seeds, results)."""
    if not callable(fn):
        raise checks.fail(name, allowed, fn)
    seeds = _seed_list(seeds)
    return seeds, tuple(checked(s, fn(s)) for s in seeds)


@dataclass(frozen=True)
class _OverSeeds:
    """What a result over seeds has: the seeds it was drawn at, in order."""

    seeds: tuple[int, ...]

    @property
    def n(self) -> int:
        """How many seeds."""
        return len(self.seeds)


@dataclass(frozen=True)
class Spread(_OverSeeds):
    """A random experiment's result at each seed. ``values[i]`` is the result at ``seeds[i]``."""

    values: tuple[float, ...]

    @property
    def mean(self) -> float:
        return float(np.mean(self.values))

    @property
    def lo(self) -> float:
        return float(np.min(self.values))

    @property
    def hi(self) -> float:
        return float(np.max(self.values))

    def __format__(self, spec: str) -> str:
        return f"{format(self.mean, spec)} ({format(self.lo, spec)} to {format(self.hi, spec)} over {self.n} seeds)"


@dataclass(frozen=True)
class Rate(_OverSeeds):
    """Whether a claim held at each seed. ``held[i]`` is the outcome at ``seeds[i]``."""

    held: tuple[bool, ...]

    @property
    def k(self) -> int:
        return int(sum(self.held))

    @property
    def fraction(self) -> float:
        return self.k / self.n

    def __format__(self, spec: str) -> str:
        if spec == "%":
            return f"{round(100 * self.fraction)}%"
        if spec:
            raise ValueError(f"a Rate's format must be '' (k of n seeds) or '%', got {spec!r}")
        return f"{self.k} of {self.n} seeds"


def over_seeds(run: Callable[[int], float], seeds: Iterable[int] = range(20)) -> Spread:
    """``run(seed)`` at each seed: a ``Spread`` of the results (each a finite number)."""
    def number(s: int, v) -> float:
        try:
            v = float(v)
        except (TypeError, ValueError):
            raise checks.fail(f"run({s})", "a number", v) from None
        if not np.isfinite(v):
            raise checks.fail(f"run({s})", "a finite number", v)
        return v

    return Spread(*_at_each_seed(run, "run", "a function of one seed returning a number", seeds, number))


def rate(holds: Callable[[int], bool], seeds: Iterable[int] = range(20)) -> Rate:
    """How often ``holds(seed)`` is true over ``seeds``."""
    def truth(s: int, v) -> bool:
        if not isinstance(v, (bool, np.bool_)):
            raise checks.fail(f"holds({s})", "True or False", v)
        return bool(v)

    return Rate(*_at_each_seed(holds, "holds", "a function of one seed returning True or False", seeds, truth))
