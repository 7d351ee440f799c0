"""The key-concepts page's machinery (toy.concepts) against brute force, and the page's claims."""

import inspect
import itertools

import numpy as np
import pytest

import toy
from tests import brute
from toy import concepts, ppo

X = 2
PI = toy.reference_policy()
SUM = toy.REWARDS["sum_to_target"]


def test_the_return_is_the_discounted_sum_of_the_rewards_still_to_come():
    rng = np.random.default_rng(0)
    for gamma in (1.0, 0.9, 0.0):
        r = rng.normal(size=6)
        want = [sum(gamma ** (k - t) * r[k] for k in range(t, 6)) for t in range(6)]
        np.testing.assert_allclose(concepts.returns(r, gamma), want, atol=1e-12)
    r = concepts.step_rewards("sum_to_target", X, (3, 4, 0, 0))
    assert list(r) == [0, 0, 0, SUM(X, (3, 4, 0, 0))] == [0, 0, 0, 1.0]
    assert list(concepts.returns(r)) == [1.0] * 4  # one reward at the end, γ = 1: every G_t is r(x, y)
    np.testing.assert_allclose(concepts.returns(r, 0.9)[0], 0.9**3)


@pytest.mark.parametrize("preset,reward", [("pretrained", "sum_to_target"), ("terse", "first_token"),
                                           ("knows_task", "count_target")])
def test_q_is_the_mean_reward_after_the_action_and_v_the_policy_average_of_q(preset, reward):
    """Q(s, a) by forward enumeration of the completions of s·a, and V(s) = Σ_a π(a | s) Q(s, a), at sampled
    states of every depth."""
    pi = toy.reference_policy(preset)
    f = toy.REWARDS[reward]
    rng = np.random.default_rng(1)
    for depth in range(pi.length):
        s = tuple(int(a) for a in rng.integers(0, 5, size=depth))
        Q = concepts.q_values(pi, reward, X, s)
        want = [brute.value(pi, f, X, s + (a,)) for a in range(5)]
        np.testing.assert_allclose(Q, want, atol=1e-12)
        np.testing.assert_allclose(pi.next_token_probs(X, s) @ Q, brute.value(pi, f, X, s), atol=1e-12)


def test_the_bellman_relation_holds_at_every_state_against_enumeration():
    gap = max(abs(PI.next_token_probs(X, p) @ concepts.q_values(PI, "sum_to_target", X, p)
                  - brute.value(PI, SUM, X, p))
              for d in range(PI.length) for p in itertools.product(range(5), repeat=d))
    assert gap < 1e-12


def test_td_errors_of_the_exact_value_are_the_token_advantages():
    for seed in range(5):
        y = tuple(int(a) for a in PI.sample(X, 1, rng=seed)[0])
        r = concepts.step_rewards("sum_to_target", X, y)
        V = concepts.state_values(PI, "sum_to_target", X, y)
        np.testing.assert_allclose(V, [brute.value(PI, SUM, X, y[:t]) for t in range(4)], atol=1e-12)
        np.testing.assert_allclose(concepts.td_errors(r, V), brute.token_advantages(PI, SUM, X, y), atol=1e-12)


def test_a_constant_critic_puts_every_td_error_on_the_last_token():
    """The page: with V̂ = V(x) everywhere, δ_t is 0 until the last token, which gets r − V(x)."""
    y = tuple(int(a) for a in PI.sample(X, 1, rng=15)[0])
    r = concepts.step_rewards("sum_to_target", X, y)
    vx = brute.value(PI, SUM, X, ())
    delta = concepts.td_errors(r, np.full(4, vx))
    np.testing.assert_allclose(delta, [0, 0, 0, SUM(X, y) - vx], atol=1e-12)


