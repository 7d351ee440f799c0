"""Section 4.5's explorers show what toy computes (checked against toy directly, and the closed forms)."""

import json
from pathlib import Path

import numpy as np
import pytest

import toy
from toy import estimators
from toy.page.explorers import critic_free as cf

NB45 = Path(__file__).resolve().parents[1] / "chapters" / "04-the-llm-as-a-policy" / "4.5-connections.ipynb"


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
    for preset in toy.PRESETS:
        fig = ex.figure_for(reward="sum_to_target", preset=preset)
        by_name = {}
        for trace in fig.data:
            by_name.setdefault(trace.name.replace("<br>", " "), []).append(np.asarray(trace.y))
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
    steps, marks = list(cf.CURVE_STEPS), list(cf.CHECKPOINTS)
    for beta in (cf.BETAS[0], cf.BETAS[-1]):
        fig = ex.figure_for(method="grpo", n=cf.TRAIN_SIZES[-1], beta=beta)
        runs = cf.training_runs("grpo", cf.TRAIN_SIZES[-1])
        b = cf.BETAS.index(beta)
        mean, sd = runs.reward[b].mean(axis=0), runs.reward[b].std(axis=0, ddof=1)
        by_name = {}
        for trace in fig.data:
            by_name.setdefault(trace.name.replace("<br>", " "), []).append(trace)
        np.testing.assert_allclose(by_name["GRPO"][0].y, mean[steps])
        np.testing.assert_array_equal(by_name["GRPO"][0].x, steps)
        sel = by_name["chosen: mean ± 1 sd over seeds"]
        np.testing.assert_array_equal(sel[0].x, marks)
        np.testing.assert_allclose(sel[0].y, mean[marks])
        np.testing.assert_allclose(sel[0].error_y.array, sd[marks])
        np.testing.assert_allclose(sel[1].y, runs.kl[b].mean(axis=0)[marks])
        opt = by_name["KL-regularised optimum π*"]
        np.testing.assert_allclose(opt[0].y, toy.train.optimum_metrics(beta)[0])
        np.testing.assert_allclose(opt[1].y, toy.train.optimum_metrics(beta)[1])
        assert f"E[r] = {mean[-1]:.3f}" in fig.layout.title.text
    # The exact gradient samples nothing: its curve is the same for every group size, and has no spread.
    exact = [ex.figure_for(method="exact", n=n).data[1] for n in cf.TRAIN_SIZES]
    assert exact[0].name == "exact gradient" and all(np.array_equal(e.y, exact[0].y) for e in exact)
    np.testing.assert_allclose(ex.figure_for(method="exact").data[-1].error_y.array, 0.0, atol=1e-12)


def test_training_curves_series_differ_by_more_than_colour():
    """In each panel, no two series share a line dash and width (or a marker): colour is never the only cue."""
    fig = cf.training_curves().figure
    panels = {}
    for trace in fig.data:
        look = (trace.mode, trace.line.dash, trace.line.width, trace.marker.symbol)
        panels.setdefault(trace.xaxis, []).append(look)
    for looks in panels.values():
        assert len(looks) == len(set(looks)) == len(cf.TRAIN_METHODS) + 2


def test_training_curves_fit_the_page():
    """The precomputed view stays small: the whole 4.5 page has a budget of 2 MB, most of it the shared theme."""
    assert len(cf.training_curves().static_html()) < 60_000


def test_the_estimator_variance_try_this_is_answered_only_by_moving_the_explorer():
    """Issue 39: the bias-and-variance explorer's "Try this" asks what the page's text does not say, and the figure
    answers it. (1) Under count target (rewards 0 to 4) GRPO's angle to ∇J is already there at n = 2 and barely
    changes with n, while under sum to target with π_ref `terse` it starts at zero and grows. (2) Under first token
    ReMax is the less noisy at n = 2, the two meet at about n = 4, and RLOO is ahead from n = 6 on."""
    ex = cf.estimator_variance()
    ns = list(cf.VARIANCE_SIZES)

    def panel(fig, name, row):  # row 0: relative variance, 1: scale, 2: angle
        return np.asarray([t.y for t in fig.data if t.name.replace("<br>", " ") == name][row])

    count = panel(ex.figure_for(reward="count_target", preset="pretrained"), "GRPO", 2)
    assert count[0] > 5 and count.max() / count.min() < 1.2
    terse = panel(ex.figure_for(reward="sum_to_target", preset="terse"), "GRPO", 2)
    assert terse[0] < 0.01 and terse[-1] > 5 and np.all(np.diff(terse) > -1e-9)
    fig = ex.figure_for(reward="first_token", preset="pretrained")
    remax, rloo = panel(fig, "ReMax", 0), panel(fig, "RLOO", 0)
    assert remax[0] < 0.8 * rloo[0]
    assert abs(remax[ns.index(4)] / rloo[ns.index(4)] - 1) < 0.01
    assert np.all(remax[ns.index(6):] > rloo[ns.index(6):])
    markdown = "\n".join("".join(c["source"]) for c in json.loads(NB45.read_text(encoding="utf-8"))["cells"]
                         if c["cell_type"] == "markdown")
    ask = markdown[markdown.index("**Try this.** Predict, then switch."):]
    ask = ask[:ask.index("###")]
    for words in ("count target", "zero at $n = 2$", "`terse`", "first token", "RLOO less noisy than ReMax"):
        assert words in ask, words
