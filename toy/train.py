"""Small training loops on a tabular policy, with the expected reward and the KL to π_ref computed exactly each step.

Every run starts from a policy (π_ref unless ``start`` is given) and maximises E[r] − β·KL(π ‖ π_ref) by gradient
ascent on the logits of one softmax per (prompt, prefix), the parameters of a ``toy.TabularPolicy``. The step is plain
(``optimizer="sgd"``: θ ← θ + lr·g, the default, which every figure of the book uses) or Adam's (``optimizer="adam"``,
Kingma and Ba's update with bias correction: m ← β₁m + (1 − β₁)g, v ← β₂v + (1 − β₂)g², θ ← θ + lr·m̂/(√v̂ + ε)),
which the trainers of LLMs use. Adam divides each parameter's step by a running scale of its own gradients, so it
undoes a rescaling of all the advantages by one number; a plain step does not. (In the toy every prompt has logits of
its own, so Adam also normalises each prompt's steps separately; a network shares its weights across prompts.)
Each step samples a group of n responses per prompt, scores them with the KL-shaped reward

    r̃(x, y) = r(x, y) − β·log(π(y|x) / π_ref(y|x))        (InstructGPT's penalty; it sums the per-token terms)

turns the scores into advantages with one of the methods below, and moves the logits along
(1/n) Σ_i Σ_t A_{i,t} ∇ log π(y_{i,t} | s_{i,t}). With ``epochs`` > 1 the same group is reused, and each later pass
uses PPO's clipped surrogate (ratio to the sampling policy, clipped to [1 − ε, 1 + ε]). The clip is per token for
every method, the critic-free ones included: each token's ratio π(y_t | s_t)/π_old(y_t | s_t) is clipped on its own.
The common trainers differ here:

* per token, as here: verl's policy loss for PPO and GRPO alike (its default ``loss_mode="vanilla"``), and TRL's
  GRPOTrainer (its default ``importance_sampling_level="token"``);
* one ratio per response, π(y|x)/π_old(y|x) (the product of its tokens' ratios), clipped once: TRL's RLOOTrainer;
* one length-normalised ratio per response (the geometric mean of its tokens' ratios): GSPO, in TRL's GRPOTrainer
  with ``importance_sampling_level="sequence"`` and in verl's ``loss_mode="gspo"``.

verl's default loss also applies dual-clip PPO's bound (``clip_ratio_c`` = 3): for a negative advantage the loss stops
growing once a token's ratio passes 3. The toy has no such bound.

Conventions, where they differ from the published methods and the common trainers:

* **Where the KL penalty goes.** Every critic-free method here (``reinforce``, ``rloo``, ``remax``, ``grpo``,
  ``dr_grpo``) sees the KL-shaped reward r̃ above, so its advantage is computed from r̃: ``grpo`` subtracts the group
  mean of r̃ and divides it, penalty included, by the group's std of r̃. GRPO as published (Shao et al. 2024), TRL's
  GRPO trainer and verl's GRPO setting (``use_kl_loss``) instead add a per-token KL estimate to the loss, the "k3"
  estimator π_ref/π − log(π_ref/π) − 1, outside the advantage and its division by the std.
* **ReMax's baseline** is the greedy response's KL-shaped reward r̃(x, ŷ) under the current policy (``toy.estimators``
  on its own uses the plain r(x, ŷ)). Both baselines are unbiased: the greedy response does not depend on the
  sampled ones.
* ``ppo`` whitens its advantages with the population std; see ``toy.ppo``.

Methods: ``exact`` (the exact gradient of E[r] − β·KL, no sampling: the curve every estimator is chasing), the
critic-free methods of ``toy.estimators`` (one advantage per response, the same on all its tokens), and, from
``toy.ppo``, ``ppo`` (a learned critic and GAE) and ``vineppo`` (Monte Carlo values from K restarts).

Runs for several KL coefficients and seeds are computed together as one batch of arrays. The seeds share their
random numbers across β, so curves for different β differ only through β. Shapes: B runs, P prompts,
K tokens, L = response length, n = group size; a prefix of depth t is stored as one flat index in C order.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from . import checks, estimators, ppo
from .exact import value
from .kl import kl_regularised_optimum, sequence_kl
from .policy import Policy, TabularPolicy, check_policy, reference_policy
from .rewards import reward_table
from .trust_region import clipped_gradient_mask
from .vocab import PROMPTS

METHODS = {
    "exact": "exact gradient (no sampling)",
    **estimators.METHODS,
    "ppo": "PPO: learned critic + GAE(λ), per-token advantages",
    "vineppo": "VinePPO: Monte Carlo values from K restarts per prefix",
}
"""Every training method: name → one-line description."""

LABELS = {
    "exact": "exact gradient", "reinforce": "REINFORCE (mean baseline)", "rloo": "RLOO", "remax": "ReMax",
    "grpo": "GRPO", "dr_grpo": "Dr. GRPO", "ppo": "PPO + critic (GAE)", "vineppo": "VinePPO",
}
"""Short display names."""

OPTIMIZERS = {"sgd": "plain gradient steps: θ ← θ + lr·g", "adam": "Adam: θ ← θ + lr·m̂/(√v̂ + ε)"}
"""The step rules ``train`` offers."""

ADAM_BETAS = (0.9, 0.999)
ADAM_EPS = 1e-8
"""Adam's defaults (PyTorch's, and Kingma and Ba's)."""

