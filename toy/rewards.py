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
from .policy import VOCAB_SIZE, check_prompt, strip_eos

Reward = Callable[[int, tuple], float]


def sum_to_target(prompt: int, response: tuple) -> float:
    """1 when the tokens sum to the prompt's target digit mod 5, else 0 (the book's default reward)."""
    return float(sum(response) % VOCAB_SIZE == prompt % VOCAB_SIZE)


def first_token(prompt: int, response: tuple) -> float:
    """1 when the first token is the target digit, else 0: decided by the first token alone."""
    return float(len(response) > 0 and response[0] == prompt)


def count_target(prompt: int, response: tuple) -> float:
    """How many tokens equal the target digit: one point per token, so credit belongs to every position."""
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


def reward_table(reward, prompt, length: int, n_actions: int = VOCAB_SIZE) -> np.ndarray:
    """r(x, y) for every response y: shape (n_actions,)*length.

    With n_actions = VOCAB_SIZE + 1 the last token is EOS and a sequence is read up to its first EOS.
    The reward is called once per response and the table cached by (function, prompt, length, n_actions).
    """
    fn = get_reward(reward)
    prompt = check_prompt(prompt)
    key = (fn, prompt, length, n_actions)
    if key not in _TABLES:
        table = np.empty((n_actions,) * length)
        for ys in itertools.product(range(n_actions), repeat=length):
            r = fn(prompt, strip_eos(ys))
            if isinstance(r, bool) or not isinstance(r, (int, float, np.integer, np.floating)) or not math.isfinite(r):
                raise ValueError(
                    f"reward {reward_name(fn)!r} returned {r!r} for prompt {prompt} and response "
                    f"{strip_eos(ys)!r}; a reward must return a finite number"
                )
            table[ys] = r
        table.flags.writeable = False
        if len(_TABLES) > 256:
            _TABLES.clear()
        _TABLES[key] = table
    return _TABLES[key]
