"""The toy language model: probabilities against the presets' formulas, sampling, EOS, and input errors."""

import itertools

import numpy as np
import pytest

import toy
from tests import brute


@pytest.mark.parametrize("preset", list(toy.PRESETS))
@pytest.mark.parametrize("temperature", [0.1, 0.5, 1.0, 3.0, 10.0])
def test_next_token_probs_match_the_preset_formula(preset, temperature):
    for eos in (False, True):
        pi = toy.reference_policy(preset, temperature, eos=eos)
        for x in toy.PROMPTS:
            for prefix in [(), (3,), (0, 4), (1, 1, 2), (4, 3, 0)] + ([(2, toy.EOS)] if eos else []):
                want = brute.preset_probs(preset, temperature, x, prefix, eos)
                np.testing.assert_allclose(pi.next_token_probs(x, prefix), want, rtol=1e-10, atol=1e-15)


@pytest.mark.parametrize("shifts", [dict(count=1.5), dict(know=-2.0, repeat=0.5), dict(miss=5.0, stop=-5.0),
                                    dict(small=-1.0, end=2.5)])
def test_habit_shifts_match_the_formula(shifts):
    for preset in ("uniform", "knows_task"):
        pi = toy.reference_policy(preset, 0.7, eos=True, **shifts)
        for x in (0, 3):
            for prefix in [(), (1,), (2, 2), (4, 0, 1)]:
                want = brute.preset_probs(preset, 0.7, x, prefix, True, **shifts)
                np.testing.assert_allclose(pi.next_token_probs(x, prefix), want, rtol=1e-10, atol=1e-15)


def max_tv(p, q) -> float:
    """The largest total-variation distance between next-token distributions, over every prompt and prefix."""
    return max(0.5 * float(np.abs(p.prefix_probs(x, t) - q.prefix_probs(x, t)).sum(axis=-1).max())
               for x in toy.PROMPTS for t in range(p.length))


@pytest.mark.parametrize("eos", [False, True])
@pytest.mark.parametrize("a, b", list(itertools.combinations([p for p in toy.PRESETS if p != "uniform"], 2)))
def test_no_temperature_turns_one_preset_into_another(a, b, eos):
    """For every pair of non-uniform presets: at the temperatures that bring them closest (one at τ = 1, the other
    searched over τ from 0.02 to 50, and the other way round; then a finer search around the best), the largest
    total-variation distance between their next-token distributions is at least 0.1."""
    def closest(fixed, moved):
        base = toy.reference_policy(fixed, 1.0, length=3, eos=eos)
        gap = lambda log_t: max_tv(base, toy.reference_policy(moved, 10.0 ** log_t, length=3, eos=eos))  # noqa: E731
        grid = np.linspace(-1.7, 1.7, 69)
        best = grid[int(np.argmin([gap(g) for g in grid]))]
        return min(gap(g) for g in np.linspace(best - 0.05, best + 0.05, 21))

    assert min(closest(a, b), closest(b, a)) >= 0.1
    # the old 'tuned' preset failed this: it was 'pretrained' at τ/3 exactly
    sharp = toy.HabitPolicy({h: 3 * w for h, w in toy.policy.habit_weights("pretrained").items()}, 1.0, 3)
    assert max_tv(sharp, toy.reference_policy("pretrained", 1 / 3, length=3)) < 1e-12


def test_every_preset_has_a_sentence_about_credit():
    for name, text in toy.PRESETS.items():
        assert "credit" in text and text.count(". ") == 0, name


def test_eos_policy_probabilities_and_absorption():
    pi = toy.reference_policy(eos=True)
    assert pi.n_actions == 6
    np.testing.assert_allclose(pi.next_token_probs(1, (2, 3)), brute.next_probs("pretrained", 1.0, 2, 3, eos=True))
    np.testing.assert_array_equal(pi.next_token_probs(1, (2, toy.EOS)), [0, 0, 0, 0, 0, 1])
    # a finished short response and its padded form have the same probability
    assert pi.prob(1, (2, toy.EOS)) == pytest.approx(pi.prob(1, (2, toy.EOS, toy.EOS, toy.EOS)), rel=1e-14)


