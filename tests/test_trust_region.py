"""PPO's clipped objective and DAPO's clip-higher, against the definition written out case by case."""

import numpy as np
import pytest

from toy.trust_region import clipped_gradient_mask, clipped_objective


def by_cases(rho, adv, lo, hi):
    if adv >= 0:
        return min(rho, 1 + hi) * adv
    return max(rho, 1 - lo) * adv


@pytest.mark.parametrize("lo, hi", [(0.2, 0.2), (0.2, 0.28), (0.1, 0.5)])
def test_clipped_objective_matches_the_case_analysis(lo, hi):
    rng = np.random.default_rng(0)
    rho = rng.uniform(0, 3, 500)
    adv = rng.normal(size=500)
    got = clipped_objective(rho, adv, lo, hi)
    want = [by_cases(r, a, lo, hi) for r, a in zip(rho, adv, strict=True)]
    np.testing.assert_allclose(got, want)


def test_gradient_mask_is_zero_exactly_where_the_objective_is_flat_in_rho():
    rng = np.random.default_rng(1)
    rho, adv = rng.uniform(0.2, 2.0, 400), rng.normal(size=400)
    h = 1e-6
    slope = (clipped_objective(rho + h, adv, 0.2, 0.28) - clipped_objective(rho - h, adv, 0.2, 0.28)) / (2 * h)
    mask = clipped_gradient_mask(rho, adv, 0.2, 0.28)
    away = (np.abs(rho - 0.8) > 1e-4) & (np.abs(rho - 1.28) > 1e-4)
    np.testing.assert_allclose((slope != 0)[away] * 1.0, mask[away])


def test_clip_higher_lets_a_rare_good_token_grow_further():
    assert clipped_objective(1.25, 1.0, 0.2, 0.28) == pytest.approx(1.25)
    assert clipped_objective(1.25, 1.0, 0.2, 0.2) == pytest.approx(1.2)


def test_clip_errors():
    with pytest.raises(ValueError, match="eps_low"):
        clipped_objective(1.0, 1.0, eps_low=1.5)
    with pytest.raises(ValueError, match="eps_high"):
        clipped_objective(1.0, 1.0, eps_high=float("nan"))
