"""Critic-free advantages, and the policy-gradient estimates they give, with exact means and variances.

Each method samples a group of n responses y_1..y_n to one prompt, scores them r_i = r(x, y_i), and gives every
token of response i the same advantage A_i (the bandit view: one advantage per response):

    reinforce  A_i = r_i − mean_j r_j                           REINFORCE with the group mean as baseline
    rloo       A_i = r_i − (Σ_{j≠i} r_j)/(n − 1)                leave-one-out (Kool et al. 2019; Ahmadian et al. 2024)
    remax      A_i = r_i − r(x, ŷ), ŷ the greedy response        ReMax (Li et al. 2023)
    grpo       A_i = (r_i − mean_j r_j)/(std_j r_j + ε)          GRPO (Shao et al. 2024); std with n − 1, ε = 1e-4
    dr_grpo    A_i = r_i − mean_j r_j                            Dr. GRPO (Liu et al. 2025) drops the division by std

Batch-level scaling is a convention the toy does not follow: some trainers divide every advantage by one standard
deviation over the whole batch instead of over its group. With no KL penalty in the reward, each is one of the
advantages above divided by one number shared by the batch, so each batch's update keeps its direction and changes
its length:

* REINFORCE++-baseline: ``reinforce`` (r_i − its group's mean), then whitened over every token of the batch. verl's
  ``reinforce_plus_plus_baseline`` divides by √(var + 1e-8), var with Bessel's correction over the tokens;
  OpenRLHF's ``reinforce_baseline`` by √var without it (var clamped at 1e-8 from below);
* TRL's GRPOTrainer with ``scale_rewards="batch"``: ``dr_grpo`` (r_i − its group's mean) divided by the standard
  deviation of all the batch's rewards r (with Bessel's correction) + 1e-4;
* TRL's RLOOTrainer with ``normalize_advantages=True``: ``rloo`` divided by the standard deviation of all the
  batch's RLOO advantages (with Bessel's correction) + 1e-4.

Whitening also subtracts the batch's mean advantage, which is zero here: the mean-baseline and RLOO advantages of a
group sum to zero, and every toy response has the same number of tokens.

The policy-gradient estimate of a group is g = (1/n) Σ_i A_i ∇_θ log π_θ(y_i | x), with θ the logits of a
``TabularPolicy`` for that prompt. Against the exact policy gradient ∇J = ∇_θ E_{y~π}[r(x, y)]:

* ``rloo`` and ``remax``: E[g] = ∇J exactly (each baseline is independent of the response it is subtracted from);
* ``reinforce`` and ``dr_grpo``: E[g] = (1 − 1/n)·∇J (the mean includes r_i itself);
* ``grpo``: not a fixed multiple of ∇J in general. For a 0/1 reward, E[g] = c(n, p)·∇J with p = V(x) the success
  rate (``grpo_scale``): the direction is right on one prompt, but c depends on p, so across prompts GRPO
  re-weights them and the summed gradient turns away from ∇J.

``expected_gradient`` and ``gradient_variance`` compute E[g] and E‖g − E[g]‖² exactly: the advantages depend on the
group only through its rewards, and given their rewards the responses are independent, so it is enough to
enumerate how many of the n responses take each reward value (a multinomial) instead of every group.
Dr. GRPO's other change, dropping the division by each response's length of the loss, is invisible here: every
toy response has the same length.

ReMax's baseline here is the plain reward of the greedy response, r(x, ŷ); ``toy.train``, which shapes every reward
with a KL penalty, subtracts the greedy response's KL-shaped reward instead. Either baseline is unbiased, because the
greedy response does not depend on the sampled ones. Where GRPO's KL penalty goes is a convention of ``toy.train``
(see its docstring): the advantages here involve no penalty at all.
"""

from __future__ import annotations

import functools
import itertools
import math

import numpy as np

from . import checks
from .exact import advantage_table, values
from .policy import Policy, check_policy, check_prompt
from .rewards import reward_table

GRPO_EPS = 1e-4
"""ε added to GRPO's group std (the value in Hugging Face TRL's GRPO trainer)."""

