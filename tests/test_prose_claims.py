"""Claims of the prose with a number or an inequality (issue 10): each test fails if a change to toy breaks one.

The notebooks glue these numbers at build time; these tests pin the sentences around them (an ordering, a bound,
a formula the text writes out)."""

import functools

import numpy as np
import pytest

import toy
from tests import brute
from toy import estimators
from toy.page.explorers import critic_free

X = 2


# -- 4.5: c(n, p) = E[A | r = 1] − E[A | r = 0] ------------------------------------------------------------------
@pytest.mark.parametrize("method", ["rloo", "reinforce", "dr_grpo", "grpo"])
@pytest.mark.parametrize("n", [2, 3, 4, 7])
@pytest.mark.parametrize("p", [0.05, 0.188, 0.5, 0.9])
def test_advantage_gap_against_brute_force(method, n, p):
    got = estimators.conditional_advantage_gap(method, n, p)
    assert got == pytest.approx(brute.advantage_gap(method, n, p, eps=estimators.GRPO_EPS), rel=1e-10)


@pytest.mark.parametrize("n", [2, 4, 16])
@pytest.mark.parametrize("p", [0.05, 0.3, 0.8])
def test_gap_is_the_written_sum_for_grpo_and_the_constants_for_the_others(n, p):
    assert estimators.conditional_advantage_gap("grpo", n, p) == pytest.approx(estimators.grpo_scale(n, p), rel=1e-10)
    assert estimators.conditional_advantage_gap("rloo", n, p) == pytest.approx(1.0)
    assert estimators.conditional_advantage_gap("reinforce", n, p) == pytest.approx(1 - 1 / n)
    assert estimators.conditional_advantage_gap("remax", n, p, greedy_reward=0.0) == pytest.approx(1.0)


def test_gap_is_the_measured_scale_of_grpos_expected_gradient():
    """4.5: 'GRPO gets scale_grpo of the gradient … the sum above gives c(4, p) … the same grpo_gap'."""
    pi = toy.TabularPolicy.from_policy(toy.reference_policy())
    grad = estimators.exact_policy_gradient(pi, "sum_to_target", X)
    mean, _ = estimators.gradient_moments("grpo", pi, "sum_to_target", X, 4)
    p = toy.value(toy.reference_policy(), "sum_to_target", X)
    assert mean @ grad / (grad @ grad) == pytest.approx(estimators.conditional_advantage_gap("grpo", 4, p), rel=1e-6)


def test_gap_rejects_bad_input():
    with pytest.raises(ValueError, match="p must be strictly between 0 and 1"):
        estimators.conditional_advantage_gap("grpo", 4, 1.0)
    with pytest.raises(ValueError, match="n must be an integer"):
        estimators.conditional_advantage_gap("rloo", 1, 0.5)
    with pytest.raises(ValueError, match="remax needs greedy_reward"):
        estimators.conditional_advantage_gap("remax", 4, 0.5)
    with pytest.raises(ValueError, match="unknown method"):
        estimators.conditional_advantage_gap("ppo", 4, 0.5)


# -- 4.5: the training curves do not reach the optimum within the steps shown -------------------------------------
def test_training_curves_end_with_more_kl_and_less_reward_than_the_optimum():
    opt_r, opt_kl = toy.train.optimum_metrics(0.1)
    b = critic_free.BETAS.index(0.1)
    for method in critic_free.TRAIN_METHODS:
        runs = critic_free.training_runs(method, 4)
        reward, kl = runs.reward[b, :, -1].mean(), runs.kl[b, :, -1].mean()
        assert kl > opt_kl, method
        assert reward < opt_r, method