def brute_lambda_return(r, v, t, lam, gamma):
    """The recursive form, independent of the n-step sum: G^λ_t = r_t + γ((1 − λ) V̂(s_{t+1}) + λ G^λ_{t+1}),
    with G^λ_L = 0 and V̂(s_L) = 0."""
    L = len(r)
    G = 0.0
    for u in reversed(range(t, L)):
        v_next = v[u + 1] if u + 1 < L else 0.0
        G = r[u] + gamma * ((1 - lam) * v_next + lam * G)
    return G


@pytest.mark.parametrize("lam,gamma", [(0.0, 1.0), (0.5, 1.0), (0.95, 1.0), (1.0, 1.0), (0.7, 0.9)])
def test_n_step_and_lambda_returns_and_gae(lam, gamma):
    rng = np.random.default_rng(2)
    r, v = rng.normal(size=5), rng.normal(size=5)
    for t in range(5):
        for n in range(1, 7):
            m = min(n, 5 - t)
            want = sum(gamma**k * r[t + k] for k in range(m)) + (gamma**n * v[t + n] if t + n < 5 else 0.0)
            assert concepts.n_step_return(r, v, t, n, gamma) == pytest.approx(want, abs=1e-12)
        assert concepts.lambda_return(r, v, t, lam, gamma) == pytest.approx(
            brute_lambda_return(r, v, t, lam, gamma), abs=1e-12)
    np.testing.assert_allclose(concepts.gae_from_lambda_returns(r, v, lam, gamma), toy.gae.gae(r, v, lam, gamma),
                               atol=1e-12)
    assert concepts.lambda_return(r, v, 0, 0.0, gamma) == pytest.approx(r[0] + gamma * v[1])  # TD(0)'s target
    assert concepts.lambda_return(r, v, 0, 1.0, gamma) == pytest.approx(concepts.returns(r, gamma)[0])


def test_the_lambda_return_of_a_terminal_reward_is_toy_bootstraps():
    critic = toy.critic.Critic(4, "last_token")
    critic.fit_returns(X, PI.sample(X, 64, rng=0), [SUM(X, tuple(int(a) for a in y)) for y in PI.sample(X, 64, rng=0)])
    tables = toy.bootstrap.critic_tables(critic, X, 4)
    R = toy.reward_table("sum_to_target", X, 4)
    for lam in (0.0, 0.6, 1.0):
        G = toy.bootstrap.lambda_returns(tables, R, lam)
        for y in [(3, 4, 0, 0), (1, 2, 3, 4), (0, 0, 0, 2)]:
            v = np.array([tables[t][y[:t]] for t in range(4)])
            r = concepts.step_rewards("sum_to_target", X, y)
            for t in range(4):
                assert concepts.lambda_return(r, v, t, lam) == pytest.approx(G[t][y], abs=1e-12)


def brute_prob(policy, y):
    return float(np.prod([policy.next_token_probs(X, y[:t])[y[t]] for t in range(len(y))]))


def test_token_ratios_multiply_to_the_sequence_weight_and_reweighting_is_unbiased():
    new = toy.reference_policy(temperature=0.5)
    for y in [(3, 4, 0, 0), (2, 4, 0, 3), (0, 1, 2, 3)]:
        rho = concepts.token_ratios(new, PI, X, y)
        assert np.prod(rho) == pytest.approx(brute_prob(new, y) / brute_prob(PI, y), rel=1e-12)
    # E_old[w r] = Σ_y π_old w r = Σ_y π_new r, by enumeration
    exact = sum(brute_prob(PI, y) * (brute_prob(new, y) / brute_prob(PI, y)) * SUM(X, y)
                for y in itertools.product(range(5), repeat=4))
    assert exact == pytest.approx(brute.value(new, SUM, X), abs=1e-12)
    # the sampled estimate lies within four standard errors, computed exactly
    P_old, P_new = PI.response_probs(X), new.response_probs(X)
    wr = P_new / P_old * toy.reward_table("sum_to_target", X, 4)
    se = np.sqrt(((P_old * wr**2).sum() - exact**2) / 2000)
    est = concepts.reweighted_mean(new, PI, "sum_to_target", X, 2000, rng=0)
    assert abs(est - exact) < 4 * se


