"""Claims of the prose with a number or an inequality (issue 10): each test fails if a change to toy breaks one.

The notebooks glue these numbers at build time; these tests pin the sentences around them (an ordering, a bound,
a formula the text writes out)."""

import numpy as np
import pytest

import toy
from tests import brute
from toy import estimators
from toy.explorers import critic_free

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
    from toy.explorers import classical

    pi_ref = toy.reference_policy()
    table = toy.critic.sampled_errors(pi_ref, "sum_to_target", X, "tabular", [1024], seeds=classical.CRITIC_SEEDS)[0]
    assert toy.critic.monte_carlo_rollouts(pi_ref, X, 9) > 1024
    assert toy.critic.monte_carlo_error(pi_ref, "sum_to_target", X, 9) > table


def test_critic_explorer_puts_rollouts_consumed_on_the_x_axis():
    from toy.explorers import classical

    ex = classical.critic_explorer()
    mc = ex.figure.data[len(classical.CRITIC_FEATURES)]
    pi_ref = toy.reference_policy()
    assert list(mc.x) == [toy.critic.monte_carlo_rollouts(pi_ref, X, k) for k in classical.MC_KS]
    assert list(ex.figure.data[0].x) == list(classical.CRITIC_SIZES)
    assert "rollouts consumed" in ex.figure.layout.xaxis.title.text


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
    """4.3: 'Counted in rollouts, a value for every state is cheaper from a critic … here.'"""
    from toy.explorers import classical

    pi_ref = toy.reference_policy()
    assert toy.critic.monte_carlo_rollouts(pi_ref, X, 8) > 1024
    mc8 = toy.critic.monte_carlo_error(pi_ref, "sum_to_target", X, 8)
    for f in classical.CRITIC_FEATURES:
        err = toy.critic.sampled_errors(pi_ref, "sum_to_target", X, f, [1024], seeds=classical.CRITIC_SEEDS)[0]
        assert err < mc8, f
