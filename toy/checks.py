"""Input checks shared by the package: every bad value becomes a ValueError that names it and what is allowed.

Each validator takes the argument's name first and returns the value in a clean form (a float, an int, a float
array, a tuple of tokens). Its error reads ``<name> must be <what is allowed>, got <value, abbreviated>``.
Validators for the toy's own tokens (prompts, prefixes and responses with their EOS rules, on the constants of
``toy.vocab``) live here too, so that every module refuses bad input in the same words; a policy is checked by
``toy.policy.check_policy``, beside the class it checks.

Size guards: code that enumerates (responses, groups of rewards, compositions...) first estimates how many items
it would build and calls ``enumeration`` with that size; beyond ``MAX_ENUMERATION`` it refuses at once.
"""

from __future__ import annotations

import math
import numbers
import reprlib
from collections.abc import Mapping, Sequence

import numpy as np

from .vocab import EOS, PROMPTS, VOCAB_SIZE

MAX_ENUMERATION = 20_000_000
"""Largest number of items (responses, table entries, groups...) an enumeration may build: about 160 MB of floats.
Enough for every response of length 10 over the five digits (5**10 ≈ 9.8 million), not for length 10 with EOS
(6**10 ≈ 60 million)."""

PROBABILITY_TOLERANCE = 1e-6
"""How far from 1 the sum of a probability vector may be."""

_repr = reprlib.Repr()
_repr.maxstring, _repr.maxother, _repr.maxlist, _repr.maxtuple, _repr.maxdict = 40, 40, 6, 6, 4


SHOW_LIMIT = 80
"""Longest text ``show`` gives for a value in an error message."""


def show(value) -> str:
    """A short repr of ``value`` for an error message (arrays as their shape and first entries)."""
    if isinstance(value, np.ndarray):
        if value.size <= 6:
            return repr(value.tolist()) if value.ndim else repr(value.item())
        flat = ", ".join(f"{v:.4g}" if isinstance(v, float) else repr(v) for v in value.ravel()[:4].tolist())
        text = f"array of shape {value.shape} [{flat}, ...]"
    else:
        text = _repr.repr(value)
    return text if len(text) <= SHOW_LIMIT else text[: SHOW_LIMIT - 3] + "..."


def fail(name: str, allowed: str, value) -> ValueError:
    """The package's one error message: ``<name> must be <allowed>, got <value>``."""
    return ValueError(f"{name} must be {allowed}, got {show(value)}")


def choose(kind: str, name, allowed: Mapping):
    """Return ``allowed[name]``, or raise ValueError listing the allowed names."""
    try:
        return allowed[name]
    except (KeyError, TypeError):
        names = ", ".join(repr(k) for k in allowed)
        raise ValueError(f"unknown {kind} {show(name)}; allowed: {names}") from None


def _real(name: str, value, allowed: str) -> float:
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (numbers.Real, np.ndarray)):
        raise fail(name, allowed, value)
    if isinstance(value, np.ndarray) and (value.ndim != 0 or not np.issubdtype(value.dtype, np.number)):
        raise fail(name, allowed, value)
    try:
        return float(value)
    except (TypeError, ValueError, OverflowError):
        raise fail(name, allowed, value) from None


def finite(name: str, value) -> float:
    """A real number that is neither NaN nor infinite."""
    x = _real(name, value, "a finite number")
    if not math.isfinite(x):
        raise fail(name, "a finite number", value)
    return x


def positive_finite(name: str, value) -> float:
    """A real number > 0 that is neither NaN nor infinite (temperatures, KL coefficients...)."""
    x = _real(name, value, "a positive finite number")
    if not math.isfinite(x) or x <= 0:
        raise fail(name, "a positive finite number", value)
    return x


def non_negative_finite(name: str, value) -> float:
    """A finite real number >= 0 (a penalty that may be switched off)."""
    x = _real(name, value, "a finite number >= 0")
    if not math.isfinite(x) or x < 0:
        raise fail(name, "a finite number >= 0", value)
    return x


def in_range(name: str, value, low: float, high: float) -> float:
    """A finite real number with low <= value <= high."""
    allowed = f"a number in [{low:g}, {high:g}]"
    x = _real(name, value, allowed)
    if not (low <= x <= high):
        raise fail(name, allowed, value)
    return x


def probability(name: str, value) -> float:
    """A number in [0, 1] (ε of a per-step mistake, a success rate, ...)."""
    return in_range(name, value, 0.0, 1.0)


def discount(name: str, value) -> float:
    """γ or λ: a number in [0, 1]."""
    return in_range(name, value, 0.0, 1.0)


def learning_rate(name: str, value) -> float:
    """A step size: positive and finite."""
    return positive_finite(name, value)


def positive_int(name: str, value, low: int = 1, high: int | None = None) -> int:
    """An integer with low <= value (<= high when given)."""
    upper = f" and <= {high:,}" if high is not None else ""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (numbers.Integral, np.integer)):
        raise fail(name, f"an integer >= {low}{upper}", value)
    if value < low or (high is not None and value > high):
        raise fail(name, f"an integer >= {low}{upper}", value)
    return int(value)


