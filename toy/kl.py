"""KL to the reference policy, and the KL-regularised optimum, computed exactly over whole responses.

For one prompt x the sequence-level KL is KL(π ‖ π_ref) = Σ_y π(y|x) log(π(y|x) / π_ref(y|x)), and the
policy that maximises E_π[r] − β·KL(π ‖ π_ref) is π*(y|x) ∝ π_ref(y|x) exp(r(x, y) / β).
"""

from __future__ import annotations

import numpy as np

from . import checks
from .policy import PROMPTS, Policy, TabularPolicy
from .rewards import reward_table


def _xlogy_ratio(p: np.ndarray, q: np.ndarray) -> np.ndarray:
    out = np.zeros_like(p)
    nz = p > 0
    out[nz] = p[nz] * (np.log(p[nz]) - np.log(q[nz]))
    return out


def response_kl(p: np.ndarray, q: np.ndarray) -> float:
    """KL(p ‖ q) = Σ_y p(y) log(p(y)/q(y)) for two distributions over the same responses (any equal shapes)."""
    p, q = np.asarray(p, dtype=float), np.asarray(q, dtype=float)
    if p.shape != q.shape:
        raise ValueError(f"distributions must have the same shape, got {p.shape} and {q.shape}")
    if np.any((p > 0) & (q <= 0)):
        return float("inf")
    return float(_xlogy_ratio(p, q).sum())


def sequence_kl(policy: Policy, reference: Policy, prompt) -> float:
    """KL(π(· | x) ‖ π_ref(· | x)) over whole responses, by enumeration."""
    if policy.length != reference.length or policy.n_actions != reference.n_actions:
        raise ValueError("the two policies must have the same length and action set")
    return response_kl(policy.response_probs(prompt), reference.response_probs(prompt))


def kl_regularised_optimum(reference: Policy, reward, beta: float) -> TabularPolicy:
    """π*(y|x) ∝ π_ref(y|x) · exp(r(x, y)/β) for every prompt, as a tabular (autoregressive) policy.

    The token-level conditionals of π* are ratios of its prefix marginals, so π* is exactly representable by a
    ``TabularPolicy``: π*(a | x, y_<t) = Z(x, y_<t·a) / Z(x, y_<t) with Z summing π_ref·exp(r/β) below a prefix.
    """
    beta = checks.positive_finite("beta", beta)
    L, K = reference.length, reference.n_actions
    logits = [np.empty((len(PROMPTS),) + (K,) * (t + 1)) for t in range(L)]
    for i, x in enumerate(PROMPTS):
        log_w = np.log(np.maximum(reference.response_probs(x), np.finfo(float).tiny))
        log_w = log_w + reward_table(reward, x, L, K) / beta
        # log Z at every prefix depth, summing out the later tokens (log-sum-exp keeps small β stable).
        log_z = [None] * (L + 1)
        log_z[L] = log_w
        for t in reversed(range(L)):
            m = log_z[t + 1].max(axis=-1, keepdims=True)
            log_z[t] = (m + np.log(np.exp(log_z[t + 1] - m).sum(axis=-1, keepdims=True)))[..., 0]
        for t in range(L):
            logits[t][i] = log_z[t + 1] - log_z[t][..., None]
    return TabularPolicy(logits, eos=reference.eos)
