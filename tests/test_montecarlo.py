"""Monte Carlo values from resets: unbiased for V, with variance Var[r | s] / K."""

import numpy as np
import pytest

import toy


def test_rollouts_keep_the_prefix_and_follow_the_policy():
    pi = toy.reference_policy()
    ys = toy.montecarlo.rollouts_from(pi, 2, (3, 4), 20_000, rng=5)
    assert np.all(ys[:, :2] == [3, 4])
    p = pi.next_token_probs(2, (3, 4))
    freq = np.bincount(ys[:, 2], minlength=5) / len(ys)
    assert np.all(np.abs(freq - p) < 5 * np.sqrt(p * (1 - p) / len(ys)) + 1e-12)


@pytest.mark.parametrize("prefix", [(), (1,), (1, 2, 3)])
def test_mc_value_is_unbiased_with_the_predicted_variance(prefix):
    pi, reward, k = toy.reference_policy(), "sum_to_target", 9
    v = toy.value(pi, reward, 2, prefix)
    estimates = np.array([toy.montecarlo.mc_value(pi, reward, 2, prefix, k=k, rng=seed) for seed in range(3000)])
    var_r = v * (1 - v)  # a 0/1 reward
    assert abs(estimates.mean() - v) < 5 * np.sqrt(var_r / k / len(estimates))
    assert estimates.var() == pytest.approx(var_r / k, rel=0.15)


def test_mc_value_of_a_complete_response_is_its_reward():
    pi = toy.reference_policy()
    assert toy.montecarlo.mc_value(pi, "sum_to_target", 0, (1, 2, 3, 4), k=3) == 1.0


def test_mc_errors():
    with pytest.raises(ValueError, match="k must be an integer"):
        toy.montecarlo.mc_value(toy.reference_policy(), "sum_to_target", 0, (), k=0)
    with pytest.raises(ValueError, match="at most 4"):
        toy.montecarlo.mc_value(toy.reference_policy(), "sum_to_target", 0, (1, 1, 1, 1, 1))
