"""The folded answers of 4.4's and 4.5's "Try this" boxes (round two of issue 39): each test fails if an answer
stopped agreeing with the explorer it is about, or if a Try this lost its folded answer."""

from __future__ import annotations

import functools
import json
import re
from pathlib import Path

import numpy as np
import pytest

import toy
from toy import estimators, train
from toy.page.explorers import critic_free as cf
from toy.page.explorers import pipeline

CHAPTER = Path(__file__).resolve().parents[1] / "chapters" / "04-the-llm-as-a-policy"
NB44 = "4.4-post-training-pipeline.ipynb"
NB45 = "4.5-connections.ipynb"


@functools.cache
def _markdown(name: str) -> str:
    nb = json.loads((CHAPTER / name).read_text(encoding="utf-8"))
    return "\n".join("".join(c["source"]) for c in nb["cells"] if c["cell_type"] == "markdown")


@functools.cache
def _code(name: str) -> str:
    nb = json.loads((CHAPTER / name).read_text(encoding="utf-8"))
    return "\n".join("".join(c["source"]) for c in nb["cells"] if c["cell_type"] == "code")


def _answer_after(markdown: str, start: str) -> str:
    """The folded answer right after the Try this that starts with ``start``."""
    i = markdown.index(start)
    rest = markdown[markdown.rindex("**Try this.**", 0, i):]
    m = re.match(r"\*\*Try this\.\*\*[^\n]*(?:\n[^\n]+)*\n\n```\{dropdown\} The answer\n(.*?)\n```", rest, re.S)
    assert m, f"no folded answer right after the Try this at {start!r}"
    return m.group(1)


def test_every_try_this_of_45_has_its_answer_folded_right_after_it():
    markdown = _markdown(NB45)
    starts = [m.start() for m in re.finditer(r"\*\*Try this\.\*\*", markdown)]
    assert len(starts) == 4
    for s in starts:
        assert re.match(r"\*\*Try this\.\*\*[^\n]*(?:\n[^\n]+)*\n\n```\{dropdown\} The answer\n", markdown[s:])


def test_44s_reworked_try_this_boxes_have_folded_answers_and_no_answer_in_the_running_text():
    markdown = _markdown(NB44)
    answer = _answer_after(markdown, "Switch to $n = 16$")
    assert "hard_expected_16" in answer and "hard_responses_16" in answer
    answer = _answer_after(markdown, "Switch to the closer teacher")
    assert "lr_kl_sft_1_4" in answer
    assert "The reason: SFT's coefficient" not in markdown


def test_the_reading_of_the_compounding_figure_comes_after_it_and_says_why_one_run_misses():
    nb = json.loads((CHAPTER / NB44).read_text(encoding="utf-8"))
    sources = ["".join(c["source"]) for c in nb["cells"]]
    fig = sources.index("pipeline.compounding_errors()")
    shown = [i for i in range(fig + 1, len(sources)) if nb["cells"][i]["cell_type"] == "markdown"]
    reading = sources[shown[0]]  # the first prose after the figure (hidden glue cells may sit between)
    assert "**Read the explorer's slopes**" in reading
    assert "sampling noise" in reading
    assert "Read the explorer's slopes" not in "\n".join(sources[:fig])
    assert "an expert label the states the learner visits" in sources[fig - 4] or \
        "an expert label the states the learner visits" in "\n".join(sources[:fig])


@functools.cache
def _hard(n: int):
    runs = pipeline.hard_prompt_runs("base", n)
    p = float(runs.reward[0, 0, 0])
    return p, runs.first_signal()[0]


def test_the_waiting_answer_fewer_steps_at_n16_but_about_as_many_responses():
    p, first = _hard(16)
    per_step = {n: 1 - (1 - p) ** n for n in (4, 16)}
    steps = {n: 1 / per_step[n] for n in (4, 16)}
    assert steps[16] < steps[4] / 3  # fewer steps
    responses = {n: n * steps[n] for n in (4, 16)}
    assert abs(responses[16] / responses[4] - 1) < 0.05  # "barely changes"
    assert responses[16] > responses[4]  # larger groups are not cheaper in samples
    assert 0 <= np.mean(first == 0) < 0.1
    code = _code(NB44)
    assert 'toy.glue("hard_never_16", int(np.sum(runs_16.first_signal()[0] == 0))' in code


