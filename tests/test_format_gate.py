"""The format-gated reward of section 4.4 (toy.format_gate) against brute force, and the claims the text makes."""

import itertools

import numpy as np
import pytest

import toy
from tests import brute
from toy import format_gate as F
from toy.page.explorers import pipeline


def test_gated_reward_is_the_task_reward_on_readable_responses_only():
    r = F.gated("sum_to_target")
    assert F.gated("sum_to_target") is r  # cached: one function object per reward
    for y in itertools.product(range(5), repeat=4):
        task = toy.REWARDS["sum_to_target"](2, y)
        assert r(2, y) == (task if y[-2:] == (4, 4) else 0.0)


def test_format_rate_against_brute_force():
    pi = toy.reference_policy()
    want = np.mean([sum(p for y, p in brute.completions(pi, x, ()) if y[-2:] == (4, 4)) for x in toy.PROMPTS])
    assert F.format_rate(pi) == pytest.approx(want, rel=1e-10)


def test_sft_on_readable_demonstrations_without_prior_is_always_readable():
    pi = toy.reference_policy()
    assert F.format_rate(F.format_sft(pi, 16, prior_strength=0.0)) == pytest.approx(1.0)
    with pytest.raises(ValueError, match="n_demos must be an integer"):
        F.format_sft(pi, 0)
    with pytest.raises(ValueError, match="unknown task_reward"):
        F.rl_curves(pi, "nonsense")


def test_section_4_4_claims():
    base = toy.reference_policy()
    sft64 = F.format_sft(base, 64)
    assert F.format_rate(base) < 0.01
    assert F.format_rate(sft64) > 0.9
    # SFT teaches the format, not the task
    assert toy.sft.success_rate(sft64, "sum_to_target") <= toy.sft.success_rate(base, "sum_to_target")

    def end(start, gate, n=None):
        return pipeline.format_runs(start, gate, n).reward[0, :, -1].mean()

    assert end("base", True) < 0.1
    assert end("sft", True, 64) > 0.9
    assert end("base", False) > 0.9  # the task was never the obstacle
    assert end("sft", True, 8) < end("sft", True, 64)