# -- 4.2: a rollout's spread is √(V(1 − V)), set by the value, not the depth --------------------------------------
@pytest.mark.parametrize("prefix", [(), (1,), (1, 2), (1, 2, 3), (4, 4, 0)])
def test_spread_of_one_rollout_is_sqrt_v_one_minus_v(prefix):
    pi_ref = toy.reference_policy()
    v, var = toy.resets.value_and_variance(pi_ref, "sum_to_target", X, prefix)
    assert np.sqrt(var) == pytest.approx(np.sqrt(v * (1 - v)), rel=1e-12)


def test_spread_after_one_more_token_is_almost_unchanged():
    """4.2: after `1 2 3` the spread is 'almost what it was after `1 2`'."""
    pi_ref = toy.reference_policy()
    sd = [np.sqrt(toy.resets.value_and_variance(pi_ref, "sum_to_target", X, p)[1]) for p in [(1, 2), (1, 2, 3)]]
    assert abs(sd[0] - sd[1]) < 0.05


# -- 4.2: noise-to-signal, one change at a time --------------------------------------------------------------------
def test_noise_to_signal_falls_one_change_at_a_time():
    def nsr(preset, prompt):
        policy = toy.reference_policy(preset)
        return toy.exploration.gradient_moments(policy, "sum_to_target", prompt).noise_to_signal

    def p(preset, prompt):
        return toy.exploration.success_probability(toy.reference_policy(preset), "sum_to_target", prompt)

    assert nsr("uniform", X) > nsr("pretrained", X) > nsr("terse", X) > nsr("terse", 0)
    assert p("terse", X) < p("pretrained", X)  # 'although only … of its samples are rewarded'
    assert p("terse", 0) > 0.5 > p("terse", X)  # the terse favourite is right for prompt 0, wrong for prompt 2


# -- 4.3: only the bound in the direction of the advantage binds ---------------------------------------------------
@pytest.mark.parametrize("eps_high", [0.2, 0.28])
def test_only_the_bound_in_the_direction_of_the_advantage_binds(eps_high):
    from toy.trust_region import clipped_objective

    def slope(ratio, adv, h=1e-6):
        up, down = (clipped_objective(ratio + d, adv, 0.2, eps_high) for d in (h, -h))
        return (up - down) / (2 * h)

    # A > 0: no pull above 1 + ε_high, full pull below 1 − ε_low (the lower bound does not bind)
    assert slope(1 + eps_high + 0.05, 1.0) == 0.0
    assert slope(0.5, 1.0) == pytest.approx(1.0)
    # A < 0: no push below 1 − ε_low, full push above 1 + ε_high
    assert slope(0.7, -1.0) == 0.0
    assert slope(1.5, -1.0) == pytest.approx(-1.0)


# -- 4.3: the critic against Monte Carlo, per rollout consumed ----------------------------------------------------
def test_monte_carlo_pays_k_rollouts_at_every_state():
    pi_ref = toy.reference_policy()
    states = sum(toy.VOCAB_SIZE**t for t in range(toy.RESPONSE_LENGTH))  # 1 + 5 + 25 + 125
    for k in (1, 9, 64):
        assert toy.critic.monte_carlo_rollouts(pi_ref, X, k) == k * states
    with pytest.raises(ValueError, match="k must be an integer"):
        toy.critic.monte_carlo_rollouts(pi_ref, X, 0)


def test_nine_rollouts_per_state_cost_more_and_err_more_than_the_table_after_1024_responses():
    from toy.page.explorers import classical

    pi_ref = toy.reference_policy()
    table = toy.critic.sampled_errors(pi_ref, "sum_to_target", X, "tabular", [1024], seeds=classical.CRITIC_SEEDS)[0]
    assert toy.critic.monte_carlo_rollouts(pi_ref, X, 9) > 1024
    assert toy.critic.monte_carlo_error(pi_ref, "sum_to_target", X, 9) > table


