"""A learned critic: a small function approximator V̂_w(s) fitted to sampled returns.

The critic is linear in one-hot features, so every weight is the value of one *cell*, a group of states that the
features cannot tell apart, and V̂_w(s) = w[cell(s)]. The feature sets range from one value per prompt (a
per-prompt baseline) to one value per state (a table that can hold any V exactly):

    prompt       cell(x, y_<t) = x                                  5 weights
    position     cell = (x, t)                                      5·L
    last_token   cell = (x, t, y_{t-1})                             5·(1 + (L−1)·K)
    running_sum  cell = (x, t, y_{t-1}, Σ_{u<t} y_u mod 5)          5·(1 + 5·(L−1)·K)
    tabular      cell = (x, y_<t)                                   5·Σ_{t<L} K^t

(K = n_actions; the state at t = 0 is its own cell.) A critic covers the non-terminal states, depths 0 to L−1;
a finished response's value is its reward, which the caller has.

``fit`` minimises the squared error Σ_i (V̂_w(s_i) − G_i)² + l2·‖w‖² over (state, target) pairs, either exactly
(for one-hot features the solution is each cell's sum of targets over its count + l2) or by ``steps`` of
full-batch gradient descent from the current weights, as an actor–critic method would between policy updates.

Typical use, with γ = 1 and one terminal reward (every state of a response has return r)::

    critic = Critic(length=4, features="last_token")
    ys = policy.sample(x, 256, rng=0)
    critic.fit_returns(x, ys, rewards)             # Monte Carlo regression
    v = critic.values_along(x, ys)                 # (256, 4): V̂(s_0) ... V̂(s_3) along each response
"""

from __future__ import annotations

import itertools

import numpy as np

from . import checks, exact
from .policy import Policy, check_policy, check_prompt
from .rewards import reward_table
from .vocab import PROMPTS, RESPONSE_LENGTH, VOCAB_SIZE

FEATURES = {
    "prompt": "one value per prompt (a per-prompt baseline)",
    "position": "one value per prompt and position",
    "last_token": "one value per prompt, position and previous token",
    "running_sum": "one value per prompt, position, previous token and digit sum mod 5",
    "tabular": "one value per state (prompt and whole prefix): can represent any V",
}
"""Names of the critic's feature sets, with what each cell holds (from coarsest to finest)."""