METHODS = {
    "reinforce": "REINFORCE, mean baseline: A_i = r_i − mean(r)",
    "rloo": "RLOO: A_i = r_i − mean of the other n − 1 rewards",
    "remax": "ReMax: A_i = r_i − r(greedy response)",
    "grpo": "GRPO: A_i = (r_i − mean(r)) / (std(r) + ε)",
    "dr_grpo": "Dr. GRPO: A_i = r_i − mean(r)",
}
"""The critic-free methods: name → how each computes the advantage of response i in a group of n."""

EXACT_CRITIC = "exact_critic"
"""Not critic-free: every token gets its exact advantage A(s_t, y_t) (a perfect critic), the yardstick."""

MIN_GROUP = {"reinforce": 1, "rloo": 2, "remax": 1, "grpo": 2, "dr_grpo": 1, EXACT_CRITIC: 1}
"""Smallest group each method is defined for (RLOO and GRPO need another response to compare with)."""


# -- advantages -----------------------------------------------------------------------------------------------
def advantages(method: str, rewards, greedy_reward=None, eps: float = GRPO_EPS) -> np.ndarray:
    """One advantage per response: ``rewards`` has shape (..., n), one group of n along the last axis.

    ``greedy_reward`` (ReMax only) is r(x, ŷ) of the greedy response, broadcastable to shape (...,).
    Returns an array of the same shape as ``rewards``.
    """
    checks.choose("method", method, METHODS)
    r = checks.array("rewards", rewards)
    if r.ndim == 0:
        raise ValueError("rewards must have a group axis (the last one), got a single number")
    n = r.shape[-1]
    if n < MIN_GROUP[method]:
        raise ValueError(f"rewards: {method} needs a group of at least {MIN_GROUP[method]} responses, got n = {n}")
    mean = r.mean(axis=-1, keepdims=True)
    if method in ("reinforce", "dr_grpo"):
        return r - mean
    if method == "rloo":
        return r - (r.sum(axis=-1, keepdims=True) - r) / (n - 1)  # = n/(n−1)·(r − mean)
    if method == "grpo":
        eps = checks.positive_finite("eps", eps)
        with np.errstate(over="ignore", invalid="ignore"):
            spread = r.std(axis=-1, ddof=1)
        if not np.all(np.isfinite(spread)):
            raise checks.fail("rewards", "numbers whose group spread is finite", r)
        return (r - mean) / (r.std(axis=-1, ddof=1, keepdims=True) + eps)
    if greedy_reward is None:
        raise ValueError("remax needs greedy_reward, the reward of the greedy response to the same prompt")
    greedy = checks.array("greedy_reward", greedy_reward)
    if checks.broadcastable(("greedy_reward", "the group shape of rewards"), greedy, r[..., 0]) != r.shape[:-1]:
        raise ValueError(f"greedy_reward must broadcast to the group shape {r.shape[:-1]}, got {greedy.shape}")
    return r - greedy[..., None]


def greedy_response(policy: Policy, prompt) -> tuple[int, ...]:
    """ŷ: the response that takes the likeliest next token at every step (ties go to the smaller token id)."""
    check_policy("policy", policy)
    prompt = check_prompt(prompt)
    y: tuple[int, ...] = ()
    for _ in range(policy.length):
        y = y + (int(np.argmax(policy.next_token_probs(prompt, y))),)
    return y


# -- gradients with respect to a tabular policy's logits ------------------------------------------------------
def depth_probs(policy: Policy, prompt) -> list[np.ndarray]:
    """π(· | prefix) at every depth: entry t has shape (K,)*t + (K,)."""
    check_policy("policy", policy, responses=True)
    return [policy.prefix_probs(prompt, t) for t in range(policy.length)]


def gradient_from_weights(probs: list[np.ndarray], weights: np.ndarray) -> list[np.ndarray]:
    """Σ_y w(y) ∇_θ log π(y | x) for logits θ of one softmax per prefix (a ``TabularPolicy``'s parameters).

    ``probs[t]`` has shape batch + (K,)*(t+1) (as ``depth_probs``), ``weights`` shape batch + (K,)*L. Returns one
    array per depth, shaped like ``probs[t]``: the derivative for logit (prefix, a) is
    W(prefix·a) − π(a | prefix)·W(prefix), where W(s) sums w over the responses that start with s.
    """
    probs = _array_list("probs", probs)
    L = len(probs)
    W = checks.array("weights", weights)  # W at depth L: the weights themselves
    if probs[-1].shape != W.shape:
        raise ValueError(f"weights must have the shape of probs[-1], {probs[-1].shape}, got {W.shape}")
    grads = [None] * L
    for t in reversed(range(L)):
        W_child = W if t == L - 1 else W.sum(axis=-1)
        W = W_child
        grads[t] = W_child - probs[t] * W_child.sum(axis=-1, keepdims=True)
    return grads