def test_the_waiting_title_gives_the_runs_fraction_and_the_exact_chance_apart():
    ex = pipeline.waiting_for_signal()
    out = ex.evaluate(ex.state())
    p, first = _hard(4)
    assert float(np.squeeze(out["never_exact"])) == pytest.approx((1 - p) ** (4 * pipeline.HARD_STEPS))
    assert float(np.squeeze(out["never"])) == pytest.approx(np.mean(first == 0))
    assert float(np.squeeze(out["never"])) != pytest.approx(float(np.squeeze(out["never_exact"])), abs=0.01)
    title = ex.layout["title.text"]
    assert "{never_exact:.2f}" in title and "chance for one run" in title


def test_the_group_answer_a_lone_success_under_grpo():
    for n in (4, 16):
        lone = np.zeros(n)
        lone[0] = 1
        assert estimators.advantages("grpo", lone)[0] == pytest.approx((n - 1) / np.sqrt(n), rel=1e-3)
    for method in ("rloo", "reinforce", "dr_grpo", "grpo"):
        np.testing.assert_allclose(estimators.advantages(method, np.full(4, 0.7)), 0, atol=1e-12)
    assert np.all(estimators.advantages("remax", np.full(4, 1.0), 0.0) == 1.0)


def test_the_group_title_shows_the_division_by_the_std():
    ex = cf.group_advantages()
    out = ex.evaluate(ex.state(method="grpo"))
    a1, r1 = float(np.squeeze(out["a1"])), float(np.squeeze(out["r1"]))
    b, d = float(np.squeeze(out["baseline"])), float(np.squeeze(out["divisor"]))
    assert d != pytest.approx(1.0) and (r1 - b) / d == pytest.approx(a1)
    assert float(np.squeeze(ex.evaluate(ex.state(method="rloo"))["divisor"])) == 1.0
    assert "/ {divisor_shown} =" in ex.layout["title.text"] and float(np.squeeze(out["divisor_shown"])) == float(
        f"{d:.3g}")
    # a group of equal rewards: GRPO shows its ε, not a 0 / 0.000 (the newcomer's read); the others divide by 1
    equal = next(g for g in range(cf.N_GROUPS) if len(set(cf.sample_group("sum_to_target", g)[1][:2])) == 1)
    same = ex.evaluate(ex.state(method="grpo", n=2, group=equal))
    assert ex.render_template("{divisor_shown}", same, {}) == "0.0001" and float(np.squeeze(same["a1"])) == 0.0
    rloo = ex.evaluate(ex.state(method="rloo"))
    assert ex.render_template("/ {divisor_shown} =", rloo, {}) == "/ 1 ="


def test_the_variance_answer_count_targets_angle_and_first_tokens_crossing():
    count = cf.gradient_statistics("count_target", "pretrained")
    assert count["angle_grpo"][0] > 3  # not zero at n = 2
    assert count["angle_grpo"].max() - count["angle_grpo"].min() < 2  # stays in a narrow band
    first = cf.gradient_statistics("first_token", "pretrained")
    sizes = cf.VARIANCE_SIZES
    below = np.flatnonzero(first["rel_rloo"] < first["rel_remax"])
    assert below.size and (np.diff(below) == 1).all() and below[-1] == len(sizes) - 1  # from n on, for good
    i4 = sizes.index(4)
    assert abs(first["rel_rloo"][i4] - first["rel_remax"][i4]) < 0.05  # "nearly level" at n = 4 ...
    assert first["rel_remax"][i4] < first["rel_rloo"][i4]  # ... ReMax "still a little ahead" (lower variance)


