"""PPO's per-token advantages inside ``toy.train``: a learned critic with GAE, or VinePPO's Monte Carlo values.

Both see the KL-shaped per-token reward of RLHF: r_t = −β·log(π(y_t|s_t)/π_ref(y_t|s_t)), plus the sequence's
score r(x, y) on its last token (γ = 1).

* ``ppo``: the critic is ``toy.critic.Critic``'s one-hot features (a value per cell of states), one weight vector
  per run. Advantages are GAE(λ) of the critic's values (``toy.gae.gae``), whitened per run over the batch's N token
  advantages, (A − mean)/(std + 1e-8), with the *population* std (NumPy's default, dividing by N). verl and TRL
  whiten with the Bessel-corrected variance (dividing by N − 1), so their advantages are √((N − 1)/N) times these.
  The critic then moves every cell it saw a fraction ``critic_lr`` of the way towards the mean of its new
  targets, the GAE returns A_t + V̂(s_t).
* ``vineppo``: V̂(s_t) is the mean KL-shaped return of k rollouts restarted from s_t (for t = 0 shared by the
  group, since every response starts at the prompt), V̂(s_L) = 0, and A_t = r_t + V̂(s_{t+1}) − V̂(s_t).

Arrays are batched as in ``toy.train``: B runs, P prompts, n responses per prompt, flat response ids.
"""

from __future__ import annotations

import numpy as np

from . import checks
from .critic import FEATURES, Critic
from .gae import gae

CRITIC_FEATURES = "running_sum"
"""Default critic features for training: enough to represent π_ref's values for the sum reward exactly."""