MAX_BATCH = 2_000_000
"""Largest array (runs × prompts × responses) one training step builds."""

LEARNING_RATE = 2.0
"""Default step size on the logits."""


@dataclass
class Curves:
    """Exact learning curves of a batch of runs. Arrays have shape (len(betas), len(seeds), steps + 1); index 0 is
    the starting policy, index k the policy after k updates."""

    method: str
    betas: tuple[float, ...]
    seeds: tuple[int, ...]
    reward: np.ndarray  # E_{x ~ prompts, y ~ π}[r(x, y)]
    kl: np.ndarray  # mean over prompts of KL(π(·|x) ‖ π_ref(·|x))
    sampled_reward: np.ndarray  # mean reward of the responses sampled at each step, shape (..., steps)
    final_logits: list  # the last policy of every run: per depth, shape (len(betas), len(seeds), P, K^t, K)
    prompts: tuple[int, ...] = PROMPTS

    @property
    def objective(self) -> np.ndarray:
        """E[r] − β·KL, exactly."""
        return self.reward - np.asarray(self.betas)[:, None, None] * self.kl

    def band(self, name: str, beta_index: int = 0) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Mean over seeds and the band mean ± one standard deviation, for ``reward``, ``kl`` or ``objective``."""
        a = getattr(self, checks.choose("curve name", name, {"reward": "reward", "kl": "kl", "objective": "objective"}))
        a = a[checks.positive_int("beta_index", beta_index, low=0, high=len(self.betas) - 1)]
        mean = a.mean(axis=0)
        sd = a.std(axis=0, ddof=1) if a.shape[0] > 1 else np.zeros_like(mean)
        return mean, mean - sd, mean + sd

    def policy(self, beta_index: int = 0, seed_index: int = 0, base: Policy | None = None) -> TabularPolicy:
        """The trained policy of one run, as a ``TabularPolicy`` (prompts that were not trained keep ``base``)."""
        beta_index = checks.positive_int("beta_index", beta_index, low=0, high=len(self.betas) - 1)
        seed_index = checks.positive_int("seed_index", seed_index, low=0, high=len(self.seeds) - 1)
        return to_policy([z[beta_index, seed_index] for z in self.final_logits], self.prompts, base)

    def first_signal(self) -> np.ndarray:
        """Step (1-based) at which a run first sampled a response with a nonzero reward; 0 if it never did.
        Shape (len(betas), len(seeds))."""
        hit = self.sampled_reward != 0
        return np.where(hit.any(axis=-1), hit.argmax(axis=-1) + 1, 0)


# -- the batched tabular policy -------------------------------------------------------------------------------
def _softmax(z):
    z = z - z.max(axis=-1, keepdims=True)
    e = np.exp(z)
    return e / e.sum(axis=-1, keepdims=True)


def _log_softmax(z):
    z = z - z.max(axis=-1, keepdims=True)
    return z - np.log(np.exp(z).sum(axis=-1, keepdims=True))


def tabular_logits(policy: Policy, prompts) -> list[np.ndarray]:
    """The policy's log-probabilities as flat tables: entry t has shape (P, K^t, K)."""
    check_policy("policy", policy, responses=True)
    prompts = checks.prompts("prompts", prompts)
    K = policy.n_actions
    return [np.stack([np.log(np.maximum(policy.prefix_probs(x, t), np.finfo(float).tiny)).reshape(K**t, K)
                      for x in prompts]) for t in range(policy.length)]


