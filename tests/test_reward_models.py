"""toy.reward_models against brute force: dense Newton on unpooled data, the tilted distribution written out."""

import math

import numpy as np
import pytest

import toy
from tests import brute
from toy.reward_models import (
    ProxyReward,
    feature_columns,
    fit_bradley_terry,
    optimisation_curve,
    sample_comparisons,
)


def dense_features(features, L=4, K=5):
    ys = [tuple(int(v) for v in y) for y in np.ndindex(*(K,) * L)]
    rows = []
    for y in ys:
        add = [0.0] * (L * K)
        for t, a in enumerate(y):
            add[t * K + a] = 1.0
        tab = [0.0] * (K**L)
        tab[ys.index(y)] = 1.0
        rows.append({"additive": add, "tabular": tab, "both": add + tab}[features])
    return np.array(rows)


@pytest.mark.parametrize("features", ["additive", "tabular", "both"])
def test_feature_columns_are_the_ones_of_phi(features):
    cols, d = feature_columns(features, 4, 5)
    phi = np.zeros((625, d))
    phi[np.arange(625)[:, None], cols] = 1.0
    np.testing.assert_array_equal(phi, dense_features(features))


def dense_bradley_terry(phi, data, l2):
    """Newton's method on the unpooled log-likelihood Σ_i log σ(s_i (φ(a_i) − φ(b_i))·w) − l2/2 ‖w‖²."""
    D = phi[data.a] - phi[data.b]
    s = np.where(data.a_wins, 1.0, -1.0)
    w = np.zeros(phi.shape[1])
    for _ in range(30):
        p = 1 / (1 + np.exp(-s * (D @ w)))
        grad = D.T @ (s * (1 - p)) - l2 * w
        hess = (D * (p * (1 - p))[:, None]).T @ D + l2 * np.eye(len(w))
        w += np.linalg.solve(hess, grad)
    return w, D, s


@pytest.mark.parametrize("features", ["additive", "tabular", "both"])
@pytest.mark.parametrize("n", [5, 200])
def test_fit_equals_dense_newton_and_is_stationary(features, n):
    policy = toy.reference_policy()
    data = sample_comparisons(policy, "sum_to_target", 2, n, rng=1)
    cols, d = feature_columns(features, 4, 5)
    got = fit_bradley_terry(cols, d, data, l2=0.5)
    phi = dense_features(features)
    want, D, s = dense_bradley_terry(phi, data, 0.5)
    np.testing.assert_allclose(phi @ got, phi @ want, atol=1e-9)
    grad = D.T @ (s * (1 - 1 / (1 + np.exp(-s * (D @ got))))) - 0.5 * got
    assert np.abs(grad).max() < 1e-8


def test_comparison_labels_follow_bradley_terry():
    policy = toy.reference_policy("uniform")
    data = sample_comparisons(policy, "count_target", 0, 60_000, sharpness=1.5, rng=0)
    r = toy.reward_table("count_target", 0, 4, 5).ravel()
    diff = r[data.a] - r[data.b]
    for delta in (-1.0, 0.0, 1.0, 2.0):
        sel = diff == delta
        p = 1 / (1 + math.exp(-1.5 * delta))
        assert abs(data.a_wins[sel].mean() - p) < 5 * math.sqrt(p * (1 - p) / sel.sum())


def test_proxy_reward_is_a_reward_function_for_its_prompt():
    policy = toy.reference_policy()
    proxy = ProxyReward(policy, "sum_to_target", 2, 300, features="tabular", seed=4)
    assert proxy(2, (1, 2, 3, 4)) == proxy.table[1, 2, 3, 4]
    with pytest.raises(ValueError, match="prompt 2"):
        proxy(3, (1, 2, 3, 4))
    assert 0.0 <= proxy.agreement(policy) <= 1.0


def test_more_comparisons_make_a_tabular_proxy_agree_with_the_true_reward():
    policy = toy.reference_policy()
    few = ProxyReward(policy, "sum_to_target", 2, 20, features="tabular").agreement(policy)
    many = ProxyReward(policy, "sum_to_target", 2, 5000, features="tabular").agreement(policy)
    assert many > 0.97 > few


def test_agreement_by_brute_force():
    policy = toy.reference_policy(length=2)
    proxy = ProxyReward(policy, "count_target", 1, 40, features="additive", seed=2)
    P = dict(brute.completions(policy, 1, ()))
    num = den = 0.0
    for y, p in P.items():
        for z, q in P.items():
            ry, rz = toy.REWARDS["count_target"](1, y), toy.REWARDS["count_target"](1, z)
            if ry > rz:
                den += p * q
                num += p * q * ((proxy(1, y) > proxy(1, z)) + 0.5 * (proxy(1, y) == proxy(1, z)))
    assert proxy.agreement(policy) == pytest.approx(num / den)


def test_a_proxy_without_data_agrees_half_the_time():
    policy = toy.reference_policy()
    proxy = ProxyReward(policy, "sum_to_target", 2, 1, features="tabular")
    proxy.table = np.zeros_like(proxy.table)
    assert proxy.agreement(policy) == 0.5


def test_optimisation_curve_is_the_tilted_distribution():
    policy = toy.reference_policy()
    proxy = ProxyReward(policy, "sum_to_target", 2, 100, seed=0)
    betas = [10.0, 1.0, 0.3, 0.05]
    curve = optimisation_curve(policy, proxy, "sum_to_target", 2, betas)
    P_ref = policy.response_probs(2).ravel()
    r_true = toy.reward_table("sum_to_target", 2, 4, 5).ravel()
    r_hat = proxy.table.ravel()
    for i, beta in enumerate(betas):
        w = P_ref * np.exp((r_hat - r_hat.max()) / beta)
        q = w / w.sum()
        assert curve.kl[i] == pytest.approx(float(np.sum(q * np.log(q / P_ref))), abs=1e-9)
        assert curve.proxy[i] == pytest.approx(float(q @ r_hat), abs=1e-9)
        assert curve.true[i] == pytest.approx(float(q @ r_true), abs=1e-9)
    # exponential tilting: as β falls the KL and the optimised reward both rise
    assert np.all(np.diff(curve.kl) > 0) and np.all(np.diff(curve.proxy) > 0)


def test_drift_curve_starts_at_the_reference():
    policy = toy.reference_policy()
    curve = optimisation_curve(policy, "sum_to_target", "sum_to_target", 0, [1e4])
    assert curve.kl[0] == pytest.approx(0.0, abs=1e-6)
    assert curve.true[0] == pytest.approx(toy.value(policy, "sum_to_target", 0), abs=1e-4)


@pytest.mark.parametrize("call", [
    lambda: sample_comparisons(toy.reference_policy(), "sum_to_target", 0, 0),
    lambda: sample_comparisons(toy.reference_policy(), "sum_to_target", 0, 5, sharpness=0),
    lambda: feature_columns("mlp", 4, 5),
    lambda: ProxyReward(toy.reference_policy(), "sum_to_target", 7, 10),
    lambda: optimisation_curve(toy.reference_policy(), "sum_to_target", "sum_to_target", 0, [0.0]),
])
def test_bad_input_raises_value_error(call):
    with pytest.raises(ValueError):
        call()
