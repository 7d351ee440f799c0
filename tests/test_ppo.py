"""PPO's learned critic + GAE and VinePPO's rollouts inside the training loop."""

import itertools

import numpy as np
import pytest

import toy
from toy import ppo, train
from toy.critic import Critic

K, L = 5, 4


def test_cells_are_the_critics_cells():
    helper = ppo.TokenAdvantages("ppo", prompts=(1, 3), runs=2, length=L, n_actions=K, critic_features="last_token")
    rng = np.random.default_rng(0)
    ids = rng.integers(0, K**L, size=(2, 2, 3))
    cells = helper.cells(ids)
    critic = Critic(L, "last_token")
    for b, p, i in itertools.product(range(2), range(2), range(3)):
        y = np.unravel_index(ids[b, p, i], (K,) * L)
        for t in range(L):
            assert cells[b, p, i, t] == critic.cells((1, 3)[p], [tuple(int(a) for a in y[:t])])[0]


def test_critic_update_is_a_per_cell_moving_average():
    helper = ppo.TokenAdvantages("ppo", prompts=(0,), runs=2, length=L, n_actions=K, critic_lr=0.25)
    helper.weights[:] = 1.0
    cells = np.array([[[[0, 3, 3, 7]]], [[[2, 2, 2, 2]]]])  # (B=2, P=1, n=1, L)
    targets = np.array([[[[4.0, 2.0, 6.0, 0.0]]], [[[1.0, 2.0, 3.0, 6.0]]]])
    helper.update_critic(cells, targets)
    want = np.ones_like(helper.weights)
    for b in range(2):
        for c in set(cells[b].ravel()):
            mean = targets[b][cells[b] == c].mean()
            want[b, c] = 1.0 + 0.25 * (mean - 1.0)
    np.testing.assert_allclose(helper.weights, want)


def test_ppo_advantages_are_gae_of_the_critic():
    helper = ppo.TokenAdvantages("ppo", prompts=(2,), runs=1, length=L, n_actions=K, lam=0.8, critic_lr=0.0,
                                 whiten=False)
    ids = np.array([[[0, 17, 624]]])
    scores = np.array([[[1.0, 0.0, 1.0]]])
    ratio = np.zeros((1, 1, 3, L))
    A = helper(None, ids, scores, ratio, np.array([0.0]))
    # The critic is zero and stays zero: A_t = λ^{L−1−t} r.
    want = scores[..., None] * 0.8 ** np.arange(L - 1, -1, -1)
    np.testing.assert_allclose(A, want)


def test_vine_values_estimate_the_exact_values():
    """β = 0 and many rollouts: V̂(s_t) − V̂(s_t+1) recovers −A(s_t, y_t) within Monte Carlo error."""
    ref = toy.reference_policy()
    x, n, k = 2, 6, 4000
    helper = ppo.TokenAdvantages("vineppo", prompts=(x,), runs=1, length=L, n_actions=K, vine_k=k)
    log_p = toy.train.response_log_probs(train.tabular_logits(ref, (x,)))[None]
    R = toy.reward_table("sum_to_target", x, L).ravel()
    rng = np.random.default_rng(0)
    ids = train.sample_ids(log_p, rng.random((1, 1, n)))
    helper.set_tables(np.zeros_like(log_p), np.broadcast_to(R, log_p.shape))
    u = rng.random((1,) + helper.uniforms_shape(1, n))
    A = helper(log_p, ids, R[ids], np.zeros((1, 1, n, L)), np.array([0.0]), u)[0, 0]
    for i in range(n):
        y = tuple(int(a) for a in np.unravel_index(ids[0, 0, i], (K,) * L))
        exact = toy.token_advantages(ref, "sum_to_target", x, y)
        assert np.all(np.abs(A[i] - exact) < 4 * np.sqrt(2 * 0.25 / k))


def test_bad_input():
    with pytest.raises(ValueError, match="method"):
        ppo.TokenAdvantages("a2c", prompts=(0,), runs=1, length=L, n_actions=K)
    with pytest.raises(ValueError, match="critic features"):
        ppo.TokenAdvantages("ppo", prompts=(0,), runs=1, length=L, n_actions=K, critic_features="deep")
    helper = ppo.TokenAdvantages("vineppo", prompts=(0,), runs=1, length=L, n_actions=K)
    with pytest.raises(ValueError, match="uniforms"):
        helper(np.zeros((1, 1, K**L)), np.zeros((1, 1, 2), dtype=int), np.zeros((1, 1, 2)), np.zeros((1, 1, 2, L)),
               np.array([0.0]))


def test_vineppo_without_its_tables_says_to_call_set_tables():
    helper = ppo.TokenAdvantages("vineppo", prompts=(0,), runs=1, length=L, n_actions=K, vine_k=2)
    u = np.zeros((1,) + helper.uniforms_shape(1, 2))
    with pytest.raises(ValueError, match=r"call set_tables\(full_log_ratio, score_table\)"):
        helper(np.zeros((1, 1, K**L)), np.zeros((1, 1, 2), dtype=int), np.zeros((1, 1, 2)), np.zeros((1, 1, 2, L)),
               np.array([0.0]), u)
