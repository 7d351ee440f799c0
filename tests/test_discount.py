"""toy.discount against brute force: every EOS-padded episode enumerated and tilted by hand."""

import itertools
import math

import numpy as np
import pytest

import toy
from toy.discount import DiscountedReward, discounted_optimum, mean_length


def episodes(policy, x):
    """Every finished episode (EOS-padded), with its probability under the policy and its digits."""
    L = policy.length
    for y in itertools.product(range(6), repeat=L):
        if toy.EOS in y and any(t != toy.EOS for t in y[y.index(toy.EOS):]):
            continue
        yield y, policy.prob(x, y), toy.strip_eos(y)


def test_steps_count_the_eos_action():
    d = DiscountedReward("sum_to_target", 0.5, 4)
    assert [d.steps(r) for r in [(), (1,), (1, 2), (1, 2, 3), (1, 2, 3, 4)]] == [1, 2, 3, 4, 4]
    assert d(2, (2,)) == 0.5 and d(2, ()) == 0.0 and d(0, ()) == 1.0 and d(2, (1, 1, 0, 0)) == 0.125


@pytest.mark.parametrize("reward", ["sum_to_target", "count_target"])
@pytest.mark.parametrize("gamma,beta", [(1.0, 0.3), (0.9, 0.1), (0.5, 1.0)])
def test_discounted_optimum_is_the_tilted_distribution(reward, gamma, beta):
    ref = toy.reference_policy(eos=True)
    pi = discounted_optimum(ref, reward, gamma, beta)
    fn = toy.REWARDS[reward]
    for x in (0, 2):
        eps = list(episodes(ref, x))
        w = [p * math.exp(gamma ** (min(len(d) + 1, 4) - 1) * fn(x, d) / beta) for _, p, d in eps]
        z = sum(w)
        for (y, _, _), wi in zip(eps, w, strict=True):
            assert pi.prob(x, y) == pytest.approx(wi / z, rel=1e-9, abs=1e-15)


def test_gamma_one_is_the_plain_kl_optimum():
    ref = toy.reference_policy(eos=True)
    a = discounted_optimum(ref, "sum_to_target", 1.0, 0.2).response_probs(1)
    b = toy.kl.kl_regularised_optimum(ref, "sum_to_target", 0.2).response_probs(1)
    np.testing.assert_allclose(a, b, atol=1e-14)


def test_mean_length_matches_enumeration_and_discounting_shortens_the_optimum():
    ref = toy.reference_policy(eos=True)
    want = sum(p * len(d) for _, p, d in episodes(ref, 2))
    assert mean_length(ref, 2) == pytest.approx(want)
    lengths = [mean_length(discounted_optimum(ref, "sum_to_target", g, 0.1), 0) for g in (1.0, 0.9, 0.7, 0.5)]
    assert lengths[0] > lengths[1] > lengths[2] > lengths[3]
    assert lengths[3] < 0.5  # prompt 0: the empty response already sums to 0, and it ends at the first step


@pytest.mark.parametrize("call", [
    lambda: DiscountedReward("sum_to_target", 1.5, 4),
    lambda: DiscountedReward("nope", 0.9, 4),
    lambda: discounted_optimum(toy.reference_policy(), "sum_to_target", 0.9, 0.1),
    lambda: discounted_optimum(toy.reference_policy(eos=True), "sum_to_target", 0.9, 0.0),
])
def test_bad_input_raises_value_error(call):
    with pytest.raises(ValueError):
        call()


def brute_mean_length(ref, reward, x, gamma, beta):
    """E[digits] under π* ∝ π_ref·exp(γ^(T−1) r/β), by enumerating every episode."""
    eps = list(episodes(ref, x))
    w = [p * math.exp(gamma ** (min(len(d) + 1, ref.length) - 1) * reward(x, d) / beta) for _, p, d in eps]
    return sum(wi * len(d) for wi, (_, _, d) in zip(w, eps, strict=True)) / sum(w)


def test_a_negative_reward_makes_the_discount_favour_longer_responses():
    """4.3: γ < 1 shortens the optimum when the reward is ≥ 0, and lengthens it when the reward is a penalty."""
    from toy.discount import ShiftedReward
    ref = toy.reference_policy(eos=True)
    penalty = ShiftedReward("sum_to_target", -1.0)
    assert penalty(2, (2,)) == 0.0 and penalty(2, (1,)) == -1.0
    fn = toy.REWARDS["sum_to_target"]
    for x in (1, 2):
        plain = {g: mean_length(discounted_optimum(ref, "sum_to_target", g, 0.1), x) for g in (1.0, 0.9)}
        shifted = {g: mean_length(discounted_optimum(ref, penalty, g, 0.1), x) for g in (1.0, 0.9)}
        for g in (1.0, 0.9):
            assert plain[g] == pytest.approx(brute_mean_length(ref, fn, x, g, 0.1), rel=1e-9)
            assert shifted[g] == pytest.approx(brute_mean_length(ref, lambda p, d: fn(p, d) - 1.0, x, g, 0.1),
                                               rel=1e-9)
        assert shifted[1.0] == pytest.approx(plain[1.0], rel=1e-12)  # undiscounted, a shift changes nothing
        assert plain[0.9] < plain[1.0] < shifted[0.9]  # the sign of the reward decides the direction


def test_shifted_reward_rejects_a_bad_shift():
    from toy.discount import ShiftedReward
    with pytest.raises(ValueError, match="shift"):
        ShiftedReward("sum_to_target", float("nan"))


def test_mean_length_given_a_reward_by_enumeration():
    from toy.discount import ShiftedReward, mean_length_given
    ref = toy.reference_policy(eos=True)
    penalty = ShiftedReward("sum_to_target", -1.0)
    pi = discounted_optimum(ref, penalty, 0.9, 0.1)
    for x in (1, 2):
        for value in (0.0, -1.0):
            eps = [(pi.prob(x, y), d) for y, _, d in episodes(pi, x) if penalty(x, d) == value]
            want = sum(p * len(d) for p, d in eps) / sum(p for p, _ in eps)
            assert mean_length_given(pi, x, penalty, value) == pytest.approx(want, rel=1e-9)
    with pytest.raises(ValueError, match="value"):
        mean_length_given(pi, 2, penalty, 5.0)
