"""Claims written for issue 49 in 4.1 to 4.5, each against an independent computation."""

import math

import numpy as np
import pytest

import toy
from toy import clipping
from toy.page import classical

X = 2


# -- 4.3: the bootstrapping explorer's critics fitted to 2 and to 8 responses -------------------------------------

def test_the_bootstrapping_explorers_first_responses_all_fail_so_its_critics_are_zero():
    """At the explorer's seed the 2 and the 8 responses all miss the sum, so every critic fits 0 everywhere and
    shows the same errors at both sizes; with 32 responses some are rewarded and the errors move. The title's
    count is the number of rewarded responses, checked by adding up their digits."""
    pi = toy.reference_policy()
    for n in classical.BOOT_SIZES:
        ys = pi.sample(X, n, rng=np.random.default_rng(0))
        hits = sum((sum(int(a) for a in y) - X) % 5 == 0 for y in ys)
        assert classical.boot_rewarded(n) == hits
    assert classical.boot_rewarded(2) == classical.boot_rewarded(8) == 0 < classical.boot_rewarded(32)
    for features in classical.CRITIC_FEATURES:
        c = toy.critic.Critic(4, features).fit_returns(X, pi.sample(X, 8, rng=np.random.default_rng(0)), np.zeros(8))
        assert not np.any(c.weights)
        np.testing.assert_array_equal(classical.boot_errors(features, 2), classical.boot_errors(features, 8))
        assert not np.allclose(classical.boot_errors(features, 8), classical.boot_errors(features, 32))
    explorer = classical.bootstrap_explorer(prompt=X)
    state = {"features": "last_token", "n": 8, "averaged": 1, "reward": "sum_to_target"}
    assert explorer.compute(state)["rewarded"] == [0]


# -- 4.3: the GAE explorer's best λ ---------------------------------------------------------------------------------

def test_the_best_lambda_moves_up_a_little_for_the_learned_critic():
    """The answer: at γ = 1 the best λ is 0 with the exact critic and higher with the last-token critic, whose error
    there is about a tenth below its error at λ = 0 (between 5 % and 15 % lower: not a tie of the fourth decimal)."""
    gae = classical.gae_discount_explorer(prompt=X)

    def at_1(critic):
        return np.array([float(gae.compute({"critic": critic, "lam": lam})["mse1"][0]) for lam in classical.LAMBDAS])

    exact, learned = at_1("exact"), at_1("last_token")
    assert classical.LAMBDAS[int(np.argmin(exact))] == 0.0
    best = int(np.argmin(learned))
    assert classical.LAMBDAS[best] > 0.0
    assert 0.85 < learned[best] / learned[0] < 0.95
    # "a larger λ lets in more noise than it removes": the error rises from the best λ to λ = 1
    assert np.all(np.diff(learned[best:]) > 0)


# -- 4.3: what one PPO update steps in the trust-region panel --------------------------------------------------------

def F(p):
    return 1 / (1 - p) - 1 / p + 2 * math.log(p / (1 - p))


def ode_end(p_old, advantage, budget):
    """The p that solves F(p) = F(p_old) + 2·A·B/p_old (A > 0), by bisection."""
    target, lo, hi = F(p_old) + 2 * advantage * budget / p_old, p_old, 1 - 1e-15
    for _ in range(200):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if F(mid) < target else (lo, mid)
    return lo


def test_F_is_the_integral_of_the_update_equation():
    for p in (0.01, 0.3, 0.7, 0.95):
        h = 1e-6
        assert (F(p + h) - F(p - h)) / (2 * h) == pytest.approx(1 / (p**2 * (1 - p) ** 2), rel=1e-5)


@pytest.mark.parametrize("eps_high", classical.EPS_HIGH)
def test_an_update_ends_at_the_clip_or_where_the_equation_puts_it(eps_high):
    """The dropdown: one update ends at (1 + ε_high)·p_old if the flow gets there within the budget, else where
    F(p) = F(p_old) + 2AB/p_old, and above p_old = 1/(1 + ε_high) always there, the same at every ε_high."""
    B = clipping.REACH_BUDGET
    for p_old in classical.P_GRID:
        got = clipping.one_token_reach(p_old, 1.0, 0.2, eps_high)
        want = min((1 + eps_high) * p_old, ode_end(p_old, 1.0, B))
        assert got == pytest.approx(want, rel=2e-3), (p_old, got, want)
        if p_old > 1 / (1 + eps_high):
            assert got == pytest.approx(clipping.one_token_reach(p_old, 1.0, 0.2, 10.0), abs=1e-12)