def test_critic_figure_puts_rollouts_consumed_on_the_x_axis_and_labels_its_log_error_axis():
    """The critic figure (static since issue 39): rollouts consumed on x; its error axis, a log axis spanning less
    than a decade, labelled at several values (plotly's decade ticks gave it one), all inside the drawn range."""
    from toy.page.explorers import classical

    fig = classical.critic_figure()
    mc = fig.data[len(classical.CRITIC_FEATURES)]
    pi_ref = toy.reference_policy()
    assert list(mc.x) == [toy.critic.monte_carlo_rollouts(pi_ref, X, k) for k in classical.MC_KS]
    np.testing.assert_allclose(mc.y, [toy.critic.monte_carlo_error(pi_ref, "sum_to_target", X, k)
                                      for k in classical.MC_KS])
    assert list(fig.data[0].x) == list(classical.CRITIC_SIZES)
    assert "rollouts consumed" in fig.layout.xaxis.title.text
    ys = np.concatenate([np.asarray(d.y, dtype=float) for d in fig.data])
    ticks = [t for t in fig.layout.yaxis.tickvals if ys.min() <= t <= ys.max()]
    assert fig.layout.yaxis.type == "log" and len(ticks) >= 3, (ys.min(), ys.max(), fig.layout.yaxis.tickvals)
    assert list(fig.layout.yaxis.ticktext) == [f"{t:g}" for t in fig.layout.yaxis.tickvals]
    from toy.page.figures import decade_ticks
    assert decade_ticks(fig.to_dict()["layout"])["yaxis"].get("tickvals") == list(fig.layout.yaxis.tickvals)


# -- 4.5: GRPO and PPO pay more KL than RLOO; REINFORCE and Dr. GRPO draw the same curve ----------------------------
def test_grpo_and_ppo_take_longer_steps_than_rloo():
    b = critic_free.BETAS.index(0.1)

    def final(method):
        runs = critic_free.training_runs(method, 4)
        return runs.reward[b, :, -1].mean(), runs.kl[b, :, -1].mean()

    (r_rloo, kl_rloo), (r_grpo, kl_grpo), (_, kl_ppo) = final("rloo"), final("grpo"), final("ppo")
    assert r_grpo > r_rloo and kl_grpo > kl_rloo
    assert kl_ppo > kl_rloo
    np.testing.assert_array_equal(critic_free.training_runs("reinforce", 4).reward,
                                  critic_free.training_runs("dr_grpo", 4).reward)


# -- 4.4: the pretrained base is right about one time in five on every prompt --------------------------------------
def test_pretrained_base_is_right_about_one_time_in_five():
    rates = [toy.value(toy.reference_policy(), "sum_to_target", x) for x in toy.PROMPTS]
    assert all(0.15 < r < 0.25 for r in rates)


def test_every_critic_beats_per_state_monte_carlo_at_fewer_rollouts():
    """4.3: every critic fitted to 1,024 responses errs less than Monte Carlo values from more rollouts."""
    from toy.page.explorers import classical

    pi_ref = toy.reference_policy()
    assert toy.critic.monte_carlo_rollouts(pi_ref, X, 8) > 1024
    mc8 = toy.critic.monte_carlo_error(pi_ref, "sum_to_target", X, 8)
    for f in classical.CRITIC_FEATURES:
        err = toy.critic.sampled_errors(pi_ref, "sum_to_target", X, f, [1024], seeds=classical.CRITIC_SEEDS)[0]
        assert err < mc8, f


# -- 4.2: whether optimising a learned reward collapses depends on one response (issue 24) ------------------------
@functools.cache
def _goodhart():
    from toy.page.explorers import easy_hard

    return easy_hard.goodhart_explorer(prompt=X)


def _goodhart_curve(n, features="both", dataset=0):
    ex = _goodhart()
    return ex.evaluate(ex.state(comparisons=n, features=features, dataset=dataset))


@functools.cache
def _proxy(n, features, dataset):
    return toy.reward_models.ProxyReward(toy.reference_policy(), "sum_to_target", X, n, features=features,
                                         seed=dataset)


