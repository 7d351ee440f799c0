"""The classical RL machinery the chapter uses, worked on one response of the toy (the page "Key concepts").

One response y = (y_0, ..., y_{L−1}) to a prompt x is a **trajectory**: states s_t = (x, y_<t), actions y_t, and
per-step rewards r_t, all 0 but the last, r_{L−1} = r(x, y). The state after the last token is terminal, with
value 0. With a discount γ::

    return         G_t = Σ_{k ≥ t} γ^(k−t) r_k                                  (G_0 = r(x, y) when γ = 1)
    Bellman        Q(s_t, a) = r(s_t, a) + γ V(s_t · a),   V(s_t) = Σ_a π(a | s_t) Q(s_t, a)
    advantage      A(s_t, a) = Q(s_t, a) − V(s_t)                               (Σ_a π(a | s_t) A(s_t, a) = 0)
    TD error       δ_t = r_t + γ V̂(s_{t+1}) − V̂(s_t)                            (= A(s_t, y_t) for the exact V)
    n-step return  G^(n)_t = Σ_{k<n} γ^k r_{t+k} + γ^n V̂(s_{t+n})             (the full return once t + n ≥ L)
    λ-return       G^λ_t = (1 − λ) Σ_{n=1}^{L−t−1} λ^(n−1) G^(n)_t + λ^(L−t−1) G_t,   and G^λ_t − V̂(s_t) is GAE(γ, λ)
    weights        ρ_t = π_new(y_t | s_t) / π_old(y_t | s_t),   w(y) = Π_t ρ_t = π_new(y | x) / π_old(y | x)

Values come from ``toy.exact`` (backward induction), GAE from ``toy.gae``, and PPO's whole loop is ``toy.train``'s
``train("ppo", ...)``, which ``ppo_run`` calls and summarises. Arrays along a response have one entry per position
t = 0..L−1, with V̂ given at s_0..s_{L−1} (the terminal state's value is 0).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from . import checks, train
from .exact import values
from .kl import response_kl
from .policy import Policy, check_policy, check_prompt, reference_policy
from .rewards import get_reward, reward_table
from .vocab import VOCAB_SIZE


def step_rewards(reward, prompt, response) -> np.ndarray:
    """r_t along a response: zeros, then r(x, y) on the last token. Shape (L,)."""
    y = checks.tokens("response", response, VOCAB_SIZE)
    if not y:
        raise checks.fail("response", "at least one token", response)
    r = np.zeros(len(y))
    r[-1] = get_reward(reward)(check_prompt(prompt), y)
    return r


def returns(rewards, gamma: float = 1.0) -> np.ndarray:
    """G_t = Σ_{k ≥ t} γ^(k−t) r_k for every t: shape (L,) → (L,)."""
    r = checks.array("rewards", rewards, ndim=1)
    gamma = checks.discount("gamma", gamma)
    G = np.empty_like(r)
    running = 0.0
    for t in reversed(range(r.size)):
        running = r[t] + gamma * running
        G[t] = running
    return G


def state_values(policy: Policy, reward, prompt, response) -> np.ndarray:
    """The exact V(s_t) at s_0..s_{L−1} along a response (γ = 1): shape (L,)."""
    check_policy("policy", policy, responses=True)
    y = policy.check_response(response)
    V = values(policy, reward, prompt)
    return np.array([float(V[t][y[:t]]) for t in range(policy.length)])


def q_values(policy: Policy, reward, prompt, prefix=()) -> np.ndarray:
    """Q(s, a) for every token a at s = (x, prefix), by the Bellman relation with γ = 1: r(s, a) + V(s · a), where
    r(s, a) is the reward when a completes the response (then V(s · a) = 0) and 0 otherwise. Shape (K,)."""
    check_policy("policy", policy, responses=True)
    prefix = checks.prefix("prefix", prefix, policy.length, policy.eos, strict=True)
    V = values(policy, reward, prompt)
    return np.array(V[len(prefix) + 1][prefix], dtype=float)  # V[L] holds r(x, y): reward, then value 0


def td_errors(rewards, critic_values, gamma: float = 1.0) -> np.ndarray:
    """δ_t = r_t + γ V̂(s_{t+1}) − V̂(s_t), with V̂ after the last token 0: rewards and V̂ (L,) → (L,)."""
    r = checks.array("rewards", rewards, ndim=1)
    v = checks.array("critic_values", critic_values, shape=r.shape)
    gamma = checks.discount("gamma", gamma)
    return r + gamma * np.append(v[1:], 0.0) - v


def n_step_return(rewards, critic_values, t: int, n: int, gamma: float = 1.0) -> float:
    """G^(n)_t: n rewards, then V̂(s_{t+n}) for the rest; the full return G_t once t + n reaches the end."""
    r = checks.array("rewards", rewards, ndim=1)
    v = checks.array("critic_values", critic_values, shape=r.shape)
    L = r.size
    t = checks.positive_int("t", t, low=0, high=L - 1)
    n = checks.positive_int("n", n, low=1)
    gamma = checks.discount("gamma", gamma)
    m = min(n, L - t)
    G = sum(gamma**k * r[t + k] for k in range(m))
    return float(G + (gamma**n * v[t + n] if t + n < L else 0.0))


def lambda_return(rewards, critic_values, t: int, lam: float, gamma: float = 1.0) -> float:
    """G^λ_t = (1 − λ) Σ_{n=1}^{L−t−1} λ^(n−1) G^(n)_t + λ^(L−t−1) G_t: λ = 0 is TD(0)'s target, λ = 1 the return."""
    r = checks.array("rewards", rewards, ndim=1)
    L = r.size
    t = checks.positive_int("t", t, low=0, high=L - 1)
    lam = checks.discount("lam", lam)
    head = sum((1 - lam) * lam ** (n - 1) * n_step_return(r, critic_values, t, n, gamma) for n in range(1, L - t))
    return float(head + lam ** (L - t - 1) * n_step_return(r, critic_values, t, L - t, gamma))


