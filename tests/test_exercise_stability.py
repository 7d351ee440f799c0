"""Issue 50: the kl-optimum exercise asks for a stable answer ("subtract the largest reward before exponentiating"),
and its check enforces it: a hidden case with a β so small that exp(r/β) overflows float64."""

from __future__ import annotations

import runpy
from pathlib import Path

import numpy as np
import pytest

import toy
from toy.exercises import check, hidden_cases
from toy.exercises.section42 import KL_OVERFLOW_SETTINGS

CALIBRATION = sorted((Path(__file__).parents[1] / "course" / "calibration" / "4.2-kl-optimum").glob("*.py"))


def unstable(policy, reward, prompt, beta):
    """The exercise's formula as written, without the shift: right for β of 0.05 and more, nan for small β."""
    p = policy.response_probs(prompt)
    r = toy.reward_table(reward, prompt, policy.length, policy.n_actions)
    w = p * np.exp(r / beta)
    return w / w.sum()


def stable(policy, reward, prompt, beta):
    p = policy.response_probs(prompt)
    r = toy.reward_table(reward, prompt, policy.length, policy.n_actions)
    w = p * np.exp((r - r.max()) / beta)
    return w / w.sum()


def test_the_overflow_cases_do_overflow_without_the_shift():
    cases = hidden_cases("4.2-kl-optimum", 0)[: len(KL_OVERFLOW_SETTINGS)]
    for case in cases:
        policy, reward, prompt, beta = case.args
        r = toy.reward_table(reward, prompt, policy.length, policy.n_actions)
        assert r.max() / beta > np.log(np.finfo(float).max)  # exp(r_max / β) is inf in float64
        with np.errstate(over="ignore", invalid="ignore"):
            assert not np.all(np.isfinite(unstable(*case.args)))
        assert np.all(np.isfinite(stable(*case.args)))


@pytest.mark.parametrize("seed", [0, 1, 7])
def test_an_unstable_answer_fails_and_a_stable_one_passes(seed):
    with np.errstate(over="ignore", invalid="ignore"):
        bad = check("4.2-kl-optimum", unstable, seed=seed)
    assert bad.status == "fail" and "case 1 of" in bad.message and "not all finite" in bad.message, bad.message
    good = check("4.2-kl-optimum", stable, seed=seed)
    assert good.status == "pass", good.message


def test_without_the_overflow_cases_the_unstable_answer_would_have_passed():
    """The random cases alone (β from 0.05) do not tell the two apart: the overflow cases are what catch it."""
    for case in hidden_cases("4.2-kl-optimum", 0)[len(KL_OVERFLOW_SETTINGS):]:
        np.testing.assert_allclose(unstable(*case.args), stable(*case.args), rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("path", CALIBRATION, ids=lambda p: p.stem)
def test_every_calibration_answer_is_stable_and_passes(path):
    fn = runpy.run_path(str(path))["kl_optimum"]
    result = check("4.2-kl-optimum", fn)
    assert result.status == "pass", (path.stem, result.message)
