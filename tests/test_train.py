"""Training loops: exact curves against toy.exact/toy.kl, one update against brute-force gradients."""

import itertools

import numpy as np
import pytest

import toy
from toy import estimators, train
from toy.trust_region import clipped_objective

K = toy.VOCAB_SIZE
REF2 = toy.reference_policy(length=2)


def brute_objective(theta, ref, x, beta, reward="sum_to_target"):
    """E[r] − β·KL for a two-token tabular policy with logits θ = (z0 (K,), z1 (K, K)), by enumeration."""
    p0 = np.exp(theta[:K] - theta[:K].max())
    p0 /= p0.sum()
    z1 = theta[K:].reshape(K, K)
    p1 = np.exp(z1 - z1.max(1, keepdims=True))
    p1 /= p1.sum(1, keepdims=True)
    fn = toy.get_reward(reward)
    total = 0.0
    for a, b in itertools.product(range(K), repeat=2):
        p = p0[a] * p1[a, b]
        total += p * (fn(x, (a, b)) - beta * np.log(p / ref.prob(x, (a, b))))
    return total


def theta_of(curves, x_index=0, beta_index=0, seed_index=0):
    return np.concatenate([z[beta_index, seed_index, x_index].ravel() for z in curves.final_logits])


@pytest.mark.parametrize("beta", [0.0, 0.3])
def test_one_exact_step_is_gradient_ascent_on_the_objective(beta):
    x, lr = 1, 0.7
    c = train.train("exact", steps=1, betas=(beta,), seeds=(0,), lr=lr, reference=REF2, prompts=(x,))
    theta0 = np.concatenate([np.log(REF2.prefix_probs(x, 0)), np.log(REF2.prefix_probs(x, 1)).ravel()])
    h = 1e-6
    grad = np.array([(brute_objective(theta0 + h * e, REF2, x, beta) - brute_objective(theta0 - h * e, REF2, x, beta))
                     / (2 * h) for e in np.eye(len(theta0))])
    np.testing.assert_allclose(theta_of(c), theta0 + lr * grad, atol=1e-7)


def test_exact_curves_match_toy_exact_and_kl():
    c = train.train("rloo", steps=5, group_size=3, betas=(0.0, 0.1), seeds=(0, 1))
    ref = toy.reference_policy()
    assert np.allclose(c.reward[..., 0], np.mean([toy.value(ref, "sum_to_target", x) for x in toy.PROMPTS]))
    assert np.allclose(c.kl[..., 0], 0.0)
    for b in range(2):
        for s in range(2):
            pi = c.policy(b, s)
            want = np.mean([toy.value(pi, "sum_to_target", x) for x in toy.PROMPTS])
            assert c.reward[b, s, -1] == pytest.approx(want)
            assert c.kl[b, s, -1] == pytest.approx(np.mean([toy.kl.sequence_kl(pi, ref, x) for x in toy.PROMPTS]))
            assert c.objective[b, s, -1] == pytest.approx(c.reward[b, s, -1] - c.betas[b] * c.kl[b, s, -1])


@pytest.mark.parametrize("method", ["reinforce", "rloo", "remax", "grpo"])
def test_mean_update_of_sampled_methods_follows_their_expected_gradient(method):
    """Many seeds, one step, β = 0: the mean change of the logits is lr·E[g], E[g] from toy.estimators (which is
    tested against brute force): within 5 standard errors in every coordinate."""
    x, n, lr, seeds = 3, 3, 0.5, 3000
    c = train.train(method, steps=1, group_size=n, betas=(0.0,), seeds=range(seeds), lr=lr, reference=REF2,
                    prompts=(x,))
    theta0 = np.concatenate([np.log(REF2.prefix_probs(x, 0)), np.log(REF2.prefix_probs(x, 1)).ravel()])
    steps = np.array([theta_of(c, seed_index=s) - theta0 for s in range(seeds)]) / lr
    expected = estimators.expected_gradient(method, toy.TabularPolicy.from_policy(REF2), "sum_to_target", x, n)
    se = steps.std(axis=0, ddof=1) / np.sqrt(seeds)
    assert np.all(np.abs(steps.mean(axis=0) - expected) <= 5 * se + 1e-9)


def test_token_gradient_against_dense_scores():
    rng = np.random.default_rng(0)
    L, B, P, n = 3, 2, 2, 4
    logits = [rng.normal(size=(B, P, K**t, K)) for t in range(L)]
    probs = [train._softmax(z) for z in logits]
    ids = rng.integers(0, K**L, size=(B, P, n))
    coef = rng.normal(size=(B, P, n, L))
    got = train.token_gradient(probs, ids, coef, K)
    for b, p in itertools.product(range(B), range(P)):
        want = [np.zeros((K**t, K)) for t in range(L)]
        for i in range(n):
            y = np.unravel_index(ids[b, p, i], (K,) * L)
            for t in range(L):
                prefix = np.ravel_multi_index(y[:t], (K,) * t) if t else 0
                want[t][prefix] += coef[b, p, i, t] * (np.eye(K)[y[t]] - probs[t][b, p, prefix])
        for t in range(L):
            np.testing.assert_allclose(got[t][b, p], want[t], atol=1e-12)