def _top_is_right(n, features, dataset):
    """Is the response the proxy scores highest (where π*_β ends as β → 0) a rewarded one?"""
    proxy = _proxy(n, features, dataset)
    best = np.unravel_index(np.argmax(proxy.table), proxy.table.shape)
    return toy.REWARDS["sum_to_target"](X, best) > 0


def test_goodhart_collapses_on_set_1_and_not_on_set_2_at_the_defaults():
    """4.2: 'Switch to comparison set 2 … the true reward climbs to … and stays there, although the two reward
    models order about as many pairs correctly … set 1's reward model ranks a wrong response first, set 2's a right
    one.'"""
    one, two = _goodhart_curve(100, dataset=0), _goodhart_curve(100, dataset=1)
    v_ref = toy.value(toy.reference_policy(), "sum_to_target", X)
    assert one["true"].max() > v_ref > one["true"][-1]
    assert two["true"][-1] > 0.99 and two["true"][-1] == pytest.approx(two["true"].max(), abs=1e-3)
    assert abs(one["agree"][0] - two["agree"][0]) < 5  # percentage points
    assert not _top_is_right(100, "both", 0) and _top_is_right(100, "both", 1)


def test_the_end_of_the_goodhart_curve_is_the_true_reward_of_the_proxys_top_response():
    """4.2: 'As β → 0, π*_β puts all its mass on the response r̂ scores highest … the right end of the curve heads for
    that one response's true reward'."""
    from toy.page.explorers import easy_hard

    pi_ref = toy.reference_policy()
    for features in ("both", "tabular", "additive"):
        for n in easy_hard.COMPARISONS:
            for dataset in easy_hard.DATASETS:
                end = toy.reward_models.optimisation_curve(pi_ref, _proxy(n, features, dataset), "sum_to_target", X,
                                                           [1e-6]).true[0]
                assert end == pytest.approx(float(_top_is_right(n, features, dataset)), abs=0.02), (features, n)


def test_goodhart_thresholds_over_the_explorers_grid():
    """4.2 and its exercise: the default model ends right on both sets from 300 comparisons on (and collapses on some
    set below that); the additive model ends near zero on both sets from 300 on, though set 2's ends high at 30 and
    100; the tabular model ends right on both sets from 100 on, and set 2's already after 10."""
    from toy.page.explorers import easy_hard

    def end(n, features, dataset):
        return _goodhart_curve(n, features, dataset)["true"][-1]

    sets = list(easy_hard.DATASETS)
    for n in easy_hard.COMPARISONS:
        both = [end(n, "both", d) for d in sets]
        additive = [end(n, "additive", d) for d in sets]
        tabular = [end(n, "tabular", d) for d in sets]
        assert (min(both) > 0.99) == (n >= 300), n
        assert (max(additive) < 0.1) == (n >= 300) or n == 10, n  # at 10 both sets already end wrong
        assert (min(tabular) > 0.99) == (n >= 100), n
    assert end(10, "additive", 0) < 0.1 and end(10, "additive", 1) < 0.1
    assert end(30, "additive", 1) > 0.9 and end(100, "additive", 1) > 0.9
    assert end(10, "tabular", 1) > 0.99 > 0.05 > end(10, "tabular", 0)
    assert end(3000, "additive", 0) < end(3000, "additive", 1) < 0.1
    # 'at most … (set 2's, with 3,000 comparisons; set 1's, with as many, ends at …)'
    settled = {(n, d): end(n, "additive", d) for n in easy_hard.COMPARISONS if n >= 300 for d in sets}
    assert max(settled, key=settled.get) == (3000, 1) and easy_hard.DATASETS[1] == "2"


