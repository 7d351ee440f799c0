"""Exact values and advantages by backward induction over the prefix tree.

With one terminal reward and γ = 1 the value of a state is the expected reward of finishing from it:

    V(s_L) = r(x, y)                       at a complete response (depth L)
    V(s_t) = Σ_a π(a | s_t) V(s_t · a)      one depth at a time, back to the prompt s_0 = x

and the advantage of token y_t is A(s_t, y_t) = V(s_{t+1}) − V(s_t). Summed over t they telescope to the
sequence-level advantage r(x, y) − V(x). Shapes use K = policy.n_actions and L = policy.length.
"""

from __future__ import annotations

import numpy as np

from . import checks
from .policy import Policy, check_policy
from .rewards import reward_table


def _check_policy(policy) -> Policy:
    check_policy("policy", policy, responses=True)
    return policy


def _check_table_size(policy: Policy, what: str) -> None:
    checks.enumeration(f"{what} of length {policy.length} ({policy.n_actions}**{policy.length} responses × "
                       f"{policy.length} positions)", policy.n_actions**policy.length * policy.length,
                       smaller="a shorter response length (or eos=False)")


def values(policy: Policy, reward, prompt) -> list[np.ndarray]:
    """V at every prefix: a list of L+1 arrays, entry t of shape (K,)*t (entry 0 is V(x), a 0-d array)."""
    policy = _check_policy(policy)
    L = policy.length
    V = [None] * (L + 1)
    V[L] = reward_table(reward, prompt, L, policy.n_actions)
    for t in reversed(range(L)):
        V[t] = (policy.prefix_probs(prompt, t) * V[t + 1]).sum(axis=-1)
    return V


def reach_probs(policy: Policy, prompt) -> list[np.ndarray]:
    """P(y_<t | x), the chance that π writes each prefix: a list of L+1 arrays, entry t of shape (K,)*t."""
    policy = _check_policy(policy)
    prompt = checks.prompt("prompt", prompt)
    reach = [np.ones(())]
    for t in range(policy.length):
        reach.append(reach[t][..., None] * policy.prefix_probs(prompt, t))
    return reach


def return_variances(policy: Policy, reward, prompt) -> list[np.ndarray]:
    """Var[r | s] at every prefix: a list of L+1 arrays, entry t of shape (K,)*t (zero at complete responses).

    Var[r | s] = E[r² | s] − V(s)², with E[r² | s] by the same backward induction as V.
    """
    V = values(policy, reward, prompt)
    L = policy.length
    second = V[L] ** 2
    out = [None] * (L + 1)
    out[L] = np.zeros(second.shape)
    for t in reversed(range(L)):
        second = (policy.prefix_probs(prompt, t) * second).sum(axis=-1)
        out[t] = np.maximum(second - V[t] ** 2, 0.0)
    return out


def value(policy: Policy, reward, prompt, prefix=()) -> float:
    """V^π(s) for the state s = (prompt, prefix): the expected reward of completing ``prefix`` with π."""
    policy = _check_policy(policy)
    prefix = checks.prefix("prefix", prefix, policy.length, policy.eos)
    return float(values(policy, reward, prompt)[len(prefix)][prefix])


def token_advantages(policy: Policy, reward, prompt, response) -> np.ndarray:
    """A(s_t, y_t) = V(s_{t+1}) − V(s_t) for t = 0..L-1: shape (L,). Zero after an EOS."""
    policy = _check_policy(policy)
    y = policy.check_response(response)
    V = values(policy, reward, prompt)
    return np.array([V[t + 1][y[: t + 1]] - V[t][y[:t]] for t in range(policy.length)])


def sequence_advantage(policy: Policy, reward, prompt, response) -> float:
    """r(x, y) − V(x): the one advantage a critic-free method gives every token of y."""
    policy = _check_policy(policy)
    y = policy.check_response(response)
    V = values(policy, reward, prompt)
    return float(V[-1][y] - V[0])


def _advantages_from_values(V: list[np.ndarray]) -> np.ndarray:
    """A(s_t, y_t) = V(s_{t+1}) − V(s_t) for every response from one value per prefix: V[t] of shape (K,)*t
    (V[L]: the reward of every response); returns shape (K,)*L + (L,). Exact values give ``advantage_table``;
    VinePPO's estimates give ``toy.gae.vine_table``."""
    L = len(V) - 1
    K = V[-1].shape[0] if L else 1
    A = np.empty((K,) * L + (L,))
    for t in range(L):
        diff = V[t + 1] - V[t][..., None]  # shape (K,)*(t+1): one number per prefix y_≤t
        A[..., t] = diff.reshape(diff.shape + (1,) * (L - t - 1))
    return A


def advantage_table(policy: Policy, reward, prompt) -> np.ndarray:
    """Every response's per-token advantages: shape (K,)*L + (L,); [y_0, ..., y_{L-1}, t] = A(s_t, y_t)."""
    _check_table_size(_check_policy(policy), "an advantage table")
    return _advantages_from_values(values(policy, reward, prompt))


def credit_by_position(policy: Policy, reward, prompt) -> tuple[np.ndarray, np.ndarray]:
    """Where credit sits on average, and the noise the sequence-level view adds, in the same units (reward²): two
    arrays of shape (L,)::

        signal[t] = E_{y~π} [A(s_t, y_t)²]                     how much of Var[r] position t decides
        noise[t]  = E_{y~π} [(r(x, y) − V(x) − A(s_t, y_t))²]  what r − V(x) adds to token t's own advantage

    Advantages at different positions are uncorrelated (E[A_s A_t] = 0 for s ≠ t, since E[A_t | s_t] = 0), so
    Σ_t signal[t] = Var[r | x] and noise[t] = Σ_{s≠t} signal[s] = Var[r | x] − signal[t].
    """
    _check_table_size(_check_policy(policy), "credit by position")
    V = values(policy, reward, prompt)
    A = _advantages_from_values(V)
    P = policy.response_probs(prompt)
    L = policy.length
    seq = (V[L] - V[0])[..., None]  # r − V(x) for every response, shape (K,)*L + (1,)
    signal = np.tensordot(P, A ** 2, axes=L)
    noise = np.tensordot(P, (seq - A) ** 2, axes=L)
    return signal, noise