def horizon(name: str, value, high: int | None = None) -> int:
    """A number of steps T >= 1 (at most ``high`` when it is enumerated step by step)."""
    return positive_int(name, value, low=1, high=high)


def array(name: str, value, ndim: int | None = None, shape: tuple | None = None, min_ndim: int = 0,
          allow_empty: bool = True) -> np.ndarray:
    """A float array of finite numbers; ``shape`` may hold None for any size along an axis."""
    if isinstance(value, (str, bytes, Mapping)) or value is None:
        raise fail(name, "an array of finite numbers", value)
    try:
        a = np.asarray(value, dtype=float)
    except (TypeError, ValueError):
        raise fail(name, "an array of finite numbers", value) from None
    if ndim is not None and a.ndim != ndim:
        raise ValueError(f"{name} must be an array with {ndim} dimension(s), got shape {a.shape}: {show(value)}")
    if a.ndim < min_ndim:
        raise ValueError(f"{name} must have at least {min_ndim} dimension(s), got shape {a.shape}")
    if shape is not None and (a.ndim != len(shape)
                              or any(w is not None and w != s for w, s in zip(shape, a.shape, strict=True))):
        want = "(" + ", ".join("n" if w is None else str(w) for w in shape) + ("," if len(shape) == 1 else "") + ")"
        raise ValueError(f"{name} must have shape {want}, got {a.shape}")
    if not allow_empty and a.size == 0:
        raise ValueError(f"{name} must not be empty, got shape {a.shape}")
    if not np.all(np.isfinite(a)):
        bad = a[~np.isfinite(a)].ravel()[0]
        raise ValueError(f"{name} must hold finite numbers only, got {bad} in {show(a)}")
    return a


def same_shape(names: tuple[str, str], a: np.ndarray, b: np.ndarray) -> None:
    """ValueError unless the two arrays have equal shapes."""
    if a.shape != b.shape:
        raise ValueError(f"{names[0]} and {names[1]} must have the same shape, got {a.shape} and {b.shape}")


def broadcastable(names: tuple[str, str], a: np.ndarray, b: np.ndarray) -> tuple:
    """The broadcast shape of two arrays, or ValueError naming both."""
    try:
        return np.broadcast_shapes(a.shape, b.shape)
    except ValueError:
        raise ValueError(f"{names[0]} and {names[1]} must broadcast together, got shapes {a.shape} and "
                         f"{b.shape}") from None


def probabilities(name: str, value, axis: int | None = None, positive: bool = False,
                  tol: float = PROBABILITY_TOLERANCE, ndim: int | None = None) -> np.ndarray:
    """A probability vector (or a stack of them along ``axis``; all entries when axis is None): finite, >= 0
    (> 0 with ``positive``), summing to 1 within ``tol``."""
    p = array(name, value, ndim=ndim)
    if p.size == 0:
        raise ValueError(f"{name} must be a probability distribution, got an empty array")
    low = "> 0" if positive else ">= 0"
    if np.any(p <= 0) if positive else np.any(p < 0):
        bad = p[p <= 0].ravel()[0] if positive else p[p < 0].ravel()[0]
        raise ValueError(f"{name} must be probabilities (entries {low}, summing to 1), got entry {bad:g} in {show(p)}")
    total = p.sum() if axis is None else p.sum(axis=axis)
    if np.any(np.abs(total - 1.0) > tol):
        worst = np.ravel(total)[np.argmax(np.abs(np.ravel(total) - 1.0))]
        raise ValueError(f"{name} must be probabilities summing to 1 (within {tol:g}), got a sum of {worst:.10g} "
                         f"in {show(p)}")
    return p


def token_array(name: str, value, n_actions: int, ndim: int = 2) -> np.ndarray:
    """An int array of token ids in range(n_actions), with ``ndim`` dimensions."""
    if isinstance(value, (str, bytes, Mapping)) or value is None:
        raise fail(name, f"an int array of token ids with {ndim} dimension(s)", value)
    a = np.asarray(value)
    if a.ndim != ndim:
        raise ValueError(f"{name} must be an int array with {ndim} dimension(s), got shape {a.shape}")
    if a.size and not np.issubdtype(a.dtype, np.integer):
        raise ValueError(f"{name} must hold integer token ids, got dtype {a.dtype}: {show(a)}")
    if a.size and (a.min() < 0 or a.max() >= n_actions):
        bad = a[(a < 0) | (a >= n_actions)].ravel()[0]
        raise ValueError(f"{name} has token {bad}; allowed tokens are the integers 0 to {n_actions - 1}")
    return a.astype(int)


def tokens(name: str, seq, n_actions: int) -> tuple[int, ...]:
    """A sequence of token ids, each an integer in range(n_actions)."""
    if isinstance(seq, (str, bytes)) or not isinstance(seq, (Sequence, np.ndarray)):
        raise fail(name, "a sequence of token ids", seq)
    if isinstance(seq, np.ndarray) and seq.ndim != 1:
        raise ValueError(f"{name} must be a 1-d sequence of token ids, got shape {seq.shape}")
    out = []
    for tok in seq:
        if (isinstance(tok, (bool, np.bool_)) or not isinstance(tok, (numbers.Integral, np.integer))
                or not 0 <= tok < n_actions):
            raise ValueError(
                f"{name} {show(tuple(seq))} has token {show(tok)}; allowed tokens are the integers 0 to {n_actions - 1}"
            )
        out.append(int(tok))
    return tuple(out)


