"""Exact per-token credit for long responses (up to thousands of tokens), by dynamic programming.

Enumerating the prefix tree costs K^L: fine for the four-token toy, impossible at L = 1,000. But under a Markov
π_ref (the next token depends only on the previous one) the value of a state depends on the prefix only through
a small summary: the previous token and what the reward has accumulated so far. For the toy's rewards that
summary is finite, a small automaton over the tokens:

    sum_to_target   accumulator s = Σ_u y_u mod 5          terminal reward 1[s = x]
    first_token     accumulator s ∈ {start, hit, miss}      terminal reward 1[s = hit]
    count_target    no accumulator (one state)               one point per token: 1[y_t = x]

so V_t(prev, s) has K·S entries per position and one backward pass costs O(L·K²·S) instead of O(K^L):

    V_L(prev, s)  = terminal(s)
    V_t(prev, s)  = Σ_a π(a | prev) [c(a) + V_{t+1}(a, next(s, a))]          (c: per-token reward)
    A(s_t, a)     = c(a) + V_{t+1}(a, next(s, a)) − V_t(prev, s)

A forward pass carries the probability μ_t(prev, s) of each summary, which gives E|A_t| and E[A_t²]. The noise
the sequence-level view adds at position t, E[(r − V(x) − A_t)²], equals Var(r) − E[A_t²] because the A_t are
martingale differences (uncorrelated, summing to r − V(x)), so Var(r) = Σ_t E[A_t²].
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from . import checks
from .policy import BigramPolicy, check_prompt, log_softmax, softmax
from .vocab import VOCAB_SIZE

MAX_LENGTH = 100_000
"""Longest response the dynamic programme accepts."""

MAX_BIGRAM = 10
"""Longest ``MarkovPolicy.bigram`` (the enumerating code's limit, ``toy.policy.MAX_LENGTH``)."""

LONG_REWARDS = ("sum_to_target", "first_token", "count_target")
"""The toy rewards with a finite accumulator, so their long-response credit is exact by dynamic programming."""


MARKOV_PRESETS = {"pretrained": 1.0, "sharp": 3.0, "uniform": 0.0}
"""The Markov policy's presets: the 'pretrained' counting habit, scaled by this factor."""


class MarkovPolicy:
    """A stationary Markov π_ref: π(a | prev) for every position, with the prompt digit as the first 'prev'.

    It uses the 'pretrained' habit of ``toy.reference_policy`` at its first position (after digit p it mostly
    writes p+1, sometimes repeats p, prefers small digits) but does not sharpen along the response, so responses
    can be arbitrarily long. ``transition`` has shape (K, K); rows sum to one.
    """

    def __init__(self, preset: str = "pretrained", temperature: float = 1.0):
        scale = checks.choose("preset", preset, MARKOV_PRESETS)
        self.preset = preset
        self.temperature = checks.positive_finite("temperature", temperature)
        prev, a = np.meshgrid(np.arange(VOCAB_SIZE), np.arange(VOCAB_SIZE), indexing="ij")
        logits = scale * (1.5 * (a == (prev + 1) % VOCAB_SIZE) + 0.8 * (a == prev) - 0.3 * a)
        self.transition = softmax(log_softmax(logits) / self.temperature)

    def bigram(self, length: int) -> BigramPolicy:
        """The same policy as a ``toy.BigramPolicy`` of ``length`` tokens, so toy.exact can enumerate it."""
        length = checks.positive_int("length", length, low=1, high=MAX_BIGRAM)
        logits = np.broadcast_to(np.log(self.transition), (length, VOCAB_SIZE, VOCAB_SIZE))
        return BigramPolicy(logits, name=f"markov {self.preset}")

    def __repr__(self) -> str:
        return f"MarkovPolicy({self.preset!r}, temperature={self.temperature:g})"


class Automaton(NamedTuple):
    """A reward as a finite automaton: r(y) = Σ_t per_token[y_t] + terminal[s_L], s_{t+1} = step[s_t, y_t]."""

    start: int
    step: np.ndarray  # (S, K) next accumulator state
    terminal: np.ndarray  # (S,) reward at the end
    per_token: np.ndarray  # (K,) reward for each token


def automaton(reward: str, prompt) -> Automaton:
    """The accumulator of one of LONG_REWARDS for prompt x (see the module docstring)."""
    checks.choose("long-response reward", reward, {name: name for name in LONG_REWARDS})
    x = check_prompt(prompt)
    K = VOCAB_SIZE
    a = np.arange(K)
    if reward == "sum_to_target":
        step = (np.arange(5)[:, None] + a[None, :]) % 5
        return Automaton(0, step, (np.arange(5) == x % 5).astype(float), np.zeros(K))
    if reward == "first_token":  # states: 0 start, 1 hit, 2 miss
        step = np.array([np.where(a == x, 1, 2), np.ones(K, int), np.full(K, 2)])
        return Automaton(0, step, np.array([0.0, 1.0, 0.0]), np.zeros(K))
    return Automaton(0, np.zeros((1, K), dtype=int), np.zeros(1), (a == x).astype(float))


class LongCredit(NamedTuple):
    """Per-position credit of a long response, each an array of shape (L,), and V(x)."""

    mean_abs: np.ndarray  # E|A_t|
    mean_square: np.ndarray  # E[A_t²]: the signal at position t
    noise: np.ndarray  # E[(r − V(x) − A_t)²] = Var(r) − E[A_t²]
    value: float  # V(x) = E[r]


def credit(policy: MarkovPolicy, reward: str, prompt, length: int) -> LongCredit:
    """Exact E|A_t|, E[A_t²] and the sequence-level noise at every position t = 0..L−1, by dynamic programming.

    Cost O(L·K²·S) time and O(L·K·S) memory (K = 5 tokens, S accumulator states).
    """
    if not isinstance(policy, MarkovPolicy):
        raise ValueError(f"policy must be a toy.longrun.MarkovPolicy, got {policy!r}")
    auto = automaton(reward, prompt)
    x = check_prompt(prompt)
    L = checks.positive_int("length", length, low=1, high=MAX_LENGTH)
    T = policy.transition
    K, S = T.shape[0], auto.step.shape[0]
    tokens = np.arange(K)[None, :]
    # Backward pass: V[t] has shape (K prev, S); Q[s, a] = c(a) + V_{t+1}(a, step[s, a]) does not depend on prev.
    V = np.empty((L + 1, K, S))
    V[L] = auto.terminal[None, :]
    Q = np.empty((L, S, K))
    for t in range(L - 1, -1, -1):
        Q[t] = auto.per_token[None, :] + V[t + 1][tokens, auto.step]
        V[t] = T @ Q[t].T
    # Forward pass over the summary (prev, s), starting at (x, start).
    mu = np.zeros((K, S))
    mu[x, auto.start] = 1.0
    mean_abs, mean_sq = np.empty(L), np.empty(L)
    flat = (tokens * S + auto.step).ravel()  # index of (a, step[s, a]) in a (K, S) array, in (s, a) order
    for t in range(L):
        w = mu[:, :, None] * T[:, None, :]  # P(prev, s, a) at position t
        A = Q[t][None, :, :] - V[t][:, :, None]
        mean_abs[t] = (w * np.abs(A)).sum()
        mean_sq[t] = (w * A * A).sum()
        mu = np.bincount(flat, weights=w.sum(axis=0).ravel(), minlength=K * S).reshape(K, S)
    return LongCredit(mean_abs, mean_sq, mean_sq.sum() - mean_sq, float(V[0][x, auto.start]))


def credit_horizon(mean_square: np.ndarray, share: float = 0.9) -> int:
    """The fewest positions that together hold ``share`` of Σ_t E[A_t²] = Var(r) (the tokens that matter)."""
    share = checks.in_range("share", share, 0.0, 1.0)
    m = checks.array("mean_square", mean_square, ndim=1)
    if np.any(m < 0):
        raise checks.fail("mean_square", "mean squares >= 0", m)
    m = np.sort(m)[::-1]
    total = m.sum()
    if total <= 0:
        return 0
    return int(np.searchsorted(np.cumsum(m), share * total * (1 - 1e-12)) + 1)
