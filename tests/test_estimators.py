"""Critic-free estimators against brute force: every group of n responses enumerated on a two-token policy."""

import itertools

import numpy as np
import pytest

import toy
from toy import estimators as E

K = toy.VOCAB_SIZE


def random_policy(length=2, seed=0, scale=1.5):
    rng = np.random.default_rng(seed)
    return toy.TabularPolicy([scale * rng.normal(size=(len(toy.PROMPTS),) + (K,) * (t + 1)) for t in range(length)])


def softmax(z):
    e = np.exp(z - z.max(-1, keepdims=True))
    return e / e.sum(-1, keepdims=True)


def brute_scores(policy, x):
    """Dense ∇_θ log π(y|x) for a two-token tabular policy, θ = (z0 (K,), z1 (K, K)) flattened."""
    p0 = softmax(policy.logits[0][x])
    p1 = softmax(policy.logits[1][x])
    probs, scores = {}, {}
    for y in itertools.product(range(K), repeat=2):
        s0 = np.eye(K)[y[0]] - p0
        s1 = np.zeros((K, K))
        s1[y[0]] = np.eye(K)[y[1]] - p1[y[0]]
        scores[y] = np.concatenate([s0, s1.ravel()])
        probs[y] = p0[y[0]] * p1[y[0], y[1]]
    return probs, scores


def brute_advantages(method, r, greedy):
    r = np.asarray(r, float)
    n = len(r)
    if method in ("reinforce", "dr_grpo"):
        return r - r.mean()
    if method == "rloo":
        return np.array([r[i] - (r.sum() - r[i]) / (n - 1) for i in range(n)])
    if method == "remax":
        return r - greedy
    std = np.sqrt(((r - r.mean()) ** 2).sum() / (n - 1))
    return (r - r.mean()) / (std + E.GRPO_EPS)


def brute_moments(method, policy, reward, x, n):
    probs, scores = brute_scores(policy, x)
    fn = toy.get_reward(reward)
    rew = {y: fn(x, y) for y in probs}
    p0 = softmax(policy.logits[0][x])
    g0 = int(np.argmax(p0))
    greedy = rew[(g0, int(np.argmax(softmax(policy.logits[1][x])[g0])))]
    ys = list(probs)
    mean = 0.0
    second = 0.0
    for group in itertools.product(ys, repeat=n):
        w = np.prod([probs[y] for y in group])
        A = brute_advantages(method, [rew[y] for y in group], greedy)
        g = sum(a * scores[y] for a, y in zip(A, group, strict=True)) / n
        mean = mean + w * g
        second += w * g @ g
    return mean, second - mean @ mean


def exact_gradient_by_finite_differences(policy, reward, x, h=1e-6):
    theta = np.concatenate([policy.logits[0][x].ravel(), policy.logits[1][x].ravel()])

    def J(th):
        p0, p1 = softmax(th[:K]), softmax(th[K:].reshape(K, K))
        fn = toy.get_reward(reward)
        return sum(p0[a] * p1[a, b] * fn(x, (a, b)) for a in range(K) for b in range(K))

    return np.array([(J(theta + h * e) - J(theta - h * e)) / (2 * h) for e in np.eye(len(theta))])


@pytest.mark.parametrize("reward", ["sum_to_target", "count_target"])
def test_exact_policy_gradient_is_the_derivative_of_expected_reward(reward):
    pi = random_policy(seed=1)
    for x in (0, 3):
        np.testing.assert_allclose(E.exact_policy_gradient(pi, reward, x),
                                   exact_gradient_by_finite_differences(pi, reward, x), atol=1e-8)


def test_score_norms_brute_force():
    pi = random_policy(seed=2)
    probs, scores = brute_scores(pi, 1)
    norms = E.score_norms(pi, 1)
    for y, s in scores.items():
        assert norms[y] == pytest.approx(s @ s)