class TokenAdvantages:
    """Per-token advantages for one batch of runs: ``ppo`` (learned critic + GAE) or ``vineppo``.

    Call with the current response log-probabilities, sampled ids, scores and per-token log-ratios; returns
    advantages of shape (B, P, n, L).
    """

    def __init__(self, method: str, *, prompts, runs: int, length: int, n_actions: int, lam: float = 0.95,
                 vine_k: int = 9, critic_lr: float = 0.5, critic_features: str = CRITIC_FEATURES,
                 whiten: bool = True):
        self.method = checks.choose("method", method, {"ppo": "ppo", "vineppo": "vineppo"})
        self.prompts = np.asarray(checks.prompts("prompts", prompts), dtype=int)
        checks.positive_int("runs", runs, low=1)
        self.L = checks.positive_int("length", length, low=1, high=12)
        self.K = checks.positive_int("n_actions", n_actions, low=5, high=6)
        self.lam = checks.in_range("lam", lam, 0.0, 1.0)
        self.vine_k = checks.positive_int("vine_k", vine_k, low=1, high=100_000)
        self.critic_lr = checks.in_range("critic_lr", critic_lr, 0.0, 1.0)
        checks.choose("critic features (critic_features)", critic_features, FEATURES)
        self.critic = Critic(length, critic_features, n_actions)
        self.weights = np.zeros((runs, self.critic.n_params))  # one critic per run, initialised at V̂ = 0
        self.whiten = bool(whiten)
        self._full_ratio = self._scores = None  # VinePPO's tables of every response: ``set_tables``

    def uniforms_shape(self, P: int, n: int) -> tuple[int, ...]:
        """Shape of the extra uniforms one seed contributes per step (VinePPO's rollouts), or () for none."""
        return (P, n + 1, self.L, self.vine_k) if self.method == "vineppo" else ()

    def __call__(self, log_p, ids, scores, token_log_ratio, beta, u=None) -> np.ndarray:
        """log_p (B, P, K^L), ids and scores (B, P, n), token_log_ratio (B, P, n, L), beta (B,), u (B,) + the
        ``uniforms_shape``. Returns A of shape (B, P, n, L)."""
        rewards = -beta[:, None, None, None] * token_log_ratio
        rewards[..., -1] += scores
        if self.method == "ppo":
            return self._ppo(ids, rewards)
        return self._vine(log_p, ids, token_log_ratio, rewards, beta, u)

    # -- learned critic + GAE -------------------------------------------------------------------------------------
    def cells(self, ids: np.ndarray) -> np.ndarray:
        """The critic's cell of every visited state s_0..s_{L−1}: (B, P, n) ids → (B, P, n, L) ints."""
        B, P, n = ids.shape
        xs = np.broadcast_to(self.prompts[None, :, None], ids.shape).ravel()
        tokens = np.stack([(ids // self.K ** (self.L - 1 - t)) % self.K for t in range(self.L)], axis=-1)
        tokens = tokens.reshape(-1, self.L)
        cells = [self.critic.cells(xs, tokens[:, :t]) for t in range(self.L)]
        return np.stack(cells, axis=-1).reshape(B, P, n, self.L)

    def values(self, cells: np.ndarray) -> np.ndarray:
        """V̂ of each run's critic at the given cells (B, ...) → same shape."""
        B = cells.shape[0]
        return np.take_along_axis(self.weights, cells.reshape(B, -1), axis=1).reshape(cells.shape)

    def _ppo(self, ids, rewards):
        cells = self.cells(ids)
        v = self.values(cells)
        A = gae(rewards, v, self.lam)
        self.update_critic(cells, A + v)
        if self.whiten:
            mean = A.mean(axis=(1, 2, 3), keepdims=True)
            sd = A.std(axis=(1, 2, 3), keepdims=True)
            A = (A - mean) / (sd + 1e-8)
        return A

    def update_critic(self, cells: np.ndarray, targets: np.ndarray) -> None:
        """Move each run's weight of every visited cell a fraction critic_lr towards the mean of its targets."""
        B, m = cells.shape[0], self.critic.n_params
        flat = (np.arange(B)[:, None] * m + cells.reshape(B, -1)).ravel()
        count = np.bincount(flat, minlength=B * m).reshape(B, m)
        total = np.bincount(flat, weights=targets.ravel(), minlength=B * m).reshape(B, m)
        seen = count > 0
        mean = np.divide(total, count, out=np.zeros_like(total), where=seen)
        self.weights = np.where(seen, self.weights + self.critic_lr * (mean - self.weights), self.weights)

    # -- VinePPO --------------------------------------------------------------------------------------------------
    def _vine(self, log_p, ids, token_log_ratio, rewards, beta, u):
        B, P, n = ids.shape
        L, K = self.L, self.K
        if u is None or u.shape != (B,) + self.uniforms_shape(P, n):
            raise ValueError(f"vineppo needs uniforms of shape {(B,) + self.uniforms_shape(P, n)}")
        if self._full_ratio is None:
            raise ValueError("vineppo scores its rollouts from the tables of every response: call "
                             "set_tables(full_log_ratio, score_table) before the advantages")
        p = np.exp(log_p)
        # log-ratio and score of every complete response, to score the rollouts.
        v = np.zeros((B, P, n, L))
        prefix_ratio = np.concatenate([np.zeros((B, P, n, 1)), np.cumsum(token_log_ratio, axis=-1)[..., :-1]], -1)
        for t in range(L):
            size = K ** (L - t)
            if t == 0:
                block = p  # (B, P, K^L): the prompt is shared by the group: one set of rollouts per prompt
                leaf = _inverse_cdf(block, u[:, :, n, 0, :])  # (B, P, k)
                roll = leaf[:, :, None, :]
            else:
                prefix = ids // size  # (B, P, n)
                block = np.take_along_axis(p.reshape(B, P, K**t, size), prefix[..., None], axis=2)  # (B,P,n,size)
                roll = prefix[..., None] * size + _inverse_cdf(block, u[:, :, :n, t, :])  # (B, P, n, k)
            roll_ratio = np.take_along_axis(self._full_ratio, roll.reshape(B, P, -1), axis=2).reshape(roll.shape)
            roll_score = np.take_along_axis(self._scores, roll.reshape(B, P, -1), axis=2).reshape(roll.shape)
            G = roll_score - beta[:, None, None, None] * (roll_ratio - prefix_ratio[..., t:t + 1])
            v[..., t] = np.broadcast_to(G.mean(axis=-1), (B, P, n))
        next_v = np.concatenate([v[..., 1:], np.zeros((B, P, n, 1))], axis=-1)
        return rewards + next_v - v

    def set_tables(self, full_log_ratio: np.ndarray, score_table: np.ndarray) -> None:
        """log π(y|x)/π_ref(y|x) (B, P, K^L) and r(x, y) (B, P, K^L) for every response, to score VinePPO rollouts."""
        self._full_ratio = full_log_ratio
        self._scores = score_table


def _inverse_cdf(probs: np.ndarray, u: np.ndarray) -> np.ndarray:
    """Indices drawn from (unnormalised) probs (..., M) with uniforms u (..., k): (..., k)."""
    cdf = np.cumsum(probs, axis=-1)
    idx = (cdf[..., None, :] < u[..., :, None] * cdf[..., None, -1:]).sum(axis=-1)
    return np.minimum(idx, probs.shape[-1] - 1)
