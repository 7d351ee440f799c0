"""What trainers do over a batch of groups (issue 51): DAPO's dynamic sampling and REINFORCE++'s batch normalisation.

**Dynamic sampling** (DAPO, Yu et al. 2025). A group whose n rewards are all equal gets advantage 0 on every response
from RLOO, GRPO and the mean baseline: it costs n samples and teaches nothing. DAPO drops such groups and samples new
ones until the batch is full. Under a policy whose reward takes the value v with probability q_v, a group of n is a
tie with probability

    P_tie = Σ_v q_v^n,

so filling a batch costs 1/(1 − P_tie) groups per kept group on average (a geometric number of tries), and
n/(1 − P_tie) sampled responses. Since a tie group contributes nothing, dropping it changes no expected update's
direction: the expected gradient per kept group is the plain one divided by 1 − P_tie.

**REINFORCE++-baseline** (Hu et al. 2025). Each group's mean is subtracted (the mean baseline), then every advantage
of the batch is divided by one standard deviation computed over all the batch's tokens: r_i − r̄_g over
σ_batch. GRPO divides each group by its own std instead, which reweights prompts; the batch's one number does not.
verl's ``reinforce_plus_plus_baseline`` whitens the token advantages with Bessel's correction and adds 1e-8 to the
variance; with every token of a response carrying its advantage, the variance over the batch's tokens is
L·Σ a²/(L·N − 1) for N responses of L tokens, after subtracting the (here zero) batch mean.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from . import checks
from .estimators import advantages
from .policy import Policy, check_policy, check_prompt
from .rewards import reward_table

WHITEN_EPS = 1e-8
"""Added to the batch variance before the square root (verl's whitening)."""


class DynamicSampling(NamedTuple):
    """The cost of DAPO's filter for groups of n: the chance a group is a tie, and the groups and responses sampled
    per group kept, on average."""

    n: int
    p_tie: float
    groups_per_kept: float
    responses_per_kept: float


def reward_distribution(policy: Policy, reward, prompt) -> tuple[np.ndarray, np.ndarray]:
    """The distinct values of r(x, y) under π(· | x) and their probabilities: two arrays of the same length."""
    check_policy("policy", policy, responses=True)
    prompt = check_prompt(prompt)
    R = reward_table(reward, prompt, policy.length, policy.n_actions).ravel()
    P = np.asarray(policy.response_probs(prompt)).ravel()
    values, index = np.unique(R, return_inverse=True)
    return values, np.bincount(index, weights=P, minlength=len(values))


def tie_probability(policy: Policy, reward, prompt, n: int) -> float:
    """P(all n rewards of a group are equal) = Σ_v q_v^n."""
    n = checks.positive_int("n", n, low=1, high=10_000)
    _, q = reward_distribution(policy, reward, prompt)
    return float(np.sum(q**n))


def dynamic_sampling(policy: Policy, reward, prompt, n: int) -> DynamicSampling:
    """What DAPO's filter costs for groups of n responses to ``prompt``: ``DynamicSampling``. Raises if every group
    is a tie (then no group is ever kept)."""
    n = checks.positive_int("n", n, low=2, high=10_000)
    p_tie = tie_probability(policy, reward, prompt, n)
    if p_tie >= 1.0:
        raise ValueError(f"every group of {n} has equal rewards under this policy and prompt {prompt}: dynamic "
                         "sampling would never keep one")
    return DynamicSampling(n, p_tie, 1.0 / (1.0 - p_tie), n / (1.0 - p_tie))


def is_tie(rewards) -> np.ndarray:
    """Which groups have all their rewards equal: rewards (..., n) → bools (...)."""
    r = checks.array("rewards", rewards, min_ndim=1)
    return np.all(r == r[..., :1], axis=-1)


def reinforce_pp_baseline(rewards, tokens: int = 1, eps: float = WHITEN_EPS) -> np.ndarray:
    """REINFORCE++-baseline's advantages for a batch of groups: rewards (G, n) → (G, n).

    Each group's mean is subtracted; the results, each counted ``tokens`` times (the tokens of its response), are
    whitened over the whole batch: minus their mean, over √(var + eps) with Bessel's correction."""
    r = checks.array("rewards", rewards, min_ndim=2)
    if r.ndim != 2 or r.shape[1] < 2:
        raise checks.fail("rewards", "an array (G, n) of G groups of n ≥ 2 rewards", r)
    tokens = checks.positive_int("tokens", tokens, low=1, high=100_000)
    eps = checks.positive_finite("eps", eps)
    a = r - r.mean(axis=1, keepdims=True)
    count = tokens * a.size
    if count < 2:
        raise checks.fail("rewards", "at least two tokens in the batch", r)
    centred = a - a.mean()
    var = tokens * float(np.sum(centred**2)) / (count - 1)
    return centred / np.sqrt(var + eps)


class NoiseShare(NamedTuple):
    """The share of a batch's advantages (the sum of their absolute values) that lands on groups whose outcomes tie,
    when a learned reward adds noise to each outcome: under GRPO (each group over its own std) and
    REINFORCE++-baseline (one std per batch)."""

    grpo: float
    reinforce_pp: float


def noise_share(outcomes, noise_sd: float, rng=0) -> NoiseShare:
    """Where a noisy learned reward puts a batch's update: outcomes (G, n) → ``NoiseShare``.

    Each score is an outcome plus N(0, noise_sd²) noise, s = o + ξ. A group whose outcomes tie carries nothing but
    noise; the share of the batch's sum of abs(A) that falls on those groups is how much of the update is noise.
    GRPO divides each group by its own std, so a tied group's noise is blown up to unit size, however small noise_sd;
    REINFORCE++-baseline divides every group by one std of the batch, so a tied group keeps its small size beside
    the groups that differ.
    (RLOO's share equals REINFORCE++-baseline's: the two differ by one factor for the whole batch.)"""
    o = checks.array("outcomes", outcomes, min_ndim=2)
    if o.ndim != 2 or o.shape[1] < 2:
        raise checks.fail("outcomes", "an array (G, n) of G groups of n ≥ 2 outcomes", o)
    tied = is_tie(o)
    if tied.all() or not tied.any():
        raise checks.fail("outcomes", "a batch with both tied groups and groups that differ", o)
    noise_sd = checks.positive_finite("noise_sd", noise_sd)
    scores = o + checks.rng("rng", rng).normal(0.0, noise_sd, size=o.shape)

    def share(a: np.ndarray) -> float:
        size = np.abs(a).sum(axis=1)
        return float(size[tied].sum() / size.sum())

    return NoiseShare(share(advantages("grpo", scores)), share(reinforce_pp_baseline(scores)))
