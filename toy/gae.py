"""Per-token advantages from estimated values: GAE(λ) with a critic, VinePPO's Monte Carlo values, against exact.

With γ = 1, per-token rewards r_t and value estimates V̂(s_0) ... V̂(s_{L−1}) (the value after the last token is 0,
the episode is over), GAE computes

    δ_t = r_t + V̂(s_{t+1}) − V̂(s_t),        A_t = Σ_{l ≥ 0} λ^l δ_{t+l}  (back to front: A_t = δ_t + λ A_{t+1}).

λ = 0 is the one-step difference V̂(s_{t+1}) − V̂(s_t) (all trust in the critic); λ = 1 is the Monte Carlo
return minus V̂(s_t) (no trust beyond the baseline). With a terminal reward only and the *exact* V, every δ_t is
the exact advantage A(s_t, y_t), so λ = 0 is exact and larger λ adds later tokens' advantages as noise; with a
learned critic, λ trades the critic's bias against that noise.

VinePPO (Kazemnejad et al.) replaces the critic by Monte Carlo: V̂(s_t) is the mean reward of k rollouts restarted
from s_t, and A_t = V̂(s_{t+1}) − V̂(s_t), with V̂(s_L) = r(x, y) known exactly. Each V̂ is unbiased with variance
Var[r | s_t]/k, so its error is pure variance and shrinks as 1/k.

Tables: ``(K,)*L + (L,)`` arrays hold one advantage per token for every response, like
``toy.exact.advantage_table``; errors are weighted by π(y | x).
"""

from __future__ import annotations

import numpy as np

from . import checks
from .exact import _advantages_from_values, advantage_table, return_variances, values
from .montecarlo import mc_value
from .policy import Policy, check_policy, check_prompt
from .rewards import reward_table

MAX_VINE_PREFIXES = 20_000
"""Most prefixes ``vine_table`` estimates one by one (length 6 has 3,906 prefixes of the five digits)."""


def gae(rewards, values_, lam: float, gamma: float = 1.0) -> np.ndarray:
    """GAE advantages: rewards and values of shape (..., L) (values at s_0..s_{L−1}; 0 after the end) → (..., L)."""
    lam = checks.discount("lam", lam)
    gamma = checks.discount("gamma", gamma)
    r = checks.array("rewards", rewards, min_ndim=1)
    v = checks.array("values_", values_, min_ndim=1)
    if r.shape != v.shape:
        raise ValueError(f"rewards and values_ must have the same shape (..., L), got {r.shape} and {v.shape}")
    next_v = np.concatenate([v[..., 1:], np.zeros(v.shape[:-1] + (1,))], axis=-1)
    delta = r + gamma * next_v - v
    A = np.empty_like(delta)
    running = np.zeros(delta.shape[:-1])
    for t in reversed(range(delta.shape[-1])):
        running = delta[..., t] + gamma * lam * running
        A[..., t] = running
    return A


def gae_table(value_tables: list[np.ndarray], reward_tab: np.ndarray, lam: float, gamma: float = 1.0) -> np.ndarray:
    """GAE(γ, λ) for every response at once, with a terminal reward: ``value_tables[t]`` holds V̂ at every prefix
    of depth t (shape (K,)*t, t = 0..L−1), ``reward_tab`` r(x, y) (shape (K,)*L). Returns (K,)*L + (L,)."""
    lam = checks.discount("lam", lam)
    gamma = checks.discount("gamma", gamma)
    reward_tab = checks.array("reward_tab", reward_tab, min_ndim=1)
    L, K = reward_tab.ndim, reward_tab.shape[0]
    if reward_tab.shape != (K,) * L:
        raise ValueError(f"reward_tab must have shape (K,)*L, got {reward_tab.shape}")
    if isinstance(value_tables, (str, bytes, np.ndarray)) or not isinstance(value_tables, (list, tuple)):
        raise checks.fail("value_tables", f"a list of {L} arrays, one per depth", value_tables)
    if len(value_tables) != L:
        raise ValueError(f"value_tables: need one value table per depth 0..{L - 1}, got {len(value_tables)}")
    value_tables = [checks.array(f"value_tables[{t}]", vt, shape=(K,) * t) for t, vt in enumerate(value_tables)]
    checks.enumeration("a GAE table", reward_tab.size * L)
    shape = reward_tab.shape
    v = np.stack([np.broadcast_to(vt.reshape(vt.shape + (1,) * (L - t)), shape)
                  for t, vt in enumerate(value_tables)], axis=-1)
    r = np.zeros(shape + (L,))
    r[..., L - 1] = reward_tab
    return gae(r, v, lam, gamma)


