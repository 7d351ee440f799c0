"""On-policy distillation: the teacher's log-probabilities as a dense, per-token signal, against SFT on the
teacher's outputs.

The teacher is a better policy for the task: here the KL-regularised optimum π_T = π* ∝ π_ref·e^{r/β}
(``toy.kl.kl_regularised_optimum``), written autoregressively. Its per-token log-ratio to π_ref is

    log π_T(a | s) − log π_ref(a | s) = log Z(s·a) − log Z(s),    Z(s) = E_{π_ref}[e^{r/β} | s],

a "soft" advantage: as β grows it tends to A_ref(s, a)/β, so β times the teacher's signal sits where Figure 4.1's
exact credit sits, token by token, with no sampling of the outcome at all.

Three ways to move a student π_S (a tabular policy starting at π_ref) toward the task, all from sampled responses:

* ``on_policy``: the student samples y; token t gets the coefficient log π_T(y_t | s_t) − log π_S(y_t | s_t)
  (reverse KL per token, discount 0): a dense signal on the student's own states. With discount 0 a token is
  credited with its own log-ratio only, not with the log-ratios of the tokens after it, so this is a biased
  per-token surrogate of the gradient of KL(π_S ‖ π_T), with less variance than the unbiased one.
* ``sft``: the teacher samples y; every token gets coefficient 1 (maximum likelihood on the teacher's outputs,
  on the teacher's states): a stochastic gradient of the forward KL(π_T ‖ π_S).
* ``rl``: the student samples y and RLOO gives every token of response i the same advantage (one sparse reward).

After every step the student's task reward and its reverse KL to the teacher, KL(π_S ‖ π_T), are computed exactly:
the divergence on-policy distillation minimises, not the forward one SFT minimises. Every method takes steps of the
same constant size ``lr`` on the logits, and SFT's noise does not vanish at the teacher (its coefficient stays 1),
so how the methods compare depends on ``lr`` (section 4.4 runs them at several step sizes).
"""

from __future__ import annotations

from functools import lru_cache
from typing import NamedTuple

import numpy as np

from . import checks, estimators
from .exact import advantage_table
from .kl import kl_regularised_optimum
from .policy import Policy, check_policy, check_prompt, reference_policy
from .rewards import REWARDS, get_reward, reward_table
from .train import (
    Ascent,
    _tabular_loop,
    response_log_probs,
    sample_ids,
    sampled_token_log_probs,
    tabular_logits,
    token_gradient,
)
from .vocab import PROMPTS

METHODS = {
    "on_policy": "on-policy distillation: the student samples, the teacher scores every token",
    "sft": "SFT on the teacher's outputs: the teacher samples, maximum likelihood",
    "rl": "RL on the sparse reward (RLOO): one advantage per response",
}


@lru_cache(maxsize=64)
def teacher(beta: float = 0.3, reward="sum_to_target") -> Policy:
    """The teacher π_T ∝ π_ref·e^{r/β}, as an autoregressive (tabular) policy."""
    beta = checks.positive_finite("beta", beta)
    return kl_regularised_optimum(reference_policy(), reward, beta)


def _pair(student, teacher_, enumerate_: bool = False) -> None:
    """ValueError unless ``student`` and ``teacher_`` are policies over the same responses (each enumerable with
    ``enumerate_``)."""
    check_policy("student", student, responses=enumerate_)
    check_policy("teacher_", teacher_, responses=enumerate_)
    checks.same_action_set(("student", "teacher_"), student, teacher_)


def token_signal(student: Policy, teacher_: Policy, prompt, response) -> np.ndarray:
    """log π_T(y_t | s_t) − log π_S(y_t | s_t) for each token of ``response``: shape (L,)."""
    _pair(student, teacher_)
    prompt = check_prompt(prompt)
    response = checks.prefix("response", response, student.length, student.eos)
    if len(response) != student.length:
        raise ValueError(f"response must have {student.length} tokens, got {len(response)}: {response!r}")
    out = np.empty(len(response))
    for t, a in enumerate(response):
        out[t] = (np.log(teacher_.next_token_probs(prompt, response[:t])[a])
                  - np.log(student.next_token_probs(prompt, response[:t])[a]))
    return out


def signal_table(student: Policy, teacher_: Policy, prompt) -> np.ndarray:
    """``token_signal`` for every response at once: shape (K,)*L + (L,)."""
    _pair(student, teacher_, enumerate_=True)
    prompt = check_prompt(prompt)
    L, K = student.length, student.n_actions
    out = np.zeros((K,) * L + (L,))
    for t in range(L):
        d = np.log(teacher_.prefix_probs(prompt, t)) - np.log(student.prefix_probs(prompt, t))  # (K,)*(t+1)
        out[..., t] = d.reshape(d.shape + (1,) * (L - 1 - t))
    return out


def signal_alignment(student: Policy, teacher_: Policy, reward, prompt, beta: float) -> float:
    """Correlation, over tokens weighted by π_S, between β·(teacher's signal) and the exact advantage A(s_t, y_t)
    under π_S: how closely the dense teacher signal follows the exact credit."""
    _pair(student, teacher_, enumerate_=True)
    get_reward(reward)
    prompt = check_prompt(prompt)
    beta = checks.positive_finite("beta", beta)
    P = student.response_probs(prompt)
    s = beta * signal_table(student, teacher_, prompt)
    A = advantage_table(student, reward, prompt)
    w = np.broadcast_to(P[..., None], s.shape).ravel()
    s, A = s.ravel(), A.ravel()
    ms, ma = w @ s / w.sum(), w @ A / w.sum()
    cov = w @ ((s - ms) * (A - ma))
    return float(cov / np.sqrt((w @ (s - ms) ** 2) * (w @ (A - ma) ** 2)))