def flatten(grads: list[np.ndarray]) -> np.ndarray:
    """One prompt's per-depth gradients as one vector θ = (depth 0 logits, depth 1 logits, ...) in C order."""
    return np.concatenate([np.ravel(g) for g in _array_list("grads", grads)])


def _array_list(name: str, value) -> list[np.ndarray]:
    if isinstance(value, (str, bytes, np.ndarray)) or not isinstance(value, (list, tuple)) or not value:
        raise checks.fail(name, "a non-empty list of arrays, one per depth", value)
    return [checks.array(f"{name}[{t}]", a) for t, a in enumerate(value)]


def exact_policy_gradient(policy: Policy, reward, prompt) -> np.ndarray:
    """∇J = ∇_θ Σ_y π(y|x) r(x, y) = Σ_y π(y|x) r(x, y) ∇_θ log π(y|x), as a flat vector (see ``flatten``)."""
    check_policy("policy", policy, responses=True)
    P = policy.response_probs(prompt)
    R = reward_table(reward, prompt, policy.length, policy.n_actions)
    return flatten(gradient_from_weights(depth_probs(policy, prompt), P * R))


def score_norms(policy: Policy, prompt) -> np.ndarray:
    """‖∇_θ log π(y | x)‖² for every response y: shape (K,)*L.

    The depths use disjoint logits, and at depth t the score is e_{y_t} − π(· | s_t), so the squared norm is
    Σ_t [1 − 2π(y_t | s_t) + Σ_a π(a | s_t)²].
    """
    check_policy("policy", policy, responses=True)
    L = policy.length
    out = np.zeros(())
    for t, p in enumerate(depth_probs(policy, prompt)):
        per_token = 1.0 - 2.0 * p + (p * p).sum(axis=-1, keepdims=True)
        out = out[..., None] + per_token if t else per_token
    return out.reshape((policy.n_actions,) * L)


def gradient_estimate(method: str, policy: Policy, reward, prompt, n: int, rng=None) -> np.ndarray:
    """g = (1/n) Σ_i A_i ∇_θ log π(y_i | x) for one sampled group of n responses (flat, as ``flatten``).

    ``method`` is one of ``METHODS`` or ``EXACT_CRITIC`` (then token t of response i is weighted by A(s_t, y_t)).
    """
    check_policy("policy", policy, responses=True)
    prompt = check_prompt(prompt)
    n = _check_group(method, n)
    ys = policy.sample(prompt, n, rng)
    R = reward_table(reward, prompt, policy.length, policy.n_actions)
    probs = depth_probs(policy, prompt)
    idx = tuple(ys.T)
    if method == EXACT_CRITIC:
        V = values(policy, reward, prompt)
        grads = []
        for t, p in enumerate(probs):
            coef = V[t + 1][tuple(ys[:, : t + 1].T)] - V[t][tuple(ys[:, :t].T)]  # A(s_t, y_t), shape (n,)
            g = np.zeros(p.shape)
            np.add.at(g, tuple(ys[:, : t + 1].T), coef)  # Σ_i A_it e_{y_it} at prefix s_it ...
            rows = np.zeros(p.shape[:-1])
            if t:
                np.add.at(rows, tuple(ys[:, :t].T), coef)
            else:
                rows = rows + coef.sum()
            grads.append((g - p * rows[..., None]) / n)  # ... minus π(·|s_it) Σ_i A_it
        return flatten(grads)
    greedy = R[greedy_response(policy, prompt)] if method == "remax" else None
    A = advantages(method, R[idx], greedy)
    w = np.zeros(R.shape)
    np.add.at(w, idx, A / n)
    return flatten(gradient_from_weights(probs, w))