def test_the_ppo_answer_lambda_0_is_best_for_both_critics():
    ex = cf.value_estimates()
    for features, n_data in (("tabular", 1024), ("prompt", 256)):
        tot = [float(np.squeeze(ex.evaluate(ex.state(features=features, n_data=n_data, lam=lam))["tot_critic"]))
               for lam in cf.LAMBDAS]
        assert int(np.argmin(tot)) == cf.LAMBDAS.index(0.0), features
        assert tot[cf.LAMBDAS.index(0.0)] < tot[cf.LAMBDAS.index(1.0)] / 3, features
    assert "Error summed over tokens, mean" in ex.layout["title.text"]


@pytest.mark.slow
def test_the_training_answer_no_method_reaches_the_optimum_at_beta_05_and_the_drift_at_n2():
    b = cf.BETAS.index(0.5)
    opt_r, _ = train.optimum_metrics(0.5)
    for method in cf.TRAIN_METHODS:
        assert cf.training_runs(method, 4).reward[b, :, -1].mean() < opt_r, method
    exact = cf.training_runs("exact", 4).reward[b, 0]
    assert exact[-1] - exact[-11] > 0.01  # still climbing
    kl2 = {m: float(cf.training_runs(m, 2).kl[b, :, -1].mean()) for m in ("rloo", "grpo", "reinforce")}
    assert kl2["rloo"] > kl2["grpo"] > kl2["reinforce"]  # longer steps, further drift
    assert kl2["rloo"] > 3 * float(cf.training_runs("rloo", 4).kl[b, :, -1].mean())
    r = np.array([1.0, 0.0])
    np.testing.assert_allclose(estimators.advantages("rloo", r), 2 * estimators.advantages("reinforce", r))
    assert abs(estimators.advantages("grpo", r)[0]) == pytest.approx(1 / np.sqrt(2), rel=1e-3)
    assert toy.train.LABELS  # the answer names the best method by its label


def test_the_advantages_exercise_states_the_hidden_group_sizes_per_method():
    """Exercise 4.5-advantages: 'The hidden groups hold 2 to 16 responses for "rloo" and "grpo" and 1 to 16 for
    "remax"' (GRPO's sample standard deviation needs n ≥ 2): the hidden cases keep to it, at both ends."""
    from toy.exercises import section45
    assert 'hold 2 to 16 responses for `"rloo"` and `"grpo"` and 1 to 16 for `"remax"`' in _markdown(NB45)
    sizes = {}
    for seed in range(50):
        for case in section45._advantage_cases(np.random.default_rng(seed)):
            method, rewards, _ = case.args
            sizes.setdefault(method, set()).add(len(rewards))
    assert min(sizes["rloo"]) == min(sizes["grpo"]) == 2 and min(sizes["remax"]) == 1
    assert max(max(s) for s in sizes.values()) == 16


def test_the_format_gate_try_this_answer_eight_demonstrations_copy_their_contents():
    """4.4's format-gated Try this: 'No: after … steps it ends at …, against … after 64 demonstrations (the title's
    last number). The eight still teach the format (… readable, against …), but SFT also copies their contents: only
    … of its responses have the right sum, against the base model's … and … after 64'."""
    answer = _answer_after(_markdown(NB44), "Cut the demonstrations to 8 per prompt")
    for key in ("fmt_end_mean_8", "fmt_end_mean_64", "fmt_sft_8", "fmt_task_sft_8", "fmt_task_base"):
        assert f'toy.quote("{key}"' in answer
    base = toy.reference_policy()
    sft8, sft64 = (toy.format_gate.format_sft(base, n) for n in (8, 64))
    end8 = pipeline.format_runs("sft", True, 8).reward[0, :, -1].mean()
    end64 = pipeline.format_runs("sft", True, 64).reward[0, :, -1].mean()
    ex = pipeline.format_gated()
    assert ex.evaluate(ex.state(n=8))["end_sft"][0] == pytest.approx(end8)  # 'the title's last number'
    assert end8 < 0.5 * end64  # 'No'
    readable = toy.format_gate.format_rate
    assert readable(sft8) > 0.8 and readable(sft8) > 10 * readable(base)  # 'still teach the format'
    task = toy.sft.success_rate
    assert task(sft8, "sum_to_target") < task(base, "sum_to_target")  # 'only …, against the base model's …'
    assert task(sft8, "sum_to_target") < task(sft64, "sum_to_target")  # '… and … after 64'
