"""toy.longrun against brute force: every response enumerated, values and advantages summed by hand."""

import itertools

import numpy as np
import pytest

import toy
from toy.longrun import LONG_REWARDS, MarkovPolicy, automaton, credit, credit_horizon


def brute_credit(policy, reward, x, L):
    """E|A_t| and E[(r − V(x) − A_t)²] by enumerating all 5^L responses (no identities used)."""
    fn = toy.REWARDS[reward]
    T = policy.transition
    ys = list(itertools.product(range(5), repeat=L))
    prob = {}
    for y in ys:
        p, prev = 1.0, x
        for a in y:
            p, prev = p * T[prev, a], a
        prob[y] = p
    r = {y: fn(x, y) for y in ys}

    def V(prefix):
        below = [y for y in ys if y[: len(prefix)] == prefix]
        mass = sum(prob[y] for y in below)
        return sum(prob[y] * r[y] for y in below) / mass

    values = {prefix: V(prefix) for t in range(L + 1) for prefix in itertools.product(range(5), repeat=t)}
    v0 = values[()]
    mean_abs, noise = np.zeros(L), np.zeros(L)
    for y in ys:
        for t in range(L):
            A = values[y[: t + 1]] - values[y[:t]]
            mean_abs[t] += prob[y] * abs(A)
            noise[t] += prob[y] * (r[y] - v0 - A) ** 2
    return mean_abs, noise, v0


@pytest.mark.parametrize("reward", LONG_REWARDS)
@pytest.mark.parametrize("preset,temperature", [("pretrained", 1.0), ("sharp", 0.4), ("uniform", 1.0),
                                                ("pretrained", 5.0)])
@pytest.mark.parametrize("L", [1, 2, 4])
def test_credit_equals_enumeration(reward, preset, temperature, L):
    policy = MarkovPolicy(preset, temperature)
    for x in (0, 3):
        got = credit(policy, reward, x, L)
        mean_abs, noise, v0 = brute_credit(policy, reward, x, L)
        np.testing.assert_allclose(got.mean_abs, mean_abs, atol=1e-12)
        np.testing.assert_allclose(got.noise, noise, atol=1e-12)
        assert got.value == pytest.approx(v0, abs=1e-12)


@pytest.mark.parametrize("reward", LONG_REWARDS)
def test_credit_equals_toy_exact_at_length_six(reward):
    policy = MarkovPolicy("pretrained", 0.8)
    got = credit(policy, reward, 1, 6)
    signal, noise = toy.credit_by_position(policy.bigram(6), reward, 1)
    np.testing.assert_allclose(got.mean_square, signal, atol=1e-12)
    np.testing.assert_allclose(got.noise, noise, atol=1e-12)


def test_automata_compute_the_toy_rewards():
    for reward in LONG_REWARDS:
        for x in toy.PROMPTS:
            auto = automaton(reward, x)
            for L in range(5):
                for y in itertools.product(range(5), repeat=L):
                    s, total = auto.start, 0.0
                    for a in y:
                        total += auto.per_token[a]
                        s = auto.step[s, a]
                    assert total + auto.terminal[s] == toy.REWARDS[reward](x, y)


def test_bigram_copy_has_the_markov_probabilities():
    policy = MarkovPolicy("sharp", 2.0)
    b = policy.bigram(3)
    for x in (0, 4):
        for y in [(0, 1, 2), (4, 4, 0)]:
            want = policy.transition[x, y[0]] * policy.transition[y[0], y[1]] * policy.transition[y[1], y[2]]
            assert b.prob(x, y) == pytest.approx(want)


def test_long_responses_closed_forms():
    L = 1000
    # Uniform policy, sum reward: V = 1/5 everywhere except that the last token decides; Var(r) = 0.16.
    c = credit(MarkovPolicy("uniform"), "sum_to_target", 2, L)
    assert c.value == pytest.approx(0.2)
    assert c.mean_square[:-1] == pytest.approx(np.zeros(L - 1), abs=1e-15)
    assert c.mean_square[-1] == pytest.approx(0.16)
    assert c.noise[0] == pytest.approx(0.16)
    assert credit_horizon(c.mean_square) == 1
    # Uniform policy, count reward: r ~ Binomial(L, 1/5); each token's advantage is 1[y_t = x] − 1/5.
    c = credit(MarkovPolicy("uniform"), "count_target", 0, L)
    assert c.value == pytest.approx(L / 5)
    np.testing.assert_allclose(c.mean_square, 0.16)
    np.testing.assert_allclose(c.noise, 0.16 * (L - 1))
    np.testing.assert_allclose(c.mean_abs, 2 * 0.2 * 0.8)
    # First-token reward: only token 1 carries credit, at any length.
    c = credit(MarkovPolicy("pretrained"), "first_token", 3, L)
    p = MarkovPolicy("pretrained").transition[3, 3]
    assert c.mean_square[0] == pytest.approx(p * (1 - p))
    assert np.abs(c.mean_square[1:]).max() < 1e-25


def test_credit_horizon():
    assert credit_horizon([0.0, 0.1, 0.0, 0.9]) == 1
    assert credit_horizon([0.25] * 4, share=0.9) == 4
    assert credit_horizon([0.5, 0.3, 0.2], share=0.8) == 2
    assert credit_horizon([0.0, 0.0]) == 0


@pytest.mark.parametrize("call", [
    lambda: MarkovPolicy("nope"),
    lambda: MarkovPolicy(temperature=0.0),
    lambda: credit(MarkovPolicy(), "sum_to_target", 7, 10),
    lambda: credit(MarkovPolicy(), "made_up", 0, 10),
    lambda: credit(MarkovPolicy(), "sum_to_target", 0, 0),
    lambda: credit(toy.reference_policy(), "sum_to_target", 0, 4),
    lambda: credit_horizon([0.1], share=1.5),
])
def test_bad_input_raises_value_error(call):
    with pytest.raises(ValueError):
        call()
