"""SFT as maximum likelihood: against counts written in the test, and the demonstrator's ceiling."""

import numpy as np
import pytest

import toy
from toy import sft

REF = toy.reference_policy()
REWARD = "sum_to_target"


def test_imperfect_expert_success_rate_and_shape():
    for rho in (0.0, 0.3, 1.0):
        E = sft.imperfect_expert(REF, REWARD, rho)
        for x in toy.PROMPTS:
            P, Pref, R = E.response_probs(x), REF.response_probs(x), toy.reward_table(REWARD, x, 4)
            assert (P * R).sum() == pytest.approx(rho, abs=1e-12)
            # Within successes and within failures, the expert writes like π_ref.
            for mask, share in ((R == 1, rho), (R == 0, 1 - rho)):
                if share == 0:
                    assert P[mask].sum() < 1e-300
                    continue
                ratio = P[mask] / Pref[mask]
                np.testing.assert_allclose(ratio, ratio[0], rtol=1e-9)


def test_autoregressive_reproduces_any_distribution():
    rng = np.random.default_rng(0)
    P = rng.random((5,) * 4) ** 3
    P[0] = 0.0  # a whole subtree with probability zero
    P /= P.sum()
    pi = sft.autoregressive({3: P}, REF)
    np.testing.assert_allclose(pi.response_probs(3), P, atol=1e-12)
    np.testing.assert_allclose(pi.response_probs(1), REF.response_probs(1), atol=1e-12)


def empirical(ys):
    P = np.zeros((5,) * 4)
    for y in ys:
        P[tuple(y)] += 1
    return P / len(ys)


def log_likelihood(policy, demos):
    return sum(np.log(policy.prob(x, tuple(y))) for x, ys in demos.items() for y in ys)


def test_maximum_likelihood_fit_is_the_empirical_distribution():
    expert = sft.imperfect_expert(REF, REWARD, 0.6)
    demos = sft.demonstrations(expert, 40, rng=3)
    pi = sft.fit_sft(demos, REF, prior_strength=0.0)
    for x, ys in demos.items():
        np.testing.assert_allclose(pi.response_probs(x), empirical(ys), atol=1e-12)
    # So the success rate is exactly the fraction of correct demonstrations: imitation cannot do better.
    assert sft.success_rate(pi, REWARD) == pytest.approx(sft.demonstration_success(demos, REWARD, 4, 5))
    # And it is the maximum of the likelihood: the expert and π_ref explain the demonstrations less well.
    best = log_likelihood(pi, demos)
    assert best > log_likelihood(expert, demos) > log_likelihood(REF, demos)
    rng = np.random.default_rng(1)
    for _ in range(5):
        nudged = toy.TabularPolicy([z + 0.05 * rng.normal(size=z.shape) for z in pi.logits])
        assert log_likelihood(nudged, demos) < best


def test_prior_pseudo_counts_formula():
    demos = {2: np.array([[1, 2, 3, 4], [1, 2, 0, 0], [3, 3, 3, 3]])}
    alpha = 0.5
    pi = sft.fit_sft(demos, REF, prior_strength=alpha)
    ys = demos[2]
    for prefix in [(), (1,), (1, 2), (3, 3, 3)]:
        t = len(prefix)
        through = [y for y in ys if tuple(y[:t]) == prefix]
        counts = np.bincount([y[t] for y in through], minlength=5)
        want = (counts + alpha * REF.next_token_probs(2, prefix)) / (len(through) + alpha)
        np.testing.assert_allclose(pi.next_token_probs(2, prefix), want, atol=1e-12)
    # An unvisited prefix keeps the base policy; other prompts too.
    np.testing.assert_allclose(pi.next_token_probs(2, (0, 0)), REF.next_token_probs(2, (0, 0)), atol=1e-12)
    np.testing.assert_allclose(pi.response_probs(0), REF.response_probs(0), atol=1e-12)


def test_on_average_sft_equals_its_demonstrator():
    rho = 0.4
    expert = sft.imperfect_expert(REF, REWARD, rho)
    rates = [sft.success_rate(sft.fit_sft(sft.demonstrations(expert, 16, prompts=(1,), rng=s), REF), REWARD,
                              prompts=(1,)) for s in range(300)]
    se = np.std(rates, ddof=1) / np.sqrt(len(rates))
    assert abs(np.mean(rates) - rho) < 4 * se


def test_bad_input():
    with pytest.raises(ValueError, match="0/1 reward"):
        sft.imperfect_expert(REF, "count_target", 0.5)
    with pytest.raises(ValueError, match="success_rate"):
        sft.imperfect_expert(REF, REWARD, 1.5)
    with pytest.raises(ValueError, match="both outcomes"):
        sft.imperfect_expert(REF, lambda x, y: 0.0, 0.5)
    with pytest.raises(ValueError, match="demonstrations"):
        sft.fit_sft({0: np.zeros((3, 2), dtype=int)}, REF)
    with pytest.raises(ValueError, match="prior_strength"):
        sft.fit_sft({0: np.zeros((3, 4), dtype=int)}, REF, prior_strength=-1)
    with pytest.raises(ValueError, match="distribution"):
        sft.autoregressive({0: np.ones((5,) * 4)}, REF)
