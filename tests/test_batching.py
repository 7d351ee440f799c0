"""toy.batching (issue 51): DAPO's dynamic sampling and REINFORCE++-baseline's batch normalisation, against brute
force written here."""

from __future__ import annotations

import numpy as np
import pytest

import toy
from toy import batching, estimators


def brute_tie_probability_of_pairs(policy, reward, x):
    """P(r(y1) = r(y2)) by enumerating every pair of responses."""
    P = policy.response_probs(x).ravel()
    R = toy.reward_table(reward, x, policy.length).ravel()
    same = R[:, None] == R[None, :]
    return float((P[:, None] * P[None, :] * same).sum())


@pytest.mark.parametrize("reward", ["sum_to_target", "count_target", "first_token"])
def test_tie_probability_of_pairs_by_enumeration(reward):
    pi = toy.reference_policy()
    for x in (0, 2):
        assert batching.tie_probability(pi, reward, x, 2) == pytest.approx(
            brute_tie_probability_of_pairs(pi, reward, x), rel=1e-12)


def test_tie_probability_of_a_01_reward_and_a_sampled_check():
    pi = toy.reference_policy()
    p = toy.value(pi, "sum_to_target", 2)
    for n in (3, 4, 16):
        assert batching.tie_probability(pi, "sum_to_target", 2, n) == pytest.approx(p**n + (1 - p) ** n, rel=1e-12)
    rng = np.random.default_rng(0)
    R = toy.reward_table("sum_to_target", 2, pi.length)
    groups = np.array([R[tuple(pi.sample(2, 4, rng).T)] for _ in range(4000)])
    seen = batching.is_tie(groups).mean()
    want = batching.tie_probability(pi, "sum_to_target", 2, 4)
    assert abs(seen - want) < 4 * np.sqrt(want * (1 - want) / 4000)


def test_dynamic_sampling_cost_is_geometric():
    pi = toy.reference_policy()
    cost = batching.dynamic_sampling(pi, "sum_to_target", 2, 4)
    assert cost.groups_per_kept == pytest.approx(1 / (1 - cost.p_tie))
    assert cost.responses_per_kept == pytest.approx(4 * cost.groups_per_kept)
    # the mean number of tries until a kept group, by summing the geometric series
    k = np.arange(1, 2000)
    assert cost.groups_per_kept == pytest.approx(float(np.sum(k * cost.p_tie ** (k - 1) * (1 - cost.p_tie))))
    ties = [batching.dynamic_sampling(pi, "sum_to_target", 2, n).p_tie for n in (2, 4, 8, 16)]
    assert (np.diff(ties) < 0).all()  # larger groups tie less often


def brute_reinforce_pp(rewards, tokens, eps=1e-8):
    """Expand every response into its tokens, whiten the token advantages as verl does."""
    r = np.asarray(rewards, dtype=float)
    a = np.array([[ri - row.mean() for ri in row] for row in r])
    tok = np.repeat(a.ravel(), tokens)
    white = (tok - tok.mean()) / np.sqrt(tok.var(ddof=1) + eps)
    return white[::tokens].reshape(r.shape)


def test_reinforce_pp_baseline_by_brute_force():
    rng = np.random.default_rng(3)
    for G, n, tokens in ((16, 4, 4), (3, 2, 1), (5, 8, 7)):
        r = rng.integers(0, 2, size=(G, n)).astype(float)
        np.testing.assert_allclose(batching.reinforce_pp_baseline(r, tokens), brute_reinforce_pp(r, tokens),
                                   rtol=1e-12)
        rr = rng.normal(size=(G, n))
        np.testing.assert_allclose(batching.reinforce_pp_baseline(rr, tokens), brute_reinforce_pp(rr, tokens),
                                   rtol=1e-12)


def test_reinforce_pp_baseline_is_the_mean_baseline_times_one_number():
    rng = np.random.default_rng(4)
    r = rng.integers(0, 2, size=(16, 4)).astype(float)
    a = batching.reinforce_pp_baseline(r, 4)
    mean_baseline = estimators.advantages("reinforce", r)
    nz = mean_baseline != 0
    ratios = a[nz] / mean_baseline[nz]
    np.testing.assert_allclose(ratios, ratios[0], rtol=1e-12)
    np.testing.assert_allclose(a[~nz], 0.0, atol=1e-15)


def test_bad_input():
    pi = toy.reference_policy()
    with pytest.raises(ValueError, match="n"):
        batching.dynamic_sampling(pi, "sum_to_target", 2, 1)
    with pytest.raises(ValueError, match="rewards"):
        batching.reinforce_pp_baseline([1.0, 0.0])
    with pytest.raises(ValueError, match="rewards"):
        batching.reinforce_pp_baseline([[1.0], [0.0]])
    with pytest.raises(ValueError, match="tokens"):
        batching.reinforce_pp_baseline([[1.0, 0.0]], tokens=0)
    with pytest.raises(ValueError, match="never keep"):
        batching.dynamic_sampling(toy.reference_policy(), lambda x, y: 1.0, 2, 4)