# -- exact means and variances over all groups ------------------------------------------------------------------
def _check_group(method: str, n) -> int:
    if method != EXACT_CRITIC:
        checks.choose("method", method, METHODS)
    return checks.positive_int("n", n, low=MIN_GROUP[method], high=256)


MAX_COMPOSITIONS = 200_000
"""Most compositions (how many of the n responses take each reward value) an exact expectation enumerates; with
the n rewards of each, that is at most ``checks.MAX_ENUMERATION`` numbers."""


def compositions(n: int, m: int) -> np.ndarray:
    """Every way to split n responses among m reward values: int array (C(n+m−1, m−1), m), rows summing to n.
    (Cached and read-only.) At most ``MAX_COMPOSITIONS`` rows."""
    n = checks.positive_int("n", n, low=0)
    m = checks.positive_int("m", m, low=1)
    checks.enumeration(f"the compositions of n = {n} into m = {m} parts", math.comb(n + m - 1, m - 1),
                       limit=MAX_COMPOSITIONS, smaller="a smaller group size n or a reward with fewer distinct values")
    return _compositions(n, m)


@functools.lru_cache(maxsize=64)
def _compositions(n: int, m: int) -> np.ndarray:
    rows = []
    for bars in itertools.combinations(range(n + m - 1), m - 1):
        edges = (-1,) + bars + (n + m - 1,)
        rows.append([edges[i + 1] - edges[i] - 1 for i in range(m)])
    out = np.array(rows, dtype=int).reshape(-1, m)
    out.flags.writeable = False
    return out


def _group_statistics(method, policy, reward, prompt, n, eps):
    """What exact expectations need: per reward value v, α_v = E[c_v A_v]/n, β_v = E[c_v A_v²],
    B_vw = E[c_v c_w A_v A_w], and the conditional scores G_v = E[∇log π | r = v], M_v = E[‖∇log π‖² | r = v]."""
    P = policy.response_probs(prompt)
    R = reward_table(reward, prompt, policy.length, policy.n_actions)
    vals = np.unique(R[P > 0])
    size = math.comb(n + len(vals) - 1, len(vals) - 1)
    checks.enumeration(f"{method}'s exact moments over every group of n = {n} responses with {len(vals)} distinct "
                       f"rewards ({checks.count(size)} compositions)", size * n, limit=checks.MAX_ENUMERATION,
                       smaller="a smaller group size n or a reward with fewer distinct values")
    pv = np.array([P[R == v].sum() for v in vals])
    probs = depth_probs(policy, prompt)
    norms = score_norms(policy, prompt)
    G = np.stack([flatten(gradient_from_weights(probs, P * (R == v) / p)) for v, p in zip(vals, pv, strict=True)])
    M = np.array([(P * norms)[R == v].sum() / p for v, p in zip(vals, pv, strict=True)])
    counts = _compositions(n, len(vals))
    log_fact = np.concatenate([[0.0], np.cumsum(np.log(np.arange(1, n + 1)))])
    with np.errstate(divide="ignore"):
        log_p = np.log(pv)
    log_prob = log_fact[n] - log_fact[counts].sum(axis=1) + np.where(counts > 0, counts * log_p, 0.0).sum(axis=1)
    weight = np.exp(log_prob)  # multinomial probability of each composition
    # The group's rewards, sorted, for every composition; A_v is the advantage at the first slot holding v.
    group = np.repeat(np.broadcast_to(vals, counts.shape).ravel(), counts.ravel()).reshape(len(counts), n)
    greedy = R[greedy_response(policy, prompt)] if method == "remax" else None
    adv = advantages(method, group, None if greedy is None else np.full(len(counts), greedy), eps)
    first = np.minimum(np.cumsum(counts, axis=1) - counts, n - 1)
    A = np.where(counts > 0, np.take_along_axis(adv, first, axis=1), 0.0)  # (compositions, values)
    cA = counts * A
    alpha = weight @ cA / n
    beta = weight @ (counts * A * A)
    B = np.einsum("c,cv,cw->vw", weight, cA, cA)
    return vals, pv, G, M, alpha, beta, B