# -- 4.3: γ inside GAE biases even an exact critic, by discounting what lies ahead ----------------------------------
@pytest.mark.parametrize("gamma", [0.5, 0.9, 1.0])
def test_gae_at_lambda_one_with_the_exact_critic_is_the_discounted_reward_minus_v(gamma):
    """4.3: 'at λ = 1 with the exact V the sum telescopes to Â_t = γ^(L−1−t) r − V(s_t)'."""
    pi_ref = toy.reference_policy()
    L, K = pi_ref.length, pi_ref.n_actions
    V = toy.gae_discount.exact_critic(pi_ref, "sum_to_target", X)
    r = toy.reward_table("sum_to_target", X, L, K)
    A_hat = toy.gae.gae_table(V, r, 1.0, gamma)
    for t in range(L):
        v_t = V[t].reshape((K,) * t + (1,) * (L - t))
        np.testing.assert_allclose(A_hat[..., t], gamma ** (L - 1 - t) * r - v_t, atol=1e-12)


@pytest.mark.parametrize("gamma", [0.5, 0.9, 1.0])
def test_gae_at_lambda_zero_with_the_exact_critic_discounts_the_next_value(gamma):
    """4.3: 'At λ = 0 with the exact V, Â_t = γ V(s_{t+1}) − V(s_t) before the last token, off by (γ − 1) V(s_{t+1})'
    (the last token's Â is r − V(s_{L−1}), exact); toy.gae_discount's bias² is the π-weighted mean of its square."""
    pi_ref = toy.reference_policy()
    L, K = pi_ref.length, pi_ref.n_actions
    V = toy.gae_discount.exact_critic(pi_ref, "sum_to_target", X)
    V_all, reach = toy.values(pi_ref, "sum_to_target", X), toy.exact.reach_probs(pi_ref, X)
    r = toy.reward_table("sum_to_target", X, L, K)
    A_hat = toy.gae.gae_table(V, r, 0.0, gamma)
    bias_sq = toy.gae_discount.advantage_error(pi_ref, "sum_to_target", X, V, gamma, 0.0).bias_sq
    for t in range(L):
        v_t = V[t].reshape((K,) * t + (1,) * (L - t))
        if t < L - 1:
            v_next = V[t + 1].reshape((K,) * (t + 1) + (1,) * (L - t - 1))
            np.testing.assert_allclose(A_hat[..., t], np.broadcast_to(gamma * v_next - v_t, r.shape), atol=1e-12)
            want = float((reach[t + 1] * ((gamma - 1) * V_all[t + 1]) ** 2).sum())
        else:
            np.testing.assert_allclose(A_hat[..., t], r - v_t, atol=1e-12)
            want = 0.0
        assert bias_sq[t] == pytest.approx(want, abs=1e-14)
    assert (bias_sq[:-1] > 1e-12).all() == (gamma < 1)


