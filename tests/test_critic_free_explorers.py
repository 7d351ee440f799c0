"""Section 4.5's explorers show what toy computes (checked against toy directly, and the closed forms)."""

import numpy as np
import pytest

import toy
from toy import estimators
from toy.explorers import critic_free as cf


@pytest.mark.parametrize("method", list(estimators.METHODS))
def test_group_advantages_are_the_methods_formulas(method):
    ex = cf.group_advantages()
    pi = toy.reference_policy()
    for n in (cf.GROUP_SIZES[0], cf.GROUP_SIZES[-1]):
        for reward in ("sum_to_target", "count_target"):
            fig = ex.figure_for(method=method, n=n, reward=reward, group=3)
            ys = pi.sample(cf.PROMPT, cf.N_MAX, rng=np.random.default_rng(1003))[:n]
            R = toy.reward_table(reward, cf.PROMPT, 4)
            r = R[tuple(ys.T)]
            greedy = R[estimators.greedy_response(pi, cf.PROMPT)]
            np.testing.assert_allclose(fig.data[3].y[:n], estimators.advantages(method, r, greedy))
            np.testing.assert_allclose(fig.data[4].y[:n], r - toy.value(pi, reward, cf.PROMPT))
            np.testing.assert_allclose(fig.data[0].y, toy.token_advantages(pi, reward, cf.PROMPT, ys[0]))
            assert np.all(np.asarray(fig.data[3].y[n:]) == fig.data[3].y[n - 1])


def test_estimator_variance_scales():
    ex = cf.estimator_variance()
    ns = np.array(cf.VARIANCE_SIZES)
    for preset in ("pretrained", "tuned"):
        fig = ex.figure_for(reward="sum_to_target", preset=preset)
        by_name = {}
        for trace in fig.data:
            by_name.setdefault(trace.name, []).append(np.asarray(trace.y))
        np.testing.assert_allclose(by_name["RLOO"][1], 1.0, atol=1e-12)
        np.testing.assert_allclose(by_name["ReMax"][1], 1.0, atol=1e-12)
        np.testing.assert_allclose(by_name["REINFORCE (mean)"][1], 1 - 1 / ns, atol=1e-12)
        np.testing.assert_allclose(by_name["REINFORCE (mean)"][0], by_name["RLOO"][0], rtol=1e-9)
        # GRPO along ∇J: the prompts' c(n, p) weighted by their ‖∇J_x‖².
        pi = toy.TabularPolicy.from_policy(toy.reference_policy(preset))
        norms = np.array([np.sum(estimators.exact_policy_gradient(pi, "sum_to_target", x) ** 2) for x in toy.PROMPTS])
        ps = [toy.value(pi, "sum_to_target", x) for x in toy.PROMPTS]
        want = [sum(estimators.grpo_scale(int(n), p) * w for p, w in zip(ps, norms, strict=True)) / norms.sum()
                for n in ns]
        np.testing.assert_allclose(by_name["GRPO"][1], want, rtol=1e-9)
        np.testing.assert_allclose(by_name["RLOO"][2], 0.0, atol=1e-5)


def test_value_estimates_errors_are_the_closed_forms():
    ex = cf.value_estimates()
    pi = toy.reference_policy()
    for reward in ("sum_to_target", "first_token"):
        for lam in (cf.LAMBDAS[0], cf.LAMBDAS[-1]):
            for k in (cf.VINE_K[0], cf.VINE_K[-1]):
                fig = ex.figure_for(reward=reward, lam=lam, k=k, response=5)
                np.testing.assert_allclose(fig.data[4].y, toy.gae.gae_exact_value_errors(pi, reward, cf.PROMPT, lam))
                np.testing.assert_allclose(fig.data[5].y, toy.gae.vine_errors(pi, reward, cf.PROMPT, k))
                np.testing.assert_allclose(fig.data[6].y, toy.credit_by_position(pi, reward, cf.PROMPT)[1])
                y = tuple(int(a) for a in cf._responses()[5])
                np.testing.assert_allclose(fig.data[0].y, [toy.value(pi, reward, cf.PROMPT, y[:t]) for t in range(5)])
    # λ = 0 with the exact values has no error at all.
    assert np.allclose(ex.figure_for(lam=0.0).data[4].y, 0.0)


def test_training_curves_show_the_runs_and_the_optimum():
    ex = cf.training_curves()
    for beta in (cf.BETAS[0], cf.BETAS[-1]):
        fig = ex.figure_for(method="grpo", n=cf.TRAIN_SIZES[-1], beta=beta)
        runs = cf.training_runs("grpo", cf.TRAIN_SIZES[-1])
        b = cf.BETAS.index(beta)
        mean = runs.reward[b].mean(axis=0)[:: cf.STRIDE]
        sel = [t for t in fig.data if t.name == "chosen method: mean"]
        np.testing.assert_allclose(sel[0].y, mean)
        opt = [t for t in fig.data if t.name == "KL-regularised optimum π*"]
        np.testing.assert_allclose(opt[0].y, toy.train.optimum_metrics(beta)[0])
        np.testing.assert_allclose(opt[1].y, toy.train.optimum_metrics(beta)[1])