def gradient_moments(method: str, policy: Policy, reward, prompt, n: int,
                     eps: float = GRPO_EPS) -> tuple[np.ndarray, float]:
    """(E[g], E‖g − E[g]‖²) over every group of n responses, exactly: the mean (flat, as ``flatten``) and the
    total variance (the trace of the covariance of g).

    Given the rewards, the n scores s_i = ∇log π(y_i|x) are independent with means G_{v_i}, so
    E[g] = Σ_v E[c_v A_v]/n · G_v and E‖g‖² = (1/n²) E[Σ_i A_i² M_{v_i} + Σ_{i≠j} A_i A_j G_{v_i}·G_{v_j}], with c_v the
    number of responses whose reward is v and M_v = E[‖s‖² | r = v].
    """
    check_policy("policy", policy, responses=True)
    prompt = check_prompt(prompt)
    n = _check_group(method, n)
    if method == EXACT_CRITIC:
        return _exact_critic_moments(policy, reward, prompt, n)
    if method in LINEAR:
        return _linear_moments(method, policy, reward, prompt, n)
    return _composition_moments(method, policy, reward, prompt, n, eps)


LINEAR = ("reinforce", "dr_grpo", "rloo", "remax")
"""Methods whose advantage is affine in the group's rewards, A_i = a·r_i + b·Σ_j r_j + c: their exact moments
have a closed form (``_linear_moments``), with no enumeration of groups."""


def _linear_moments(method, policy, reward, prompt, n):
    """Closed form for A_i = a r_i + b S + c (S = Σ_j r_j). With α = a + b and D = b·S_{−i} + c (the other
    responses' part), the scores having mean zero and the n (r_i, s_i) independent:

        E[g] = α ∇J,   n² E‖g‖² = n (α² E[r²‖s‖²] + 2α E[D] E[r‖s‖²] + E[D²] E[‖s‖²]) + n(n − 1)(α² + b²)‖∇J‖².
    """
    P = policy.response_probs(prompt)
    R = reward_table(reward, prompt, policy.length, policy.n_actions)
    if method == "remax":
        a, b, c = 1.0, 0.0, -float(R[greedy_response(policy, prompt)])
    elif method == "rloo":
        a, b, c = n / (n - 1), -1.0 / (n - 1), 0.0
    else:
        a, b, c = 1.0, -1.0 / n, 0.0
    alpha = a + b
    norms = score_norms(policy, prompt)
    mu, var = float((P * R).sum()), float((P * (R - (P * R).sum()) ** 2).sum())
    M0, M1, M2 = (float((P * R**k * norms).sum()) for k in range(3))
    ED = b * (n - 1) * mu + c
    ED2 = b * b * ((n - 1) * var + ((n - 1) * mu) ** 2) + 2 * b * c * (n - 1) * mu + c * c
    grad = exact_policy_gradient(policy, reward, prompt)
    gg = float(grad @ grad)
    second = (n * (alpha**2 * M2 + 2 * alpha * ED * M1 + ED2 * M0) + n * (n - 1) * (alpha**2 + b * b) * gg) / n**2
    mean = alpha * grad
    return mean, float(max(second - alpha**2 * gg, 0.0))


def _composition_moments(method, policy, reward, prompt, n, eps=GRPO_EPS):
    """E[g] and E‖g − E[g]‖² by enumerating how many of the n responses take each reward value (any method)."""
    _, _, G, M, alpha, beta, B = _group_statistics(method, policy, reward, prompt, n, eps)
    gram = G @ G.T
    second = (beta @ (M - np.diag(gram)) + (B * gram).sum()) / n**2
    mean = alpha @ G
    return mean, float(max(second - mean @ mean, 0.0))


def _exact_critic_moments(policy, reward, prompt, n):
    A = advantage_table(policy, reward, prompt)  # (K,)*L + (L,)
    P = policy.response_probs(prompt)
    second = 0.0  # E‖Σ_t A_t (e_{y_t} − π(·|s_t))‖²; depths use disjoint logits, so the cross terms vanish
    for t, p in enumerate(depth_probs(policy, prompt)):
        sq = 1.0 - 2.0 * p + (p * p).sum(axis=-1, keepdims=True)
        second += (P * A[..., t] ** 2 * sq.reshape(sq.shape + (1,) * (policy.length - t - 1))).sum()
    grad = exact_policy_gradient(policy, reward, prompt)
    return grad, float(max(second - grad @ grad, 0.0) / n)


