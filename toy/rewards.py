"""Verifiable rewards r(x, y) for the toy: plain functions ``reward(prompt, response) -> float``.

``response`` is a tuple of digit tokens (EOS already removed, so it may be shorter than the length limit).
Any Python function with this signature works as a reward everywhere in the package.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable

import numpy as np

from . import checks
from .policy import MAX_LENGTH, _strip_eos, check_prompt
from .vocab import VOCAB_SIZE

Reward = Callable[[int, tuple], float]


def _digits(prompt, response) -> tuple[int, tuple[int, ...]]:
    return check_prompt(prompt), checks.tokens("response", response, VOCAB_SIZE)


def sum_to_target(prompt: int, response: tuple) -> float:
    """1 when the tokens sum to the prompt's target digit mod 5, else 0 (the book's default reward)."""
    prompt, response = _digits(prompt, response)
    return float(sum(response) % VOCAB_SIZE == prompt % VOCAB_SIZE)


def first_token(prompt: int, response: tuple) -> float:
    """1 when the first token is the target digit, else 0: decided by the first token alone."""
    prompt, response = _digits(prompt, response)
    return float(len(response) > 0 and response[0] == prompt)


def count_target(prompt: int, response: tuple) -> float:
    """How many tokens equal the target digit: one point per token, so credit belongs to every position."""
    prompt, response = _digits(prompt, response)
    return float(sum(tok == prompt for tok in response))


REWARDS: dict[str, Reward] = {
    "sum_to_target": sum_to_target,
    "first_token": first_token,
    "count_target": count_target,
}
"""Name → reward function."""


def get_reward(reward) -> Reward:
    """A reward function from a name in ``REWARDS`` or any callable ``reward(prompt, response)``."""
    if callable(reward):
        return reward
    return checks.choose("reward", reward, REWARDS)


def reward_name(reward) -> str:
    """A short label for a reward: its name in REWARDS, else the function's name."""
    fn = get_reward(reward)
    for name, f in REWARDS.items():
        if f is fn:
            return name
    return getattr(fn, "__name__", repr(fn))


_TABLES: dict = {}


def _accumulate(prompt: int, length: int, n_actions: int, step) -> np.ndarray:
    """Fold ``step(acc, token)`` over the digits before the first EOS of every sequence, one depth at a time:
    returns the accumulator for every sequence, shape (n_actions,)*length (small ints)."""
    tok = np.arange(n_actions, dtype=np.int8)
    acc, alive = np.zeros((), dtype=np.int8), np.ones((), dtype=bool)
    for _ in range(length):
        live = alive[..., None] & (tok < VOCAB_SIZE)  # this token is a digit the reward reads
        acc = np.where(live, step(acc[..., None], tok), acc[..., None])
        alive = live
    return acc


def _sum_to_target_table(prompt, length, n_actions):
    total = _accumulate(prompt, length, n_actions, lambda acc, tok: (acc + tok) % VOCAB_SIZE)
    return (total == prompt % VOCAB_SIZE).astype(float)


def _first_token_table(prompt, length, n_actions):
    table = np.zeros((n_actions,) * length)
    table[prompt] = 1.0
    return table


def _count_target_table(prompt, length, n_actions):
    return _accumulate(prompt, length, n_actions, lambda acc, tok: acc + (tok == prompt)).astype(float)


_VECTORISED = {sum_to_target: _sum_to_target_table, first_token: _first_token_table,
               count_target: _count_target_table}
"""Built-in rewards whose whole table numpy computes at once; any other reward is called once per response."""


def reward_table(reward, prompt, length: int, n_actions: int = VOCAB_SIZE) -> np.ndarray:
    """r(x, y) for every response y: shape (n_actions,)*length.

    With n_actions = VOCAB_SIZE + 1 the last token is EOS and a sequence is read up to its first EOS.
    The built-in rewards are computed as whole arrays; any other reward is called once per response. The table is
    cached by (function, prompt, length, n_actions) and read-only.
    """
    fn = get_reward(reward)
    prompt = check_prompt(prompt)
    length = checks.positive_int("length", length, low=1, high=MAX_LENGTH)
    n_actions = checks.positive_int("n_actions", n_actions, low=VOCAB_SIZE, high=VOCAB_SIZE + 1)
    checks.enumeration(f"a reward table of length {length} with {n_actions} tokens", n_actions**length,
                       smaller="a shorter response length (or eos=False)")
    try:
        key = (fn, prompt, length, n_actions)
        hash(key)
    except TypeError:
        key = None  # an unhashable reward: computed every time
    if key is None or key not in _TABLES:
        if fn in _VECTORISED:
            table = _VECTORISED[fn](prompt, length, n_actions)
        else:
            table = _slow_table(fn, prompt, length, n_actions)
        table.flags.writeable = False
        if key is not None:
            if len(_TABLES) > 256:
                _TABLES.clear()
            _TABLES[key] = table
        return table
    return _TABLES[key]


def _slow_table(fn, prompt, length, n_actions):
    table = np.empty((n_actions,) * length)
    for ys in itertools.product(range(n_actions), repeat=length):
        digits = _strip_eos(ys)
        r = fn(prompt, digits)
        if isinstance(r, bool) or not isinstance(r, (int, float, np.integer, np.floating)) or not math.isfinite(r):
            raise ValueError(
                f"reward {reward_name(fn)!r} returned {checks.show(r)} for prompt {prompt} and response "
                f"{digits!r}; a reward must return a finite number"
            )
        table[ys] = r
    return table