def to_policy(logits: list[np.ndarray], prompts, base: Policy | None = None) -> TabularPolicy:
    """A ``TabularPolicy`` from flat tables (P, K^t, K) for ``prompts``; other prompts keep ``base``'s (π_ref)."""
    logits = _depth_list("logits", logits)
    prompts = checks.prompts("prompts", prompts)
    base = reference_policy(length=len(logits)) if base is None else check_policy("base", base)
    K = base.n_actions
    if len(logits) != base.length or any(z.shape != (len(prompts), K**t, K) for t, z in enumerate(logits)):
        raise ValueError(f"logits must hold {base.length} arrays (base's length) of shape (P, K^t, K) with "
                         f"P = {len(prompts)} and K = {K}, got shapes {[z.shape for z in logits]}")
    full = [np.array(z) for z in TabularPolicy.from_policy(base).logits]
    for t, z in enumerate(logits):
        for i, x in enumerate(prompts):
            full[t][PROMPTS.index(x)] = z[i].reshape((K,) * (t + 1))
    return TabularPolicy(full, eos=base.eos)


def response_log_probs(log_probs: list[np.ndarray]) -> np.ndarray:
    """log π(y|x) for every response from per-depth log-probabilities (..., K^t, K): shape (..., K^L)."""
    log_probs = _depth_list("log_probs", log_probs)
    out = log_probs[0][..., 0, :]
    for lp in log_probs[1:]:
        out = (out[..., :, None] + lp).reshape(lp.shape[:-2] + (-1,))
    return out


