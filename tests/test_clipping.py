"""toy.clipping against closed forms: the clip boundary (1 ± ε)·p, and the surrogate gradient by finite differences."""

import numpy as np
import pytest

from toy.clipping import one_token_reach, ppo_update, train
from toy.policy import softmax
from toy.trust_region import clipped_objective


@pytest.mark.parametrize("eps_high", [0.2, 0.28, 0.5])
@pytest.mark.parametrize("p", [0.001, 0.01, 0.1, 0.3])
def test_one_update_stops_near_the_clip_boundary(p, eps_high):
    up = one_token_reach(p, 1.0, 0.2, eps_high)
    assert up <= (1 + eps_high) * p and up == pytest.approx((1 + eps_high) * p, rel=1e-4)
    down = one_token_reach(p, -1.0, 0.2, eps_high)
    assert down >= 0.8 * p and down == pytest.approx(0.8 * p, rel=1e-4)


def test_a_common_token_is_not_held_back_by_the_upper_clip():
    # (1 + ε)·0.9 > 1: the ratio can never reach the clip, so the token keeps growing toward 1.
    assert one_token_reach(0.9, 1.0, 0.2, 0.2) > 0.97
    assert one_token_reach(0.9, 1.0, 0.2, 0.2, budget=100.0) > one_token_reach(0.9, 1.0, 0.2, 0.2)


def surrogate(z, p_old, actions, A, eps_low, eps_high):
    p = softmax(z)
    return clipped_objective(p[actions] / p_old[actions], A, eps_low, eps_high).mean()


def test_one_epoch_is_one_gradient_step_on_the_clipped_surrogate():
    """The gradient ppo_update uses (with clipped_gradient_mask) against finite differences of clipped_objective."""
    rng = np.random.default_rng(0)
    p_old = softmax(rng.normal(size=5))
    actions = np.array([0, 0, 3, 4, 1, 4])
    A = np.array([1.0, 1.0, -0.5, 2.0, -1.0, 2.0])
    np.testing.assert_allclose(ppo_update(p_old, actions, A, 0.2, 0.28, epochs=0), p_old)
    h = 1e-6
    grad0 = np.array([(surrogate(np.log(p_old) + h * e, p_old, actions, A, 0.2, 0.28)
                       - surrogate(np.log(p_old) - h * e, p_old, actions, A, 0.2, 0.28)) / (2 * h) for e in np.eye(5)])
    np.testing.assert_allclose(ppo_update(p_old, actions, A, 0.2, 0.28, epochs=1, lr=0.7),
                               softmax(np.log(p_old) + 0.7 * grad0), atol=1e-8)
    # The second step starts where some ratios have left the clip range: their terms must stop pulling.
    z1 = np.log(p_old) + 0.7 * grad0
    ratios = softmax(z1)[actions] / p_old[actions]
    assert np.any(ratios > 1.28) or np.any(ratios < 0.8)
    grad1 = np.array([(surrogate(z1 + h * e, p_old, actions, A, 0.2, 0.28)
                       - surrogate(z1 - h * e, p_old, actions, A, 0.2, 0.28)) / (2 * h) for e in np.eye(5)])
    np.testing.assert_allclose(ppo_update(p_old, actions, A, 0.2, 0.28, epochs=2, lr=0.7),
                               softmax(z1 + 0.7 * grad1), atol=1e-7)


def test_train_is_seeded_and_starts_at_the_prior():
    p0, r = [0.55, 0.25, 0.12, 0.05, 0.03], [1, 0, 0, 0, 1]
    a = train(p0, r, updates=5, seeds=3)
    b = train(p0, r, updates=5, seeds=3)
    np.testing.assert_array_equal(a.probs, b.probs)
    np.testing.assert_allclose(a.probs[0], p0)
    assert a.entropy[0] == pytest.approx(-sum(p * np.log(p) for p in p0))
    np.testing.assert_allclose(a.probs.sum(axis=1), 1.0)
    assert a.probs[-1, 0] + a.probs[-1, 4] > 0.58  # rewarded tokens gain


@pytest.mark.parametrize("call", [
    lambda: ppo_update([0.5, 0.6], [0], [1.0]),
    lambda: ppo_update([0.5, 0.5], [2], [1.0]),
    lambda: ppo_update([0.5, 0.5], [0, 1], [1.0]),
    lambda: one_token_reach(0.0, 1.0),
    lambda: train([0.5, 0.5], [1.0], updates=2),
    lambda: train([0.5, 0.5], [1.0, 0.0], group=1),
])
def test_bad_input_raises_value_error(call):
    with pytest.raises(ValueError):
        call()