def test_theta_is_one_logit_per_state_and_token():
    """The page: θ on the toy is 5 prompts × Σ_t 5^(t+1) logits."""
    tab = toy.TabularPolicy.from_policy(PI)
    assert sum(z.size for z in tab.logits) == 5 * sum(5 ** (t + 1) for t in range(4)) == 3900
    assert sum(z[0].size for z in tab.logits) == 780
    for y in [(3, 4, 0, 0), (0, 0, 0, 0)]:
        assert tab.prob(X, y) == pytest.approx(brute_prob(PI, y), rel=1e-12)


def test_ppo_run_is_train_ppo_and_heads_for_the_optimum_without_passing_it():
    run = concepts.ppo_run(steps=30, group_size=4, beta=0.05, epochs=4)
    curves = toy.train.train("ppo", steps=30, group_size=4, betas=(0.05,), seeds=(0, 1, 2, 3, 4), epochs=4,
                             clip=0.2, lam=0.95)
    np.testing.assert_allclose(run.reward, curves.reward[0].mean(axis=0))
    np.testing.assert_allclose(run.objective, run.reward - 0.05 * run.kl)
    # the page: the expected reward climbs, the KL grows from 0, and the objective stays below the optimum
    assert run.reward[-1] > run.reward[0] + 0.5 and run.kl[0] == pytest.approx(0, abs=1e-12) and run.kl[-1] > 1
    assert run.objective[-1] < run.optimum
    # the optimum is the largest E[r] − β·KL over policies: π* beats π_ref and the trained policy's mean objective
    best_r, best_kl = toy.train.optimum_metrics(0.05)
    assert run.optimum == pytest.approx(best_r - 0.05 * best_kl)
    # the page: PPO ends with less reward and more KL than π* (its E[r] and KL by enumeration below)
    assert run.reward[-1] < best_r and run.kl[-1] > best_kl


def test_the_optimum_the_page_quotes_is_pi_ref_tilted_by_exp_r_over_beta():
    """π*(y | x) ∝ π_ref(y | x)·exp(r(x, y)/β) over every response, its E[r] and KL(π* ‖ π_ref) averaged over
    the prompts, against toy.train.optimum_metrics."""
    beta, rewards, kls = 0.05, [], []
    for x in toy.PROMPTS:
        ys = list(itertools.product(range(5), repeat=PI.length))
        p_ref = np.array([np.prod([PI.next_token_probs(x, y[:t])[y[t]] for t in range(len(y))]) for y in ys])
        r = np.array([SUM(x, y) for y in ys], dtype=float)
        p_star = p_ref * np.exp(r / beta)
        p_star /= p_star.sum()
        rewards.append(p_star @ r)
        kls.append(p_star @ np.log(p_star / p_ref))
    got_r, got_kl = toy.train.optimum_metrics(beta)
    assert got_r == pytest.approx(np.mean(rewards), abs=1e-9) and got_kl == pytest.approx(np.mean(kls), abs=1e-9)


def test_bad_input_is_refused_in_words():
    r, v = np.zeros(4), np.zeros(4)
    with pytest.raises(ValueError, match="t"):
        concepts.n_step_return(r, v, 4, 1)
    with pytest.raises(ValueError, match="lam"):
        concepts.lambda_return(r, v, 0, 1.5)
    with pytest.raises(ValueError, match="critic_values"):
        concepts.td_errors(r, np.zeros(3))
    with pytest.raises(ValueError, match="prefix"):
        concepts.q_values(PI, "sum_to_target", X, (1, 2, 3, 4))
    with pytest.raises(ValueError, match="response"):
        concepts.step_rewards("sum_to_target", X, (1, 7))