def exact_metrics(log_p: np.ndarray, log_ref: np.ndarray, R: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Exact mean reward and mean KL over prompts: log_p (..., P, K^L), log_ref and R (P, K^L) → two (...,) arrays."""
    log_p, log_ref, R = (checks.array(name, a, min_ndim=2) for name, a in
                         (("log_p", log_p), ("log_ref", log_ref), ("R", R)))
    if log_ref.shape != log_p.shape[-2:] or R.shape != log_ref.shape:
        raise ValueError(f"log_ref and R must have shape (P, K^L) = {log_p.shape[-2:]}, got {log_ref.shape} and "
                         f"{R.shape}")
    p = np.exp(log_p)
    reward = (p * R).sum(axis=-1).mean(axis=-1)
    kl = (p * (log_p - log_ref)).sum(axis=-1).mean(axis=-1)
    return reward, np.maximum(kl, 0.0)


def sample_ids(log_p: np.ndarray, u: np.ndarray) -> np.ndarray:
    """Flat response ids by inverse CDF: log_p (..., M) and uniforms u (..., n) → ints (..., n)."""
    log_p, u = checks.array("log_p", log_p, min_ndim=1), checks.array("u", u, min_ndim=1)
    if log_p.shape[:-1] != u.shape[:-1]:
        raise ValueError(f"log_p and u must agree on their leading axes, got shapes {log_p.shape} and {u.shape}")
    if np.any((u < 0) | (u > 1)):
        raise checks.fail("u", "uniforms in [0, 1]", u)
    cdf = np.cumsum(np.exp(log_p), axis=-1)
    ids = (cdf[..., None, :] < u[..., :, None] * cdf[..., None, -1:]).sum(axis=-1)
    return np.minimum(ids, log_p.shape[-1] - 1)


def token_gradient(probs: list[np.ndarray], ids: np.ndarray, coef: np.ndarray, K: int) -> list[np.ndarray]:
    """Σ_i Σ_t c_{i,t} ∇ log π(y_{i,t} | s_{i,t}) for flat tables: probs[t] (B, P, K^t, K), response ids (B, P, n),
    coefficients c (B, P, n, L). Returns one (B, P, K^t, K) array per depth: at prefix s, c summed over the tokens
    taken there, minus π(· | s) times the same sum (the derivative of a log-softmax)."""
    probs = _depth_list("probs", probs)
    L = len(probs)
    K = checks.positive_int("K", K, low=1)
    ids = checks.token_array("ids", ids, K**L, ndim=3)
    B, P, n = ids.shape
    coef = checks.array("coef", coef, shape=(B, P, n, L))
    if any(p.shape != (B, P, K**t, K) for t, p in enumerate(probs)):
        raise ValueError(f"probs[t] must have shape (B, P, K^t, K) = ({B}, {P}, K^t, {K}), got "
                         f"{[p.shape for p in probs]}")
    run = np.arange(B * P).reshape(B, P, 1)
    grads = []
    for t in range(L):
        prefix_and_token = ids // K ** (L - 1 - t)  # flat index of y_≤t
        flat = (run * K ** (t + 1) + prefix_and_token).ravel()
        U = np.bincount(flat, weights=coef[..., t].ravel(), minlength=B * P * K ** (t + 1))
        U = U.reshape(B, P, K**t, K)
        grads.append(U - probs[t] * U.sum(axis=-1, keepdims=True))
    return grads


def sampled_token_log_probs(log_probs: list[np.ndarray], ids: np.ndarray, K: int) -> np.ndarray:
    """log π(y_{i,t} | s_{i,t}) for sampled responses: (B, P, n) ids → (B, P, n, L)."""
    log_probs = _depth_list("log_probs", log_probs)
    L = len(log_probs)
    K = checks.positive_int("K", K, low=1)
    ids = checks.token_array("ids", ids, K**L, ndim=3)
    if any(lp.shape[:2] != ids.shape[:2] or lp.shape[2:] != (K**t, K) for t, lp in enumerate(log_probs)):
        raise ValueError(f"log_probs[t] must have shape (B, P, K^t, K) with (B, P) = {ids.shape[:2]}, got "
                         f"{[lp.shape for lp in log_probs]}")
    out = []
    for t, lp in enumerate(log_probs):
        prefix, token = ids // K ** (L - t), (ids // K ** (L - 1 - t)) % K
        flat = lp.reshape(lp.shape[:2] + (-1,))
        out.append(np.take_along_axis(flat, prefix * K + token, axis=-1))
    return np.stack(out, axis=-1)


def _tabular_loop(z: list[np.ndarray], steps: int, log_target: np.ndarray, R: np.ndarray, update):
    """The tabular policy-gradient loop every trainer of the toy shares (``train``, ``toy.distillation``).

    ``z``: logits per depth, (B, P, K^t, K) for B runs and P prompts. At every step 0..steps the exact expected
    reward under R (P, K^L) and KL(π_z ‖ target) from ``log_target`` (P, K^L) are recorded; then, but for the last,
    ``z = update(step, z, log_probs, log_p)`` with the log-probabilities per depth and per response (B, P, K^L):
    the one place the trainers differ (how each sampled token's coefficient is computed).

    Returns (reward curve, KL curve), each (B, steps + 1), and the final logits.
    """
    B = z[0].shape[0]
    reward_curve, kl_curve = np.empty((B, steps + 1)), np.empty((B, steps + 1))
    for step in range(steps + 1):
        log_probs = [_log_softmax(t) for t in z]
        log_p = response_log_probs(log_probs)  # (B, P, K^L)
        reward_curve[:, step], kl_curve[:, step] = exact_metrics(log_p, log_target, R)
        if step < steps:
            z = update(step, z, log_probs, log_p)
    return reward_curve, kl_curve, z


def _depth_list(name: str, value) -> list[np.ndarray]:
    if isinstance(value, (str, bytes, np.ndarray)) or not isinstance(value, (list, tuple)) or not value:
        raise checks.fail(name, "a non-empty list of arrays, one per depth", value)
    return [checks.array(f"{name}[{t}]", a, min_ndim=2) for t, a in enumerate(value)]


# -- the step rule ---------------------------------------------------------------------------------------------
class Ascent:
    """One gradient-ascent step on a list of parameter arrays, plain or Adam's; Adam keeps its moments between calls.

    ``step(params, grads)`` returns the new parameters: params[i] + lr·grads[i] (``"sgd"``), or Adam's update with
    its first and second moments m, v (zero at the start) and bias correction after t steps:
    m ← β₁m + (1 − β₁)g, v ← β₂v + (1 − β₂)g², θ ← θ + lr·(m/(1 − β₁ᵗ))/(√(v/(1 − β₂ᵗ)) + ε).
    """

    def __init__(self, optimizer: str, lr: float, betas=ADAM_BETAS, eps: float = ADAM_EPS):
        checks.choose("optimizer", optimizer, OPTIMIZERS)
        self.optimizer = optimizer
        self.lr = checks.positive_finite("lr", lr)
        self.b1, self.b2 = (checks.in_range("beta of Adam", b, 0.0, 0.999999) for b in betas)
        self.eps = checks.positive_finite("eps", eps)
        self.t, self.m, self.v = 0, None, None

    def step(self, params: list[np.ndarray], grads: list[np.ndarray]) -> list[np.ndarray]:
        if self.optimizer == "sgd":
            return [p + self.lr * g for p, g in zip(params, grads, strict=True)]
        if self.m is None:
            self.m = [np.zeros_like(g) for g in grads]
            self.v = [np.zeros_like(g) for g in grads]
        self.t += 1
        out = []
        for i, (p, g) in enumerate(zip(params, grads, strict=True)):
            self.m[i] = self.b1 * self.m[i] + (1 - self.b1) * g
            self.v[i] = self.b2 * self.v[i] + (1 - self.b2) * g * g
            m_hat = self.m[i] / (1 - self.b1**self.t)
            v_hat = self.v[i] / (1 - self.b2**self.t)
            out.append(p + self.lr * m_hat / (np.sqrt(v_hat) + self.eps))
        return out


# -- training -------------------------------------------------------------------------------------------------
def train(method: str, *, steps: int = 40, group_size: int = 4, betas=(0.05,), seeds=(0, 1, 2, 3, 4),
          lr: float = LEARNING_RATE, reward="sum_to_target", reference: Policy | None = None,
          start: Policy | None = None, prompts=PROMPTS, epochs: int = 1, clip: float = 0.2,
          lam: float = 0.95, vine_k: int = 9, critic_lr: float = 0.5, critic_features: str | None = None,
          optimizer: str = "sgd") -> Curves:
    """Train one method from ``start`` (default: π_ref) for every β in ``betas`` and every seed; see the module
    docstring. ``optimizer`` is the policy's step rule (``OPTIMIZERS``: plain steps of size ``lr``, or Adam's with
    learning rate ``lr``; the critic of ``ppo`` keeps its own update, ``critic_lr``). ``lam`` (GAE's λ),
    ``critic_lr`` and ``critic_features`` are used by ``ppo``, ``vine_k`` (rollouts per state) by ``vineppo``; see
    ``toy.ppo``.

    Returns ``Curves`` with the exact expected reward and KL to π_ref after every step.
    """
    checks.choose("method", method, METHODS)
    steps = checks.positive_int("steps", steps, low=1, high=2000)
    n = checks.positive_int("group_size", group_size, low=estimators.MIN_GROUP.get(method, 1), high=256)
    betas = tuple(checks.in_range("beta", b, 0.0, 100.0) for b in np.atleast_1d(betas))
    seeds = tuple(checks.positive_int("seed", s, low=0) for s in np.atleast_1d(seeds))
    if not betas or not seeds:
        raise ValueError("betas and seeds must each hold at least one value")
    lr = checks.positive_finite("lr", lr)
    ascent = Ascent(optimizer, lr)
    epochs = checks.positive_int("epochs", epochs, low=1, high=20)
    clip = checks.in_range("clip", clip, 0.0, 1.0)
    prompts = checks.prompts("prompts", prompts)
    reference = reference_policy() if reference is None else check_policy("reference", reference)
    start = reference if start is None else check_policy("start", start)
    checks.same_action_set(("start", "reference"), start, reference)
    K, L, P = reference.n_actions, reference.length, len(prompts)
    nb, ns = len(betas), len(seeds)
    B = nb * ns
    checks.enumeration(f"training {B} runs on {P} prompts over every response ({K}**{L})", B * P * K**L,
                       limit=MAX_BATCH, smaller="fewer betas, seeds or prompts, or a shorter response length")
    if method == "vineppo":
        checks.enumeration(f"VinePPO's rollouts ({B} runs × {P} prompts × {n + 1} states × {L} positions × "
                           f"vine_k = {vine_k})", B * P * (n + 1) * L * checks.positive_int("vine_k", vine_k, low=1),
                           limit=MAX_BATCH, smaller="a smaller vine_k, group_size or fewer runs")

    R = np.stack([reward_table(reward, x, L, K).ravel() for x in prompts])  # (P, K^L)
    ref_token = tabular_logits(reference, prompts)  # log π_ref per depth, (P, K^t, K)
    log_ref = response_log_probs(ref_token)  # (P, K^L)
    z = [np.broadcast_to(t, (B,) + t.shape).copy() for t in tabular_logits(start, prompts)]
    beta = np.repeat(np.array(betas), ns)  # run b = (β index, seed index)
    rngs = [np.random.default_rng(s) for s in seeds]

    helper = None
    if method in ("ppo", "vineppo"):
        helper = ppo.TokenAdvantages(method, prompts=prompts, runs=B, length=L, n_actions=K, lam=lam,
                                     vine_k=vine_k, critic_lr=critic_lr,
                                     critic_features=critic_features or ppo.CRITIC_FEATURES)
        extra = helper.uniforms_shape(P, n)
        ref_b = [np.broadcast_to(lp, (B,) + lp.shape) for lp in ref_token]

    sampled = np.zeros((B, steps))

    def update(step, z, log_probs, log_p):
        probs = [np.exp(lp) for lp in log_probs]
        if method == "exact":
            w = np.exp(log_p) * (R - beta[:, None, None] * (log_p - log_ref))
            return ascent.step(z, _exact_gradient(probs, w, K))
        u = np.stack([rng.random((P, n)) for rng in rngs])  # (ns, P, n), shared across β
        ids = sample_ids(log_p, np.tile(u, (nb, 1, 1)))  # (B, P, n)
        r = np.take_along_axis(np.broadcast_to(R, (B, P, R.shape[1])), ids, axis=-1)
        sampled[:, step] = r.mean(axis=(1, 2))
        log_ratio = np.take_along_axis(log_p, ids, axis=-1) - log_ref[np.arange(P)[:, None], ids]
        shaped = r - beta[:, None, None] * log_ratio
        if helper is not None:
            token_ratio = sampled_token_log_probs(log_probs, ids, K) - sampled_token_log_probs(ref_b, ids, K)
            u_extra = None
            if extra:
                u_extra = np.tile(np.stack([rng.random(extra) for rng in rngs]), (nb,) + (1,) * len(extra))
                helper.set_tables(log_p - log_ref, np.broadcast_to(R, log_p.shape))
            A = helper(log_p, ids, r, token_ratio, beta, u_extra)  # (B, P, n, L)
        else:
            greedy = None
            if method == "remax":
                gid = _greedy_ids(log_probs, K)  # (B, P)
                g_ratio = np.take_along_axis(log_p, gid[..., None], axis=-1)[..., 0] - log_ref[np.arange(P), gid]
                greedy = np.take_along_axis(np.broadcast_to(R, (B, P, R.shape[1])), gid[..., None], -1)[..., 0]
                greedy = greedy - beta[:, None] * g_ratio
            A = np.repeat(estimators.advantages(method, shaped, greedy)[..., None], L, axis=-1)
        old_lp = sampled_token_log_probs(log_probs, ids, K)
        for epoch in range(epochs):
            if epoch:
                log_probs = [_log_softmax(t) for t in z]
                probs = [np.exp(lp) for lp in log_probs]
            coef = A / n
            if epoch:
                ratio = np.exp(sampled_token_log_probs(log_probs, ids, K) - old_lp)
                coef = coef * ratio * clipped_gradient_mask(ratio, A, clip, clip)
            z = ascent.step(z, token_gradient(probs, ids, coef, K))
        return z

    reward_curve, kl_curve, z = _tabular_loop(z, steps, log_ref, R, update)
    shape = (nb, ns)
    return Curves(method, betas, seeds, reward_curve.reshape(shape + (-1,)), kl_curve.reshape(shape + (-1,)),
                  sampled.reshape(shape + (-1,)), [zt.reshape(shape + zt.shape[1:]) for zt in z], prompts)


def _exact_gradient(probs, w, K):
    """Σ_y w(y) ∇ log π(y|x) from response weights w (B, P, K^L), in this module's flat layout (B, P, K^t, K)."""
    B, P, L = w.shape[0], w.shape[1], len(probs)
    nested = [p.reshape((B, P) + (K,) * (t + 1)) for t, p in enumerate(probs)]
    grads = estimators.gradient_from_weights(nested, w.reshape((B, P) + (K,) * L))
    return [g.reshape(p.shape) for g, p in zip(grads, probs, strict=True)]


def _greedy_ids(log_probs, K):
    """Flat id of the greedy response of every run and prompt: (B, P)."""
    prefix = np.zeros(log_probs[0].shape[:2], dtype=int)
    for lp in log_probs:
        row = np.take_along_axis(lp, prefix[..., None, None], axis=2)[:, :, 0]  # (B, P, K)
        prefix = prefix * K + row.argmax(axis=-1)
    return prefix


def optimum_metrics(beta: float, reward="sum_to_target", reference: Policy | None = None,
                    prompts=PROMPTS) -> tuple[float, float]:
    """Expected reward and KL of the KL-regularised optimum π* ∝ π_ref·exp(r/β): where the curves should head.
    β = 0 gives the best response's reward and the KL of the policy that puts all mass on the best responses."""
    reference = reference_policy() if reference is None else check_policy("reference", reference, responses=True)
    prompts = checks.prompts("prompts", prompts)
    beta = checks.in_range("beta", beta, 0.0, 100.0)
    if beta == 0:
        rewards, kls = [], []
        for x in prompts:
            R = reward_table(reward, x, reference.length, reference.n_actions)
            P = reference.response_probs(x)
            best = R == R.max()
            rewards.append(float(R.max()))
            kls.append(float(-np.log(P[best].sum())))
        return float(np.mean(rewards)), float(np.mean(kls))
    star = kl_regularised_optimum(reference, reward, beta)
    rewards = [value(star, reward, x) for x in prompts]
    kls = [sequence_kl(star, reference, x) for x in prompts]
    return float(np.mean(rewards)), float(np.mean(kls))
