"""toy.train's Adam step (issue 51): against a brute-force Adam on finite-difference gradients, and its invariance to
one rescaling of every advantage, which plain gradient steps do not have."""

from __future__ import annotations

import numpy as np
import pytest

import toy
from tests.test_train import REF2, brute_objective, theta_of
from toy import train


def brute_adam(theta, grad_fn, lr, steps, b1=0.9, b2=0.999, eps=1e-8):
    """Adam as Kingma and Ba write it, one parameter at a time, ascending."""
    theta = np.array(theta, dtype=float)
    m, v = np.zeros_like(theta), np.zeros_like(theta)
    for t in range(1, steps + 1):
        g = grad_fn(theta)
        for i in range(len(theta)):
            m[i] = b1 * m[i] + (1 - b1) * g[i]
            v[i] = b2 * v[i] + (1 - b2) * g[i] ** 2
            theta[i] += lr * (m[i] / (1 - b1**t)) / (np.sqrt(v[i] / (1 - b2**t)) + eps)
    return theta


@pytest.mark.parametrize("beta", [0.0, 0.3])
def test_exact_adam_steps_match_a_brute_force_adam(beta):
    x, lr, steps = 1, 0.05, 3
    c = train.train("exact", steps=steps, betas=(beta,), seeds=(0,), lr=lr, reference=REF2, prompts=(x,),
                    optimizer="adam")
    theta0 = np.concatenate([np.log(REF2.prefix_probs(x, 0)), np.log(REF2.prefix_probs(x, 1)).ravel()])
    h = 1e-6

    def grad(theta):
        return np.array([(brute_objective(theta + h * e, REF2, x, beta) - brute_objective(theta - h * e, REF2, x, beta))
                         / (2 * h) for e in np.eye(len(theta))])

    np.testing.assert_allclose(theta_of(c), brute_adam(theta0, grad, lr, steps), atol=1e-6)


def test_the_first_adam_step_moves_every_logit_with_a_gradient_by_lr():
    """m̂/√v̂ = g/|g| after one step: Adam's first step is lr·sign(g), whatever the gradient's size."""
    x, lr = 1, 0.05
    c = train.train("exact", steps=1, betas=(0.0,), seeds=(0,), lr=lr, reference=REF2, prompts=(x,), optimizer="adam")
    theta0 = np.concatenate([np.log(REF2.prefix_probs(x, 0)), np.log(REF2.prefix_probs(x, 1)).ravel()])
    moved = theta_of(c) - theta0
    g = train.train("exact", steps=1, betas=(0.0,), seeds=(0,), lr=1.0, reference=REF2, prompts=(x,))
    sign = np.sign(theta_of(g) - theta0)
    # ε = 1e-8 in the denominator shortens the step of a logit whose gradient is tiny, by a share ε/|g|
    np.testing.assert_allclose(moved, lr * sign, rtol=1e-4)


def ten_times(prompt, response):
    return 10.0 * toy.REWARDS["sum_to_target"](prompt, response)


@pytest.mark.parametrize("method", ["exact", "rloo"])
def test_adam_undoes_a_rescaling_of_the_reward_and_plain_steps_do_not(method):
    """With β = 0, rewards 10 times as large give advantages 10 times as large: Adam's run is the same run, a plain
    step's is not."""
    kw = dict(steps=6, betas=(0.0,), seeds=(0, 1), prompts=(1, 2), group_size=4)
    adam = [train.train(method, reward=r, lr=0.1, optimizer="adam", **kw) for r in ("sum_to_target", ten_times)]
    sgd = [train.train(method, reward=r, lr=1.0, **kw) for r in ("sum_to_target", ten_times)]
    # the same run up to Adam's ε, which weighs 10 times less against the larger gradients
    np.testing.assert_allclose(adam[0].kl, adam[1].kl, rtol=1e-3, atol=1e-9)
    np.testing.assert_allclose(10 * adam[0].reward, adam[1].reward, rtol=1e-3)  # the same policies
    # (a logit whose gradient is as small as ε, at a prefix the policy almost never reaches, does move differently)
    assert np.abs(sgd[0].kl[..., -1] - sgd[1].kl[..., -1]).min() > 0.1


def test_rloo_and_the_mean_baseline_train_alike_under_adam_only():
    """Their advantages differ by the factor n/(n − 1) on every group."""
    kw = dict(steps=10, betas=(0.1,), seeds=(0, 1, 2), group_size=4)
    adam = {m: train.train(m, lr=0.2, optimizer="adam", **kw) for m in ("rloo", "reinforce")}
    sgd = {m: train.train(m, lr=4.0, **kw) for m in ("rloo", "reinforce")}
    # equal up to Adam's ε (a tiny difference can change a later sample, hence the loose tolerance)
    np.testing.assert_allclose(adam["rloo"].kl[..., -1], adam["reinforce"].kl[..., -1], rtol=1e-2)
    assert (sgd["rloo"].kl[..., -1] > sgd["reinforce"].kl[..., -1]).all()


def test_bad_optimizer():
    with pytest.raises(ValueError, match="optimizer"):
        train.train("exact", optimizer="lion")
    with pytest.raises(ValueError, match="lr"):
        train.Ascent("adam", -1.0)
