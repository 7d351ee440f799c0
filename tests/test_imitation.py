"""Behaviour cloning against DAgger: exact costs against a brute-force sum, the chapter's numbers, a simulation."""

import numpy as np
import pytest

from toy import imitation


def brute_bc(eps, T):
    # Probability of still being on the expert's path after t steps is (1-eps)^t; cost 1 per step off it.
    return sum(1 - (1 - eps) ** t for t in range(1, T + 1))


@pytest.mark.parametrize("eps", [0.0, 1e-6, 0.01, 0.1, 0.5, 0.99, 1.0])
@pytest.mark.parametrize("T", [1, 2, 7, 80, 300])
def test_behaviour_cloning_cost_matches_the_sum(eps, T):
    assert imitation.behaviour_cloning_cost(eps, T) == pytest.approx(brute_bc(eps, T), rel=1e-10, abs=1e-12)
    curves = imitation.cost_curves(eps, T)
    np.testing.assert_allclose(curves["behaviour_cloning"], [brute_bc(eps, t) for t in range(1, T + 1)],
                               rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(curves["dagger"], eps * np.arange(1, T + 1))
    assert imitation.dagger_cost(eps, T) == pytest.approx(eps * T)


def test_the_chapter_numbers():
    # references.md: eps = 0.01, T = 10, 20, 40, 80 give 0.53, 1.97, 7.23, 25.3.
    got = [imitation.behaviour_cloning_cost(0.01, T) for T in (10, 20, 40, 80)]
    np.testing.assert_allclose(got, [0.53, 1.97, 7.23, 25.3], atol=0.006)


def test_quadratic_regime_and_bounds():
    for T in (1, 5, 10):
        exact = imitation.behaviour_cloning_cost(1e-4, T)
        assert exact == pytest.approx(imitation.quadratic_approximation(1e-4, T), rel=1e-3)
    for eps in (0.001, 0.05, 0.3):
        for T in (1, 10, 100):
            bc = imitation.behaviour_cloning_cost(eps, T)
            # DAgger <= BC <= min(T, quadratic): one mistake costs at least its own step, at most the rest.
            assert imitation.dagger_cost(eps, T) <= bc + 1e-12
            assert bc <= min(T, imitation.quadratic_approximation(eps, T)) + 1e-12
    # Once eps*T is large, BC pays almost every step.
    assert imitation.behaviour_cloning_cost(0.5, 200) == pytest.approx(200 - 1, abs=1e-9)


def test_simulation_agrees_with_the_exact_curves():
    eps, T = 0.05, 40
    sim = imitation.simulated_cost(eps, T, episodes=4000, rng=1)
    curves = imitation.cost_curves(eps, T)
    for name in ("behaviour_cloning", "dagger"):
        z = (sim[name] - curves[name]) / np.maximum(sim[f"{name}_se"], 1e-12)
        assert np.all(np.abs(z[sim[f"{name}_se"] > 0]) < 4.5), name
    # Same seed, same numbers; the two learners share their mistakes, so BC never costs less in any episode.
    again = imitation.simulate(eps, T, episodes=50, rng=3)
    np.testing.assert_array_equal(again["dagger"], imitation.simulate(eps, T, episodes=50, rng=3)["dagger"])
    assert np.all(again["behaviour_cloning"] >= again["dagger"])


def test_extremes_and_bad_input():
    assert imitation.behaviour_cloning_cost(0.0, 50) == 0.0
    assert imitation.behaviour_cloning_cost(1.0, 50) == 50.0
    sim = imitation.simulated_cost(1.0, 5, episodes=1)
    np.testing.assert_array_equal(sim["behaviour_cloning"], [1, 2, 3, 4, 5])
    np.testing.assert_array_equal(sim["dagger_se"], np.zeros(5))
    for bad in (-0.1, 1.5, float("nan"), "x"):
        with pytest.raises(ValueError, match="eps"):
            imitation.behaviour_cloning_cost(bad, 10)
    for bad in (0, -3, 2.5):
        with pytest.raises(ValueError, match="horizon"):
            imitation.cost_curves(0.1, bad)
