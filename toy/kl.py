"""KL to the reference policy, and the KL-regularised optimum, computed exactly over whole responses.

For one prompt x the sequence-level KL is KL(π ‖ π_ref) = Σ_y π(y|x) log(π(y|x) / π_ref(y|x)), and the
policy that maximises E_π[r] − β·KL(π ‖ π_ref) is π*(y|x) ∝ π_ref(y|x) exp(r(x, y) / β).
"""

from __future__ import annotations

import numpy as np

from . import checks
from .policy import Policy, TabularPolicy, check_policy
from .rewards import reward_table
from .vocab import PROMPTS


def _xlogy_ratio(p: np.ndarray, q: np.ndarray) -> np.ndarray:
    out = np.zeros_like(p)
    nz = p > 0
    out[nz] = p[nz] * (np.log(p[nz]) - np.log(q[nz]))
    return out


def response_kl(p: np.ndarray, q: np.ndarray) -> float:
    """KL(p ‖ q) = Σ_y p(y) log(p(y)/q(y)) for two distributions over the same responses (any equal shapes, each
    summing to one over all its entries). Infinite when p puts mass where q has none."""
    p, q = checks.probabilities("p", p), checks.probabilities("q", q)
    checks.same_shape(("p", "q"), p, q)
    if np.any((p > 0) & (q <= 0)):
        return float("inf")
    return float(_xlogy_ratio(p, q).sum())


def sequence_kl(policy: Policy, reference: Policy, prompt) -> float:
    """KL(π(· | x) ‖ π_ref(· | x)) over whole responses, by enumeration."""
    check_policy("policy", policy), check_policy("reference", reference)
    checks.same_action_set(("policy", "reference"), policy, reference)
    return response_kl(policy.response_probs(prompt), reference.response_probs(prompt))


def kl_regularised_optimum(reference: Policy, reward, beta: float) -> TabularPolicy:
    """π*(y|x) ∝ π_ref(y|x) · exp(r(x, y)/β) for every prompt, as a tabular (autoregressive) policy.

    The token-level conditionals of π* are ratios of its prefix marginals, so π* is exactly representable by a
    ``TabularPolicy``: π*(a | x, y_<t) = Z(x, y_<t·a) / Z(x, y_<t) with Z summing π_ref·exp(r/β) below a prefix.

    Exact at any β > 0: the weights are π_ref·exp((r − max r)/β), a shift that leaves π* unchanged, so the best
    responses keep their π_ref weights however small β is, and as β → 0 π* tends to π_ref restricted to the best
    responses. A token that leads only to weight 0 gets a logit of ``LOG_ZERO``; a prefix of weight 0 keeps π_ref's
    next-token distribution.
    """
    check_policy("reference", reference, responses=True)
    beta = checks.positive_finite("beta", beta)
    L, K = reference.length, reference.n_actions
    logits = [np.empty((len(PROMPTS),) + (K,) * (t + 1)) for t in range(L)]
    for i, x in enumerate(PROMPTS):
        r = reward_table(reward, x, L, K)
        with np.errstate(divide="ignore", over="ignore"):
            log_w = np.log(reference.response_probs(x)) + (r - r.max()) / beta
        # log Z at every prefix depth, summing out the later tokens (log-sum-exp keeps small β stable).
        log_z = [None] * (L + 1)
        log_z[L] = log_w
        for t in reversed(range(L)):
            log_z[t] = _log_sum_exp(log_z[t + 1])
        for t in range(L):
            parent = log_z[t][..., None]
            with np.errstate(invalid="ignore"):
                cond = np.where(np.isneginf(log_z[t + 1]), LOG_ZERO, log_z[t + 1] - parent)
            ref = np.log(np.maximum(reference.prefix_probs(x, t), np.finfo(float).tiny))
            logits[t][i] = np.where(np.isneginf(parent), ref, np.maximum(cond, LOG_ZERO))
    return TabularPolicy(logits, eos=reference.eos)


LOG_ZERO = -1e300
"""The logit ``kl_regularised_optimum`` gives a token of probability zero (finite, so every logit stays a number)."""


def _log_sum_exp(a: np.ndarray) -> np.ndarray:
    """log Σ exp(a) over the last axis, −inf where every entry is −inf."""
    m = a.max(axis=-1)
    safe = np.where(np.isneginf(m), 0.0, m)
    with np.errstate(divide="ignore"):
        return np.where(np.isneginf(m), -np.inf, safe + np.log(np.exp(a - safe[..., None]).sum(axis=-1)))
