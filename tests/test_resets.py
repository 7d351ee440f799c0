"""toy.resets against brute force: completions enumerated, and the standard error against repeated estimates."""

import numpy as np
import pytest

import toy
from tests import brute
from toy.resets import reset_estimates, value_and_variance


@pytest.mark.parametrize("reward", ["sum_to_target", "count_target"])
@pytest.mark.parametrize("prefix", [(), (1,), (1, 2), (4, 4, 4), (0, 1, 2, 3)])
def test_value_and_variance_match_enumeration(reward, prefix):
    policy = toy.reference_policy("pretrained", 0.8)
    fn = toy.REWARDS[reward]
    pairs = list(brute.completions(policy, 3, prefix))
    m1 = sum(p * fn(3, y) for y, p in pairs)
    m2 = sum(p * fn(3, y) ** 2 for y, p in pairs)
    v, var = value_and_variance(policy, reward, 3, prefix)
    assert v == pytest.approx(m1, abs=1e-12)
    assert var == pytest.approx(m2 - m1 * m1, abs=1e-12)


def test_estimates_are_means_of_rollouts_and_their_error_matches_the_standard_error():
    policy = toy.reference_policy()
    ks = [1, 4, 16, 64]
    e = reset_estimates(policy, "sum_to_target", 2, (1, 2), ks, repeats=400, rng=5)
    v, var = value_and_variance(policy, "sum_to_target", 2, (1, 2))
    assert e.value == pytest.approx(v)
    np.testing.assert_allclose(e.exact_rmse, np.sqrt(var / np.array(ks)))
    # each estimate of a 0/1 reward is a multiple of 1/K
    for j, k in enumerate(ks):
        np.testing.assert_allclose(e.estimates[:, j] * k, np.round(e.estimates[:, j] * k), atol=1e-9)
    # the measured RMS error of 400 repeats is within 15% of sqrt(Var/K)
    np.testing.assert_allclose(e.rmse, e.exact_rmse, rtol=0.15)
    again = reset_estimates(policy, "sum_to_target", 2, (1, 2), ks, repeats=400, rng=5)
    np.testing.assert_array_equal(again.estimates, e.estimates)


def test_a_complete_response_needs_no_rollouts():
    e = reset_estimates(toy.reference_policy(), "sum_to_target", 2, (1, 1, 0, 0), [1, 9], repeats=3)
    assert e.value == 1.0
    np.testing.assert_array_equal(e.estimates, 1.0)
    np.testing.assert_array_equal(e.rmse, 0.0)


@pytest.mark.parametrize("call", [
    lambda: value_and_variance("policy", "sum_to_target", 0),
    lambda: value_and_variance(toy.reference_policy(), "sum_to_target", 0, (1, 2, 3, 4, 0)),
    lambda: value_and_variance(toy.reference_policy(), "sum_to_target", 0, (9,)),
    lambda: reset_estimates(toy.reference_policy(), "sum_to_target", 0, (), [0]),
    lambda: reset_estimates(toy.reference_policy(), "sum_to_target", 0, (), [1], repeats=0),
])
def test_bad_input_raises_value_error(call):
    with pytest.raises(ValueError):
        call()
