"""The toy's MDP drawn as what it is: a tree of prefixes.

A state is a prompt and a prefix, s_t = (x, y_<t); an action is a token, an edge to the child s_t·a taken with
probability π(a | s_t); the leaves are the complete responses, and the reward sits on the leaves only. With K tokens
and responses of L, depth t holds K^t states, and there are K^L leaves. ``path_view`` expands one path through the
tree (the children of each state on it), small enough to draw; ``counts`` describes the whole tree.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from . import checks
from .exact import reach_probs, values
from .policy import Policy, check_policy, check_prompt
from .rewards import get_reward, reward_table


class TreeCounts(NamedTuple):
    """States per depth t = 0..L−1 (non-terminal), leaves (complete responses), rewarded leaves (r > 0)."""

    states: tuple[int, ...]
    leaves: int
    rewarded: int


class PathView(NamedTuple):
    """The children of each state on one path s_0 = x, s_1 = x·y_1, …, s_{L−1}, as arrays of shape (L, K):
    ``probs[t, a]`` = π(a | s_t), ``reach[t, a]`` = P(s_t·a), ``values[t, a]`` = V(s_t·a) (at t = L−1, the reward
    of the complete response s_{L−1}·a). ``path_values`` (shape (L,)) holds V(s_t) along the path."""

    probs: np.ndarray
    reach: np.ndarray
    values: np.ndarray
    path_values: np.ndarray

    @property
    def leaf_rewards(self) -> np.ndarray:
        """r(x, s_{L−1}·a) for each last token a: shape (K,)."""
        return self.values[-1]


def counts(policy: Policy, reward, prompt) -> TreeCounts:
    """How many states, leaves and rewarded leaves the tree of ``prompt`` has."""
    check_policy("policy", policy, responses=True)  # the reward table has one entry per leaf
    get_reward(reward)
    prompt = check_prompt(prompt)
    L, K = policy.length, policy.n_actions
    rewards = reward_table(reward, prompt, L, K)
    return TreeCounts(tuple(K**t for t in range(L)), K**L, int((rewards > 0).sum()))


def path_view(policy: Policy, reward, prompt, path) -> PathView:
    """Expand the states along ``path`` (the first L − 1 tokens of a response): their children's probabilities,
    reach probabilities and values."""
    check_policy("policy", policy, responses=True)
    get_reward(reward)
    prompt = check_prompt(prompt)
    L, K = policy.length, policy.n_actions
    path = checks.prefix("path", path, L, policy.eos, strict=True)
    if len(path) != L - 1:
        raise ValueError(f"path must hold the first {L - 1} tokens of a response, got {len(path)}: {path!r}")
    V, reach = values(policy, reward, prompt), reach_probs(policy, prompt)
    probs, r, v = np.zeros((L, K)), np.zeros((L, K)), np.zeros((L, K))
    for t in range(L):
        prefix = path[:t]
        probs[t] = policy.next_token_probs(prompt, prefix)
        r[t] = reach[t + 1][prefix]
        v[t] = V[t + 1][prefix]
    path_values = np.array([V[t][path[:t]] for t in range(L)])
    return PathView(probs, r, v, path_values)