def test_response_probability_is_the_product_of_token_probabilities():
    pi = toy.reference_policy(temperature=0.7)
    P = pi.response_probs(3)
    for y in itertools.islice(itertools.product(range(5), repeat=4), 0, 625, 37):
        want = np.prod([brute.next_probs("pretrained", 0.7, t, (y[t - 1] if t else 3))[y[t]] for t in range(4)])
        assert P[y] == pytest.approx(want, rel=1e-12)
        assert pi.prob(3, y) == pytest.approx(want, rel=1e-12)


@pytest.mark.parametrize("eos", [False, True])
@pytest.mark.parametrize("length", [1, 3, 4, 6])
def test_response_probabilities_sum_to_one(eos, length):
    for preset in toy.PRESETS:
        pi = toy.reference_policy(preset, 0.3, length=length, eos=eos)
        for x in toy.PROMPTS:
            assert pi.response_probs(x).sum() == pytest.approx(1.0, abs=1e-12)
            assert pi.length_distribution(x).sum() == pytest.approx(1.0, abs=1e-12)


def test_length_distribution_counts_digits_before_eos():
    pi = toy.reference_policy(eos=True, length=3)
    want = np.zeros(4)
    for y in itertools.product(range(6), repeat=3):
        if toy.EOS in y and any(t != toy.EOS for t in y[y.index(toy.EOS):]):
            continue  # not a padded episode: has zero probability anyway
        want[len(brute.strip(y))] += pi.prob(0, y)
    np.testing.assert_allclose(pi.length_distribution(0), want, atol=1e-14)


def test_sampling_matches_the_distribution_and_is_reproducible():
    pi = toy.reference_policy()
    ys = pi.sample(2, 40_000, rng=123)
    np.testing.assert_array_equal(ys, pi.sample(2, 40_000, rng=123))
    assert ys.shape == (40_000, 4) and ys.min() >= 0 and ys.max() <= 4
    # first-token frequencies against π(y_0 | x) within 5 standard errors
    p = pi.next_token_probs(2)
    freq = np.bincount(ys[:, 0], minlength=5) / len(ys)
    assert np.all(np.abs(freq - p) < 5 * np.sqrt(p * (1 - p) / len(ys)) + 1e-12)
    # the most likely full response appears about as often as its probability says
    P = pi.response_probs(2)
    top = np.unravel_index(P.argmax(), P.shape)
    hits = np.mean(np.all(ys == np.array(top), axis=1))
    assert abs(hits - P[top]) < 5 * np.sqrt(P[top] * (1 - P[top]) / len(ys))


def test_eos_samples_are_padded_episodes():
    ys = toy.reference_policy(eos=True).sample(0, 2000, rng=1)
    for y in ys:
        y = tuple(int(t) for t in y)
        if toy.EOS in y:
            assert all(t == toy.EOS for t in y[y.index(toy.EOS):])
    assert any(toy.EOS in tuple(y) for y in ys) and any(toy.EOS not in tuple(y) for y in ys)


def test_temperature_limits():
    pi = toy.reference_policy()
    hot, cold = toy.reference_policy(temperature=1e4), toy.reference_policy(temperature=1e-3)
    for prefix in [(), (4,), (2, 2, 0)]:
        np.testing.assert_allclose(hot.next_token_probs(1, prefix), 0.2, atol=1e-3)
        p = pi.next_token_probs(1, prefix)
        assert cold.next_token_probs(1, prefix)[p.argmax()] == pytest.approx(1.0, abs=1e-9)


@pytest.mark.parametrize("temperature", [0.1, 10.0])
def test_extreme_temperatures_stay_finite(temperature):
    for preset in toy.PRESETS:
        pi = toy.reference_policy(preset, temperature)
        for x in toy.PROMPTS:
            for reward in toy.REWARDS:
                A = toy.advantage_table(pi, reward, x)
                assert np.all(np.isfinite(A)) and np.all(np.isfinite(pi.response_probs(x)))
                assert all(np.all(np.isfinite(a)) for a in toy.credit_by_position(pi, reward, x))


def test_tabular_copy_has_the_same_distribution():
    pi = toy.reference_policy("knows_task", 0.5, eos=True)
    tab = toy.TabularPolicy.from_policy(pi)
    for x in toy.PROMPTS:
        np.testing.assert_allclose(tab.response_probs(x), pi.response_probs(x), atol=1e-12)


