"""Exact at the edges (issue 13): tiny β, tiny ε, the vectorised reward tables, the closed-form moments, and the
size guards on the examples the issue names."""

import math
from fractions import Fraction

import numpy as np
import pytest

import toy
from tests import brute
from toy import estimators, imitation, kl


@pytest.mark.parametrize("beta", [1e-3, 1e-30, 1e-300, 5e-324])
@pytest.mark.parametrize("reward", ["sum_to_target", "count_target", "first_token"])
@pytest.mark.parametrize("eos", [False, True])
def test_tiny_beta_optimum_is_the_reference_restricted_to_the_best(beta, reward, eos):
    length, prompt = 3, 2
    ref = toy.reference_policy(length=length, eos=eos)
    star = kl.kl_regularised_optimum(ref, reward, beta)
    want = brute.best_restricted("pretrained", 1.0, length, prompt, toy.REWARDS[reward], eos)
    got = star.response_probs(prompt)
    # At β = 1e-3 the other responses keep weight exp(−1000) ≈ 0: the same limit to double precision.
    for y, p in want.items():
        assert got[y] == pytest.approx(p, rel=1e-9, abs=1e-12)
    assert np.all(np.isfinite(star.next_token_probs(prompt)))


def test_tiny_beta_first_token_is_not_uniform():
    """The issue's symptom: at β = 1e-300 the first token came out uniform."""
    star = kl.kl_regularised_optimum(toy.reference_policy(), "sum_to_target", 1e-300)
    first = star.next_token_probs(2)
    want = brute.best_restricted("pretrained", 1.0, 4, 2, toy.REWARDS["sum_to_target"])
    marg = np.zeros(5)
    for y, p in want.items():
        marg[y[0]] += p
    np.testing.assert_allclose(first, marg, rtol=1e-12)
    assert first.max() - first.min() > 0.1


def test_moderate_beta_matches_brute_force():
    ref = toy.reference_policy("knows_task", 0.7, length=3)
    star = kl.kl_regularised_optimum(ref, "count_target", 0.3)
    refp = brute.reference_response_probs("knows_task", 0.7, 3, 1)
    w = {y: p * np.exp(toy.REWARDS["count_target"](1, y) / 0.3) for y, p in refp.items()}
    z = sum(w.values())
    got = star.response_probs(1)
    for y, v in w.items():
        assert got[y] == pytest.approx(v / z, rel=1e-10, abs=1e-15)


def exact_bc(eps, horizon):
    """Σ_t [1 − (1 − ε)^t] in exact rationals: term by term, or (tiny ε, long horizon, where the powers of
    1 − ε grow huge denominators) by the binomial identity Σ_k (−1)^(k+1) C(T+1, k+1) ε^k until it has converged."""
    e = Fraction(eps)
    if horizon <= 60 or eps * horizon >= 0.5:
        q, qt, total = 1 - e, Fraction(1), Fraction(0)
        for _ in range(horizon):
            qt *= q
            total += 1 - qt
        return float(total)
    total, k = Fraction(0), 1
    while True:
        term = (-1) ** (k + 1) * math.comb(horizon + 1, k + 1) * e**k
        total += term
        if term == 0 or abs(term) < abs(total) * Fraction(1, 10**40):
            return float(total)
        k += 1


@pytest.mark.parametrize("eps", [1e-300, 1e-15, 1e-9, 1e-4, 0.05, 0.5, 0.999, 1.0])
@pytest.mark.parametrize("horizon", [1, 2, 7, 60, 400])
def test_behaviour_cloning_cost_exact_for_any_eps(eps, horizon):
    want = exact_bc(eps, horizon)
    assert imitation.behaviour_cloning_cost(eps, horizon) == pytest.approx(want, rel=1e-13, abs=1e-300)
    curves = imitation.cost_curves(eps, horizon)
    assert curves["behaviour_cloning"][-1] == pytest.approx(want, rel=1e-12, abs=1e-300)


