"""toy.offpolicy against brute force: finite differences for the gradient, weights summed over every response."""


import numpy as np
import pytest

import toy
from tests import brute
from toy.offpolicy import policy_path, reward_gradient, weight_variance


def test_reward_gradient_is_the_finite_difference_gradient():
    tab = toy.TabularPolicy.from_policy(toy.reference_policy("terse", 1.5, length=2))
    x = 1
    grads = reward_gradient(tab, "count_target", x)
    for g, fd in zip(grads, brute.finite_difference_gradient(tab, "count_target", x), strict=True):
        np.testing.assert_allclose(g, fd, atol=1e-7)


def test_policy_path_climbs_and_starts_at_the_reference():
    ref = toy.reference_policy(length=3)
    path = policy_path(ref, "sum_to_target", 2, 10, 5.0)
    np.testing.assert_allclose(path[0].response_probs(2), ref.response_probs(2), atol=1e-14)
    values = [toy.value(p, "sum_to_target", 2) for p in path]
    assert all(b > a for a, b in zip(values, values[1:], strict=False))
    np.testing.assert_allclose(path[-1].response_probs(0), ref.response_probs(0), atol=1e-14)  # other prompts


def test_weight_variance_matches_enumeration():
    L = 3
    path = policy_path(toy.reference_policy(length=L), "sum_to_target", 2, 6, 10.0)
    new, old = path[6], path[2]
    pairs = list(brute.completions(old, 2, ()))
    w = {y: new.prob(2, y) / p for y, p in pairs}
    seq = sum(p * w[y] ** 2 for y, p in pairs) - 1
    norm = sum(p * w[y] ** (2 / L) for y, p in pairs) - sum(p * w[y] ** (1 / L) for y, p in pairs) ** 2
    token = 0.0
    for y, p in pairs:
        for t in range(L):
            rho = new.next_token_probs(2, y[:t])[y[t]] / old.next_token_probs(2, y[:t])[y[t]]
            token += p * (rho - 1) ** 2 / L
    got = weight_variance(new, old, 2)
    assert got.sequence == pytest.approx(seq, rel=1e-9)
    assert got.normalised == pytest.approx(norm, rel=1e-9)
    assert got.token == pytest.approx(token, rel=1e-9)
    assert got.effective_fraction == pytest.approx(1 / (1 + seq))


def test_no_staleness_no_variance_and_more_staleness_more_variance():
    path = policy_path(toy.reference_policy(), "sum_to_target", 2, 8, 5.0)
    assert weight_variance(path[8], path[8], 2).sequence == pytest.approx(0.0, abs=1e-12)
    v = [weight_variance(path[8], path[8 - k], 2).sequence for k in (1, 2, 4, 8)]
    assert v == sorted(v)


@pytest.mark.parametrize("call", [
    lambda: policy_path(toy.reference_policy(), "sum_to_target", 2, -1, 1.0),
    lambda: policy_path(toy.reference_policy(), "sum_to_target", 2, 3, 0.0),
    lambda: weight_variance(toy.reference_policy(length=3), toy.reference_policy(), 2),
])
def test_bad_input_raises_value_error(call):
    with pytest.raises(ValueError):
        call()