# -- 4.3: the trust-region explorer's lower panel, the question only moving it answers ------------------------------

def test_a_looser_upper_clip_leaves_less_entropy_in_the_toy_state():
    """The Try this: from ε_high = 0.1 to 0.6 the entropy after the last update falls at every step of the slider,
    the rare rewarded token ends lower, and the common rewarded token is ahead sooner (after 5 updates)."""
    runs = [clipping.train(classical.CLIP_PRIOR, classical.CLIP_REWARDS, 0.2, eps, epochs=classical.CLIP_EPOCHS,
                           lr=classical.CLIP_LR) for eps in classical.EPS_HIGH]
    entropy = [-(r.probs[-1] * np.log(r.probs[-1])).sum() for r in runs]  # the mean policy's, a check on the shape
    assert np.all(np.diff([r.entropy[-1] for r in runs]) < 0) and entropy[0] > entropy[-1]
    rewarded = np.flatnonzero(classical.CLIP_REWARDS)
    common, rare = rewarded[np.argmax(np.array(classical.CLIP_PRIOR)[rewarded])], rewarded[-1]
    assert classical.CLIP_PRIOR[rare] < classical.CLIP_PRIOR[common]
    assert np.all(np.diff([r.probs[-1, rare] for r in runs]) < 0)
    assert np.all(np.diff([r.probs[5, common] for r in runs]) > 0)
    explorer = classical.clipping_explorer()
    for eps, run in zip(classical.EPS_HIGH, runs, strict=True):
        out = explorer.compute({"eps_high": eps})
        assert out["ent_end"][-1] == pytest.approx(run.entropy[-1]) and out["rare_end"][-1] == run.probs[-1, rare]


# -- 4.1: why token 2 catches up at τ = 0.1 --------------------------------------------------------------------------

def test_at_a_cold_temperature_the_credit_goes_where_a_rewarded_response_departs_from_the_likeliest():
    """Try this 1's answer: at τ = 0.1 the likeliest response (built token by token by brute force) misses; of
    P(reward), most comes from responses that first depart from it at token 2 or at token 4, a little at token 1 and
    almost none at token 3; and those are the positions that decide the variance."""
    cold = toy.reference_policy(temperature=0.1)
    greedy = ()
    for _ in range(4):
        probs = [cold.next_token_probs(X, greedy)[a] for a in range(5)]
        greedy += (max(range(5), key=lambda a: (probs[a], -a)),)
    assert toy.REWARDS["sum_to_target"](X, greedy) == 0
    depart = np.zeros(4)
    for y in np.ndindex(5, 5, 5, 5):
        if toy.REWARDS["sum_to_target"](X, y):
            first = next(t for t in range(4) if y[t] != greedy[t])
            depart[first] += cold.prob(X, y)
    share = depart / depart.sum()
    assert share[1] > 0.4 and share[3] > 0.4 and share[0] < 0.15 and share[2] < 1e-4
    signal, _ = toy.credit_by_position(cold, "sum_to_target", X)
    assert signal[1] + signal[3] > 0.85 * signal.sum()


# -- 4.2: the best constant baseline, and what one failure does --------------------------------------------------------

def brute_scores(policy, prompt):
    """‖∇_z log π(y|x)‖² for every response, the logits z of one softmax per state, from e_a − π at each state."""
    out = {}
    for y in np.ndindex(5, 5, 5, 5):
        total = 0.0
        for t in range(4):
            p = policy.next_token_probs(prompt, y[:t])
            total += float(((np.eye(5)[y[t]] - p) ** 2).sum())
        out[y] = total
    return out


def test_the_optimal_baseline_weights_responses_by_their_score_and_beats_v_of_x():
    from toy.page import easy_hard

    cold = toy.reference_policy("terse", easy_hard.TEMPERATURES[2])
    s2 = brute_scores(cold, 0)
    f = toy.REWARDS["sum_to_target"]
    num = sum(cold.prob(0, y) * f(0, y) * s for y, s in s2.items())
    den = sum(cold.prob(0, y) * s for y, s in s2.items())
    b_star = toy.exploration.optimal_baseline(cold, "sum_to_target", 0)
    assert b_star == pytest.approx(num / den, rel=1e-9)
    v = toy.value(cold, "sum_to_target", 0)
    assert b_star < v / 10  # "far below V(x)"

    def noise(b):  # tr Cov(g) for a constant baseline b, by enumeration
        return sum(cold.prob(0, y) * (f(0, y) - b) ** 2 * s for y, s in s2.items())

    assert all(noise(b_star) <= noise(b) for b in np.linspace(0, 1, 41))
    m = {b: toy.exploration.gradient_moments(cold, "sum_to_target", 0, b).noise_to_signal
         for b in ("optimal", "none", "value")}
    assert m["optimal"] < m["none"] < 1 < m["value"]  # "a little below no baseline at all"
    assert m["optimal"] > 0.8 * m["none"]