def test_the_score_of_a_free_softmax_is_the_indicator_minus_the_distribution():
    """The page: ∂ log π(a | s)/∂θ_{s,b} = [a = b] − π(b | s), and 0 for the logits of any other state."""
    tab = toy.TabularPolicy.from_policy(PI)
    s, a, h = (3, 1), 4, 1e-6
    i = toy.PROMPTS.index(X)
    p = tab.next_token_probs(X, s)
    for b in range(5):
        for state in (s, (3, 2)):
            bumped = [np.array(z) for z in tab.logits]
            bumped[len(state)][(i,) + state + (b,)] += h
            moved = toy.TabularPolicy(bumped)
            got = (np.log(moved.next_token_probs(X, s)[a]) - np.log(p[a])) / h
            want = (a == b) - p[b] if state == s else 0.0
            assert got == pytest.approx(want, abs=1e-5)


def test_the_ppo_loop_on_the_page_uses_the_running_sum_critic_moved_halfway():
    """The page: PPO's critic holds 'one value per prompt, position, previous token and running digit sum mod 5',
    'each value moved halfway toward the mean of its new targets after every update'."""
    assert ppo.CRITIC_FEATURES == "running_sum"
    assert toy.critic.FEATURES["running_sum"] == "one value per prompt, position, previous token and digit sum mod 5"
    assert inspect.signature(ppo.TokenAdvantages).parameters["critic_lr"].default == 0.5
    assert inspect.signature(toy.train.train).parameters["critic_lr"].default == 0.5
    assert inspect.signature(toy.train.train).parameters["critic_features"].default is None  # → CRITIC_FEATURES


def test_per_token_ratios_give_the_gain_to_first_order_and_miss_it_at_second():
    """The page ('Why the objective is ρ_t Â_t'): E_old[Σ_t ρ_t A_old(s_t, y_t)] is the gain J(θ) − J(θ_old) to first
    order in the change of θ, and its error is of second order; brute force over all 625 responses."""
    rng = np.random.default_rng(0)
    old = toy.TabularPolicy.from_policy(PI)
    direction = [rng.normal(size=z.shape) for z in old.logits]
    ys = list(itertools.product(range(5), repeat=4))
    R = np.array([SUM(X, y) for y in ys], dtype=float)
    p_old = np.array([old.prob(X, y) for y in ys])
    adv = np.array([toy.token_advantages(old, "sum_to_target", X, y) for y in ys])
    errors = []
    for eps in (1e-2, 5e-3):
        new = toy.TabularPolicy([z + eps * d for z, d in zip(old.logits, direction, strict=True)])
        p_new = np.array([new.prob(X, y) for y in ys])
        rho = np.array([concepts.token_ratios(new, old, X, y) for y in ys])
        gain = p_new @ R - p_old @ R
        surrogate = p_old @ (rho * adv).sum(axis=1)
        assert abs(gain) > 10 * abs(gain - surrogate)
        errors.append(abs(gain - surrogate))
    assert errors[1] / errors[0] == pytest.approx(0.25, abs=0.05)  # halving the step quarters the error


# -- issue 49, round 5: why PPO ends with more KL and less reward than π* -------------------------------------------
def brute_split(policy, reference, reward, x):
    """KL(π ‖ π_ref) by enumeration, and its two parts computed each on its own: the KL between the distributions of
    the reward's value, and Σ_v π(r = v)·KL(π(· | r = v) ‖ π_ref(· | r = v))."""
    ys = list(itertools.product(range(5), repeat=reference.length))
    def prob(pi, y):
        return np.prod([pi.next_token_probs(x, y[:t])[y[t]] for t in range(len(y))])

    P, Q = np.array([prob(policy, y) for y in ys]), np.array([prob(reference, y) for y in ys])
    R = np.array([toy.REWARDS[reward](x, y) for y in ys], dtype=float)
    total = sum(p * np.log(p / q) for p, q in zip(P, Q, strict=True) if p > 0)
    across = within = 0.0
    for v in set(R.tolist()):
        m = R == v
        pv, qv = P[m].sum(), Q[m].sum()
        if pv > 0:
            across += pv * np.log(pv / qv)
            within += pv * sum(p / pv * np.log((p / pv) / (q / qv)) for p, q in zip(P[m], Q[m], strict=True) if p > 0)
    return total, across, within


