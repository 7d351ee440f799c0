"""GAE and VinePPO's Monte Carlo values against brute force and exact advantages."""

import numpy as np
import pytest

import toy
from toy import gae
from toy.critic import Critic

PI = toy.reference_policy()


def brute_gae(r, v, lam, gamma=1.0):
    L = len(r)
    v_next = list(v[1:]) + [0.0]
    delta = [r[t] + gamma * v_next[t] - v[t] for t in range(L)]
    return np.array([sum((gamma * lam) ** l * delta[t + l] for l in range(L - t)) for t in range(L)])


@pytest.mark.parametrize("lam", [0.0, 0.3, 0.95, 1.0])
def test_gae_matches_the_sum_of_discounted_deltas(lam):
    rng = np.random.default_rng(0)
    r, v = rng.normal(size=(7, 5)), rng.normal(size=(7, 5))
    got = gae.gae(r, v, lam)
    for i in range(7):
        np.testing.assert_allclose(got[i], brute_gae(r[i], v[i], lam), atol=1e-12)
    np.testing.assert_allclose(gae.gae(r[0], v[0], lam, gamma=0.9), brute_gae(r[0], v[0], lam, 0.9), atol=1e-12)


@pytest.mark.parametrize("reward", ["sum_to_target", "first_token", "count_target"])
def test_gae_with_exact_values(reward):
    x = 3
    V = gae.exact_value_tables(PI, reward, x)
    R = toy.reward_table(reward, x, 4)
    exact = toy.advantage_table(PI, reward, x)
    # λ = 0 with the exact V is the exact per-token advantage; λ = 1 is r − V(s_t) on every token.
    np.testing.assert_allclose(gae.gae_table(V, R, 0.0), exact, atol=1e-12)
    full = gae.gae_table(V, R, 1.0)
    Vall = toy.values(PI, reward, x)
    for t in range(4):
        np.testing.assert_allclose(full[..., t], R - Vall[t].reshape(Vall[t].shape + (1,) * (4 - t)), atol=1e-12)
    # The error of GAE(λ) with exact values is the later advantages' noise, Σ λ^{2l} E[A_{t+l}²].
    for lam in (0.0, 0.5, 0.9, 1.0):
        np.testing.assert_allclose(gae.advantage_errors(gae.gae_table(V, R, lam), PI, reward, x),
                                   gae.gae_exact_value_errors(PI, reward, x, lam), atol=1e-12)


def test_gae_table_against_one_response_by_hand():
    x, y = 2, (1, 2, 3, 1)
    critic = Critic(4, "last_token").fit_population(PI, "sum_to_target")
    tables = [critic.table(x, t) for t in range(4)]
    R = toy.reward_table("sum_to_target", x, 4)
    v = [critic.predict(x, [y[:t]])[0] for t in range(4)]
    r = [0, 0, 0, R[y]]
    np.testing.assert_allclose(gae.gae_table(tables, R, 0.7)[y], brute_gae(r, v, 0.7), atol=1e-12)


def test_return_variances_brute_force():
    x = 1
    P = PI.response_probs(x)
    R = toy.reward_table("count_target", x, 4)
    var = toy.exact.return_variances(PI, "count_target", x)
    for prefix in [(), (0,), (1, 1), (4, 0, 2)]:
        sub_p, sub_r = P[prefix], R[prefix]
        w = sub_p / sub_p.sum()
        mean = (w * sub_r).sum()
        assert var[len(prefix)][prefix] == pytest.approx((w * (sub_r - mean) ** 2).sum())
    assert np.all(var[4] == 0)


@pytest.mark.parametrize("k", [1, 9])
def test_vine_errors_match_monte_carlo_realisations(k):
    """Seeded VinePPO tables (one K-rollout estimate per prefix): averaged over seeds, the squared error per
    position is within 4 standard errors of the exact Σ (Var[r|s_t+1] + Var[r|s_t]) / K."""
    x, seeds = 2, 60
    exact = gae.vine_errors(PI, "sum_to_target", x, k)
    sims = np.array([gae.advantage_errors(gae.vine_table(PI, "sum_to_target", x, k, rng=s), PI, "sum_to_target", x)
                     for s in range(seeds)])
    se = sims.std(axis=0, ddof=1) / np.sqrt(seeds)
    assert np.all(np.abs(sims.mean(axis=0) - exact) < 4 * se)
    # More rollouts, proportionally less error.
    np.testing.assert_allclose(gae.vine_errors(PI, "sum_to_target", x, 3 * k), exact / 3)


def test_vine_values_along_a_response():
    y = (1, 2, 3, 4)
    v = gae.vine_values(PI, "sum_to_target", 0, y, k=400, rng=1)
    exact = [toy.value(PI, "sum_to_target", 0, y[:t]) for t in range(5)]
    assert v[-1] == exact[-1]
    sd = np.sqrt([toy.exact.return_variances(PI, "sum_to_target", 0)[t][y[:t]] / 400 for t in range(5)])
    assert np.all(np.abs(v - exact) <= 4 * sd + 1e-12)
    np.testing.assert_array_equal(v, gae.vine_values(PI, "sum_to_target", 0, y, k=400, rng=1))


def test_bad_input():
    with pytest.raises(ValueError, match="lam"):
        gae.gae([0.0], [0.0], 1.5)
    with pytest.raises(ValueError, match="same shape"):
        gae.gae([0.0, 1.0], [0.0], 0.5)
    with pytest.raises(ValueError, match="k must be"):
        gae.vine_errors(PI, "sum_to_target", 0, 0)
    with pytest.raises(ValueError, match="one value table per depth"):
        gae.gae_table([np.zeros(())], toy.reward_table("sum_to_target", 0, 4), 0.5)