def test_a_failures_step_raises_likely_tokens_most_and_can_lower_an_unlikely_one():
    """The dropdown: a small step −η ∇ log π(a_f | s) at a state (logits of a softmax) changes π(b | s) at the rate
    π_b (π_b + π_f − Σ π²): positive and largest for the likeliest other token, negative for an unlikely one."""
    pi = toy.reference_policy()
    p = pi.next_token_probs(X, ())
    failed = int(np.argmin(p))  # the failure's first token: an unlikely one
    z = np.log(p)
    eta = 1e-6
    new = np.exp(z - eta * (np.eye(5)[failed] - p))
    new /= new.sum()
    change = np.delete(new - p, failed)
    others = np.delete(p, failed)
    assert change[np.argmax(others)] == max(change) > 0
    assert min(change) < 0


# -- 4.2: the long-credit explorer's Markov policy -----------------------------------------------------------------

def test_the_markov_policy_most_often_writes_p_plus_1_and_never_aims_at_the_target():
    """Its every next-token distribution is a row of one table indexed by the previous digit: the prompt (the target)
    enters only as the first 'previous digit', and later tokens do not depend on the prompt at all. After every
    digit p, p + 1 is the likeliest next digit, though not always above one half (so 'most often', not 'mostly')."""
    m = toy.longrun.MarkovPolicy()
    big = m.bigram(4)
    rng = np.random.default_rng(0)
    for x in toy.PROMPTS:
        np.testing.assert_allclose(big.next_token_probs(x, ()), m.transition[x], atol=1e-12)
        for _ in range(10):
            prefix = tuple(int(a) for a in rng.integers(0, 5, size=int(rng.integers(1, 4))))
            for other in toy.PROMPTS:  # the target changes nothing once a token is written
                np.testing.assert_allclose(big.next_token_probs(other, prefix), m.transition[prefix[-1]], atol=1e-12)
    for p in range(5):
        assert int(np.argmax(m.transition[p])) == (p + 1) % 5
    assert min(m.transition[p, (p + 1) % 5] for p in range(5)) < 0.5


# -- 4.5: a KL term in the loss, GRPO's k3, follows the forward KL's gradient ---------------------------------------

def test_the_k3_term_in_the_loss_has_the_forward_kls_gradient_not_the_objectives():
    """One state, a softmax over 5 logits θ. GRPO's per-token k3 = π_ref/π − 1 − log(π_ref/π), differentiated at
    tokens sampled from π (the sampling not differentiated), has expected gradient Σ_a π(a) ∇k3(a). Against finite
    differences: it equals ∇ KL(π_ref ‖ π_θ) and differs from ∇ KL(π_θ ‖ π_ref)."""
    rng = np.random.default_rng(3)
    theta, ref = rng.normal(size=5), rng.dirichlet(np.ones(5))

    def probs(t):
        e = np.exp(t - t.max())
        return e / e.sum()

    def k3(t, a):
        ratio = ref[a] / probs(t)[a]
        return ratio - 1 - math.log(ratio)

    def grad(f, t, h=1e-6):
        return np.array([(f(t + h * e) - f(t - h * e)) / (2 * h) for e in np.eye(len(t))])

    pi = probs(theta)
    loss_grad = sum(pi[a] * grad(lambda t, a=a: k3(t, a), theta) for a in range(5))
    forward = grad(lambda t: float(ref @ np.log(ref / probs(t))), theta)
    reverse = grad(lambda t: float(probs(t) @ np.log(probs(t) / ref)), theta)
    np.testing.assert_allclose(loss_grad, forward, atol=1e-7)
    assert np.max(np.abs(loss_grad - reverse)) > 1e-2
    # and its expected value is the reverse KL (why k3 is used as an estimator of the objective's KL)
    assert pi @ np.array([k3(theta, a) for a in range(5)]) == pytest.approx(float(pi @ np.log(pi / ref)), abs=1e-12)