def exact_value_tables(policy: Policy, reward, prompt) -> list[np.ndarray]:
    """V at every prefix of depth 0..L−1 (``toy.exact.values`` without the terminal layer)."""
    return values(policy, reward, prompt)[:-1]


def advantage_errors(table: np.ndarray, policy: Policy, reward, prompt) -> np.ndarray:
    """E_{y~π}[(Â_t(y) − A(s_t, y_t))²] for each position t: shape (L,)."""
    check_policy("policy", policy)
    prompt = check_prompt(prompt)
    table = checks.array("table", table)
    A = advantage_table(policy, reward, prompt)
    P = policy.response_probs(prompt)
    if table.shape != A.shape:
        raise ValueError(f"table (the advantage table) must have shape {A.shape}, got {table.shape}")
    return np.tensordot(P, (table - A) ** 2, axes=policy.length)


def vine_errors(policy: Policy, reward, prompt, k: int) -> np.ndarray:
    """Exact E[(Â_t − A_t)²] per position for VinePPO with k rollouts per state: shape (L,).

    Â_t − A_t = e(s_{t+1}) − e(s_t) with independent, unbiased errors of variance Var[r | s]/k (e(s_L) = 0), so
    the expected square is E_y[Var[r | s_{t+1}] + Var[r | s_t]] / k.
    """
    check_policy("policy", policy)
    k = checks.positive_int("k", k, low=1)
    var = return_variances(policy, reward, prompt)
    L = policy.length
    P = policy.response_probs(prompt)
    out = np.empty(L)
    for t in range(L):
        v_t = var[t].reshape(var[t].shape + (1,) * (L - t))
        v_next = var[t + 1].reshape(var[t + 1].shape + (1,) * (L - t - 1))
        out[t] = float((P * (v_t + v_next)).sum()) / k
    return out


def gae_exact_value_errors(policy: Policy, reward, prompt, lam: float) -> np.ndarray:
    """E[(Â_t − A_t)²] for GAE(λ) with the exact V: Σ_{l ≥ 1} λ^{2l} E[A_{t+l}²] (later advantages are uncorrelated
    noise). Shape (L,)."""
    lam = checks.discount("lam", lam)
    A = advantage_table(policy, reward, prompt)
    P = policy.response_probs(prompt)
    sq = np.tensordot(P, A**2, axes=policy.length)  # E[A_t²]
    L = policy.length
    return np.array([sum(lam ** (2 * l) * sq[t + l] for l in range(1, L - t)) for t in range(L)])


def vine_values(policy: Policy, reward, prompt, response, k: int, rng=None) -> np.ndarray:
    """One realisation of VinePPO's values along a response: V̂(s_t) for t = 0..L, shape (L+1,).

    V̂(s_t) is ``toy.montecarlo.mc_value`` with k rollouts from the prefix y_<t (each state its own rollouts);
    V̂(s_L) = r(x, y) exactly.
    """
    check_policy("policy", policy, responses=True)
    prompt = check_prompt(prompt)
    y = policy.check_response(response)
    k = checks.positive_int("k", k, low=1, high=checks.MAX_ENUMERATION // policy.length)
    rng = checks.rng("rng", rng)
    R = reward_table(reward, prompt, policy.length, policy.n_actions)
    est = [mc_value(policy, reward, prompt, y[:t], k, rng) for t in range(policy.length)]
    return np.array(est + [float(R[y])])


def vine_table(policy: Policy, reward, prompt, k: int, rng=None) -> np.ndarray:
    """VinePPO advantages for every response from one Monte Carlo estimate per prefix (k rollouts each, seeded):
    shape (K,)*L + (L,). Sharing one estimate per prefix among the responses through it leaves each response's
    errors distributed as in ``vine_errors``."""
    check_policy("policy", policy, responses=True)
    prompt = check_prompt(prompt)
    L, K = policy.length, policy.n_actions
    n_prefixes = sum(K**t for t in range(L))
    checks.enumeration(f"policy {checks.show(policy)}: VinePPO values at every prefix of length {L} (one Python call "
                       "per prefix)", n_prefixes, limit=MAX_VINE_PREFIXES, smaller="a shorter response length")
    checks.enumeration("policy: a VinePPO advantage table", K**L * L)
    k = checks.positive_int("k", k, low=1, high=max(1, checks.MAX_ENUMERATION // (L * n_prefixes)))
    rng = checks.rng("rng", rng)
    R = reward_table(reward, prompt, L, K)
    tables = []
    for t in range(L):
        est = np.empty((K,) * t)
        for prefix in np.ndindex(*((K,) * t)):
            est[prefix] = mc_value(policy, reward, prompt, prefix, k, rng)
        tables.append(est)
    tables.append(np.asarray(R, dtype=float))
    return _advantages_from_values(tables)