def flag(name: str, value) -> bool:
    """True or False."""
    if not isinstance(value, (bool, np.bool_)):
        raise fail(name, "True or False", value)
    return bool(value)


def text(name: str, value) -> str:
    """A string."""
    if not isinstance(value, str):
        raise fail(name, "a string", value)
    return value


def rng(name: str, value) -> np.random.Generator:
    """A numpy Generator, or a seed (an integer >= 0; None means seed 0), as a Generator."""
    if isinstance(value, np.random.Generator):
        return value
    if value is None:
        return np.random.default_rng(0)
    return np.random.default_rng(positive_int(name, value, low=0))


# -- the toy's own objects -------------------------------------------------------------------------------------
def same_action_set(names: tuple[str, str], a, b) -> None:
    """Two policies with the same length and action set."""
    if a.length != b.length or a.n_actions != b.n_actions:
        raise ValueError(f"{names[0]} and {names[1]} must have the same length and action set, got length "
                         f"{a.length} with {a.n_actions} actions and length {b.length} with {b.n_actions}")


def prompt(name: str, value) -> int:
    """One of ``toy.PROMPTS``."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (numbers.Integral, np.integer)) \
            or int(value) not in PROMPTS:
        raise ValueError(f"unknown {name} {show(value)}; allowed prompts: {PROMPTS}")
    return int(value)


def prompts(name: str, value) -> tuple[int, ...]:
    """A non-empty sequence of prompts, without repeats."""
    if isinstance(value, (str, bytes, Mapping)) or not isinstance(value, (Sequence, np.ndarray)):
        raise fail(name, "a sequence of prompts", value)
    out = tuple(prompt(f"{name} entry", x) for x in value)
    if not out or len(set(out)) != len(out):
        raise fail(name, "a non-empty sequence of distinct prompts", value)
    return out


def prefix(name: str, value, length: int, eos: bool, strict: bool = False) -> tuple[int, ...]:
    """A prefix y_<t of a policy with ``length`` tokens: token ids, at most ``length`` of them (fewer than ``length``
    with ``strict``, a state that still has a next token). With EOS, a digit may not follow an EOS: the episode
    has ended (the rule of ``Policy.check_response``)."""
    toks = tokens(name, value, VOCAB_SIZE + int(eos))
    most = length - 1 if strict else length
    if len(toks) > most:
        raise ValueError(f"{name} {show(toks)} has {len(toks)} tokens; allowed: at most {most} "
                         f"(the response length is {length})")
    if eos and EOS in toks and any(t != EOS for t in toks[toks.index(EOS):]):
        raise ValueError(f"{name} {show(toks)} has a digit after EOS ({EOS}); after EOS only EOS may follow")
    return toks


def eos_rows(name: str, arr: np.ndarray, eos: bool) -> np.ndarray:
    """Rows of token ids (n, t) that keep the EOS rule: after an EOS only EOS (nothing to check without EOS)."""
    if eos and arr.size:
        after = np.maximum.accumulate(arr == EOS, axis=-1) & (arr != EOS)
        if after.any():
            row = arr[np.nonzero(after)[0][0]]
            raise ValueError(f"{name} has a row {show(row)} with a digit after EOS ({EOS}); after EOS only EOS "
                             "may follow")
    return arr


def enumeration(what: str, size: int, limit: int = MAX_ENUMERATION, smaller: str = "a smaller setting") -> int:
    """Refuse, at once, to enumerate ``size`` items when that is beyond ``limit``: the ValueError gives both and
    suggests a smaller setting."""
    if size > limit:
        raise ValueError(f"{what} would enumerate {count(size)} items, beyond the limit of {limit:,}; "
                         f"use {smaller}")
    return size


def count(size: int) -> str:
    """A count for a message: with thousands separators, or as a power of ten when it is huge."""
    size = int(size)
    if size < 10**15:
        return f"{size:,}"
    digits = str(size)
    return f"about {digits[0]}.{digits[1:3]}e{len(digits) - 1}"


def responses_of(policy_, what: str = "enumerating every response", name: str = "policy",
                 length: int | None = None) -> int:
    """The size guard of every entry point that builds an array over the token sequences of ``policy_``: K**length
    entries (``length`` defaults to the policy's response length; ``Policy.prefix_probs`` at depth t builds
    K**(t+1)). Beyond ``MAX_ENUMERATION`` it refuses at once; the error names the argument ``name``, the size and
    the limit."""
    length = policy_.length if length is None else length
    size = policy_.n_actions ** length
    return enumeration(f"{name} {show(policy_)}: {what} of length {length} with {policy_.n_actions} tokens",
                       size, smaller="a shorter response length (or eos=False)")