def test_sample_ids_follow_the_distribution():
    log_p = np.log(np.array([0.1, 0.2, 0.3, 0.4]))
    ids = train.sample_ids(log_p, np.random.default_rng(0).random(40000))
    freq = np.bincount(ids, minlength=4) / 40000
    np.testing.assert_allclose(freq, [0.1, 0.2, 0.3, 0.4], atol=0.01)


def test_clipped_epochs_gradient_matches_the_clipped_surrogate():
    """A second epoch's update is lr × the gradient of mean_i Σ_t clip-objective(ρ_it, A_i)/n (by finite
    differences of toy.trust_region.clipped_objective), here for a one-token policy where it is easy to write."""
    ref1 = toy.reference_policy(length=1)
    x, n, lr, clip = 0, 6, 3.0, 0.1
    c1 = train.train("rloo", steps=1, group_size=n, betas=(0.0,), seeds=(4,), lr=lr, reference=ref1, prompts=(x,))
    c2 = train.train("rloo", steps=1, group_size=n, betas=(0.0,), seeds=(4,), lr=lr, reference=ref1, prompts=(x,),
                     epochs=2, clip=clip)
    z0 = np.log(ref1.prefix_probs(x, 0))
    z1 = c1.final_logits[0][0, 0, 0, 0]
    ids = train.sample_ids(train.response_log_probs([z0[None, None, None, :]])[0, 0],
                           np.random.default_rng(4).random((1, n))[0])
    R = toy.reward_table("sum_to_target", x, 1).ravel()
    A = estimators.advantages("rloo", R[ids])

    def surrogate(z):
        logp = z - np.log(np.exp(z).sum())
        ratio = np.exp(logp[ids] - np.log(ref1.prefix_probs(x, 0))[ids])
        return clipped_objective(ratio, A, clip, clip).sum() / n

    h = 1e-6
    grad = np.array([(surrogate(z1 + h * e) - surrogate(z1 - h * e)) / (2 * h) for e in np.eye(K)])
    np.testing.assert_allclose(c2.final_logits[0][0, 0, 0, 0], z1 + lr * grad, atol=1e-6)


def test_no_update_before_the_first_success():
    hard = toy.reference_policy("terse", 0.5)
    c = train.train("rloo", reference=hard, prompts=(3,), betas=(0.0,), seeds=range(12), steps=60, group_size=4)
    first = c.first_signal()[0]
    for s, f in enumerate(first):
        upto = c.reward.shape[-1] if f == 0 else f
        np.testing.assert_array_equal(c.reward[0, s, :upto], c.reward[0, s, 0])
        if f:
            assert c.reward[0, s, f] > c.reward[0, s, 0]


def test_dr_grpo_and_reinforce_train_identically():
    a = train.train("reinforce", steps=6, group_size=4, betas=(0.05,), seeds=(0, 1))
    b = train.train("dr_grpo", steps=6, group_size=4, betas=(0.05,), seeds=(0, 1))
    np.testing.assert_array_equal(a.reward, b.reward)


@pytest.mark.parametrize("method", list(train.METHODS))
def test_every_method_learns_and_is_seeded(method):
    c = train.train(method, steps=12, group_size=4, betas=(0.02,), seeds=(0, 1), lr=4.0)
    assert np.all(np.isfinite(c.reward)) and np.all(np.isfinite(c.kl))
    assert np.all(c.reward[..., -1] > c.reward[..., 0] + 0.2)
    again = train.train(method, steps=12, group_size=4, betas=(0.02,), seeds=(0, 1), lr=4.0)
    np.testing.assert_array_equal(c.reward, again.reward)
    m, lo, hi = c.band("reward")
    assert np.all(lo <= m) and np.all(m <= hi)


def test_optimum_metrics_by_enumeration():
    ref = toy.reference_policy()
    for beta in (0.05, 0.5, 3.0):
        rewards, kls = [], []
        for x in toy.PROMPTS:
            P, R = ref.response_probs(x), toy.reward_table("sum_to_target", x, 4)
            w = P * np.exp(R / beta)
            star = w / w.sum()
            rewards.append((star * R).sum())
            kls.append((star * np.log(star / P)).sum())
        got = train.optimum_metrics(beta)
        assert got == pytest.approx((np.mean(rewards), np.mean(kls)))
    r0, kl0 = train.optimum_metrics(0.0)
    assert r0 == 1.0 and kl0 == pytest.approx(np.mean([-np.log((ref.response_probs(x) *
                                                         toy.reward_table("sum_to_target", x, 4)).sum())
                                                        for x in toy.PROMPTS]))


def test_bad_input():
    with pytest.raises(ValueError, match="method"):
        train.train("dpo")
    with pytest.raises(ValueError, match="group_size"):
        train.train("rloo", group_size=1)
    with pytest.raises(ValueError, match="beta"):
        train.train("rloo", betas=(-1.0,))
    with pytest.raises(ValueError, match="prompt"):
        train.train("rloo", prompts=(7,))
    with pytest.raises(ValueError, match="lr"):
        train.train("exact", lr=0)
