"""Off-policy staleness: importance weights when the samples come from a policy k updates behind.

An asynchronous or minibatch-reusing trainer updates π_θ with responses sampled from an older π_old. The
correction is the importance weight, and its variance under π_old is what makes large corrections unstable::

    sequence weight    w(y)  = π_θ(y|x) / π_old(y|x) = Π_t ρ_t,     Var_old[w] = Σ_y π_θ(y)² / π_old(y) − 1
    per-token ratio    ρ_t   = π_θ(y_t|s_t) / π_old(y_t|s_t)        (what PPO clips; E_old[ρ_t] = 1)
    length-normalised  w^(1/L)                                       (GSPO's sequence-level ratio)

The policies come from exact gradient ascent on E[r] for the tabular toy (``policy_path``), so "k updates
behind" is a real, deterministic training trajectory.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from . import checks, estimators
from .policy import Policy, TabularPolicy, check_policy, check_prompt
from .rewards import reward_table

MAX_STEPS = 10_000
"""Most gradient steps ``policy_path`` takes (it keeps every policy on the path)."""


def reward_gradient(policy: TabularPolicy, reward, prompt) -> list[np.ndarray]:
    """∂E[r]/∂z for the logits of one prompt: ∂J/∂z_{s,a} = P(s) π(a|s) (V(s·a) − V(s)), as arrays (K,)*(t+1).

    The exact policy gradient of ``toy.estimators`` (Σ_y π(y|x) r(x, y) ∇ log π(y|x)), one array per depth.
    """
    check_policy("policy", policy, responses=True)
    x = check_prompt(prompt)
    weights = policy.response_probs(x) * reward_table(reward, x, policy.length, policy.n_actions)
    return estimators.gradient_from_weights(estimators.depth_probs(policy, x), weights)


def policy_path(reference: Policy, reward, prompt, steps: int, lr: float) -> list[TabularPolicy]:
    """π_0 = π_ref, then π_{n+1} = π_n with logits z + lr·∇_z E[r] for ``prompt`` (exact gradient ascent)."""
    check_policy("reference", reference, responses=True)
    x = check_prompt(prompt)
    steps = checks.positive_int("steps", steps, low=0, high=MAX_STEPS)
    lr = checks.learning_rate("lr", lr)
    policy = TabularPolicy.from_policy(reference)
    path = [policy]
    for _ in range(steps):
        grads = reward_gradient(policy, reward, x)
        logits = [z.copy() for z in policy.logits]
        for t, g in enumerate(grads):
            logits[t][x] += lr * g
        policy = TabularPolicy(logits, eos=policy.eos)
        path.append(policy)
    return path


class WeightVariance(NamedTuple):
    """Variances under π_old of three importance corrections toward π_θ (see the module docstring)."""

    sequence: float  # Var[w]
    token: float  # mean over t of Var[ρ_t]
    normalised: float  # Var[w^(1/L)]

    @property
    def effective_fraction(self) -> float:
        """1 / E_old[w²] = 1 / (1 + Var[w]): the share of the samples that the weighted average effectively uses."""
        return 1.0 / (1.0 + self.sequence)


def weight_variance(current: Policy, old: Policy, prompt) -> WeightVariance:
    """Exact variances (under π_old) of the sequence weight, the per-token ratios and GSPO's normalised ratio."""
    check_policy("current", current, responses=True), check_policy("old", old)
    x = check_prompt(prompt)
    checks.same_action_set(("current", "old"), current, old)
    L = old.length
    P_old, P_new = old.response_probs(x), current.response_probs(x)
    if np.any((P_new > 0) & (P_old <= 0)):
        raise ValueError("π_old gives probability 0 to a response π_θ can produce: the weight is unbounded")
    w = np.divide(P_new, P_old, out=np.zeros_like(P_new), where=P_old > 0)
    sequence = float((P_old * w**2).sum() - 1.0)
    normalised = float((P_old * w ** (2 / L)).sum() - (P_old * w ** (1 / L)).sum() ** 2)
    token, reach = 0.0, np.ones(())
    for t in range(L):
        p_old, p_new = old.prefix_probs(x, t), current.prefix_probs(x, t)
        rho = np.divide(p_new, p_old, out=np.zeros_like(p_new), where=p_old > 0)
        second = (p_old * rho**2).sum(axis=-1)  # E_old[ρ_t² | s_t]; E_old[ρ_t | s_t] = 1
        token += float((reach * (second - 1.0)).sum()) / L
        reach = reach[..., None] * p_old
    return WeightVariance(max(sequence, 0.0), max(token, 0.0), max(normalised, 0.0))