@pytest.mark.parametrize("reward", ["sum_to_target", "count_target"])
def test_the_kl_split_adds_up_and_matches_brute_force(reward):
    tab = toy.TabularPolicy.from_policy(toy.reference_policy("knows_task", 0.7))
    for x in (0, 2, 4):
        total, across, within = brute_split(tab, PI, reward, x)
        got = concepts.kl_split(tab, PI, reward, x)
        assert got.across == pytest.approx(across, abs=1e-10) and got.within == pytest.approx(within, abs=1e-10)
        assert got.across + got.within == pytest.approx(total, abs=1e-10) and within > 0.01


@pytest.mark.parametrize("beta", [0.05, 0.3])
@pytest.mark.parametrize("reward", ["sum_to_target", "count_target"])
def test_the_optimum_spends_no_kl_within_a_reward_level(beta, reward):
    """π* ∝ π_ref·exp(r/β) rescales each reward level by one factor: all of its KL is across levels."""
    star = toy.kl.kl_regularised_optimum(PI, reward, beta)
    for x in toy.PROMPTS:
        split = concepts.kl_split(star, PI, reward, x)
        assert split.within == pytest.approx(0, abs=1e-9)
        assert split.across == pytest.approx(toy.kl.sequence_kl(star, PI, x), abs=1e-9)


def test_the_page_why_ppo_ends_further_away_and_lower():
    """Key concepts, "Why PPO ends further away and lower": PPO's KL splits into a part across reward levels and a
    part reshuffled within them (which π* does not have); exact gradient steps, with no sampling, still reshuffle
    after 300 updates with nearly every response correct; PPO's reward is still climbing at update 30."""
    run = concepts.ppo_run(steps=30, group_size=4, beta=0.05, epochs=4)
    assert run.split.across + run.split.within == pytest.approx(run.kl[-1], abs=1e-9)
    curves = toy.train.train("ppo", steps=30, group_size=4, betas=(0.05,), seeds=(0, 1, 2, 3, 4), epochs=4)
    split = np.mean([brute_split(curves.policy(0, s), PI, "sum_to_target", x)[1:] for s in range(5)
                     for x in toy.PROMPTS], axis=0)
    np.testing.assert_allclose([run.split.across, run.split.within], split, atol=1e-9)
    best_r, best_kl = toy.train.optimum_metrics(0.05)
    assert run.split.within > 1 and run.split.across < best_kl  # it reshuffles, and moves less mass than π*
    exact = toy.train.train("exact", steps=300, betas=(0.05,), seeds=(0,))
    within = np.mean([concepts.kl_split(exact.policy(0, 0), PI, "sum_to_target", x).within for x in toy.PROMPTS])
    assert exact.reward[0, 0, -1] > 0.98 and within > 1  # "nearly every response is correct", still reshuffled
    assert run.reward[20] < run.reward[30] < best_r  # "30 updates have not finished the climb"


def test_the_page_one_epoch_against_four_is_within_the_seeds_noise():
    """Key concepts, after "Edit and rerun": 1 epoch against 4 differs by less than the seeds' noise, over the page's
    5 seeds and over 20 (less than two standard errors of the difference)."""
    final = {e: toy.train.train("ppo", steps=30, betas=(0.05,), epochs=e, seeds=tuple(range(20))).reward[0, :, -1]
             for e in (1, 4)}
    se = np.sqrt(sum(f.var(ddof=1) / 20 for f in final.values()))
    assert abs(final[1].mean() - final[4].mean()) < 2 * se
    assert abs(final[1][:5].mean() - final[4][:5].mean()) < 2 * se
    assert final[1][:5].mean() == pytest.approx(concepts.ppo_run(epochs=1).reward[-1], abs=1e-12)
