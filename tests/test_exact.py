"""Exact values and advantages against the independent forward enumeration in tests/brute.py."""

import functools
import itertools

import numpy as np
import pytest

import toy
from tests import brute

SETTINGS = [("pretrained", 1.0), ("uniform", 1.0), ("knows_task", 0.3), ("confidently_wrong", 1.0), ("terse", 2.0),
            ("pretrained", 10.0), ("pretrained", 0.1)]


@pytest.mark.parametrize("preset, temperature", SETTINGS)
@pytest.mark.parametrize("reward", list(toy.REWARDS))
def test_value_matches_forward_enumeration(preset, temperature, reward):
    pi = toy.reference_policy(preset, temperature)
    fn = toy.REWARDS[reward]
    for x in [0, 2, 4]:
        for prefix in [(), (1,), (4, 0), (2, 2, 3), (1, 2, 3, 4)]:
            assert toy.value(pi, reward, x, prefix) == pytest.approx(brute.value(pi, fn, x, prefix), abs=1e-12)


@pytest.mark.parametrize("preset, temperature", SETTINGS)
def test_token_and_sequence_advantages_match_forward_enumeration(preset, temperature):
    pi = toy.reference_policy(preset, temperature)
    for reward, fn in toy.REWARDS.items():
        for y in [(1, 2, 3, 4), (0, 0, 0, 0), (2, 4, 1, 3)]:
            want = brute.token_advantages(pi, fn, 2, y)
            np.testing.assert_allclose(toy.token_advantages(pi, reward, 2, y), want, atol=1e-12)
            seq = fn(2, y) - brute.value(pi, fn, 2)
            assert toy.sequence_advantage(pi, reward, 2, y) == pytest.approx(seq, abs=1e-12)


def test_advantage_table_matches_per_response_advantages():
    pi = toy.reference_policy("pretrained", 0.5)
    for reward in toy.REWARDS:
        A = toy.advantage_table(pi, reward, 1)
        assert A.shape == (5, 5, 5, 5, 4)
        for y in itertools.islice(itertools.product(range(5), repeat=4), 0, 625, 29):
            np.testing.assert_allclose(A[y], toy.token_advantages(pi, reward, 1, y), atol=1e-15)
        # and against the brute force on a few
        for y in [(0, 1, 2, 3), (4, 4, 4, 4)]:
            np.testing.assert_allclose(A[y], brute.token_advantages(pi, toy.REWARDS[reward], 1, y), atol=1e-12)


def test_eos_values_match_forward_enumeration():
    pi = toy.reference_policy(eos=True, length=3)
    for reward, fn in toy.REWARDS.items():
        for prefix in [(), (2,), (toy.EOS,), (1, toy.EOS), (3, 1)]:
            assert toy.value(pi, reward, 3, prefix) == pytest.approx(brute.value(pi, fn, 3, prefix), abs=1e-12)
        y = (2, toy.EOS)
        np.testing.assert_allclose(
            toy.token_advantages(pi, reward, 3, y),
            brute.token_advantages(pi, fn, 3, (2, toy.EOS, toy.EOS)), atol=1e-12)


def test_reach_probabilities_and_return_variances_match_enumeration():
    pi = toy.reference_policy("knows_task", 0.6, length=3)
    reach = toy.exact.reach_probs(pi, 4)
    var = toy.exact.return_variances(pi, "count_target", 4)
    fn = toy.REWARDS["count_target"]
    for prefix in [(), (0,), (3, 4), (1, 1, 1)]:
        p = 1.0
        for t in range(len(prefix)):
            p *= pi.next_token_probs(4, prefix[:t])[prefix[t]]
        assert reach[len(prefix)][prefix] == pytest.approx(p, rel=1e-12)
        comps = list(brute.completions(pi, 4, prefix))
        mean = sum(q * fn(4, y) for y, q in comps)
        want = sum(q * (fn(4, y) - mean) ** 2 for y, q in comps)
        assert var[len(prefix)][prefix] == pytest.approx(want, abs=1e-12)


@pytest.mark.parametrize("preset", list(toy.PRESETS))
def test_credit_by_position_matches_enumeration(preset):
    pi = toy.reference_policy(preset, 1.0, length=3)
    for reward, fn in toy.REWARDS.items():
        signal, noise = toy.credit_by_position(pi, reward, 2)
        want_sq, want_noise = np.zeros(3), np.zeros(3)
        v0 = brute.value(pi, fn, 2)
        for y, p in brute.completions(pi, 2, ()):
            A = brute.token_advantages(pi, fn, 2, y)
            want_sq += p * np.array(A) ** 2
            want_noise += p * (fn(2, y) - v0 - np.array(A)) ** 2
        np.testing.assert_allclose(signal, want_sq, atol=1e-12)
        np.testing.assert_allclose(noise, want_noise, atol=1e-12)


