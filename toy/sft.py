"""Supervised fine-tuning on the toy: maximum likelihood on an imperfect expert's demonstrations.

* ``imperfect_expert``: a demonstrator that answers correctly (reward 1 under a 0/1 verifiable reward) a fraction
  ρ of the time, and otherwise writes a wrong response, each side in proportion to π_ref::

      π_E(y | x) = ρ·π_ref(y | x, r = 1) + (1 − ρ)·π_ref(y | x, r = 0)

* ``fit_sft``: the maximum-likelihood tabular policy for a set of demonstrations. For one softmax per prefix the
  log-likelihood Σ_i Σ_t log π(y_{i,t} | s_{i,t}) separates by prefix, and its maximiser is the count ratio::

      π_SFT(a | s) = N(s·a) / N(s)

  where N(s) counts the demonstrations that pass through prefix s. A prior of strength α (pseudo-counts from a
  base policy, as fine-tuning from a pretrained model starts there) gives (N(s·a) + α·π_0(a|s)) / (N(s) + α);
  α = 0 is pure maximum likelihood, and prefixes no demonstration visits keep π_0.

With α = 0 the SFT policy's distribution over whole responses is exactly the demonstrations' empirical
distribution, so its success rate is exactly the fraction of correct demonstrations: imitation reproduces the
demonstrator, and cannot do better than it.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from . import checks
from .exact import value
from .policy import Policy, TabularPolicy, check_policy
from .rewards import reward_table
from .vocab import PROMPTS, VOCAB_SIZE


def autoregressive(response_probs: dict, base: Policy) -> TabularPolicy:
    """The tabular policy whose response distribution for prompt x is ``response_probs[x]`` ((K,)*L, summing to 1);
    prompts not in the dict, and prefixes of probability 0, keep ``base``'s next-token distributions.

    The conditionals are ratios of prefix marginals: π(a | s) = P(s·a) / P(s).
    """
    check_policy("base", base, responses=True)
    if not isinstance(response_probs, Mapping):
        raise checks.fail("response_probs", "a dict {prompt: distribution over responses}", response_probs)
    K, L = base.n_actions, base.length
    logits = [np.array(z) for z in TabularPolicy.from_policy(base).logits]
    for x, P in response_probs.items():
        i = PROMPTS.index(checks.prompt("response_probs key", x))
        P = checks.probabilities(f"response_probs[{x}] (a distribution)", P)
        if P.shape != (K,) * L:
            raise ValueError(f"response_probs[{x}] must be a distribution of shape {(K,) * L}, got {P.shape}")
        marg = [None] * (L + 1)
        marg[L] = P
        for t in reversed(range(L)):
            marg[t] = marg[t + 1].sum(axis=-1)
        for t in range(L):
            parent = marg[t][..., None]
            with np.errstate(divide="ignore", invalid="ignore"):
                cond = np.where(parent > 0, marg[t + 1] / np.where(parent > 0, parent, 1.0), np.nan)
            seen = parent[..., 0] > 0
            logits[t][i][seen] = np.log(np.maximum(cond[seen], np.finfo(float).tiny))
    return TabularPolicy(logits, eos=base.eos)


def imperfect_expert(reference: Policy, reward, success_rate: float, prompts=PROMPTS) -> TabularPolicy:
    """π_E(y|x) = ρ·π_ref(y | x, r = 1) + (1 − ρ)·π_ref(y | x, r = 0) for each prompt: E_{π_E}[r] = ρ exactly.

    ``reward`` must be 0/1 and π_ref must give both outcomes positive probability (0 < V_ref(x) < 1).
    """
    check_policy("reference", reference, responses=True)
    rho = checks.probability("success_rate", success_rate)
    out = {}
    for x in checks.prompts("prompts", prompts):
        R = reward_table(reward, x, reference.length, reference.n_actions)
        if not np.all((R == 0) | (R == 1)):
            raise ValueError("imperfect_expert needs a 0/1 reward (for example 'sum_to_target')")
        P = reference.response_probs(x)
        p_success = float((P * R).sum())
        if not 0 < p_success < 1:
            raise ValueError(f"under this reference policy prompt {x} succeeds with probability {p_success}; "
                             "an imperfect expert needs both outcomes to be possible")
        out[x] = rho * P * R / p_success + (1 - rho) * P * (1 - R) / (1 - p_success)
    return autoregressive(out, reference)


def demonstrations(expert: Policy, n: int, prompts=PROMPTS, rng=None) -> dict[int, np.ndarray]:
    """n responses from the expert for each prompt: {prompt: int array (n, L)}, seeded."""
    check_policy("expert", expert)
    n = checks.positive_int("n", n, low=1, high=checks.MAX_ENUMERATION // expert.length)
    prompts = checks.prompts("prompts", prompts)
    rng = checks.rng("rng", rng)
    return {x: expert.sample(x, n, rng) for x in prompts}


def fit_sft(demos: dict, base: Policy, prior_strength: float = 0.0) -> TabularPolicy:
    """The maximum-likelihood tabular policy on ``demos`` ({prompt: (n, L) responses}), with α = ``prior_strength``
    pseudo-counts of ``base`` at every visited prefix: π(a|s) = (N(s·a) + α·π_base(a|s)) / (N(s) + α).

    Prompts without demonstrations, and prefixes no demonstration reaches, keep ``base``.
    """
    alpha = checks.in_range("prior_strength", prior_strength, 0.0, 1e12)
    check_policy("base", base, responses=True)
    K, L = base.n_actions, base.length
    logits = [np.array(z) for z in TabularPolicy.from_policy(base).logits]
    for x, ys in _check_demos(demos, L, K).items():
        i = PROMPTS.index(x)
        for t in range(L):
            counts = np.zeros((K,) * (t + 1))
            np.add.at(counts, tuple(ys[:, : t + 1].T), 1.0)
            total = counts.sum(axis=-1, keepdims=True)
            prior = base.prefix_probs(x, t)
            probs = (counts + alpha * prior) / np.where(total + alpha > 0, total + alpha, 1.0)
            seen = total[..., 0] > 0
            logits[t][i][seen] = np.log(np.maximum(probs[seen], np.finfo(float).tiny))
    return TabularPolicy(logits, eos=base.eos)


def success_rate(policy: Policy, reward, prompts=PROMPTS) -> float:
    """Mean over prompts of E_{y~π}[r(x, y)] (for a 0/1 reward, the probability of a correct response)."""
    check_policy("policy", policy)
    return float(np.mean([value(policy, reward, x) for x in checks.prompts("prompts", prompts)]))


def _check_demos(demos, length: int, n_actions: int) -> dict[int, np.ndarray]:
    """{prompt: (n, L) int array of responses}, each obeying the EOS rule."""
    if not isinstance(demos, Mapping) or not demos:
        raise checks.fail("demos", "a non-empty dict {prompt: (n, L) int array of responses}", demos)
    out = {}
    for x, ys in demos.items():
        x = checks.prompt("demos key", x)
        ys = checks.token_array(f"demos[{x}] (the demonstrations for prompt {x})", ys, n_actions, ndim=2)
        if ys.shape[1] != length or ys.shape[0] == 0:
            raise ValueError(f"demos[{x}] (the demonstrations for prompt {x}) must be an int array (n, {length}) "
                             f"with n >= 1, got shape {ys.shape}")
        out[x] = checks.eos_rows(f"demos[{x}]", ys, n_actions > VOCAB_SIZE)
    return out


def demonstration_success(demos: dict, reward, length: int, n_actions: int) -> float:
    """Fraction of the demonstrations that are correct, averaged over prompts."""
    length = checks.positive_int("length", length, low=1, high=64)
    n_actions = checks.positive_int("n_actions", n_actions, low=VOCAB_SIZE, high=VOCAB_SIZE + 1)
    rates = []
    for x, ys in _check_demos(demos, length, n_actions).items():
        R = reward_table(reward, x, length, n_actions)
        rates.append(float(R[tuple(np.asarray(ys).T)].mean()))
    return float(np.mean(rates))
