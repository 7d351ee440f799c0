"""A learned reward model: a Bradley–Terry proxy r̂ fitted to a finite set of noisy comparisons, and what happens
when a policy is optimised against it (Goodhart's law).

Comparisons: pairs of responses (a, b) sampled from π_ref(· | x), labelled by a noisy judge who prefers a with
probability σ(s·(r(a) − r(b))) for the true reward r and a sharpness s. The proxy is linear in features φ(y),
r̂(y) = w·φ(y), and w maximises the Bradley–Terry log-likelihood with a ridge penalty::

    Σ_i log σ(±(r̂(a_i) − r̂(b_i)))  −  (l2/2)·‖w‖²          (+ when a_i won, − when b_i won)

Feature sets: ``additive`` (one weight per position and token: a model that generalises but cannot express
everything), ``tabular`` (one weight per response: it memorises what it saw and knows nothing else), and
``both`` (the two together: generalises where it has little data and corrects itself where it has much).

Optimising against the proxy is done exactly, as the toy allows: the KL-regularised optimum
π*_β(y) ∝ π_ref(y) exp(r̂(y)/β) over whole responses (the distribution ``toy.kl.kl_regularised_optimum`` builds
token by token), for a sweep of β at once.

A ``ProxyReward`` is a reward function like the toy's own, for the one prompt it was fitted on; it refuses a
response its policy cannot produce (another length, a token outside the digits).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from . import checks
from .policy import Policy, check_policy, check_prompt
from .rewards import get_reward, reward_table
from .vocab import EOS, VOCAB_SIZE

PROXY_FEATURES = {
    "additive": "one weight per position and token (generalises, but cannot express every reward)",
    "tabular": "one weight per response (memorises the responses it saw, knows nothing of the others)",
    "both": "additive and tabular together",
}
"""The reward model's feature sets."""


MAX_COMPARISONS = 1_000_000
"""Most comparisons ``sample_comparisons`` draws."""
MAX_FEATURES_IN_USE = 3_000
"""Most features ``fit_bradley_terry``'s Newton steps solve for at once."""
DENSE_FEATURES = 64
"""Up to this many features in use, ``fit_bradley_terry`` solves each Newton step with a dense Hessian (beyond,
by conjugate gradients, which need no dense matrix)."""


def _sigmoid(z):
    return 0.5 * (1.0 + np.tanh(0.5 * z))


class Comparisons(NamedTuple):
    """n labelled comparisons: flat response indices a and b (into the (K,)*L response grid), and whether a won."""

    a: np.ndarray
    b: np.ndarray
    a_wins: np.ndarray


def sample_comparisons(policy: Policy, reward, prompt, n: int, sharpness: float = 3.0, rng=None) -> Comparisons:
    """n pairs (a, b) drawn independently from π(· | x); a wins with probability σ(sharpness·(r(a) − r(b)))."""
    check_policy("policy", policy, responses=True)
    n = checks.positive_int("n (the number of comparisons)", n, low=1, high=MAX_COMPARISONS)
    sharpness = checks.positive_finite("sharpness", sharpness)
    rng = checks.rng("rng", rng)
    P = policy.response_probs(prompt).ravel()
    r = reward_table(reward, prompt, policy.length, policy.n_actions).ravel()
    a = rng.choice(P.size, n, p=P / P.sum())
    b = rng.choice(P.size, n, p=P / P.sum())
    wins = rng.random(n) < _sigmoid(sharpness * (r[a] - r[b]))
    return Comparisons(a, b, wins)


def feature_columns(features: str, length: int, n_actions: int) -> tuple[np.ndarray, int]:
    """The one-hot features φ(y) of every response, as the columns that are 1: an int array (K^L, q) with rows in
    C order over the (K,)*L response grid, and the number of features d. (φ has exactly q ones per row.)"""
    checks.choose("reward-model features", features, PROXY_FEATURES)
    L = checks.positive_int("length", length, low=1, high=64)
    K = checks.positive_int("n_actions", n_actions, low=VOCAB_SIZE, high=VOCAB_SIZE + 1)
    n = checks.enumeration(f"reward-model features over every response of length {L}", K**L * (L + 1),
                           smaller="a shorter response length") // (L + 1)
    ys = np.indices((K,) * L).reshape(L, n).T
    additive = ys + K * np.arange(L)[None, :]  # column t·K + y_t
    tabular = np.arange(n)[:, None]
    if features == "additive":
        return additive, L * K
    if features == "tabular":
        return tabular, n
    return np.hstack([additive, L * K + tabular]), L * K + n