class SignalAgreement(NamedTuple):
    """How β·(teacher's signal) compares with the exact advantage A over the tokens π_S writes (each token weighted by
    its response's probability; tokens with A = 0 left out of ``sign`` and ``off_twofold``)."""

    sign: float  # share of the tokens where the two have the same sign
    rank: float  # weighted Spearman correlation: the correlation of their weighted ranks
    off_twofold: float  # share of the tokens where |β·signal| is more than twice or less than half |A|


def _weighted_ranks(v: np.ndarray, w: np.ndarray) -> np.ndarray:
    """Mid-ranks by weight: the weight below each value plus half its own (ties share the mean of theirs)."""
    order = np.argsort(v, kind="stable")
    mid = np.empty_like(v)
    mid[order] = np.cumsum(w[order]) - w[order] / 2
    _, which, counts = np.unique(v, return_inverse=True, return_counts=True)
    for k in np.flatnonzero(counts > 1):
        tie = which == k
        mid[tie] = w[tie] @ mid[tie] / w[tie].sum()
    return mid


def _weighted_corr(a: np.ndarray, b: np.ndarray, w: np.ndarray) -> float:
    ma, mb = w @ a / w.sum(), w @ b / w.sum()
    return float(w @ ((a - ma) * (b - mb)) / np.sqrt((w @ (a - ma) ** 2) * (w @ (b - mb) ** 2)))


def signal_agreement(student: Policy, teacher_: Policy, reward, prompt, beta: float) -> SignalAgreement:
    """Where β·(log π_T − log π_S)(s_t, y_t) follows the exact advantage A(s_t, y_t) under π_S, and where not: in
    sign, in rank, and in size (``SignalAgreement``), over every token of every response, weighted by π_S(y)."""
    _pair(student, teacher_, enumerate_=True)
    get_reward(reward)
    prompt = check_prompt(prompt)
    beta = checks.positive_finite("beta", beta)
    P = student.response_probs(prompt)
    s = (beta * signal_table(student, teacher_, prompt)).ravel()
    A = advantage_table(student, reward, prompt).ravel()
    w = np.broadcast_to(P[..., None], (P.shape + (student.length,))).ravel()
    nz = A != 0
    ratio = np.abs(s[nz]) / np.abs(A[nz])
    return SignalAgreement(float(w[nz] @ (np.sign(s[nz]) == np.sign(A[nz])) / w[nz].sum()),
                           _weighted_corr(_weighted_ranks(s, w), _weighted_ranks(A, w), w),
                           float(w[nz] @ ((ratio > 2) | (ratio < 0.5)) / w[nz].sum()))


class DistillCurves(NamedTuple):
    """Exact curves, shape (len(seeds), steps + 1): the student's task reward and KL(π_S ‖ π_T), mean over prompts."""

    reward: np.ndarray
    kl: np.ndarray


def distill(method: str, teacher_beta: float = 0.3, reward="sum_to_target", steps: int = 40, group_size: int = 4,
            seeds=(0, 1, 2, 3, 4), lr: float = 1.0) -> DistillCurves:
    """Train a tabular student from π_ref with ``method`` (see ``METHODS``), ``group_size`` sampled responses per
    prompt and step, all five prompts; the teacher is ``teacher(teacher_beta, reward)``."""
    checks.choose("method", method, METHODS)
    checks.choose("reward", reward, REWARDS)
    steps = checks.positive_int("steps", steps, low=1, high=2000)
    n = checks.positive_int("group_size", group_size, low=2, high=256)
    seeds = tuple(checks.positive_int("seed", s, low=0) for s in np.atleast_1d(seeds))
    if not seeds:
        raise ValueError("seeds must hold at least one seed")
    lr = checks.positive_finite("lr", lr)
    return _distill(method, checks.positive_finite("teacher_beta", teacher_beta), reward, steps, n, seeds, lr)


@lru_cache(maxsize=64)
def _distill(method, teacher_beta, reward, steps, n, seeds, lr) -> DistillCurves:
    ref, T = reference_policy(), teacher(teacher_beta, reward)
    prompts, K, L = PROMPTS, ref.n_actions, ref.length
    P, B = len(prompts), len(seeds)
    R = np.stack([reward_table(reward, x, L, K).ravel() for x in prompts])  # (P, K^L)
    t_token = tabular_logits(T, prompts)  # log π_T per depth, (P, K^t, K)
    log_t = response_log_probs(t_token)
    t_b = [np.broadcast_to(lp, (B,) + lp.shape) for lp in t_token]
    log_t_b = np.broadcast_to(log_t, (B,) + log_t.shape)
    z = [np.broadcast_to(t, (B,) + t.shape).copy() for t in tabular_logits(ref, prompts)]
    rngs = [np.random.default_rng(s) for s in seeds]
    ascent = Ascent("sgd", lr)

    def update(step, z, log_probs, log_p):
        u = np.stack([rng.random((P, n)) for rng in rngs])  # (B, P, n)
        if method == "sft":
            ids = sample_ids(log_t_b, u)
            coef = np.ones(ids.shape + (L,))
        else:
            ids = sample_ids(log_p, u)
            if method == "on_policy":
                coef = sampled_token_log_probs(t_b, ids, K) - sampled_token_log_probs(log_probs, ids, K)
            else:
                r = np.take_along_axis(np.broadcast_to(R, (B, P, R.shape[1])), ids, axis=-1)
                coef = np.repeat(estimators.advantages("rloo", r)[..., None], L, axis=-1)
        return ascent.step(z, token_gradient([np.exp(lp) for lp in log_probs], ids, coef / n, K))

    reward_curve, kl_curve, _ = _tabular_loop(z, steps, log_t, R, update)
    return DistillCurves(reward_curve, kl_curve)
