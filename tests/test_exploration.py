"""toy.exploration against brute force: every response enumerated, gradients built parameter by parameter."""

import math

import numpy as np
import pytest

import toy
from tests import brute
from toy.exploration import (
    effective_responses,
    first_success_cdf,
    gradient_moments,
    sample_stream,
    success_probability,
)


@pytest.mark.parametrize("reward", ["sum_to_target", "first_token", "count_target"])
@pytest.mark.parametrize("preset,temperature", [("pretrained", 1.0), ("knows_task", 0.3), ("confidently_wrong", 1.0),
                                                ("terse", 2.0), ("uniform", 1.0)])
def test_success_probability_and_effective_responses(reward, preset, temperature):
    policy = toy.reference_policy(preset, temperature, length=3)
    fn = toy.REWARDS[reward]
    probs = dict(brute.completions(policy, 2, ()))
    assert success_probability(policy, reward, 2) == pytest.approx(
        sum(p for y, p in probs.items() if fn(2, y) > 0), abs=1e-12)
    entropy = -sum(p * math.log(p) for p in probs.values() if p > 0)
    assert effective_responses(policy, 2) == pytest.approx(math.exp(entropy))


def test_uniform_policy_has_every_response_equally_effective():
    assert effective_responses(toy.reference_policy("uniform"), 0) == pytest.approx(625)
    assert success_probability(toy.reference_policy("uniform"), "sum_to_target", 3) == pytest.approx(0.2)


@pytest.mark.parametrize("p", [0.0, 1e-6, 0.05, 0.5, 1.0])
def test_first_success_cdf_is_the_geometric_sum(p):
    for n in (0, 1, 2, 10, 100):
        want = sum((1 - p) ** (k - 1) * p for k in range(1, n + 1))
        assert first_success_cdf(p, n) == pytest.approx(want, abs=1e-12)


def test_sample_stream_waits_are_the_gaps_between_successes():
    policy = toy.reference_policy()
    s = sample_stream(policy, "sum_to_target", 2, 500, rng=3)
    hits = np.flatnonzero(s.rewarded)
    assert list(np.cumsum(s.waits) - 1) == list(hits)
    ys = policy.sample(2, 500, rng=np.random.default_rng(3))
    assert list(s.rewarded) == [toy.REWARDS["sum_to_target"](2, tuple(y)) > 0 for y in ys]


def test_sample_stream_fraction_and_mean_wait_agree_with_p():
    policy = toy.reference_policy("knows_task", 1.0)
    p = success_probability(policy, "sum_to_target", 2)
    s = sample_stream(policy, "sum_to_target", 2, 40_000, rng=0)
    se = math.sqrt(p * (1 - p) / 40_000)
    assert abs(s.rewarded.mean() - p) < 5 * se
    assert abs(s.waits.mean() - 1 / p) < 5 * math.sqrt((1 - p) / p**2 / len(s.waits))


def brute_gradients(policy, reward, x, b):
    """{response: g(y)} with g a dict over tabular parameters (prefix, a), and the exact gradient by formula."""
    fn = toy.REWARDS[reward]
    L, K = policy.length, policy.n_actions
    out = {}
    for y, p in brute.completions(policy, x, ()):
        g = {}
        for t in range(L):
            pi = policy.next_token_probs(x, y[:t])
            for a in range(K):
                g[(y[:t], a)] = (fn(x, y) - b) * ((a == y[t]) - pi[a])
        out[y] = (p, g)
    return out


@pytest.mark.parametrize("reward", ["sum_to_target", "count_target"])
@pytest.mark.parametrize("preset,temperature", [("pretrained", 1.0), ("terse", 0.5)])
def test_gradient_moments_match_brute_force(reward, preset, temperature):
    policy = toy.reference_policy(preset, temperature, length=3)
    x = 1
    v0 = brute.value(policy, toy.REWARDS[reward], x)
    for baseline, b in (("none", 0.0), ("value", v0)):
        per = brute_gradients(policy, reward, x, b)
        keys = {k for _, g in per.values() for k in g}
        mean = {k: sum(p * g.get(k, 0.0) for p, g in per.values()) for k in keys}
        signal = sum(v * v for v in mean.values())
        noise = sum(p * sum((g.get(k, 0.0) - mean[k]) ** 2 for k in keys) for p, g in per.values())
        got = gradient_moments(policy, reward, x, baseline)
        assert got.signal == pytest.approx(signal, rel=1e-9, abs=1e-15)
        assert got.noise == pytest.approx(noise, rel=1e-9)


def test_mean_gradient_is_the_finite_difference_gradient_of_the_expected_reward():
    policy = toy.reference_policy("pretrained", 0.8, length=2)
    tab = toy.TabularPolicy.from_policy(policy)
    x = 3
    fd = brute.finite_difference_gradient(tab, "sum_to_target", x)
    squared_norm = sum(float((g**2).sum()) for g in fd)
    assert gradient_moments(policy, "sum_to_target", x).signal == pytest.approx(squared_norm, rel=1e-6)


def test_a_baseline_never_changes_the_mean_and_here_reduces_the_noise():
    policy = toy.reference_policy()
    with_b, without = gradient_moments(policy, "sum_to_target", 2), gradient_moments(policy, "sum_to_target", 2, "none")
    assert with_b.signal == pytest.approx(without.signal)
    assert with_b.noise < without.noise


def test_noise_to_signal_is_infinite_without_signal():
    uniform = toy.reference_policy("uniform", length=1)
    gm = gradient_moments(uniform, lambda x, y: 1.0, 0)  # a constant reward: the gradient is exactly zero
    assert gm.signal == pytest.approx(0.0, abs=1e-30)
    assert gm.noise_to_signal == float("inf") or gm.noise_to_signal > 1e20


@pytest.mark.parametrize("call", [
    lambda: success_probability("nope", "sum_to_target", 0),
    lambda: success_probability(toy.reference_policy(), "sum_to_target", 9),
    lambda: first_success_cdf(1.5, 3),
    lambda: first_success_cdf(0.5, -1),
    lambda: sample_stream(toy.reference_policy(), "sum_to_target", 0, 0),
    lambda: gradient_moments(toy.reference_policy(), "sum_to_target", 0, baseline="mean"),
])
def test_bad_input_raises_value_error(call):
    with pytest.raises(ValueError):
        call()