# -- 4.2: a failure under a fixed baseline moves the policy, but not toward every other response -------------------
def test_a_failure_under_a_fixed_baseline_lowers_some_other_responses():
    """4.2: a small step −η·V(x)·∇ log π(y | x) on a failed y (one softmax per state) 'lowers every response that
    starts with the same token as the failure, and when that token is unlikely, every response that starts with
    another unlikely one: … to … of the other 624 responses lose probability, and for … of the … failed responses
    the probability of success falls'. Checked with an actual small step, against the first-order rule the
    notebook counts with (the sign of ⟨∇ log π(y'), ∇ log π(y)⟩)."""
    pi = toy.TabularPolicy.from_policy(toy.reference_policy())
    L, K, i = pi.length, pi.n_actions, toy.PROMPTS.index(X)
    v, R, P0 = toy.value(pi, "sum_to_target", X), toy.reward_table("sum_to_target", X, L, K), pi.response_probs(X)
    probs = estimators.depth_probs(pi, X)
    first = probs[0]  # π(a | x)
    step = 1e-4
    rare = set(np.argsort(first)[:2])  # the two least likely first tokens
    lowered_counts, success_down = [], 0
    for y in zip(*np.nonzero(R == 0), strict=True):
        score = estimators.gradient_from_weights(probs, np.eye(K**L)[np.ravel_multi_index(y, R.shape)]
                                                 .reshape(R.shape))
        logits = [z.copy() for z in pi.logits]
        for t in range(L):
            logits[t][i] -= step * v * score[t]
        P1 = toy.TabularPolicy(logits).response_probs(X)
        down = P1 < P0
        assert down[y] and P1.sum() == pytest.approx(1.0)  # the failure goes down, and hands its mass on
        assert down[y[0]].all()  # every response with the failure's first token loses
        for a in range(K):  # elsewhere: a whole first-token subtree loses or gains, by the first-order rule
            if a != y[0]:
                loses = first[a] + first[y[0]] < (first**2).sum()
                assert (down[a].all() if loses else not down[a].any()), (y, a)
                assert loses == (y[0] in rare and a in rare and a != y[0]), (y, a)
        lowered_counts.append(int(down.sum()) - 1)
        success_down += (P1 * R).sum() < (P0 * R).sum()
    n_fail, others = len(lowered_counts), K**L - 1
    assert min(lowered_counts) == K ** (L - 1) - 1 and max(lowered_counts) == 2 * K ** (L - 1) - 1  # 124 and 249
    assert others == 624 and n_fail == int((R == 0).sum())
    assert 0 < success_down < n_fail  # P(success) falls after some failures, rises after others
    # the notebook's first-order count of failures after which P(success) falls
    scores = np.stack([estimators.flatten(estimators.gradient_from_weights(probs, e.reshape(R.shape)))
                       for e in np.eye(K**L)])
    first_order = scores[(R == 0).ravel()] @ scores.T @ (P0 * R).ravel() > 0
    assert int(first_order.sum()) == success_down


# -- 4.3 (after the table) and toy.train: the toy's GRPO sees the KL penalty in its reward -------------------------
def test_toys_grpo_takes_the_kl_penalty_in_the_reward_it_normalises(monkeypatch):
    """4.3: 'the toy's training runs put the penalty into the reward, for GRPO too' (published GRPO, TRL and verl
    add a k3 term to the loss instead): the rewards GRPO's advantages are computed from carry the penalty."""
    seen = []
    real = toy.train.estimators.advantages

    def spy(method, rewards, *args, **kwargs):
        seen.append((method, np.array(rewards)))
        return real(method, rewards, *args, **kwargs)

    monkeypatch.setattr(toy.train.estimators, "advantages", spy)
    start = toy.reference_policy("terse")  # away from π_ref, so log π/π_ref ≠ 0
    for beta in (0.0, 0.3):
        seen.clear()
        toy.train.train("grpo", steps=1, betas=(beta,), seeds=(0,), start=start)
        (method, rewards), = seen
        integral = np.allclose(rewards, np.round(rewards))
        assert method == "grpo" and integral == (beta == 0.0), beta


# -- 4.3: the table beats Monte Carlo per token too, without generalising -----------------------------------------
def test_monte_carlo_tokens_charge_each_restart_for_the_tokens_it_writes():
    pi_ref = toy.reference_policy()
    L, K = pi_ref.length, pi_ref.n_actions
    for k in (1, 9):
        assert toy.critic.monte_carlo_tokens(pi_ref, X, k) == k * sum((L - t) * K**t for t in range(L))
    with pytest.raises(ValueError, match="k must be an integer"):
        toy.critic.monte_carlo_tokens(pi_ref, X, 0)


def test_the_table_fitted_to_as_many_tokens_beats_nine_rollouts_per_state():
    """4.3: 'Monte Carlo with K = 9 writes … tokens, and the table fitted to … responses (… tokens) is off by …,
    against Monte Carlo's …'."""
    from toy.page.explorers import classical

    pi_ref = toy.reference_policy()
    tokens = toy.critic.monte_carlo_tokens(pi_ref, X, 9)
    n = tokens // pi_ref.length
    assert n * pi_ref.length <= tokens
    table = toy.critic.sampled_errors(pi_ref, "sum_to_target", X, "tabular", [n], seeds=classical.CRITIC_SEEDS)[0]
    assert table < toy.critic.monte_carlo_error(pi_ref, "sum_to_target", X, 9)