def test_behaviour_cloning_cost_long_horizons():
    # ε·T ≪ 1: J = Σ_k (−1)^(k+1) C(T+1, k+1) ε^k, here summed in exact rationals (8 terms: each is 400 times
    # smaller than the one before); ε·T ≫ 1: J ≈ T − 1/ε + 1.
    T, e = 10**10, Fraction(1e-12)
    terms = [(-1) ** (k + 1) * Fraction(math.comb(T + 1, k + 1)) * e**k for k in range(1, 9)]
    assert imitation.behaviour_cloning_cost(1e-12, T) == pytest.approx(float(sum(terms)), rel=1e-14)
    assert imitation.behaviour_cloning_cost(0.5, 10**10) == pytest.approx(10**10 - 1, rel=1e-15)
    assert imitation.behaviour_cloning_cost(1e-20, 3) == pytest.approx(6e-20, rel=1e-12)


@pytest.mark.parametrize("reward", sorted(toy.REWARDS))
@pytest.mark.parametrize("n_actions", [5, 6])
@pytest.mark.parametrize("length", [1, 2, 4])
def test_vectorised_reward_tables_equal_calling_the_reward(reward, n_actions, length):
    fn = toy.REWARDS[reward]
    for x in toy.PROMPTS:
        table = toy.reward_table(reward, x, length, n_actions)
        for y in np.ndindex(*table.shape):
            assert table[y] == fn(x, brute.strip(y))


def test_any_python_reward_still_works():
    def parity(prompt, response):
        return float(len(response) % 2 == prompt % 2) + 0.25 * sum(response)

    table = toy.reward_table(parity, 3, 3, 6)
    for y in np.ndindex(*table.shape):
        assert table[y] == parity(3, brute.strip(y))
    pi = toy.reference_policy(length=3, eos=True)
    assert toy.value(pi, parity, 3) == pytest.approx(brute.value(pi, parity, 3), abs=1e-12)


@pytest.mark.parametrize("method", estimators.LINEAR)
@pytest.mark.parametrize("n", [2, 3, 6])
@pytest.mark.parametrize("reward", ["sum_to_target", "count_target"])
def test_closed_form_moments_equal_the_enumeration(method, n, reward):
    pi = toy.reference_policy("pretrained", 1.5, length=3)
    mean, var = estimators.gradient_moments(method, pi, reward, 2, n)
    mean_c, var_c = estimators._composition_moments(method, pi, reward, 2, n)
    np.testing.assert_allclose(mean, mean_c, atol=1e-13)
    assert var == pytest.approx(var_c, rel=1e-10, abs=1e-14)


def test_closed_form_takes_large_groups_with_many_reward_values():
    """The issue's example: many distinct rewards and a large group. The affine methods take the closed form; GRPO,
    which has none, refuses with the size, the limit and a smaller setting."""
    pi = toy.reference_policy(length=3)

    def many(prompt, y):
        return float(sum((t + 1) * 7**t * tok for t, tok in enumerate(y)))

    mean, var = estimators.gradient_moments("rloo", pi, many, 2, 256)
    np.testing.assert_allclose(mean, estimators.exact_policy_gradient(pi, many, 2), rtol=1e-12)
    assert var > 0
    with pytest.raises(ValueError, match="limit") as err:
        estimators.gradient_moments("grpo", pi, many, 2, 256)
    assert "smaller group size n" in str(err.value)


def test_size_guards_on_the_issues_examples():
    with pytest.raises(ValueError, match="max_horizon"):
        imitation.cost_curves(0.1, 10**10)
    with pytest.raises(ValueError, match="limit"):
        toy.value(toy.reference_policy(length=10, eos=True), "sum_to_target", 2)
    assert imitation.behaviour_cloning_cost(0.1, 10**10) == pytest.approx(10**10 - 9, rel=1e-15)
