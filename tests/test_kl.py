"""Exact sequence KL and the KL-regularised optimum against brute force."""

import itertools
import math

import numpy as np
import pytest

import toy
from tests import brute


def brute_kl(p_policy, q_policy, prompt):
    total = 0.0
    for y in itertools.product(range(5), repeat=p_policy.length):
        p, q = p_policy.prob(prompt, y), q_policy.prob(prompt, y)
        if p > 0:
            total += p * math.log(p / q)
    return total


def test_sequence_kl_matches_enumeration_and_the_chain_rule():
    p, q = toy.reference_policy("knows_task", 0.7, length=3), toy.reference_policy("pretrained", 2.0, length=3)
    assert toy.kl.sequence_kl(p, q, 1) == pytest.approx(brute_kl(p, q, 1), rel=1e-10)
    # chain rule: sequence KL = E_p Σ_t KL(p(·|s_t) ‖ q(·|s_t))
    chain = 0.0
    for y, prob in brute.completions(p, 1, ()):
        for t in range(3):
            a, b = p.next_token_probs(1, y[:t]), q.next_token_probs(1, y[:t])
            chain += prob * float(np.sum(a * np.log(a / b)))
    assert toy.kl.sequence_kl(p, q, 1) == pytest.approx(chain, rel=1e-10)
    assert toy.kl.sequence_kl(p, p, 1) == pytest.approx(0.0, abs=1e-12)


@pytest.mark.parametrize("beta", [0.02, 0.3, 1.0, 50.0])
def test_kl_regularised_optimum_is_the_tilted_distribution(beta):
    ref = toy.reference_policy(length=3)
    star = toy.kl.kl_regularised_optimum(ref, "sum_to_target", beta)
    for x in (0, 3):
        weights = {y: ref.prob(x, y) * math.exp(toy.rewards.sum_to_target(x, y) / beta)
                   for y in itertools.product(range(5), repeat=3)}
        z = sum(weights.values())
        for y in list(weights)[::7]:
            assert star.prob(x, y) == pytest.approx(weights[y] / z, rel=1e-9)


def test_kl_regularised_optimum_maximises_the_objective():
    """E[r] − β KL is larger at π* than at π_ref, at π* for other β, and at random perturbations of π*."""
    ref = toy.reference_policy(length=3)
    beta, x = 0.4, 2
    R = toy.reward_table("sum_to_target", x, 3)

    def objective(P):
        return float((P * R).sum()) - beta * toy.kl.response_kl(P, ref.response_probs(x))

    best = objective(toy.kl.kl_regularised_optimum(ref, "sum_to_target", beta).response_probs(x))
    assert best > objective(ref.response_probs(x))
    for other in (0.1, 1.5):
        assert best > objective(toy.kl.kl_regularised_optimum(ref, "sum_to_target", other).response_probs(x))
    rng = np.random.default_rng(0)
    star = toy.kl.kl_regularised_optimum(ref, "sum_to_target", beta).response_probs(x)
    for _ in range(20):
        P = star * np.exp(0.05 * rng.normal(size=star.shape))
        assert best >= objective(P / P.sum()) - 1e-12
    # and its value has the closed form β log E_ref[exp(r/β)]
    assert best == pytest.approx(beta * math.log(float((ref.response_probs(x) * np.exp(R / beta)).sum())), rel=1e-10)


def test_kl_errors():
    with pytest.raises(ValueError, match="beta"):
        toy.kl.kl_regularised_optimum(toy.reference_policy(), "sum_to_target", 0)
    with pytest.raises(ValueError, match="same length"):
        toy.kl.sequence_kl(toy.reference_policy(length=3), toy.reference_policy(), 0)
    assert toy.kl.response_kl(np.array([0.5, 0.5]), np.array([1.0, 0.0])) == math.inf