def test_remaxs_greedy_reward_is_a_baseline_not_the_value():
    """4.3: ReMax's baseline 'is a baseline, not an estimate of V(x)'."""
    pi_ref = toy.reference_policy()
    greedy = toy.REWARDS["sum_to_target"](X, toy.estimators.greedy_response(pi_ref, X))
    assert abs(greedy - toy.value(pi_ref, "sum_to_target", X)) > 0.1


def test_the_clip_experiments_advantages_are_larger_than_grpos_by_the_bessel_factor():
    """4.3: the clip experiment normalises by the population std with no ε, so its advantages are
    √(n/(n − 1)) times GRPO's (up to ε)."""
    for n in (4, 16):
        r = np.eye(n)[0]
        ratio = toy.clipping.group_advantages(r)[0] / toy.estimators.advantages("grpo", r)[0]
        assert ratio == pytest.approx(np.sqrt(n / (n - 1)), rel=1e-3) and ratio > 1


def test_when_td0_beats_monte_carlo_with_16_targets():
    """4.3's exercise on bootstrapping: TD(0) wins from fewer responses for the coarse critics than for the table,
    the per-prompt critic included, because V(s_1) and V(s_2) stay close to V(x); fitted to 2,048 responses, the
    per-prompt and last-token critics both do better, and about equally well."""
    from toy.page.explorers import classical

    boot = classical.bootstrap_explorer(prompt=X)

    def errors(features, n):
        e = boot.evaluate(boot.state(features=features, n=n, averaged=16))
        return e["mse0"][0], e["mse1"][0]

    def wins_from(features):
        wins = [np.subtract(*errors(features, n)) < 0 for n in classical.BOOT_SIZES]
        return next(n for i, n in enumerate(classical.BOOT_SIZES) if all(wins[i:]))

    start = {f: wins_from(f) for f in classical.CRITIC_FEATURES}
    assert start["tabular"] > max(start["prompt"], start["last_token"], start["running_sum"])
    prompt_2048, last_2048 = errors("prompt", 2048)[0], errors("last_token", 2048)[0]
    assert max(prompt_2048, last_2048) < errors("prompt", start["prompt"])[0]  # 'both do better'
    assert abs(prompt_2048 - last_2048) < 0.05 * min(prompt_2048, last_2048)  # 'about equally well'
    assert prompt_2048 < last_2048  # so the last-token critic does not do better (0.00386 against 0.00393)
    assert max(prompt_2048, last_2048) < errors("prompt", 2048)[1] / 2  # both well below Monte Carlo
    pi_ref = toy.reference_policy()
    reach, V = toy.exact.reach_probs(pi_ref, X), toy.exact.values(pi_ref, "sum_to_target", X)
    spread = [float(np.sqrt((reach[t] * (V[t] - V[0]) ** 2).sum())) for t in (1, 2, 3)]
    assert spread[0] < spread[1] < 0.1 < spread[2]


# -- 4.4: RL from the base model, prompt by prompt ------------------------------------------------------------------
def test_rl_from_the_sharp_base_learns_the_hard_prompts_only_by_luck():
    """4.4: quickly where the base is sometimes right; of the five runs, one learned prompt 3 and none prompt 4."""
    from toy.page.explorers import pipeline

    sharp = pipeline.base_policy("sharp")
    runs = pipeline.rl_curves("sharp", None, None)
    start = np.array([toy.value(sharp, "sum_to_target", p) for p in toy.PROMPTS])
    end = np.array([[toy.value(runs.policy(0, s, base=sharp), "sum_to_target", p) for p in toy.PROMPTS]
                    for s in range(len(runs.seeds))])
    easy = start > 0.01
    assert list(np.flatnonzero(easy)) == [0, 1, 2] and start[~easy].max() < 0.003
    assert (end[:, easy] > 0.9).all()
    assert (end[:, 3] > 0.5).sum() == 1 and (end[:, 4] > 0.5).sum() == 0