@pytest.mark.parametrize("method", list(E.METHODS))
@pytest.mark.parametrize("n", [2, 3])
@pytest.mark.parametrize("reward", ["sum_to_target", "count_target"])
def test_expected_gradient_and_variance_match_every_group_enumerated(method, n, reward):
    pi = random_policy(seed=3)
    x = 2
    mean, var = brute_moments(method, pi, reward, x, n)
    np.testing.assert_allclose(E.expected_gradient(method, pi, reward, x, n), mean, atol=1e-12)
    assert E.gradient_variance(method, pi, reward, x, n) == pytest.approx(var, rel=1e-9)


@pytest.mark.parametrize("n", [2, 3])
def test_which_estimator_equals_which_gradient(n):
    """RLOO and ReMax are unbiased; the mean baseline (REINFORCE, Dr. GRPO) gives (1 − 1/n)∇J; GRPO gives c(n, p)∇J
    for a 0/1 reward, and for other rewards is not even parallel to ∇J. Expectations here are brute force."""
    pi = random_policy(seed=4)
    x = 1
    grad = exact_gradient_by_finite_differences(pi, "sum_to_target", x)
    np.testing.assert_allclose(brute_moments("rloo", pi, "sum_to_target", x, n)[0], grad, atol=1e-8)
    np.testing.assert_allclose(brute_moments("remax", pi, "sum_to_target", x, n)[0], grad, atol=1e-8)
    for m in ("reinforce", "dr_grpo"):
        np.testing.assert_allclose(brute_moments(m, pi, "sum_to_target", x, n)[0], (1 - 1 / n) * grad, atol=1e-8)
        assert E.expected_scale(m, n) == pytest.approx(1 - 1 / n)
    p = sum(pr * toy.REWARDS["sum_to_target"](x, y) for y, pr in brute_scores(pi, x)[0].items())
    np.testing.assert_allclose(brute_moments("grpo", pi, "sum_to_target", x, n)[0],
                               E.grpo_scale(n, p) * grad, atol=1e-8)
    # A reward with three values: GRPO's mean gradient turns away from ∇J (and is not a multiple of it).
    g3 = exact_gradient_by_finite_differences(pi, three_valued, x)
    m3 = brute_moments("grpo", pi, three_valued, x, n)[0]
    cos = m3 @ g3 / np.linalg.norm(m3) / np.linalg.norm(g3)
    assert cos < 0.99
    np.testing.assert_allclose(E.expected_gradient("grpo", pi, three_valued, x, n), m3, atol=1e-12)


def three_valued(x, y):
    """5 for the right sum, 1 for the right first token, else 0."""
    return 5.0 if sum(y) % K == x else float(y[0] == x)


@pytest.mark.parametrize("method", list(E.METHODS) + [E.EXACT_CRITIC])
def test_full_toy_expectations_against_known_scales(method):
    """On the four-token toy (π_ref, every prompt), each estimator's exact mean against ∇J."""
    pi = toy.TabularPolicy.from_policy(toy.reference_policy())
    n = 6
    for x in toy.PROMPTS:
        grad = E.exact_policy_gradient(pi, "sum_to_target", x)
        mean = E.expected_gradient(method, pi, "sum_to_target", x, n)
        if method == "grpo":
            scale = E.grpo_scale(n, toy.value(pi, "sum_to_target", x))
        else:
            scale = E.expected_scale(method, n)
        np.testing.assert_allclose(mean, scale * grad, atol=1e-12)


def test_grpo_reweights_prompts_so_the_summed_gradient_turns():
    pi = toy.TabularPolicy.from_policy(toy.reference_policy("terse"))
    grads = [E.exact_policy_gradient(pi, "sum_to_target", x) for x in toy.PROMPTS]
    means = [E.expected_gradient("grpo", pi, "sum_to_target", x, 16) for x in toy.PROMPTS]
    g, m = np.concatenate(grads), np.concatenate(means)
    assert m @ g / np.linalg.norm(m) / np.linalg.norm(g) < 0.995  # about 6.8 degrees at n = 16
    ratios = [mx @ gx / (gx @ gx) for mx, gx in zip(means, grads, strict=True)]
    assert max(ratios) / min(ratios) > 1.5  # prompt weights differ by half again
    # With n = 2 the weight is the same for every p: 1/√2 (up to ε).
    for p in (0.01, 0.3, 0.9):
        assert E.grpo_scale(2, p) == pytest.approx(np.sqrt(0.5), rel=1e-3)
    rloo = np.concatenate([E.expected_gradient("rloo", pi, "sum_to_target", x, 4) for x in toy.PROMPTS])
    np.testing.assert_allclose(rloo, g, atol=1e-12)


