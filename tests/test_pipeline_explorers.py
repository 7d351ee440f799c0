"""Section 4.4's explorers show what toy computes (checked against toy directly, and the closed forms)."""

import numpy as np
import pytest

import toy
from toy.page.explorers import pipeline


def test_compounding_errors_curves_and_readout():
    ex = pipeline.compounding_errors()
    for eps in (pipeline.EPSILONS[0], 0.01, pipeline.EPSILONS[-1]):
        for T in (pipeline.HORIZONS[0], pipeline.HORIZONS[-1]):
            fig = ex.figure_for(eps=eps, T=T)
            T_grid = pipeline.CURVE_T
            np.testing.assert_allclose(fig.data[1].y, [toy.imitation.behaviour_cloning_cost(eps, int(t))
                                                       for t in T_grid], rtol=1e-10)
            np.testing.assert_allclose(fig.data[2].y, eps * T_grid)
            np.testing.assert_allclose(fig.data[6].y, [toy.imitation.behaviour_cloning_cost(eps, T), eps * T])
            # The simulation agrees with the exact curve within its (two standard error) bars, mostly.
            exact = [toy.imitation.behaviour_cloning_cost(eps, int(t)) for t in pipeline.SIM_T]
            inside = np.abs(np.asarray(fig.data[4].y) - exact) <= 2 * np.asarray(fig.data[4].error_y.array) + 1e-12
            assert inside.mean() >= 0.7
            assert f"T = {T}" in fig.layout.title.text


def test_sft_then_rl_starts_at_the_sft_policy_and_marks_the_expert():
    ex = pipeline.sft_then_rl()
    for base in pipeline.BASES:
        for rho in (pipeline.RHOS[0], pipeline.RHOS[-1]):
            fig = ex.figure_for(base=base, rho=rho, n_demos=pipeline.N_DEMOS[-1])
            pi_sft, demo_rate = pipeline.sft_policy(base, rho, pipeline.N_DEMOS[-1])
            assert fig.data[1].y[0] == pytest.approx(toy.sft.success_rate(pi_sft, "sum_to_target"))
            np.testing.assert_allclose(fig.data[4].y, rho)
            np.testing.assert_allclose(fig.data[5].y, demo_rate)
            assert fig.data[3].y[0] == pytest.approx(toy.sft.success_rate(pipeline.base_policy(base), "sum_to_target"))
    # Each band is in its line's legend group, so the two series differ by the line's dash, not by colour only.
    assert [(t.legendgroup, t.line.dash) for t in fig.data[:4:2]] == [("sft", None), ("base", None)]
    assert [(t.legendgroup, t.line.dash) for t in fig.data[1:4:2]] == [("sft", "solid"), ("base", "dash")]
    # On the sharp base, RL from SFT ends above the expert and above RL from the base.
    fig = ex.figure_for(base="sharp", rho=0.5, n_demos=64)
    assert fig.data[1].y[-1] > 0.5 and fig.data[1].y[-1] > fig.data[3].y[-1]


def test_waiting_for_signal_exact_curve():
    ex = pipeline.waiting_for_signal()
    base = pipeline.base_policy("sharp")
    p = toy.value(base, "sum_to_target", pipeline.HARD_PROMPT)
    for n in pipeline.GROUPS:
        fig = ex.figure_for(start="base", n=n)
        k = np.arange(pipeline.HARD_STEPS + 1)
        np.testing.assert_allclose(fig.data[pipeline.SHOWN_SEEDS + 2].y, (1 - p) ** (n * k), rtol=1e-10)
        assert fig.data[0].y[0] == pytest.approx(p)
    fig = ex.figure_for(start="sft", n=2)
    assert fig.data[pipeline.SHOWN_SEEDS + 1].y[-1] == 0.0  # every run from SFT has seen a success