# -- 4.4: distillation at three step sizes (issue 24) ---------------------------------------------------------------
def _distilled(method, beta, lr):
    from toy.page.explorers import pipeline

    run = toy.distillation.distill(method, beta, steps=pipeline.RL_STEPS, lr=lr)
    return float(run.kl.mean(axis=0)[-1]), float(run.reward.mean(axis=0)[-1]), float(run.kl.mean(axis=0)[0])


def test_distillation_gap_belongs_to_the_large_step():
    from toy.page.explorers import pipeline

    big = pipeline.RL_LR
    res = {(m, b, lr): _distilled(m, b, lr) for m in ("on_policy", "sft") for b in (0.3, 1.0)
           for lr in (0.25, 1.0, big)}
    for b in (0.3, 1.0):
        on = [res["on_policy", b, lr][0] for lr in (0.25, 1.0, big)]
        assert on[0] > on[1] > on[2]  # on-policy distillation gains from a larger step
        assert res["sft", b, big][0] > res["sft", b, 1.0][0]  # a large step keeps SFT's student far away
        for lr in (0.25, 1.0, big):  # SFT ends a little ahead on task reward at every setting
            assert res["sft", b, lr][1] > res["on_policy", b, lr][1]
    kl = {k: v[0] for k, v in res.items()}
    assert abs(kl["on_policy", 0.3, 0.25] - kl["sft", 0.3, 0.25]) < 0.01  # level at the smallest step
    assert 0 < kl["sft", 0.3, 1.0] - kl["on_policy", 0.3, 1.0] < 0.1  # only a little ahead at step size 1
    assert kl["sft", 0.3, big] - kl["on_policy", 0.3, big] > 0.3  # the large gap of the figure
    start = res["sft", 1.0, big][2]
    assert kl["sft", 1.0, big] > start > kl["on_policy", 1.0, big]  # SFT pushes the student away at step 4
    assert abs(kl["sft", 1.0, 0.25] - start) < 0.005 and kl["on_policy", 1.0, 0.25] < start


# -- 4.5: ReMax's relative variance falls like 1/n, the group-mean baselines' very nearly like 1/(n − 1) ------------
def test_relative_variance_laws_of_remax_and_the_group_mean_baselines():
    stats = critic_free.gradient_statistics("sum_to_target", "pretrained")
    n = np.array(critic_free.VARIANCE_SIZES, dtype=float)
    remax, rloo = stats["rel_remax"], stats["rel_rloo"]
    np.testing.assert_allclose(remax * n, remax[0] * n[0], rtol=1e-9)
    scaled = rloo * (n - 1)
    assert scaled.max() / scaled.min() < 1.001
    np.testing.assert_allclose(stats["rel_reinforce"], rloo, rtol=1e-9)
    assert remax[0] == pytest.approx(rloo[0], rel=0.02)  # about equally noisy at n = 2
    assert (remax[1:] > rloo[1:]).all()


def test_only_the_running_sum_critic_pools_states_without_error():
    """4.3: 'only the running-sum one generalises faithfully: it pools states whose values are equal. The per-prompt
    and last-token critics pool states whose values differ, which is why they stop at a floor.'"""
    pi_ref = toy.reference_policy()

    def floor(features):
        c = toy.critic.Critic(pi_ref.length, features).fit_population(pi_ref, "sum_to_target")
        return toy.critic.value_error(c, pi_ref, "sum_to_target", X)

    assert floor("running_sum") < 1e-12 and floor("tabular") < 1e-12
    assert floor("prompt") > 0.1 and floor("last_token") > 0.1