@pytest.mark.parametrize("preset, temperature, eos", [(p, 1.0, False) for p in toy.PRESETS]
                         + [("terse", 0.4, True), ("knows_task", 3.0, True)])
def test_noise_is_the_other_positions_signal(preset, temperature, eos):
    """noise_t = Σ_{s≠t} E[A_s²]: the identity that puts the lower panel's two bars in the same units. Both sides
    come from brute-force enumeration here; the cross terms E[A_s A_t] (s ≠ t) vanish."""
    pi = toy.reference_policy(preset, temperature, length=3, eos=eos)
    for reward, fn in toy.REWARDS.items():
        v0 = brute.value(pi, fn, 1)
        sq, noise, cross = np.zeros(3), np.zeros(3), np.zeros((3, 3))
        value = functools.cache(lambda prefix, fn=fn: brute.value(pi, fn, 1, prefix))
        for y, p in brute.completions(pi, 1, ()):
            if p == 0.0:  # a digit after EOS: not a response the policy can write, and its prefixes are refused
                continue
            A = np.array([value(y[: t + 1]) - value(y[:t]) for t in range(3)])
            sq += p * A ** 2
            noise += p * (fn(1, brute.strip(y)) - v0 - A) ** 2
            cross += p * np.outer(A, A)
        np.testing.assert_allclose(cross - np.diag(np.diag(cross)), 0.0, atol=1e-12)
        np.testing.assert_allclose(noise, sq.sum() - sq, atol=1e-12)
        signal, toy_noise = toy.credit_by_position(pi, reward, 1)
        np.testing.assert_allclose(toy_noise, signal.sum() - signal, atol=1e-12)
        var = toy.exact.return_variances(pi, reward, 1)[0]
        assert signal.sum() == pytest.approx(float(var), abs=1e-12)


def test_first_token_reward_puts_all_credit_on_token_one():
    for preset in toy.PRESETS:
        pi = toy.reference_policy(preset)
        A = toy.advantage_table(pi, "first_token", 2)
        assert np.all(np.abs(A[..., 1:]) < 1e-14)  # zero up to rounding in Σ_a π(a|s) = 1
        signal, noise = toy.credit_by_position(pi, "first_token", 2)
        assert signal[0] > 1e-3 and np.all(signal[1:] < 1e-27) and noise[0] < 1e-28
        # in matching units, the noise on each later token is token 1's whole signal, Var r
        np.testing.assert_allclose(noise[1:], signal[0], rtol=1e-12)


def test_sum_reward_spreads_credit_over_all_positions_under_pretrained():
    signal, _ = toy.credit_by_position(toy.reference_policy(), "sum_to_target", 2)
    assert np.all(signal > 1e-4)
    # ...but only the last token matters when π_ref's last token is uniform
    signal, _ = toy.credit_by_position(toy.reference_policy("uniform"), "sum_to_target", 2)
    assert np.all(signal[:3] < 1e-24) and signal[3] > 0.1


def test_any_function_is_a_reward():
    def even_count(prompt, response):
        return sum(t % 2 == 0 for t in response) / 4

    pi = toy.reference_policy()
    assert toy.value(pi, even_count, 0) == pytest.approx(brute.value(pi, even_count, 0), abs=1e-12)


def test_reward_that_returns_nan_gets_a_clear_error():
    with pytest.raises(ValueError, match="returned nan"):
        toy.value(toy.reference_policy(), lambda x, y: float("nan"), 0)
    with pytest.raises(ValueError, match="finite number"):
        toy.value(toy.reference_policy(), lambda x, y: "yes", 1)


@pytest.mark.parametrize(
    "call, words",
    [
        (lambda: toy.value(toy.reference_policy(), "length_penalty", 0), ["'length_penalty'", "'sum_to_target'"]),
        (lambda: toy.value(toy.reference_policy(), "sum_to_target", 9), ["prompt 9"]),
        (lambda: toy.value(toy.reference_policy(), "sum_to_target", 0, (1, 9)), ["9", "0 to 4"]),
        (lambda: toy.value(toy.reference_policy(), "sum_to_target", 0, (1, 2, 3, 4, 0)), ["at most 4"]),
        (lambda: toy.token_advantages(toy.reference_policy(), "first_token", 0, (1, 2)), ["2 tokens"]),
        (lambda: toy.sequence_advantage(toy.reference_policy(), "first_token", 0, "1234"), ["sequence of token"]),
        (lambda: toy.advantage_table("pretrained", "first_token", 0), ["toy Policy", "'pretrained'"]),
    ],
)
def test_bad_input_raises_a_clear_value_error(call, words):
    with pytest.raises(ValueError) as err:
        call()
    for w in words:
        assert w in str(err.value)