class Critic:
    """V̂_w(x, y_<t) = w[cell(x, y_<t)]: a linear critic on one-hot features (see the module docstring).

    Parameters: ``length`` L (states have depth 0..L−1), ``features`` (a name in FEATURES), ``n_actions`` K
    (VOCAB_SIZE, or VOCAB_SIZE + 1 for policies with EOS), ``l2`` the ridge penalty of the exact fit, ``init``
    the initial value of every weight.
    """

    def __init__(self, length: int = RESPONSE_LENGTH, features: str = "last_token", n_actions: int = VOCAB_SIZE,
                 l2: float = 1e-3, init: float = 0.0):
        self.length = checks.positive_int("length", length, low=1, high=12)
        checks.choose("critic features", features, FEATURES)
        self.features = features
        self.n_actions = checks.positive_int("n_actions", n_actions, low=VOCAB_SIZE, high=VOCAB_SIZE + 1)
        self.l2 = checks.non_negative_finite("l2", l2)
        init = checks.in_range("init", init, -1e6, 1e6)
        if features == "tabular":
            checks.enumeration(f"a tabular critic of length {self.length}",
                               len(PROMPTS) * sum(self.n_actions**t for t in range(self.length)),
                               smaller="a shorter length or coarser features")
        L, K = self.length, self.n_actions
        self._per_prompt = {
            "prompt": 1,
            "position": L,
            "last_token": 1 + (L - 1) * K,
            "running_sum": 1 + 5 * (L - 1) * K,
            "tabular": sum(K**t for t in range(L)),
        }[features]
        self.weights = np.full(len(PROMPTS) * self._per_prompt, init)

    @property
    def n_params(self) -> int:
        """Number of weights: len(PROMPTS) × cells per prompt."""
        return int(self.weights.size)

    @property
    def per_prompt(self) -> int:
        """Number of weights one prompt owns (``n_params`` / len(PROMPTS)), reachable or not."""
        return int(self._per_prompt)

    def __repr__(self) -> str:
        return f"Critic(length={self.length}, features={self.features!r}, n_params={self.n_params})"

    def weights_reached(self, prompt: int) -> int:
        """How many weights the states of one prompt reach: the distinct cells of (prompt, y_<t) over every prefix
        of depth 0..L−1 (Σ_{t<L} K^t states). A critic fitted to that prompt's responses can set these and no
        others; ``n_params`` counts every prompt's, and cells no state reaches (a running sum at t = 1 is its one
        token, so 20 of the 76 running-sum cells per prompt are never used at L = 4)."""
        prompt = check_prompt(prompt)
        K, L = self.n_actions, self.length
        checks.enumeration(f"the states of a length-{L} critic", sum(K**t for t in range(L)),
                           smaller="a shorter length")
        reached = set()
        for t in range(L):
            prefixes = np.array(list(itertools.product(range(K), repeat=t)), dtype=int).reshape(K**t, t)
            reached.update(self._cells_at_depth(np.full(K**t, prompt), prefixes).tolist())
        return len(reached)

    # -- features -------------------------------------------------------------------------------------------------
    def _cells_at_depth(self, prompts: np.ndarray, prefixes: np.ndarray) -> np.ndarray:
        """Cell index of each state: prompts (n,), prefixes (n, t) with one depth t. Returns (n,) ints."""
        n, t = prefixes.shape
        K = self.n_actions
        if self.features == "prompt":
            local = np.zeros(n, dtype=int)
        elif self.features == "position":
            local = np.full(n, t)
        elif self.features == "tabular":
            offset = sum(K**u for u in range(t))
            local = offset + (np.ravel_multi_index(tuple(prefixes.T), (K,) * t) if t else np.zeros(n, dtype=int))
        elif t == 0:
            local = np.zeros(n, dtype=int)
        elif self.features == "last_token":
            local = 1 + (t - 1) * K + prefixes[:, -1]
        else:  # running_sum: digits only (an EOS adds nothing to the sum)
            digit_sum = np.where(prefixes < VOCAB_SIZE, prefixes, 0).sum(axis=1) % 5
            local = 1 + ((t - 1) * K + prefixes[:, -1]) * 5 + digit_sum
        return prompts * self._per_prompt + local

    def _check_prompts(self, prompts, n: int) -> np.ndarray:
        if np.ndim(prompts) == 0:
            return np.full(n, check_prompt(prompts))
        out = np.array([check_prompt(x) for x in prompts], dtype=int)
        if out.shape != (n,):
            raise ValueError(f"prompts must be one prompt or one per state ({n}), got {len(out)}")
        return out

    def _batches(self, prompts, prefixes):
        """Group states by depth: yields (positions in the input, prompts, (m, t) prefix array)."""
        if isinstance(prefixes, np.ndarray) and prefixes.ndim == 2:
            arr = self._check_token_array("prefixes", prefixes)
            if arr.shape[1] >= self.length:
                raise ValueError(f"prefixes have {arr.shape[1]} tokens; a critic state has at most "
                                 f"{self.length - 1} (the response length is {self.length})")
            yield np.arange(len(arr)), self._check_prompts(prompts, len(arr)), arr
            return
        if isinstance(prefixes, (str, bytes)):
            raise ValueError(f"prefixes must be a list of token tuples or an (n, t) array, got {prefixes!r}")
        rows = [checks.prefix(f"prefixes[{i}]", p, self.length, self.n_actions > VOCAB_SIZE, strict=True)
                for i, p in enumerate(prefixes)]
        xs = self._check_prompts(prompts, len(rows))
        depth = np.array([len(p) for p in rows], dtype=int)
        for t in np.unique(depth):
            where = np.flatnonzero(depth == t)
            arr = np.array([rows[i] for i in where], dtype=int).reshape(len(where), t)
            yield where, xs[where], arr

    def _check_token_array(self, name: str, a) -> np.ndarray:
        a = checks.token_array(name, a, self.n_actions, ndim=2)
        return checks.eos_rows(name, a, self.n_actions > VOCAB_SIZE)

    def cells(self, prompts, prefixes) -> np.ndarray:
        """The cell (weight index) of each state (prompt, prefix): shape (n,)."""
        prefixes = self._prefix_list(prefixes)
        out = np.empty(len(prefixes), dtype=int)
        for where, xs, arr in self._batches(prompts, prefixes):
            out[where] = self._cells_at_depth(xs, arr)
        return out

    # -- prediction -----------------------------------------------------------------------------------------------
    def predict(self, prompts, prefixes) -> np.ndarray:
        """V̂(x_i, prefix_i) for each state: shape (n,).

        ``prompts`` is one prompt or one per state; ``prefixes`` a list of token tuples (any depths 0..L−1) or an
        int array of shape (n, t).
        """
        return self.weights[self.cells(prompts, prefixes)]

    def values_along(self, prompts, responses) -> np.ndarray:
        """V̂(s_t) at t = 0..L−1 along each response: responses (n, L) → shape (n, L)."""
        ys = self._check_responses(responses)
        xs = self._check_prompts(prompts, len(ys))
        return np.stack([self.weights[self._cells_at_depth(xs, ys[:, :t])] for t in range(self.length)], axis=1)

    def table(self, prompt, depth: int) -> np.ndarray:
        """V̂ for every prefix of one depth: shape (K,)*depth, like ``toy.exact.values(...)[depth]``."""
        prompt = check_prompt(prompt)
        depth = checks.positive_int("depth", depth, low=0, high=self.length - 1)
        K = self.n_actions
        prefixes = _all_prefixes(K, depth)
        cells = self._cells_at_depth(np.full(len(prefixes), prompt), prefixes)
        return self.weights[cells].reshape((K,) * depth)

    def _check_responses(self, responses) -> np.ndarray:
        ys = self._check_token_array("responses", responses)
        if ys.shape[1] != self.length:
            raise ValueError(f"responses must have shape (n, {self.length}), got {ys.shape}")
        return ys

    # -- fitting --------------------------------------------------------------------------------------------------
    def fit(self, prompts, prefixes, targets, steps: int | None = None, lr: float = 0.5) -> Critic:
        """Fit V̂ to (state, target) pairs; returns self.

        ``steps=None``: the exact ridge solution w_c = Σ_{i in c} G_i / (n_c + l2) (cells with no data get 0).
        ``steps=k``: k full-batch gradient steps w ← w − lr·∇_w (1/2n) Σ_i (V̂(s_i) − G_i)² from the current
        weights; stable for lr < 2n / (largest cell count).
        """
        prefixes = self._prefix_list(prefixes)
        G = checks.array("targets", targets).ravel()
        if G.shape != (len(prefixes),):
            raise ValueError(f"targets must be {len(prefixes)} finite numbers, one per state, got {G.size}")
        self._check_fit(steps, lr)
        return self._fit_cells(self.cells(prompts, prefixes), G, steps, lr)

    def fit_returns(self, prompts, responses, returns, steps: int | None = None, lr: float = 0.5) -> Critic:
        """Monte Carlo regression with γ = 1: every state s_0..s_{L−1} of response i gets target returns[i]."""
        ys = self._check_responses(responses)
        G = checks.array("returns", returns).ravel()
        if G.shape != (len(ys),):
            raise ValueError(f"returns must be {len(ys)} finite numbers, one per response, got {G.size}")
        self._check_fit(steps, lr)
        xs = self._check_prompts(prompts, len(ys))
        cells = np.concatenate([self._cells_at_depth(xs, ys[:, :t]) for t in range(self.length)])
        return self._fit_cells(cells, np.tile(G, self.length), steps, lr)

    def _check_fit(self, steps, lr) -> None:
        if steps is not None:
            checks.positive_int("steps", steps, low=0, high=1_000_000)
        checks.learning_rate("lr", lr)

    def _prefix_list(self, prefixes):
        if isinstance(prefixes, np.ndarray):
            return prefixes
        if isinstance(prefixes, (str, bytes)) or not isinstance(prefixes, (list, tuple)):
            raise checks.fail("prefixes", "a list of token tuples or an (n, t) int array", prefixes)
        return list(prefixes)

    def _fit_cells(self, cells: np.ndarray, G: np.ndarray, steps, lr) -> Critic:
        count = np.bincount(cells, minlength=self.n_params).astype(float)
        total = np.bincount(cells, weights=G, minlength=self.n_params)
        if steps is None:
            denom = count + self.l2
            self.weights = np.divide(total, denom, out=np.zeros_like(total), where=denom > 0)
            return self
        steps = checks.positive_int("steps", steps, low=0)
        lr = checks.positive_finite("lr", lr)
        n = max(len(G), 1)
        for _ in range(steps):
            self.weights = self.weights - lr * (count * self.weights - total) / n
        return self

    def fit_population(self, policy: Policy, reward, prompts=PROMPTS) -> Critic:
        """The fit an infinite sample from ``policy`` would give (l2 → 0): each cell holds the visit-weighted mean
        of the exact V over its states, Σ_s P(s)·V(s) / Σ_s P(s). This is the critic's approximation floor."""
        self._check_policy(policy)
        prompts = checks.prompts("prompts", prompts)
        count = np.zeros(self.n_params)
        total = np.zeros(self.n_params)
        for x in prompts:
            reach, V = _reach_and_values(policy, reward, x)
            for t in range(self.length):
                K = self.n_actions
                prefixes = _all_prefixes(K, t)
                cells = self._cells_at_depth(np.full(len(prefixes), check_prompt(x)), prefixes)
                count += np.bincount(cells, weights=reach[t].ravel(), minlength=self.n_params)
                total += np.bincount(cells, weights=(reach[t] * V[t]).ravel(), minlength=self.n_params)
        self.weights = np.divide(total, count, out=np.zeros_like(total), where=count > 0)
        return self

    def _check_policy(self, policy) -> None:
        check_policy("policy", policy, responses=True)
        if policy.length != self.length or policy.n_actions != self.n_actions:
            raise ValueError(f"policy has length {policy.length} and {policy.n_actions} actions; this critic "
                             f"has length {self.length} and {self.n_actions}")


