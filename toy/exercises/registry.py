"""The exercises' registry: how a section's module declares its checked exercises (``register``), what each may
use of ``toy`` (``allow``, from ``forbidden``) and the shortcuts its messages name (``forbid``), and how it draws
its hidden cases (``Case``, ``random_setting``). ``toy.exercises`` runs the checks.

The section modules (``section41`` ...) import from here, not from ``toy.exercises``, which imports them.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from .. import checks
from ..policy import MAX_LENGTH, PRESETS
from .forbidden import ALLOWED, CAPABILITIES, Allowed, Forbidden, allowed_for

KINDS = ("number", "array")
"""What an exercise's answer is: one number, or an array compared entry by entry."""


@dataclass
class Case:
    """One hidden input: ``args`` for the student's function, ``description`` of them in words."""

    args: tuple
    description: str


@dataclass
class Exercise:
    """A checkable exercise: how to draw cases, the reference answer, and how answers are compared."""

    name: str
    title: str
    cases: Callable[[np.random.Generator], list[Case]]
    reference: Callable
    kind: str = "number"  # "number" or "array"
    tolerance: float = 1e-9
    forbidden: Forbidden | None = None
    rtol: float | None = None  # relative tolerance; None: the same as ``tolerance``

    @property
    def relative(self) -> float:
        """The relative tolerance: ``got`` matches ``want`` within ``max(tolerance, relative * abs(want))``."""
        return self.tolerance if self.rtol is None else self.rtol

    @property
    def allowed(self) -> Allowed:
        """What the exercise may use of ``toy`` (``allow``; nothing but its constants if it declares nothing)."""
        return allowed_for(self.name)


EXERCISES: dict[str, Exercise] = {}


def register(name: str, title: str, cases: Callable, reference: Callable, kind: str = "number",
             tolerance: float = 1e-9, rtol: float | None = None) -> Exercise:
    """Add an exercise: ``cases(rng) -> list[Case]`` draws its hidden inputs, ``reference(*args)`` answers them.

    An answer matches within ``max(tolerance, rtol * abs(reference))``; ``rtol`` defaults to ``tolerance``. A larger
    ``rtol`` suits an answer whose correct formulas lose more digits than 1e-9 of it to rounding."""
    name, title = checks.text("name", name), checks.text("title", title)
    for arg, fn in (("cases", cases), ("reference", reference)):
        if not callable(fn):
            raise checks.fail(arg, "a function", fn)
    checks.choose("exercise kind", kind, {k: k for k in KINDS})
    tolerance = checks.positive_finite("tolerance", tolerance)
    rtol = None if rtol is None else checks.positive_finite("rtol", rtol)
    EXERCISES[name] = Exercise(name, title, cases, reference, kind, tolerance, rtol=rtol)
    return EXERCISES[name]


def allow(name: str, uses: str, *capabilities: str) -> Allowed:
    """Declare what of ``toy`` exercise ``name`` may use, in words and as names from ``CAPABILITIES``:
    ``allow("4.1-value", "a policy's next-token probabilities and the reward", "policy.next_token_probs", "reward")``.
    """
    if name not in EXERCISES:
        raise ValueError(f"allow: there is no exercise {name!r}")
    unknown = [c for c in capabilities if c not in CAPABILITIES]
    if unknown or len(set(capabilities)) != len(capabilities):
        raise ValueError(f"allow({name!r}): {unknown or 'a capability named twice'}; known: {', '.join(CAPABILITIES)}")
    if not isinstance(uses, str) or not uses.strip():
        raise ValueError(f"allow({name!r}): say in words what the exercise may use")
    ALLOWED[name] = Allowed(uses, tuple(capabilities))
    return ALLOWED[name]


def forbid(name: str, asks: str, *references: str) -> Forbidden:
    """Declare what exercise ``name`` asks for and the shortcuts its messages name: ``forbid("4.1-value", "V(s)",
    "toy.value")``. Everything that ``allow`` does not list is out, named or not."""
    # resolved when a check runs (toy is still being imported here); tests resolve every declaration
    EXERCISES[name].forbidden = Forbidden(asks, tuple(references))
    return EXERCISES[name].forbidden


_PRESET_ROUNDS: dict[int, tuple[np.random.Generator, list[str]]] = {}


def random_setting(rng: np.random.Generator, length: int | None = None) -> tuple[str, float, int]:
    """A random (preset, temperature on 0.1..10, length 1..4) for drawing hidden cases.

    The presets come from one generator in shuffled rounds of all of ``PRESETS``, so any five consecutive draws
    from it cover every preset: an exercise's hidden cases meet every kind of prior."""
    if not isinstance(rng, np.random.Generator):
        raise checks.fail("rng", "a numpy Generator", rng)
    if length is not None:
        length = checks.positive_int("length", length, low=1, high=MAX_LENGTH)
    if id(rng) not in _PRESET_ROUNDS or _PRESET_ROUNDS[id(rng)][0] is not rng:
        if len(_PRESET_ROUNDS) > 64:
            _PRESET_ROUNDS.clear()
        _PRESET_ROUNDS[id(rng)] = (rng, [])  # the generator is kept, so its id is not reused meanwhile
    queue = _PRESET_ROUNDS[id(rng)][1]
    if not queue:
        queue.extend(str(p) for p in rng.permutation(sorted(PRESETS)))
    preset = queue.pop()
    temperature = float(np.round(10 ** rng.uniform(-1, 1), 3))
    length = int(rng.integers(1, 5)) if length is None else length
    return preset, temperature, length
