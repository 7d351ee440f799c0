"""Exploration by sampling the prior: how often π_ref's samples are rewarded, how long until the first success,
and how noisy the policy gradient is, all as π_ref concentrates (lower temperature, a sharper preset).

The policy gradient here is the single-sample REINFORCE estimate for the tabular parameterisation (one softmax
over logits z_s per state s, as ``toy.TabularPolicy``)::

    g(y) = (r(x, y) − b) ∇_z log π(y | x),    ∇_{z_s} log π(y | x) = e_{y_t} − π(· | s_t)  at s = s_t(y)

whose mean is the exact gradient ∂J/∂z_{s,a} = P(s) π(a | s) A(s, a), for any baseline b that does not depend
on y. Everything is computed by enumerating the responses of one prompt.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from . import checks
from .exact import values
from .policy import Policy, check_policy, check_prompt
from .rewards import reward_table


def _check_policy(policy) -> Policy:
    check_policy("policy", policy, responses=True)
    return policy


def success_probability(policy: Policy, reward, prompt) -> float:
    """P(r(x, y) > 0) for y ~ π(· | x): the chance that one sample earns any reward."""
    _check_policy(policy)
    table = reward_table(reward, prompt, policy.length, policy.n_actions)
    # a sum of probabilities: when every response is rewarded, rounding can take it just past 1 (1.0000000000000016)
    return float(min(policy.response_probs(prompt)[table > 0].sum(), 1.0))


def effective_responses(policy: Policy, prompt) -> float:
    """exp(H(π(· | x))): the number of equally likely responses with the same entropy as π (its perplexity)."""
    _check_policy(policy)
    P = policy.response_probs(prompt).ravel()
    P = P[P > 0]
    return float(np.exp(-(P * np.log(P)).sum()))


def first_success_cdf(p: float, n) -> np.ndarray:
    """P(N ≤ n) = 1 − (1 − p)^n for N, the number of samples up to and including the first success
    (geometric, with success probability p per sample). Its mean is 1/p."""
    p = checks.probability("p (the success probability)", p)
    n = checks.array("n", n)
    if np.any(n < 0):
        raise checks.fail("n", "sample counts >= 0", n)
    return -np.expm1(n * np.log1p(-p)) if p < 1 else (n >= 1).astype(float)


class Stream(NamedTuple):
    """A stream of responses sampled from π: which were rewarded, and the waiting times between successes."""

    rewarded: np.ndarray  # (n,) bool
    waits: np.ndarray  # samples needed for each success, counting from the previous one (ints >= 1)


def sample_stream(policy: Policy, reward, prompt, n: int, rng=None) -> Stream:
    """Sample n responses from π(· | x) in order and record which earned a reward (seeded: rng or seed 0)."""
    _check_policy(policy)
    n = checks.positive_int("n", n, low=1)
    rng = checks.rng("rng", rng)
    table = reward_table(reward, prompt, policy.length, policy.n_actions)
    ys = policy.sample(prompt, n, rng=np.random.default_rng(0 if rng is None else rng))
    rewarded = table[tuple(ys.T)] > 0
    hits = np.flatnonzero(rewarded)
    return Stream(rewarded, np.diff(np.concatenate([[-1], hits])))


class GradientMoments(NamedTuple):
    """Moments of the single-sample REINFORCE estimate g (see the module docstring)."""

    signal: float  # ‖E g‖² = ‖∇J‖²
    noise: float  # tr Cov(g) = E‖g‖² − ‖∇J‖²

    @property
    def noise_to_signal(self) -> float:
        """tr Cov(g) / ‖∇J‖²: about how many samples the mean needs before its noise is as large as its signal
        (infinite when the gradient is zero)."""
        return self.noise / self.signal if self.signal > 0 else float("inf")


def gradient_moments(policy: Policy, reward, prompt, baseline: str = "value") -> GradientMoments:
    """‖∇J‖² and tr Cov(g) for g = (r − b) ∇_z log π(y | x), exactly, with b = V(x) (``"value"``), 0 (``"none"``)
    or the variance-minimising constant b* = E[r ‖∇ log π‖²] / E[‖∇ log π‖²] (``"optimal"``, ``optimal_baseline``)."""
    _check_policy(policy)
    checks.choose("baseline", baseline, {"value": 0, "none": 0, "optimal": 0})
    x = check_prompt(prompt)
    L = policy.length
    probs = [policy.prefix_probs(x, t) for t in range(L)]
    V = values(policy, reward, x)
    reach = np.ones(())
    signal = 0.0
    score_sq = np.zeros(())  # ‖∇ log π(y_≤t)‖² accumulated along the prefix
    for t in range(L):
        grad = reach[..., None] * probs[t] * (V[t + 1] - V[t][..., None])  # ∂J/∂z_{s,a}, s at depth t
        signal += float((grad**2).sum())
        # ‖e_a − π(·|s)‖² = 1 − 2π(a|s) + Σ_b π(b|s)²
        block = 1.0 - 2.0 * probs[t] + (probs[t] ** 2).sum(axis=-1, keepdims=True)
        score_sq = score_sq[..., None] + block
        reach = reach[..., None] * probs[t]
    if baseline == "optimal":
        b = float((reach * V[L] * score_sq).sum() / (reach * score_sq).sum())
    else:
        b = float(V[0]) if baseline == "value" else 0.0
    second = float((reach * (V[L] - b) ** 2 * score_sq).sum())
    return GradientMoments(signal, max(second - signal, 0.0))


def optimal_baseline(policy: Policy, reward, prompt) -> float:
    """The constant baseline with the least tr Cov(g): b* = E[r ‖∇_z log π(y|x)‖²] / E[‖∇_z log π(y|x)‖²], for the
    logits z of one softmax per state. It weights each response by the size of its score, so it differs from V(x)
    when rewarded and unrewarded responses have scores of different sizes."""
    _check_policy(policy)
    x = check_prompt(prompt)
    L = policy.length
    probs = [policy.prefix_probs(x, t) for t in range(L)]
    reach, score_sq = np.ones(()), np.zeros(())
    for t in range(L):
        score_sq = score_sq[..., None] + 1.0 - 2.0 * probs[t] + (probs[t] ** 2).sum(axis=-1, keepdims=True)
        reach = reach[..., None] * probs[t]
    r = reward_table(reward, x, L, policy.n_actions)
    return float((reach * r * score_sq).sum() / (reach * score_sq).sum())