def gae_from_lambda_returns(rewards, critic_values, lam: float, gamma: float = 1.0) -> np.ndarray:
    """G^λ_t − V̂(s_t) for every t: equal to ``toy.gae.gae(rewards, V̂, λ, γ)``. Shape (L,)."""
    r = checks.array("rewards", rewards, ndim=1)
    v = checks.array("critic_values", critic_values, shape=r.shape)
    return np.array([lambda_return(r, v, t, lam, gamma) - v[t] for t in range(r.size)])


def token_ratios(new: Policy, old: Policy, prompt, response) -> np.ndarray:
    """ρ_t = π_new(y_t | s_t) / π_old(y_t | s_t) along a response: shape (L,). Their product is w(y)."""
    check_policy("new", new), check_policy("old", old)
    checks.same_action_set(("new", "old"), new, old)
    y = old.check_response(response)
    x = check_prompt(prompt)
    return np.array([new.next_token_probs(x, y[:t])[y[t]] / old.next_token_probs(x, y[:t])[y[t]]
                     for t in range(len(y))])


def reweighted_mean(new: Policy, old: Policy, reward, prompt, n: int, rng=None) -> float:
    """E_new[r] estimated from n responses sampled from π_old: the mean of w(y)·r(x, y) (importance sampling)."""
    check_policy("new", new, responses=True), check_policy("old", old, responses=True)
    checks.same_action_set(("new", "old"), new, old)
    x = check_prompt(prompt)
    n = checks.positive_int("n", n, low=1, high=1_000_000)
    f = get_reward(reward)
    ys = old.sample(x, n, rng=checks.rng("rng", rng))
    P_new, P_old = new.response_probs(x), old.response_probs(x)
    w = np.array([P_new[tuple(y)] / P_old[tuple(y)] for y in ys])
    return float(np.mean(w * np.array([f(x, tuple(int(a) for a in y)) for y in ys])))


class KLSplit(NamedTuple):
    """KL(π ‖ π_ref) over responses, split by reward level: ``across + within``."""

    across: float  # KL between the two policies' distributions over the reward's values
    within: float  # Σ_v π(r = v) · KL(π(· | r = v) ‖ π_ref(· | r = v)): mass moved among responses of equal reward


def kl_split(policy: Policy, reference: Policy, reward, prompt) -> KLSplit:
    """Split KL(π(· | x) ‖ π_ref(· | x)) by the chain rule over the reward's value v = r(x, y)::

        KL = Σ_v p_v log(p_v / q_v)  +  Σ_v p_v KL(π(· | v) ‖ π_ref(· | v)),   p_v = π(r = v), q_v = π_ref(r = v).

    The KL-regularised optimum π* ∝ π_ref·exp(r/β) has ``within`` = 0 (it rescales each level by one factor), so
    ``within`` is KL that buys no reward and no objective. Exact, by enumeration of the responses."""
    check_policy("policy", policy, responses=True), check_policy("reference", reference, responses=True)
    checks.same_action_set(("policy", "reference"), policy, reference)
    if policy.length != reference.length:
        raise ValueError(f"policy and reference must write responses of one length, got {policy.length} and "
                         f"{reference.length}")
    x = check_prompt(prompt)
    P, Q = policy.response_probs(x).ravel(), reference.response_probs(x).ravel()
    R = reward_table(get_reward(reward), x, reference.length, reference.n_actions).ravel()
    total = response_kl(P, Q)
    levels = [R == v for v in np.unique(R)]
    p, q = np.array([P[m].sum() for m in levels]), np.array([Q[m].sum() for m in levels])
    across = response_kl(p / p.sum(), q / q.sum())
    return KLSplit(float(across), float(max(total - across, 0.0)))


class PPORun(NamedTuple):
    """A PPO run's exact learning curve, means over its seeds: index k is the policy after k updates."""

    reward: np.ndarray  # E_{x, y ~ π}[r(x, y)], shape (steps + 1,)
    kl: np.ndarray  # mean over prompts of KL(π ‖ π_ref), shape (steps + 1,)
    objective: np.ndarray  # E[r] − β·KL
    optimum: float  # the objective's maximum, at π* ∝ π_ref·exp(r/β)
    split: KLSplit  # the final KL split by reward level (``kl_split``), mean over seeds and prompts


def ppo_run(*, steps: int = 30, group_size: int = 4, beta: float = 0.05, epochs: int = 4, clip: float = 0.2,
            lam: float = 0.95, seeds=(0, 1, 2, 3, 4), reward="sum_to_target") -> PPORun:
    """PPO whole, on the toy: ``toy.train.train("ppo", ...)`` (sample a group per prompt, the KL-shaped reward,
    GAE(λ) from the learned critic, the critic fitted to its GAE returns, ``epochs`` clipped passes), summarised as
    its curves and the optimum they head for."""
    curves = train.train("ppo", steps=steps, group_size=group_size, betas=(beta,), seeds=seeds, epochs=epochs,
                         clip=clip, lam=lam, reward=reward)
    best_reward, best_kl = train.optimum_metrics(beta, reward)
    ref = reference_policy()
    splits = [kl_split(curves.policy(0, s), ref, reward, x) for s in range(len(curves.seeds)) for x in curves.prompts]
    return PPORun(curves.reward[0].mean(axis=0), curves.kl[0].mean(axis=0), curves.objective[0].mean(axis=0),
                  float(best_reward - beta * best_kl), KLSplit(*np.mean(splits, axis=0).tolist()))