@pytest.mark.parametrize(
    "call, words",
    [
        (lambda: toy.reference_policy("gpt5"), ["'gpt5'", "'pretrained'", "'uniform'"]),
        (lambda: toy.reference_policy(temperature=0), ["temperature", "0", "positive"]),
        (lambda: toy.reference_policy(temperature=-1.5), ["temperature", "-1.5"]),
        (lambda: toy.reference_policy(temperature=float("nan")), ["temperature", "nan"]),
        (lambda: toy.reference_policy(temperature=float("inf")), ["temperature", "inf"]),
        (lambda: toy.reference_policy(temperature="hot"), ["temperature", "'hot'"]),
        (lambda: toy.reference_policy(length=0), ["length", "0"]),
        (lambda: toy.reference_policy(length=11), ["length", "11", "10"]),
        (lambda: toy.reference_policy().prob(2, (1, 2, 3)), ["(1, 2, 3)", "3 tokens", "exactly 4"]),
        (lambda: toy.reference_policy().prob(2, (1, 2, 3, 7)), ["7", "0 to 4"]),
        (lambda: toy.reference_policy().prob(2, (1, 2, 3, 5)), ["5", "0 to 4"]),
        (lambda: toy.reference_policy().prob(7, (1, 2, 3, 4)), ["prompt 7", "(0, 1, 2, 3, 4)"]),
        (lambda: toy.reference_policy().prob("2", (1, 2, 3, 4)), ["prompt '2'"]),
        (lambda: toy.reference_policy().next_token_probs(0, (1, 2, 3, 4)), ["4 tokens", "at most 3"]),
        (lambda: toy.reference_policy(eos=True).prob(0, (1, 5, 2)), ["not a finished episode"]),
        (lambda: toy.reference_policy(eos=True).prob(0, (1, 2)), ["2 tokens", "ending with EOS"]),
        (lambda: toy.reference_policy().sample(0, 0), ["n", "0"]),
        (lambda: toy.reference_policy("tuned"), ["'tuned'", "'knows_task'", "'confidently_wrong'", "'terse'"]),
        (lambda: toy.reference_policy(count=5.5), ["count", "5.5", "[-5, 5]"]),
        (lambda: toy.reference_policy(know=float("nan")), ["know", "nan", "[-5, 5]"]),
        (lambda: toy.reference_policy(know="lots"), ["know", "'lots'"]),
        (lambda: toy.reference_policy(sharpness=1.0), ["'sharpness'", "'count'", "'repeat'", "'know'"]),
    ],
)
def test_bad_input_raises_a_clear_value_error(call, words):
    with pytest.raises(ValueError) as err:
        call()
    for w in words:
        assert w in str(err.value)


def test_each_preset_does_to_credit_what_its_description_says():
    """The sentences of toy.PRESETS, checked on the sum reward for prompt 2 at τ = 1 (as 4.1 quotes them)."""
    credit = {p: toy.credit_by_position(toy.reference_policy(p), "sum_to_target", 2)[0] for p in toy.PRESETS}
    share = {p: c / c.sum() for p, c in credit.items()}
    value = {p: toy.value(toy.reference_policy(p), "sum_to_target", 2) for p in toy.PRESETS}
    assert share["pretrained"][:3].sum() > 0.2  # the earlier tokens share some of the credit
    assert value["knows_task"] > 0.5 and share["knows_task"][-1] > share["pretrained"][-1]
    for reward in ("sum_to_target", "first_token"):  # almost no credit, almost no noise
        signal, noise = toy.credit_by_position(toy.reference_policy("confidently_wrong"), reward, 2)
        assert toy.value(toy.reference_policy("confidently_wrong"), reward, 2) < 0.01
        assert signal.sum() < 0.01 and noise.max() < 0.01
    evenness = {p: s.min() for p, s in share.items()}  # the smallest share of any position
    assert max(evenness, key=evenness.get) == "terse"
    assert toy.reference_policy("terse", eos=True).length_distribution(2)[:2].sum() > 0.5  # stops early
    for p in toy.PRESETS:  # ...and stops earlier than any other prior
        if p != "terse":
            assert toy.reference_policy(p, eos=True).length_distribution(2)[:2].sum() < 0.35, p
    np.testing.assert_allclose(share["uniform"], [0, 0, 0, 1], atol=1e-12)