def _all_prefixes(K: int, t: int) -> np.ndarray:
    """Every prefix of depth t in C order: shape (K**t, t)."""
    return np.indices((K,) * t, dtype=int).reshape(t, K**t).T


def _reach_and_values(policy: Policy, reward, prompt) -> tuple[list[np.ndarray], list[np.ndarray]]:
    """P(prefix) and exact V(prefix) at depths 0..L: two lists of arrays of shape (K,)*t."""
    return exact.reach_probs(policy, prompt), exact.values(policy, reward, prompt)


def value_error(critic: Critic, policy: Policy, reward, prompt) -> float:
    """Visit-weighted RMS error of the critic against the exact V over the non-terminal states.

    It is::

        sqrt( (1/L) Σ_{t<L} Σ_{y_<t} P(y_<t | x) · (V̂(x, y_<t) − V(x, y_<t))² )
    """
    if not isinstance(critic, Critic):
        raise checks.fail("critic", "a toy.critic.Critic", critic)
    critic._check_policy(policy)
    reach, V = _reach_and_values(policy, reward, prompt)
    sq = sum(float((reach[t] * (critic.table(prompt, t) - V[t]) ** 2).sum()) for t in range(critic.length))
    return float(np.sqrt(sq / critic.length))


def sampled_errors(policy: Policy, reward, prompt, features: str, sizes, seeds: int = 5,
                   l2: float = 1e-3, per_seed: bool = False) -> np.ndarray:
    """Mean over ``seeds`` of value_error for a critic fitted (exactly) to the returns of n responses sampled from
    π, for each n in ``sizes``: shape (len(sizes),). Seed s (0..seeds−1) samples max(sizes) responses with numpy's
    default_rng(s), and the critic for n is fitted to the first n of them. With ``per_seed=True``, the error at
    each seed instead of their mean: shape (seeds, len(sizes)), row s for seed s."""
    check_policy("policy", policy, responses=True)
    seeds = checks.positive_int("seeds", seeds, low=1)
    checks.choose("critic features", features, FEATURES)
    if isinstance(sizes, (str, bytes)) or not isinstance(sizes, (list, tuple, np.ndarray)) or len(sizes) == 0:
        raise checks.fail("sizes", "a non-empty sequence of sample sizes", sizes)
    sizes = [checks.positive_int("sizes entry", n, low=1, high=checks.MAX_ENUMERATION // policy.length) for n in sizes]
    per_seed = checks.flag("per_seed", per_seed)
    checks.enumeration("sampled critic fits", seeds * sum(sizes) * policy.length, smaller="fewer seeds or sizes")
    table = reward_table(reward, prompt, policy.length, policy.n_actions)
    out = np.zeros((seeds, len(sizes)))
    for s in range(seeds):
        ys_all = policy.sample(prompt, int(max(sizes)), rng=np.random.default_rng(s))
        for i, n in enumerate(sizes):
            ys = ys_all[:n]
            critic = Critic(policy.length, features, policy.n_actions, l2=l2)
            critic.fit_returns(prompt, ys, table[tuple(ys.T)])
            out[s, i] = value_error(critic, policy, reward, prompt)
    return out if per_seed else out.mean(axis=0)


def monte_carlo_error(policy: Policy, reward, prompt, k) -> float:
    """Visit-weighted RMS error of Monte Carlo values from k rollouts restarted at each state (VinePPO), exactly::

        sqrt( (1/L) Σ_{t<L} Σ_{y_<t} P(y_<t) · Var[r | y_<t] / k )

    since the mean of k independent returns is unbiased with variance Var[r | s] / k.
    """
    check_policy("policy", policy, responses=True)
    k = checks.positive_int("k", k, low=1)
    reach, var_r = exact.reach_probs(policy, prompt), exact.return_variances(policy, reward, prompt)
    L = policy.length
    var = sum(float((reach[t] * var_r[t]).sum()) for t in range(L)) / L
    return float(np.sqrt(max(var, 0.0) / k))


def monte_carlo_rollouts(policy: Policy, prompt, k) -> int:
    """Rollouts Monte Carlo values consume for the error of ``monte_carlo_error``: k at every non-terminal state
    the policy can visit (reach probability > 0): k·(1 + K + … + K^(L−1)) for a softmax policy over K tokens.
    (``monte_carlo_tokens`` counts the tokens those rollouts write instead.)"""
    check_policy("policy", policy, responses=True)
    prompt = check_prompt(prompt)
    k = checks.positive_int("k", k, low=1)
    reach = exact.reach_probs(policy, check_prompt(prompt))
    return k * sum(int((reach[t] > 0).sum()) for t in range(policy.length))


def monte_carlo_tokens(policy: Policy, prompt, k) -> int:
    """Tokens Monte Carlo values write for the error of ``monte_carlo_error``: k rollouts at every non-terminal state
    the policy can visit, a rollout from depth t writing the L − t tokens still to come. A critic fitted to N sampled
    responses has written N·L tokens, so this is the count to set against it when rollouts from deep states, which
    are short, should cost less than whole responses."""
    check_policy("policy", policy, responses=True)
    prompt = check_prompt(prompt)
    k = checks.positive_int("k", k, low=1)
    reach = exact.reach_probs(policy, prompt)
    L = policy.length
    return k * sum((L - t) * int((reach[t] > 0).sum()) for t in range(L))