def fit_bradley_terry(columns: np.ndarray, n_features: int, data: Comparisons, l2: float = 1.0,
                      iterations: int = 50) -> np.ndarray:
    """The ridge-penalised Bradley–Terry weights w (shape (n_features,)) by Newton's method.

    ``columns`` are the one-hot features of each response (from ``feature_columns``). Repeated pairs are pooled
    (k wins of the lower index in m comparisons of the pair), and only features that some compared response uses
    enter the solve; the others keep weight 0, their ridge optimum. Each Newton step solves H·step = ∇ exactly
    (a dense solve) when at most ``DENSE_FEATURES`` features are in use, else by preconditioned conjugate gradients
    on the sparse pair differences, to a tolerance that tightens as the gradient vanishes (the fit stops when the
    gradient is below 1e-9 and the step below 1e-10, as precise as the dense solve).
    """
    l2 = checks.positive_finite("l2", l2)
    n_features = checks.positive_int("n_features", n_features, low=1)
    columns = checks.token_array("columns", columns, n_features, ndim=2)
    iterations = checks.positive_int("iterations", iterations, low=1, high=1000)
    if not isinstance(data, Comparisons):
        raise checks.fail("data", "a Comparisons (from sample_comparisons)", data)
    a = checks.token_array("data.a", np.asarray(data.a), len(columns), ndim=1)
    b = checks.token_array("data.b", np.asarray(data.b), len(columns), ndim=1)
    wins = np.asarray(data.a_wins)
    if wins.dtype != bool or wins.shape != a.shape or b.shape != a.shape:
        raise ValueError(f"data must hold equal-length index arrays a, b and a boolean a_wins, got shapes {a.shape}, "
                         f"{b.shape} and {wins.shape} ({wins.dtype})")
    data = Comparisons(a, b, wins)
    lo, hi = np.minimum(data.a, data.b), np.maximum(data.a, data.b)
    low_wins = np.where(data.a <= data.b, data.a_wins, ~data.a_wins)
    keep = lo != hi  # a response compared with itself carries no information
    w = np.zeros(n_features)
    if not keep.any():
        return w
    pairs, inverse = np.unique(np.stack([lo[keep], hi[keep]], axis=1), axis=0, return_inverse=True)
    n_pairs = len(pairs)
    m = np.bincount(inverse.ravel(), minlength=n_pairs).astype(float)
    k = np.bincount(inverse.ravel(), weights=low_wins[keep].astype(float), minlength=n_pairs)
    # d_p = φ(lo) − φ(hi) as 2q (column, ±1) entries per pair, columns renumbered over the features in use.
    idx = np.hstack([columns[pairs[:, 0]], columns[pairs[:, 1]]])
    used, idx = np.unique(idx, return_inverse=True)
    checks.enumeration(f"Newton's method on {len(used):,} features in use", len(used), limit=MAX_FEATURES_IN_USE,
                       smaller="fewer comparisons or the 'additive' features")
    d, q = len(used), columns.shape[1]
    idx = idx.reshape(n_pairs, -1)
    sign = np.r_[np.ones(q), -np.ones(q)][None, :]
    # The nonzero entries (rows, cols, vals) of the (n_pairs, d) matrix of differences: a column both responses use
    # cancels.
    key, where = np.unique((np.arange(n_pairs)[:, None] * d + idx).ravel(), return_inverse=True)
    net = np.bincount(where.ravel(), weights=np.broadcast_to(sign, idx.shape).ravel(), minlength=len(key))
    rows, cols, vals = key[net != 0] // d, key[net != 0] % d, net[net != 0]
    if d <= DENSE_FEATURES:
        outer = (idx[:, :, None] * d + idx[:, None, :]).ravel()
        sign_outer = sign[:, :, None] * sign[:, None, :]

    def diff(v):  # r̂(lo) − r̂(hi) for every pair
        return np.bincount(rows, weights=vals * v[cols], minlength=n_pairs)

    def diff_t(u):  # Σ_p u_p d_p
        return np.bincount(cols, weights=vals * u[rows], minlength=d)

    v = np.zeros(d)
    for _ in range(iterations):
        p = _sigmoid(diff(v))
        grad = diff_t(k - m * p) - l2 * v
        c = m * p * (1 - p)
        size = float(np.sqrt(grad @ grad))
        if d <= DENSE_FEATURES:
            hess = np.bincount(outer, weights=(c[:, None, None] * sign_outer).ravel(), minlength=d * d)
            step = np.linalg.solve(hess.reshape(d, d) + l2 * np.eye(d), grad)
        else:
            diag = np.bincount(cols, weights=c[rows] * vals**2, minlength=d) + l2
            step = _conjugate_gradients(lambda u: diff_t(c * diff(u)) + l2 * u, grad, diag,  # noqa: B023
                                        tol=max(min(0.5, np.sqrt(size)) * min(1.0, size), 1e-12))
        v += step
        if np.abs(step).max() < 1e-10 and size < 1e-9:
            break
    w[used] = v
    return w


