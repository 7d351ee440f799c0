"""γ and λ inside GAE: exact bias and variance of the advantages (toy.gae_discount) against brute force, and the
claims section 4.3 makes about them."""

import numpy as np
import pytest

import toy
from tests import brute
from toy import gae_discount as G

X = 2


def learned_tables(policy, n=64, features="last_token"):
    ys = policy.sample(X, n, rng=np.random.default_rng(0))
    critic = toy.critic.Critic(policy.length, features, policy.n_actions)
    critic.fit_returns(X, ys, toy.reward_table("sum_to_target", X, policy.length, policy.n_actions)[tuple(ys.T)])
    return toy.bootstrap.critic_tables(critic, X, policy.length)


@pytest.mark.parametrize("gamma,lam", [(1.0, 0.0), (1.0, 1.0), (0.7, 0.5), (0.9, 0.95), (0.0, 1.0)])
@pytest.mark.parametrize("critic", ["exact", "learned"])
def test_bias_and_variance_against_brute_force(gamma, lam, critic):
    policy = toy.reference_policy(length=3)
    reward = toy.REWARDS["sum_to_target"]
    tables = G.exact_critic(policy, reward, X) if critic == "exact" else learned_tables(policy)
    got = G.advantage_error(policy, reward, X, tables, gamma, lam)
    want_b, want_v = brute.gae_bias_variance(policy, reward, X, lambda pre: float(tables[len(pre)][tuple(pre)]),
                                             gamma, lam)
    np.testing.assert_allclose(got.bias_sq, want_b, atol=1e-12)
    np.testing.assert_allclose(got.variance, want_v, atol=1e-12)


def test_exact_critic_at_gamma_one_is_unbiased_for_every_lambda_and_lambda_zero_is_exact():
    pi = toy.reference_policy()
    tables = G.exact_critic(pi, "sum_to_target", X)
    for lam in (0.0, 0.5, 1.0):
        assert G.advantage_error(pi, "sum_to_target", X, tables, 1.0, lam).mean_bias_sq == pytest.approx(0, abs=1e-15)
    assert G.advantage_error(pi, "sum_to_target", X, tables, 1.0, 0.0).mse == pytest.approx(0, abs=1e-15)


@pytest.mark.parametrize("critic", ["exact", "learned"])
def test_gamma_is_a_variance_knob(critic):
    """4.3: lowering γ lowers the variance and raises the bias (λ > 0), and at λ = 1 some γ < 1 beats γ = 1."""
    pi = toy.reference_policy()
    tables = G.exact_critic(pi, "sum_to_target", X) if critic == "exact" else learned_tables(pi, 256)
    errs = [G.advantage_error(pi, "sum_to_target", X, tables, g, 1.0) for g in toy.explorers.classical.GAE_GAMMAS]
    var = [e.mean_variance for e in errs]
    bias = [e.mean_bias_sq for e in errs]
    assert all(np.diff(var) > 0)  # γ grid ascending: more γ, more variance
    assert bias[0] > bias[-1]
    assert min(e.mse for e in errs) < errs[-1].mse


def test_bad_input():
    pi = toy.reference_policy()
    tables = G.exact_critic(pi, "sum_to_target", X)
    with pytest.raises(ValueError, match="gamma must be a number in"):
        G.advantage_error(pi, "sum_to_target", X, tables, 1.5, 0.5)
    with pytest.raises(ValueError, match="lam must be a number in"):
        G.advantage_error(pi, "sum_to_target", X, tables, 0.9, -0.1)
    with pytest.raises(ValueError, match="value_tables must be"):
        G.advantage_error(pi, "sum_to_target", X, tables[:-1], 0.9, 0.5)


def test_section_4_3_numbers():
    """4.3: with the exact V and λ = 1, some γ < 1 has a lower MSE than γ = 1 (all variance there); at λ = 0 the
    exact V is exact and γ = 0.9 only adds bias."""
    pi = toy.reference_policy()
    tables = G.exact_critic(pi, "sum_to_target", X)
    at_one = G.advantage_error(pi, "sum_to_target", X, tables, 1.0, 1.0)
    assert at_one.mean_bias_sq == pytest.approx(0, abs=1e-15) and at_one.mean_variance > 0
    sweep = [G.advantage_error(pi, "sum_to_target", X, tables, g, 1.0) for g in toy.explorers.classical.GAE_GAMMAS]
    best = min(sweep, key=lambda e: e.mse)
    assert best.mse < at_one.mse / 2
    assert best.mean_bias_sq > 0 and best.mean_variance < at_one.mean_variance
    lam0 = G.advantage_error(pi, "sum_to_target", X, tables, 0.9, 0.0)
    assert lam0.mean_variance == pytest.approx(0, abs=1e-15) and lam0.mean_bias_sq > 0