@pytest.mark.parametrize("method", ["rloo", "grpo", E.EXACT_CRITIC])
def test_sampled_estimates_agree_with_exact_moments(method):
    """Seeded groups on the four-token toy: the sample mean of g lies as close to E[g] as its exact variance
    allows (E‖ḡ − E g‖² = Var/draws), its component along ∇J is within 4 standard errors, and the sample total
    variance is within 15% of the exact one."""
    pi = toy.TabularPolicy.from_policy(toy.reference_policy())
    x, n, draws = 2, 4, 4000
    gs = np.array([E.gradient_estimate(method, pi, "sum_to_target", x, n, rng=s) for s in range(draws)])
    mean = E.expected_gradient(method, pi, "sum_to_target", x, n)
    var = E.gradient_variance(method, pi, "sum_to_target", x, n)
    err = gs.mean(axis=0) - mean
    assert err @ err < 2 * var / draws
    u = mean / np.linalg.norm(mean)
    along = gs @ u
    assert abs(along.mean() - mean @ u) < 4 * along.std(ddof=1) / np.sqrt(draws)
    total = ((gs - gs.mean(axis=0)) ** 2).sum(axis=1).mean()
    assert total == pytest.approx(var, rel=0.15)


def test_variance_shrinks_as_one_over_n_for_independent_baselines():
    pi = toy.TabularPolicy.from_policy(toy.reference_policy())
    v = {n: E.gradient_variance(m, pi, "sum_to_target", 0, n) for m in ("remax",) for n in (1, 2, 4, 8)}
    # ReMax's baseline does not depend on the samples: the group is n independent copies.
    for n in (2, 4, 8):
        assert v[n] == pytest.approx(v[1] / n, rel=1e-10)
    ex = [E.gradient_variance(E.EXACT_CRITIC, pi, "sum_to_target", 0, n) for n in (1, 3)]
    assert ex[1] == pytest.approx(ex[0] / 3)


def test_advantage_formulas_and_bad_input():
    r = np.array([[1.0, 0.0, 0.0, 1.0], [0.0, 0.0, 0.0, 0.0]])
    np.testing.assert_allclose(E.advantages("rloo", r), 4 / 3 * (r - r.mean(-1, keepdims=True)))
    np.testing.assert_allclose(E.advantages("grpo", r)[1], 0.0)  # all equal: no signal, no NaN
    np.testing.assert_allclose(E.advantages("grpo", r)[0], (r[0] - 0.5) / (np.std(r[0], ddof=1) + 1e-4))
    np.testing.assert_allclose(E.advantages("remax", r, greedy_reward=[1.0, 0.0]), r - [[1.0], [0.0]])
    np.testing.assert_allclose(E.advantages("dr_grpo", r), E.advantages("reinforce", r))
    with pytest.raises(ValueError, match="method"):
        E.advantages("ppo", r)
    with pytest.raises(ValueError, match="at least 2"):
        E.advantages("rloo", [1.0])
    with pytest.raises(ValueError, match="greedy_reward"):
        E.advantages("remax", r)
    with pytest.raises(ValueError, match="n must be"):
        E.gradient_variance("grpo", toy.reference_policy(), "sum_to_target", 0, 1)
    with pytest.raises(ValueError, match="strictly"):
        E.grpo_scale(4, 0.0)


def test_compositions():
    c = E.compositions(4, 3)
    assert len(c) == 15 and np.all(c.sum(1) == 4) and len({tuple(r) for r in c}) == 15
    assert E.compositions(3, 1).tolist() == [[3]]