def _conjugate_gradients(apply, rhs: np.ndarray, diag: np.ndarray, tol: float, max_iter: int = 5_000) -> np.ndarray:
    """x with apply(x) = rhs (apply symmetric positive definite), by conjugate gradients with the Jacobi
    preconditioner ``diag``, until the residual is below tol·‖rhs‖."""
    x, r = np.zeros_like(rhs), rhs.copy()
    z = r / diag
    p, rz = z.copy(), float(r @ z)
    stop = tol * np.sqrt(rhs @ rhs)
    for _ in range(max_iter):
        if np.sqrt(r @ r) <= stop:
            break
        ap = apply(p)
        alpha = rz / float(p @ ap)
        x += alpha * p
        r -= alpha * ap
        z = r / diag
        rz, rz_old = float(r @ z), rz
        p = z + (rz / rz_old) * p
    return x


class ProxyReward:
    """r̂(x, y) = w·φ(y) for one prompt x, fitted to comparisons; a reward function like any other in toy.

    Calling it on another prompt raises ValueError: the reward model only knows the prompt it was trained on. So
    does a response its policy cannot produce: one of another length (without EOS, every response has ``length``
    digit tokens; with EOS, at most ``length``, EOS removed as for every reward in toy) or with a token outside the
    digits 0 to 4.
    """

    def __init__(self, policy: Policy, reward, prompt, n_comparisons: int, features: str = "both",
                 sharpness: float = 3.0, l2: float = 1.0, seed: int = 0):
        check_policy("policy", policy)
        self.prompt = check_prompt(prompt)
        self.reward = get_reward(reward)
        self.length, self.n_actions, self.eos = policy.length, policy.n_actions, policy.eos
        self.features = checks.choose("reward-model features", features, {f: f for f in PROXY_FEATURES})
        seed = checks.positive_int("seed", seed, low=0)
        self.data = sample_comparisons(policy, reward, prompt, n_comparisons, sharpness, rng=seed)
        columns, n_features = feature_columns(features, self.length, self.n_actions)
        self.weights = fit_bradley_terry(columns, n_features, self.data, l2)
        self.table = self.weights[columns].sum(axis=1).reshape((self.n_actions,) * self.length)
        self.table.flags.writeable = False
        self.__name__ = f"proxy({features}, n={n_comparisons})"

    def __call__(self, prompt, response) -> float:
        """r̂(x, y) for the prompt it was fitted on and a response of its length: ``length`` digit tokens, or without
        EOS when the policy it was fitted to has EOS (then at most ``length`` digits); anything else is refused."""
        x = check_prompt(prompt)
        if x != self.prompt:
            raise checks.fail("prompt", f"{self.prompt} (this reward model was fitted for prompt {self.prompt} only)",
                              prompt)
        response = checks.tokens("response", response, VOCAB_SIZE)
        if len(response) > self.length or (not self.eos and len(response) < self.length):
            allowed = (f"at most {self.length} digit tokens (EOS removed; this reward model was fitted on responses of "
                       f"length {self.length})" if self.eos else f"exactly {self.length} digit tokens (the length this "
                       "reward model was fitted on; its policy has no EOS)")
            n = len(response)
            raise ValueError(f"{checks.fail('response', allowed, response)}: {n} token{'' if n == 1 else 's'}")
        padded = tuple(response) + (EOS,) * (self.length - len(response))
        return float(self.table[padded])

    def agreement(self, policy: Policy) -> float:
        """P(the proxy orders a pair as the true reward does) over pairs y, y' ~ π with r(y) ≠ r(y'), a tie in r̂
        counting one half (so a proxy that knows nothing scores 0.5)."""
        check_policy("policy", policy)
        if (policy.length, policy.n_actions) != (self.length, self.n_actions):
            raise ValueError(f"policy must have length {self.length} and {self.n_actions} actions like the reward "
                             f"model, got length {policy.length} and {policy.n_actions}")
        checks.enumeration("comparing every pair of responses", (self.n_actions**self.length) ** 2,
                           smaller="a shorter response length")
        P = policy.response_probs(self.prompt).ravel()
        r = reward_table(self.reward, self.prompt, self.length, self.n_actions).ravel()
        rh = self.table.ravel()
        W = P[:, None] * P[None, :] * (r[:, None] > r[None, :])
        total = W.sum()
        right = (rh[:, None] > rh[None, :]) + 0.5 * (rh[:, None] == rh[None, :])
        return float((W * right).sum() / total) if total > 0 else 1.0