def expected_gradient(method: str, policy: Policy, reward, prompt, n: int, eps: float = GRPO_EPS) -> np.ndarray:
    """E[g] over every group of n responses, exactly (flat, as ``flatten``)."""
    return gradient_moments(method, policy, reward, prompt, n, eps)[0]


def gradient_variance(method: str, policy: Policy, reward, prompt, n: int, eps: float = GRPO_EPS) -> float:
    """E‖g − E[g]‖², the total variance of the group's gradient estimate (trace of its covariance), exactly."""
    return gradient_moments(method, policy, reward, prompt, n, eps)[1]


def grpo_scale(n: int, p: float, eps: float = GRPO_EPS) -> float:
    """c(n, p) with E[g_GRPO] = c·∇J for a 0/1 reward with success rate p (0 < p < 1).

    With k successes among n the std is σ_k = √(k(n − k)/(n(n − 1))) and, conditioning on k,
    E[g | k] = k(n − k)/(n²(σ_k + ε)) · (G_1 − G_0), where G_1 − G_0 = ∇J/(p(1 − p)). So
    c = Σ_k Binomial(k; n, p) · k(n − k) / (n² (σ_k + ε) p (1 − p)).
    """
    n = checks.positive_int("n", n, low=2, high=256)
    p = checks.probability("p", p)
    eps = checks.positive_finite("eps", eps)
    if p in (0.0, 1.0):
        raise ValueError(f"p must be strictly between 0 and 1, got {p!r}")
    k = np.arange(n + 1)
    log_binom = np.array([math.lgamma(n + 1) - math.lgamma(j + 1) - math.lgamma(n - j + 1) for j in k])
    pk = np.exp(log_binom + k * math.log(p) + (n - k) * math.log1p(-p))
    sigma = np.sqrt(k * (n - k) / (n * (n - 1)))
    return float((pk * k * (n - k) / (n**2 * (sigma + eps))).sum() / (p * (1 - p)))


def expected_scale(method: str, n: int) -> float:
    """E[g] = scale·∇J for the methods where the scale is a constant: 1 (rloo, remax, exact critic) or 1 − 1/n."""
    n = _check_group(method, n)
    if method == "grpo":
        raise ValueError("method 'grpo' has no constant scale: see grpo_scale for a 0/1 reward")
    return 1.0 - 1.0 / n if method in ("reinforce", "dr_grpo") else 1.0


def conditional_advantage_gap(method: str, n: int, p: float, greedy_reward: float | None = None,
                              eps: float = GRPO_EPS) -> float:
    """E[A_i | r_i = 1] − E[A_i | r_i = 0] for a 0/1 reward with success rate p (0 < p < 1).

    For any method whose A_i depends only on the group's rewards, E[g] = (E[A_i | r_i = 1] − E[A_i | r_i = 0])·∇J
    (section 4.5). Computed by enumerating j ~ Binomial(n − 1, p) successes among the other responses and taking
    ``advantages`` of the group (r_i, 1 × j, 0 × (n − 1 − j)); for GRPO it equals ``grpo_scale(n, p)``.
    """
    checks.choose("method", method, METHODS)
    n = checks.positive_int("n", n, low=MIN_GROUP[method], high=256)
    p = checks.in_range("p", p, 0.0, 1.0)
    if p in (0.0, 1.0):
        raise ValueError(f"p must be strictly between 0 and 1, got {p!r}")
    if greedy_reward is not None:
        greedy_reward = checks.finite("greedy_reward", greedy_reward)
    eps = checks.positive_finite("eps", eps)
    j = np.arange(n)
    pj = np.array([math.comb(n - 1, int(k)) for k in j]) * p**j * (1 - p) ** (n - 1 - j)
    others = (np.arange(n - 1)[None, :] < j[:, None]).astype(float)  # row j: j ones, then zeros
    greedy = None if greedy_reward is None else np.full(n, float(greedy_reward))
    gap = 0.0
    for own, sign in ((1.0, 1.0), (0.0, -1.0)):
        groups = np.concatenate([np.full((n, 1), own), others], axis=1)
        gap += sign * float(pj @ advantages(method, groups, greedy, eps)[:, 0])
    return gap
