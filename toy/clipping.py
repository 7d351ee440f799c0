"""How PPO's clip lets a token's probability move, for rare and common tokens, and DAPO's clip-higher.

One state, K tokens, π = softmax(z). A PPO update starts at π_old and takes gradient-ascent steps on the
clipped surrogate (``toy.trust_region``), for samples a_i ~ π_old with advantages A_i::

    L(z) = (1/G) Σ_i min(ρ_i A_i, clip(ρ_i, 1 − ε_low, 1 + ε_high) A_i),     ρ_i = π_z(a_i) / π_old(a_i)
    ∇_z L = (1/G) Σ_i mask_i A_i ρ_i (e_{a_i} − π_z)                         (mask: clipped_gradient_mask)

Once a token's ratio leaves the clip range in the direction its advantage pushes, its own term stops pulling:
a token with probability p and a positive advantage can rise to about (1 + ε_high)·p in one update. For a
rare token that is a tiny absolute step (0.01 → 0.012 with ε_high = 0.2), for a common one hardly a limit at all
(0.9 could go to 1.08). DAPO's clip-higher raises ε_high to 0.28 so that rare tokens can grow faster.

Conventions. The clip here is PPO's, min(ρA, clip(ρ)A), with no dual clip (verl's PPO loss adds one by default:
for A < 0 the term is also bounded by c·A, c = ``clip_ratio_c`` = 3, so a token whose ratio has passed c is no longer
pushed back down). ``train`` normalises each group's rewards with ``group_advantages``: the *population* standard
deviation and no ε, (r − mean r)/std₀ r. GRPO as the book defines it (``toy.estimators``, section 4.5) divides by the
sample standard deviation plus ε, so the advantages here are √(n/(n − 1)) times larger (1.033 for n = 16).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from . import checks
from .policy import softmax
from .trust_region import clipped_gradient_mask

MAX_STEPS = 1_000_000
"""Most gradient steps (and sampled tokens) one call may take."""
MAX_BUDGET = 1_000.0
"""Largest total step size of ``one_token_reach``."""
REACH_BUDGET = 20.0
"""The step budget of the one update ``one_token_reach`` runs by default (the total size of its gradient steps, like
epochs × learning rate), and so of section 4.3's trust-region panel. A token the clip stops (p < 1/(1 + ε_high))
does not depend on it; a token it cannot stop (p above that) grows further the larger the budget."""


def _entropy(p: np.ndarray) -> float:
    nz = p[p > 0]
    return float(-(nz * np.log(nz)).sum())


def ppo_update(p_old, actions, advantages, eps_low: float = 0.2, eps_high: float = 0.2, epochs: int = 50,
               lr: float = 1.0) -> np.ndarray:
    """π after ``epochs`` full-batch gradient-ascent steps on the clipped surrogate from π_old: shape (K,).

    ``actions`` are sampled token ids, ``advantages`` their advantages (same length).
    """
    p_old = checks.probabilities("p_old", p_old, positive=True, ndim=1)
    actions = checks.token_array("actions", actions, p_old.size, ndim=1)
    A = checks.array("advantages", advantages, ndim=1)
    if actions.shape != A.shape:
        raise ValueError(f"actions and advantages must have one entry each per sample, got shapes {actions.shape} "
                         f"and {A.shape}")
    checks.in_range("eps_low", eps_low, 0.0, 1.0), checks.non_negative_finite("eps_high", eps_high)
    epochs = checks.positive_int("epochs", epochs, low=0, high=MAX_STEPS)
    lr = checks.learning_rate("lr", lr)
    z, G = np.log(p_old), max(len(actions), 1)
    for _ in range(epochs):
        p = softmax(z)
        rho = p[actions] / p_old[actions]
        mask = clipped_gradient_mask(rho, A, eps_low, eps_high)
        c = np.bincount(actions, weights=mask * A * rho, minlength=p_old.size) / G
        z = z + lr * (c - p * c.sum())
    return softmax(z)


def one_token_reach(p_old: float, advantage: float, eps_low: float = 0.2, eps_high: float = 0.2,
                    budget: float = REACH_BUDGET) -> float:
    """The probability a token reaches in one PPO update whose batch is that token alone, with the given advantage
    (a two-token world: the token, and everything else), following the surrogate's gradient until its clip stops it.

    Gradient ascent with step halving: a step that would carry the ratio out of the clip range is retried at half
    the size, so the update ends on the boundary, p_old·(1 + ε_high) for A > 0 or p_old·(1 − ε_low) for A < 0,
    unless the total step ``budget`` (the sum of step sizes, like epochs × learning rate) runs out first, as it
    does for a common token whose ratio can never reach 1 + ε_high.
    """
    p_old = checks.in_range("p_old", p_old, 1e-12, 1 - 1e-12)
    budget = checks.in_range("budget", budget, 0.0, MAX_BUDGET)
    A = np.array([checks.finite("advantage", advantage)])
    checks.in_range("eps_low", eps_low, 0.0, 1.0), checks.non_negative_finite("eps_high", eps_high)
    old = np.array([p_old, 1 - p_old])
    z, lr, used = np.log(old), 0.05, 0.0
    while used < budget and lr > 1e-9:
        p = softmax(z)
        rho = p[:1] / old[:1]
        if clipped_gradient_mask(rho, A, eps_low, eps_high)[0] == 0:
            break
        step = min(lr, budget - used)
        trial = z + step * A[0] * rho[0] * (np.eye(2)[0] - p)  # ∇ of ρ·A with respect to the logits
        if clipped_gradient_mask(softmax(trial)[:1] / old[:1], A, eps_low, eps_high)[0] == 0:
            lr /= 2  # this step would leave the clip range: take a smaller one
            continue
        z, used = trial, used + step
    return float(softmax(z)[0])


def group_advantages(rewards) -> np.ndarray:
    """The advantages ``train`` gives one group: (r_i − mean r)/std r with the population standard deviation (NumPy's
    ``ddof=0``) and no ε; all zeros when every reward is the same. Shape (n,) → (n,)."""
    r = checks.array("rewards", rewards, ndim=1)
    if r.size < 2:
        raise checks.fail("rewards", "a group of at least 2 rewards", r)
    sd = r.std()
    return (r - r.mean()) / sd if sd > 0 else np.zeros(r.size)


class Training(NamedTuple):
    """Sampled PPO training on one state: π and its entropy after each update, mean over seeds and at each seed."""

    probs: np.ndarray  # (updates + 1, K), mean over seeds
    entropy: np.ndarray  # (updates + 1,), mean over seeds
    seed_probs: np.ndarray  # (seeds, updates + 1, K): row s is seed s
    seed_entropy: np.ndarray  # (seeds, updates + 1)


def train(p0, rewards, eps_low: float = 0.2, eps_high: float = 0.2, updates: int = 30, group: int = 16,
          epochs: int = 4, lr: float = 5.0, seeds: int = 20) -> Training:
    """PPO with group-normalised advantages on one state: each update samples ``group`` tokens from π_old,
    sets A_i = (r_i − mean r)/(std r) with the population std (``group_advantages``; zero when all rewards are
    equal), and runs ``ppo_update``. Seeds 0..seeds−1: ``Training`` holds the mean over them and each seed's run."""
    p0 = checks.probabilities("p0", p0, ndim=1)
    r = checks.array("rewards", rewards, ndim=1)
    if r.shape != p0.shape:
        raise ValueError(f"rewards must give one reward per token: shape {p0.shape}, got {r.shape}")
    checks.in_range("eps_low", eps_low, 0.0, 1.0), checks.non_negative_finite("eps_high", eps_high)
    updates = checks.positive_int("updates", updates, low=0)
    group = checks.positive_int("group", group, low=2)
    seeds = checks.positive_int("seeds", seeds, low=1)
    epochs = checks.positive_int("epochs", epochs, low=0)
    lr = checks.learning_rate("lr", lr)
    checks.enumeration(f"{seeds} seeds × {updates} updates × ({epochs} epochs + a group of {group})",
                       seeds * updates * (epochs + group), limit=MAX_STEPS,
                       smaller="fewer seeds, updates, epochs or a smaller group")
    probs = np.zeros((updates + 1, p0.size))
    entropy = np.zeros(updates + 1)
    seed_probs = np.zeros((seeds, updates + 1, p0.size))
    seed_entropy = np.zeros((seeds, updates + 1))
    for seed in range(seeds):
        rng = np.random.default_rng(seed)
        p = p0 / p0.sum()
        for n in range(updates + 1):
            seed_probs[seed, n], seed_entropy[seed, n] = p, _entropy(p)
            probs[n] += p / seeds
            entropy[n] += _entropy(p) / seeds
            if n == updates:
                break
            a = rng.choice(p.size, group, p=p)
            A = group_advantages(r[a])
            p = ppo_update(np.maximum(p, 1e-300) / np.maximum(p, 1e-300).sum(), a, A, eps_low, eps_high, epochs, lr)
    return Training(probs, entropy, seed_probs, seed_entropy)