class OptimisationCurve(NamedTuple):
    """Along the KL-regularised family π*_β, one entry per β: KL(π*_β ‖ π_ref), E[r̂], E[r]."""

    beta: np.ndarray
    kl: np.ndarray
    proxy: np.ndarray
    true: np.ndarray


def optimisation_curve(reference: Policy, optimised, measured, prompt, betas) -> OptimisationCurve:
    """Optimise ``optimised`` exactly (π*_β ∝ π_ref·exp(r/β)) for each β and measure both rewards under π*_β.

    ``optimised`` and ``measured`` are reward functions (a ProxyReward, or a toy reward for the drift curve).
    """
    check_policy("reference", reference, responses=True)
    x = check_prompt(prompt)
    if isinstance(betas, (str, bytes)) or np.ndim(betas) != 1 or len(betas) == 0:
        raise checks.fail("betas", "a non-empty sequence of positive numbers", betas)
    betas = np.array([checks.positive_finite("betas entry", b) for b in betas])
    P_ref = reference.response_probs(x).ravel()
    r_opt = _table(optimised, x, reference.length, reference.n_actions).ravel()
    r_true = _table(measured, x, reference.length, reference.n_actions).ravel()
    # π*_β ∝ π_ref·exp(r̂/β) over whole responses (what kl_regularised_optimum represents token by token), every β at
    # once; the shift by max r̂ keeps small β stable, and responses π_ref never produces keep probability 0.
    support = P_ref > 0
    log_ref = np.log(P_ref[support])[None, :]
    with np.errstate(over="ignore"):  # β near 0: a weight so small it overflows to −inf is clipped, still 0
        log_w = np.maximum(log_ref + (r_opt[support] - r_opt[support].max())[None, :] / betas[:, None], -1e300)
    log_w -= log_w.max(axis=1, keepdims=True)
    log_p = log_w - np.log(np.exp(log_w).sum(axis=1, keepdims=True))  # finite, even where π*_β underflows to 0
    P = np.exp(log_p)
    kl = np.maximum((P * (log_p - log_ref)).sum(axis=1), 0.0)  # ≥ 0, also after rounding at π*_β ≈ π_ref
    return OptimisationCurve(betas, kl, P @ r_opt[support], P @ r_true[support])


def _table(reward, prompt: int, length: int, n_actions: int) -> np.ndarray:
    """A reward's table over every response: a ProxyReward's own (fitted for this prompt and shape), else
    ``reward_table``'s."""
    if isinstance(reward, ProxyReward) and (reward.prompt, reward.length, reward.n_actions) == (prompt, length,
                                                                                                n_actions):
        return reward.table
    return reward_table(reward, prompt, length, n_actions)
