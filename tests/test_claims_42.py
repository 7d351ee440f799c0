"""Section 4.2's claims about random experiments, over seeds (issue 32), and the reward model's input checks.

Every number 4.2 quotes from a sampled experiment is glued as a ``toy.seeds`` Spread or Rate over 20 seeds, or names
its seed (the explorers' runs: seed 0, comparison sets 1 and 2 = seeds 0 and 1). These tests recompute the per-seed
outcomes and assert what each sentence says about them, so a change to toy that made a sentence false fails here.
They also pin the Goodhart paragraph's citations and ``ProxyReward``'s refusal of a response it cannot score.
"""

from __future__ import annotations

import functools
import inspect
import json
import re
from pathlib import Path

import numpy as np
import pytest

import toy
from toy.page.explorers import easy_hard
from toy.reward_models import ProxyReward, optimisation_curve

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOK = ROOT / "chapters" / "04-the-llm-as-a-policy" / "4.2-easy-and-hard.ipynb"
X = 2
SEEDS = range(20)  # as the notebook's RESET_SEEDS and GOODHART_SEEDS (checked below)
RIGHT = 0.99  # "ends at a right response": the true reward at the curve's end (its smallest β) is above this


@functools.cache
def _cells() -> dict[str, str]:
    nb = json.loads(NOTEBOOK.read_text(encoding="utf-8"))
    return {c["id"]: "".join(c["source"]) for c in nb["cells"]}


def _markdown() -> str:
    nb = json.loads(NOTEBOOK.read_text(encoding="utf-8"))
    return "\n".join("".join(c["source"]) for c in nb["cells"] if c["cell_type"] == "markdown")


def _code() -> str:
    nb = json.loads(NOTEBOOK.read_text(encoding="utf-8"))
    return "\n".join("".join(c["source"]) for c in nb["cells"] if c["cell_type"] == "code")


def test_the_notebook_computes_over_the_seeds_these_tests_check():
    code = _code()
    assert "RESET_SEEDS = range(20)" in code and "GOODHART_SEEDS = range(20)" in code
    # the quoted numbers from random experiments are glued from toy.seeds (a Spread or a Rate), not from one run
    over_seeds = ["rmse9", "reset_slope", "gh_collapse", "gh_right100", "gh_right_before", "gh_add_high300",
                  "gh_add_high1000", "gh_add_end300", "gh_add_end3000", "ex_tab_right10", "ex_tab_right100"]
    statements = {}
    for name, value in re.findall(r'toy\.glue\((f?"[^"]+"), (.*?)display=False\)', code, re.S):
        for n in (300, 1000, 3000):
            statements[name.lstrip("f").strip('"').replace("{n}", str(n))] = value
    for name in over_seeds:
        assert name in statements, name
        assert "toy.seeds." in statements[name] or "ends_right(" in statements[name], name
    assert re.search(r"def ends_right\(.*?toy\.seeds\.rate\(", code, re.S)
    quoted = set(re.findall(r'toy\.quote\("(\w+)"', _markdown()))
    assert set(over_seeds) <= quoted


# -- resets: the Monte Carlo error of 20 repeats, and its 1/√K slope, over seeds -------------------------------------
@functools.cache
def _resets():
    pi_ref = toy.reference_policy()
    return {s: toy.resets.reset_estimates(pi_ref, "sum_to_target", X, (1, 2), easy_hard.RESET_KS,
                                          easy_hard.RESET_REPEATS, rng=s) for s in SEEDS}


def test_measured_reset_error_follows_the_exact_one_over_seeds():
    """4.2: 'the error at K = 9 comes out at …' (over 20 seeds), against the exact …; 'at `1 2` the dots close in on
    the line at that rate: a straight line fitted … has slope … against the exact −1/2'."""
    runs = _resets()
    _, var = toy.resets.value_and_variance(toy.reference_policy(), "sum_to_target", X, (1, 2))
    rmse9 = toy.seeds.over_seeds(lambda s: runs[s].rmse[easy_hard.RESET_KS.index(9)], SEEDS)
    assert rmse9.mean == pytest.approx(np.sqrt(var / 9), rel=0.1)
    assert rmse9.lo < np.sqrt(var / 9) < rmse9.hi
    log_ks = np.log(easy_hard.RESET_KS)
    slope = toy.seeds.over_seeds(lambda s: np.polyfit(log_ks, np.log(runs[s].rmse), 1)[0], SEEDS)
    assert abs(slope.mean + 0.5) < 0.03
    assert -0.65 < slope.lo and slope.hi < -0.35
    assert "one seeded run (seed 0)" in _cells()["c02"]


# -- resets: the Try this's answer, read off the explorer's title ----------------------------------------------------
def test_the_reset_error_is_not_smallest_at_the_deepest_state_but_where_v_is_far_from_a_half():
    """4.2's Try this (issue 39): 'Set τ = 0.316 and predict first: does the error at K = 9 (the title) shrink as the
    state gets deeper?' Its answer (folded): not steadily; it rises from `x` to `x · 1`, then falls to `x · 1 2` and
    `x · 1 2 3`, because one rollout's spread is √(V(1 − V)). Read off the explorer's own title figures (the exact
    error in brackets)."""
    t = easy_hard.RESET_TEMPERATURES[1]
    assert f"{t:.3g}" == "0.316" and "$\\tau = 0.316$" in _cells()["try-resets"]
    ex = easy_hard.resets_explorer(prompt=X)
    se = {p: float(ex.evaluate(ex.state(prefix=p, temperature=t))["se9"][0]) for p in easy_hard.PREFIXES}
    assert se[(1,)] > se[()] > se[(1, 2)] > se[(1, 2, 3)]  # not monotone in the depth, though lower at the end
    policy = toy.reference_policy(temperature=t)
    v = {p: toy.resets.value_and_variance(policy, "sum_to_target", X, p)[0] for p in easy_hard.PREFIXES}
    assert max(se, key=se.get) == min(v, key=lambda p: abs(v[p] - 0.5))  # the state whose V is nearest one half
    for p in easy_hard.PREFIXES:
        assert se[p] == pytest.approx(np.sqrt(v[p] * (1 - v[p]) / 9), rel=1e-9)
    answer = next(c for c in _cells().values() if c.startswith("```{dropdown} The answer, and why"))
    for name in ("cool_se_x", "cool_se_x1", "cool_se_x12", "cool_se_x123", "cool_v_x1"):
        assert f'toy.quote("{name}"' in answer, name
    assert "`x · 1 2 3`" in _cells()["try-resets"] and answer.split("\n")[1].startswith("Not steadily.")


# -- the action space and sparse reward: static figures (issue 39: their controls taught nothing) --------------------
def test_the_action_space_figure_counts_responses_beyond_any_enumeration():
    """4.2: 'at 1,000 tokens even 0.05 nats per token leaves about ten to the power … responses in play'. The static
    figure draws log10 |V|^T for GPT-2 and log10 e^(hT) for each entropy; every line is beyond enumeration (10^20)
    at 1,000 tokens, and the most concentrated lies some 4,700 orders of magnitude below all responses."""
    fig = easy_hard.action_space_figure()
    T = np.asarray(fig.data[0].x, dtype=float)
    i = int(np.flatnonzero(T == 1000)[0])
    assert fig.data[0].y[i] == pytest.approx(1000 * np.log10(50_257))
    for trace, h in zip(fig.data[1:4], easy_hard.ENTROPIES, strict=True):
        np.testing.assert_allclose(trace.y, T * h / np.log(10))
        assert trace.y[i] > 20
    assert fig.data[0].y[i] - fig.data[3].y[i] > 4000
    assert "10^22" in fig.layout.title.text and easy_hard.ENTROPIES[-1] == 0.05
    assert not hasattr(easy_hard, "action_space_explorer") and "action_space" not in easy_hard.EXPLORERS


def test_the_sparse_reward_figure_shows_sharp_wrong_priors_waiting_orders_of_magnitude_longer():
    """4.2: 'Cooling a prior that knows the task shortens the wait. Cooling the confidently wrong one stretches it
    from … samples at τ = 1 to about … at τ = 0.32.' The static figure draws 1/p against τ for three priors."""
    fig = easy_hard.sparse_reward_figure(prompt=X)
    ts = list(easy_hard.TEMPERATURES)
    lines = {t.name: np.asarray(t.y, dtype=float) for t in fig.data}
    assert list(lines) == [p.replace("_", " ") for p in easy_hard.WAIT_PRESETS]
    for preset in easy_hard.WAIT_PRESETS:
        p = [toy.exploration.success_probability(toy.reference_policy(preset, t), "sum_to_target", X) for t in ts]
        np.testing.assert_allclose(lines[preset.replace("_", " ")], 1 / np.array(p), rtol=1e-12)
    knows, wrong = lines["knows task"], lines["confidently wrong"]
    one, low = ts.index(1.0), ts.index(toy.explorers.TEMPERATURES[2])
    assert np.all(np.diff(knows) > 0)  # colder (to the left) is shorter
    assert wrong[low] > 1000 * wrong[one]  # orders of magnitude
    assert not hasattr(easy_hard, "sparse_reward_explorer") and "sparse_reward" not in easy_hard.EXPLORERS


# -- drift: the Try this's answer, read off the explorer ---------------------------------------------------------------
def test_the_drift_curve_ends_furthest_where_pi_ref_earns_the_reward_least():
    """4.2's Try this (issue 39): with the first-token reward, 'on which prompt must the policy move furthest from
    π_ref before it is always right? The title gives π_ref's own chance of the reward: how does it predict the
    answer?' Answer (folded): prompt 4, where π_ref earns the reward least; its curve ends −log p nats out. Read off
    the explorer's outputs."""
    assert "$\\pi_{\\text{ref}}$'s own chance of the reward" in _cells()["try-drift"]
    ex = easy_hard.drift_explorer()
    assert {c.name for c in ex.controls} == {"reward", "prompt"}
    shown = {p: ex.evaluate(ex.state(reward="first_token", prompt=p)) for p in toy.PROMPTS}
    end = {p: float(o["kl"][-1]) for p, o in shown.items()}
    r0 = {p: float(o["r0"][0]) for p, o in shown.items()}
    far = max(end, key=end.get)
    assert far == min(r0, key=r0.get) == 4
    assert end[far] == pytest.approx(-np.log(r0[far]), abs=0.01) and shown[far]["r_end"][0] > 0.99
    # the marked points are β = 1 and 0.1, the text's numbers
    c = optimisation_curve(toy.reference_policy(), "sum_to_target", "sum_to_target", X, [1.0, 0.1])
    marks = ex.evaluate(ex.state(reward="sum_to_target", prompt=X))
    np.testing.assert_allclose(marks["kl_marks"], c.kl, rtol=1e-9)
    np.testing.assert_allclose(marks["r_marks"], c.true, rtol=1e-9)
    # 'Each nat of drift buys less reward than the one before': the curve is concave, on every reward and prompt
    for reward in easy_hard.REWARD_LABELS:
        if reward not in ("sum_to_target", "first_token"):
            continue
        for p in toy.PROMPTS:
            o = ex.evaluate(ex.state(reward=reward, prompt=p))
            kl, r = np.asarray(o["kl"]), np.asarray(o["r"])
            moved = np.flatnonzero(np.diff(kl) > 1e-6)
            slope = np.diff(r)[moved] / np.diff(kl)[moved]
            assert np.all(np.diff(slope) < 1e-9), (reward, p, slope)
    answer = next(c for c in _cells().values() if "Each nat of drift buys less reward" in c)
    assert answer.startswith("```{dropdown} The answer")  # folded right under the Try this
    assert 'toy.quote("far_prompt")' in answer and 'toy.quote("far_kl", ".2f")' in answer


# -- Goodhart, over 20 draws of the comparisons --------------------------------------------------------------------
@functools.cache
def _curve(n, features, seed):
    pi_ref = toy.reference_policy()
    proxy = ProxyReward(pi_ref, "sum_to_target", X, n, features=features, seed=seed)
    return optimisation_curve(pi_ref, proxy, "sum_to_target", X, easy_hard.GOODHART_BETAS)


def _ends(n, features):
    return np.array([_curve(n, features, s).true[-1] for s in SEEDS])


def _right(n, features):
    """How many seeds' curves end at a right response."""
    return int((_ends(n, features) > RIGHT).sum())


def _right_on_every_seed_from(features):
    every = [_right(n, features) == len(SEEDS) for n in easy_hard.COMPARISONS]
    return next(n for i, n in enumerate(easy_hard.COMPARISONS) if all(every[i:]))


def test_the_explorers_comparison_sets_are_seeds_0_and_1():
    """4.2: 'The explorer's two comparison sets are two seeded draws of the comparisons (seeds 0 and 1)'."""
    assert list(easy_hard.DATASETS) == [0, 1] and list(easy_hard.DATASETS.values()) == ["1", "2"]
    ex = easy_hard.goodhart_explorer(prompt=X)
    for d in easy_hard.DATASETS:
        shown = ex.evaluate(ex.state(comparisons=100, features="both", dataset=d))
        np.testing.assert_allclose(shown["true"], _curve(100, "both", d).true, atol=1e-12)


def test_set_1s_collapse_is_typical_of_draws_of_100_comparisons():
    """4.2: 'Set 1 is one draw of the comparisons, and a typical one: over draws of 100 comparisons, the true reward
    climbs above π_ref's and then ends below it on … seeds.'"""
    v_ref = toy.value(toy.reference_policy(), "sum_to_target", X)
    collapse = [_curve(100, "both", s).true.max() > v_ref > _curve(100, "both", s).true[-1] for s in SEEDS]
    assert collapse[0]  # set 1
    assert sum(collapse) > len(SEEDS) / 2  # typical: most draws


def test_the_default_model_ends_right_by_luck_then_on_every_seed():
    """4.2: 'with 100 comparisons the curve ends at a right response on … . More comparisons make a right one likelier
    (with 300, on …), and from 1,000 comparisons on, the curve ends at a right response on every one of the 20
    seeds.'"""
    every_from = _right_on_every_seed_from("both")
    before = easy_hard.COMPARISONS[easy_hard.COMPARISONS.index(every_from) - 1]
    assert every_from > before >= 300 > 100
    assert 0 < _right(100, "both") < _right(before, "both") < len(SEEDS)
    assert all(_right(n, "both") == len(SEEDS) for n in easy_hard.COMPARISONS if n >= every_from)


def test_more_data_does_not_rescue_the_additive_model():
    """4.2: 'more data does not rescue it. By the same luck, its curve still ends above one half now and then (on …
    with 300 comparisons and on … with 1,000), but it seldom ends at a right response: on …, … and … with 300, 1,000
    and 3,000 comparisons, where the default model does on every seed from … on.' The issue's objection to the old
    sentence ('reliably wrong') is that some seeds still end right: they are counted here. (A review found that the
    mean end falling with more data held for these 20 seeds only: the text no longer says it.)"""
    high = {n: int((_ends(n, "additive") > 0.5).sum()) for n in (300, 1000, 3000)}
    assert 0 < high[300] <= len(SEEDS) / 4 and 0 < high[1000] <= len(SEEDS) / 4  # now and then
    assert all(_right(n, "additive") <= len(SEEDS) / 10 for n in (300, 1000, 3000))  # seldom
    every_from = _right_on_every_seed_from("both")
    assert every_from <= 1000 and all(_right(n, "both") == len(SEEDS) for n in (1000, 3000))
    assert _ends(3000, "additive").max() < 0.5  # the exercise: with 3,000 it ends low on every seed
    cells = "".join(_cells().values())
    assert "on average its curves end lower" not in cells and "gh_add_right3000" in cells


def test_the_additive_models_top_response_is_wrong_on_most_seeds_at_every_size():
    """4.2's exercise: 'its fits rank a wrong response highest on … to … of the 20 seeds at every number of
    comparisons from 10 to 3,000, and the optimum finds it.' Counted here with the reward table, not the notebook's
    helper; where the top one is wrong, the optimum at the curve's end (the smallest β) puts most mass on wrong ones."""
    pi_ref = toy.reference_policy()
    counts = []
    for n in easy_hard.COMPARISONS:
        wrong = 0
        for s in SEEDS:
            table = ProxyReward(pi_ref, "sum_to_target", X, n, features="additive", seed=s).table
            top_wrong = toy.REWARDS["sum_to_target"](X, np.unravel_index(np.argmax(table), table.shape)) == 0
            wrong += top_wrong
            if n >= 300 and top_wrong:  # "the optimum finds it": the curve ends mostly on wrong responses
                assert _curve(n, "additive", s).true[-1] < 0.5, (n, s)
        counts.append(wrong)
    assert min(counts) > len(SEEDS) / 2, counts
    assert "mostly rank wrong" not in "".join(_cells().values())


def test_the_additive_models_wrong_top_response_is_the_no_information_base_rate():
    """4.2's exercise (issue 39): 'comparisons do not teach it which responses are right: its fits rank a wrong
    response highest on … to … of the 20 seeds at every number of comparisons from 10 to 3,000, about the … a model
    with no information would reach (…% of the responses are wrong)'. A model with no information puts a response
    picked at random on top, a wrong one with the share of wrong responses (80 %, 16 of 20 seeds). The counts are
    consistent with that at every size (inside the central 99 % of the binomial law), around it on average, and
    never mostly right; the tabular model, by contrast, is right on every seed from 300 comparisons on."""
    from math import comb

    pi_ref = toy.reference_policy()
    wrong_share = 1 - toy.reward_table("sum_to_target", X, pi_ref.length, pi_ref.n_actions).mean()
    assert wrong_share == pytest.approx(1 - 1 / toy.VOCAB_SIZE)  # one last digit in five completes the sum
    n = len(SEEDS)
    law = [comb(n, k) * wrong_share**k * (1 - wrong_share) ** (n - k) for k in range(n + 1)]
    cdf = np.cumsum(law)
    low, high = int(np.searchsorted(cdf, 0.005)), int(np.searchsorted(cdf, 0.995))
    counts = []
    for size in easy_hard.COMPARISONS:
        tables = [ProxyReward(pi_ref, "sum_to_target", X, size, features="additive", seed=s).table for s in SEEDS]
        counts.append(sum(toy.REWARDS["sum_to_target"](X, np.unravel_index(np.argmax(t), t.shape)) == 0
                          for t in tables))
    assert all(low <= k <= high for k in counts), (counts, low, high)
    assert abs(np.mean(counts) - wrong_share * n) <= 2, counts
    assert _right_on_every_seed_from("tabular") <= 300
    solution = next(c for c in _cells().values() if c.startswith("```{solution} ex-4-2-goodhart"))
    for quoted in ("ex_no_info_seeds", "ex_no_info_wrong", "ex_add_top_wrong_lo", "ex_add_top_wrong_hi"):
        assert f'toy.quote("{quoted}"' in solution, quoted
    assert "a model with no information" in solution
    assert re.search(r'no_info_wrong = 1 - toy\.reward_table\("sum_to_target", x', _code())


def test_the_tabular_model_becomes_reliably_right():
    """4.2's exercise: 'it ends at a right response on … with 10 comparisons, on … with 100, and on every seed from
    300 on.'"""
    every_from = _right_on_every_seed_from("tabular")
    assert 100 < every_from
    assert _right(10, "tabular") < _right(100, "tabular") < len(SEEDS)
    assert _right(100, "tabular") > len(SEEDS) / 2


# -- citations -------------------------------------------------------------------------------------------------------
def _link(key: str) -> str:
    return f"](../../book/references.bib#{key})"


def test_goodharts_law_is_cited_with_goodhart_and_gao():
    """4.2: 'That is Goodhart's law ([Goodhart, 1975]…) … [Gao et al. (2023)] measured the same turn …'."""
    cell = _cells()["c17"]
    law = cell.index("Goodhart's law")
    assert _link("goodhart1975problems") in cell[law: law + 200]
    gao = cell.index(_link("gao2023overoptimization"))
    said = " ".join(cell[gao: gao + 900].split())
    for fact in ("gold", "with RL or with best-of-$n$ sampling", "first raised the gold reward and then lowered it",
                 "functions of $\\sqrt{\\mathrm{KL}}$", "Larger proxy reward models over-optimised less"):
        assert fact in said, fact


@pytest.mark.parametrize("name, key", [("DPO", "rafailov2023dpo"), ("TRPO", "schulman2015trpo"),
                                       ("DQN", "mnih2015dqn")])
def test_named_methods_are_cited_at_their_first_mention(name, key):
    """Issue 32, item 9: wherever 4.2 names DPO, TRPO or DQN, the first mention cites the paper."""
    nb = json.loads(NOTEBOOK.read_text(encoding="utf-8"))
    for cell in nb["cells"]:
        text = "".join(cell["source"])
        if cell["cell_type"] == "markdown" and re.search(rf"\b{name}\b", text):
            assert _link(key) in text, f"4.2 first names {name} without citing {key}"
            break


# -- the reward models refuse a response they cannot score ---------------------------------------------------------
@functools.cache
def _proxy(length=4, eos=False):
    return ProxyReward(toy.reference_policy(length=length, eos=eos), "sum_to_target", 2, 50, seed=0)


@pytest.mark.parametrize("response, message", [
    ((1,), r"response must be exactly 4 digit tokens .*got \(1,\): 1 token$"),
    ((), r"response must be exactly 4 digit tokens .*got \(\): 0 tokens"),
    ((1, 2, 3), r"response must be exactly 4 digit tokens .*got \(1, 2, 3\): 3 tokens"),
    ((1, 2, 3, 4, 0), r"response must be exactly 4 digit tokens .*got \(1, 2, 3, 4, 0\): 5 tokens"),
    ((1, 2, 7, 1), r"response \(1, 2, 7, 1\) has token 7; allowed tokens are the integers 0 to 4"),
    ((1, 2, 3, -1), r"has token -1; allowed tokens are the integers 0 to 4"),
    ((1, 2, 3, toy.EOS), r"has token 5; allowed tokens are the integers 0 to 4"),
    ((1, 2.0, 3, 4), r"has token 2.0; allowed tokens are the integers 0 to 4"),
    ("1234", r"response must be a sequence of token ids, got '1234'"),
    (None, r"response must be a sequence of token ids, got None"),
])
def test_a_proxy_reward_refuses_a_response_it_cannot_score(response, message):
    """Issue 32, bad input: ProxyReward scored a response of the wrong length (it returned -0.1236)."""
    with pytest.raises(ValueError, match=message):
        _proxy()(2, response)


def test_a_proxy_reward_refuses_another_prompt_by_name():
    with pytest.raises(ValueError, match=r"prompt must be 2 \(this reward model was fitted for prompt 2 only\), got 3"):
        _proxy()(3, (1, 2, 3, 4))
    for bad in (True, "2", 2.0, 7, None):
        with pytest.raises(ValueError, match="prompt"):
            _proxy()(bad, (1, 2, 3, 4))


def test_a_proxy_reward_scores_its_own_responses_from_its_table():
    proxy = _proxy()
    for y in [(0, 0, 0, 0), (1, 2, 3, 4), (4, 4, 4, 4)]:
        assert proxy(2, y) == proxy.table[y]
    assert proxy(2, np.array([1, 2, 3, 4])) == proxy.table[1, 2, 3, 4]
    # with EOS, a response has at most `length` digits (EOS removed, as every toy reward reads it)
    eos = _proxy(length=3, eos=True)
    assert eos(2, (1,)) == eos.table[1, toy.EOS, toy.EOS] and eos(2, ()) == eos.table[(toy.EOS,) * 3]
    with pytest.raises(ValueError, match=r"response must be at most 3 digit tokens \(EOS removed.*: 4 tokens"):
        eos(2, (1, 2, 3, 4))
    # as a reward function, its table is what reward_table builds by calling it (with EOS, on the sequences the
    # policy can produce: after an EOS only EOS)
    can = toy.reference_policy(length=3, eos=True).response_probs(2) > 0
    np.testing.assert_array_equal(toy.reward_table(eos, 2, 3, 6)[can], eos.table[can])
    np.testing.assert_array_equal(toy.reward_table(proxy, 2, 4, 5), proxy.table)


def _reward_model_classes():
    """Every class in toy whose instances are rewards: a ``__call__(prompt, response)``."""
    import importlib
    import pkgutil

    found = set()
    for info in pkgutil.walk_packages(toy.__path__, "toy."):
        module = importlib.import_module(info.name)
        for _, cls in inspect.getmembers(module, inspect.isclass):
            if cls.__module__ == module.__name__ and "__call__" in vars(cls):
                params = list(inspect.signature(cls.__call__).parameters)
                if params[1:3] == ["prompt", "response"]:
                    found.add(cls)
    return found


def test_every_reward_model_refuses_a_response_of_the_wrong_length_or_vocabulary():
    """Issue 32: 'make ProxyReward (and every reward model) refuse a response of the wrong length, clearly'. A new
    reward class must be added here with its bad responses."""
    pi = toy.reference_policy(length=3)
    made = {
        toy.reward_models.ProxyReward: (ProxyReward(pi, "sum_to_target", 2, 30), [(1,), (1, 2, 3, 4), (1, 9, 1)]),
        toy.discount.DiscountedReward: (toy.discount.DiscountedReward("sum_to_target", 0.9, 3),
                                        [(1, 2, 3, 4), (1, 9, 1), (1, toy.EOS)]),
        toy.discount.ShiftedReward: (toy.discount.ShiftedReward("sum_to_target", -1.0), [(1, 9, 1), (1, 2, 3, 4, 5)]),
    }
    assert _reward_model_classes() == set(made)
    for reward, bad in made.values():
        for response in bad:
            with pytest.raises(ValueError, match=r"^response"):
                reward(2, response)


# -- the fast paths the seeds need: the fit and the optimisation curve -----------------------------------------------
def test_optimisation_curve_matches_the_token_level_optimum():
    """optimisation_curve tilts π_ref over whole responses, every β at once: the same π*_β as
    toy.kl.kl_regularised_optimum, with and without EOS."""
    for policy in (toy.reference_policy(), toy.reference_policy(length=3, eos=True)):
        proxy = ProxyReward(policy, "sum_to_target", X, 200, seed=3)
        betas = [3.0, 0.3, 0.01]
        curve = optimisation_curve(policy, proxy, "sum_to_target", X, betas)
        r_hat = toy.reward_table(proxy, X, policy.length, policy.n_actions)
        r = toy.reward_table("sum_to_target", X, policy.length, policy.n_actions)
        P_ref = policy.response_probs(X)

        def on_x(x, y, proxy=proxy):  # the proxy on its prompt, 0 on the others (the optimum solves every prompt)
            return proxy(x, y) if x == X else 0.0

        for i, beta in enumerate(betas):
            P = toy.kl.kl_regularised_optimum(policy, on_x, beta).response_probs(X)
            assert curve.kl[i] == pytest.approx(toy.kl.response_kl(P, P_ref), abs=1e-9)
            assert curve.proxy[i] == pytest.approx(float((P * r_hat).sum()), abs=1e-9)
            assert curve.true[i] == pytest.approx(float((P * r).sum()), abs=1e-9)


@pytest.mark.parametrize("features", ["tabular", "both"])
def test_the_conjugate_gradient_fit_equals_the_dense_newton_fit(features, monkeypatch):
    data = toy.reward_models.sample_comparisons(toy.reference_policy(), "sum_to_target", X, 1000, rng=5)
    cols, d = toy.reward_models.feature_columns(features, 4, 5)
    fast = toy.reward_models.fit_bradley_terry(cols, d, data)
    monkeypatch.setattr(toy.reward_models, "DENSE_FEATURES", 10**6)
    dense = toy.reward_models.fit_bradley_terry(cols, d, data)
    np.testing.assert_allclose(fast[cols].sum(axis=1), dense[cols].sum(axis=1), atol=1e-9)


def test_the_prior_try_this_answer_cooling_helps_pretrained_and_never_the_terse_prior():
    """Round two (the reviewer's 9.8 → 65.5 and 35 → 70.9): on the slider's grid the pretrained prior's solid curve is
    lowest below τ = 1, while cooling the terse prior below 1 raises it on prompt 0 (where P(reward) rises) and on
    prompt 2 (where it falls), at every stop below 1."""
    def nsr(preset, t, p):
        return toy.exploration.gradient_moments(toy.reference_policy(preset, t), "sum_to_target", p,
                                                "value").noise_to_signal

    def success(preset, t, p):
        return toy.exploration.success_probability(toy.reference_policy(preset, t), "sum_to_target", p)

    grid = easy_hard.TEMPERATURES
    pre = [nsr("pretrained", t, X) for t in grid]
    assert grid[int(np.argmin(pre))] < 1
    assert grid[2] < 1 and "t_try = easy_hard.TEMPERATURES[2]" in _code()
    for p in (0, 2):
        at_one = nsr("terse", 1.0, p)
        assert all(nsr("terse", t, p) > at_one for t in grid if t < 1), p
    assert success("terse", grid[2], 0) > success("terse", 1.0, 0) > success("terse", 1.0, 2) > success(
        "terse", grid[2], 2)
    answer = _cells()["c08"]
    assert answer.startswith("```{dropdown} The answer")
    assert "cooling the sharp terse prior raises the solid curve on these\ntwo prompts, though not on every prompt" \
        in answer  # issue 50: on prompt 1 it falls (tests/test_claims_issue50.py)


def test_without_a_baseline_the_cooled_terse_prior_on_prompt_0_needs_less_than_one_sample():
    """The prior Try this's answer: at the cooled terse prior on prompt 0 'the dashed curve drops far below the
    solid one': V(x) is not the variance-minimising baseline there, and the ratio without one falls below 1. Checked
    by enumeration here, from the definition (tr Cov(g) / ‖E g‖² with g = (r − b) ∇ log π(y | x) for each response),
    independently of toy.exploration's per-state recursion."""
    import itertools

    t = easy_hard.TEMPERATURES[2]
    policy = toy.reference_policy("terse", t)
    R = toy.rewards.reward_table("sum_to_target", 0, policy.length)
    probs = [policy.prefix_probs(0, d) for d in range(policy.length)]
    V0 = toy.value(policy, "sum_to_target", 0, ())

    def ratio(b):
        gs, ps = [], []
        for y in itertools.product(range(5), repeat=policy.length):
            score, p = [], 1.0
            for d in range(policy.length):
                pi = probs[d][y[:d]]
                p *= pi[y[d]]
                row = np.zeros((5,) * (d + 1))
                row[y[:d]] = -pi
                row[y[:d] + (y[d],)] += 1.0
                score.append(row.ravel())
            gs.append((R[y] - b) * np.concatenate(score))
            ps.append(p)
        gs, ps = np.array(gs), np.array(ps)
        mean = ps @ gs
        return float(ps @ ((gs - mean) ** 2).sum(axis=1)) / float(mean @ mean)

    without, with_v = ratio(0.0), ratio(V0)
    assert without < 1 < 100 < with_v
    moments = toy.exploration.gradient_moments(policy, "sum_to_target", 0, "none")
    assert moments.noise_to_signal == pytest.approx(without, rel=1e-6)
    assert 'toy.quote("nsr0_terse0_cool"' in _cells()["c08"]


def test_at_a_thousand_tokens_the_sum_rewards_credit_sits_on_the_last_two_tokens():
    """The long-credit Try this's answer: 'at 1,000 tokens the last token alone holds … of it and the last two …'
    (it said the last two held 90 %, the threshold of credit_horizon, where they hold 99 %). Each share is
    E[A_t²] over Σ_t E[A_t²] = Var(r), which telescoping makes the reward's variance under the Markov policy."""
    c = toy.longrun.credit(toy.longrun.MarkovPolicy(), "sum_to_target", X, 1000)
    total = c.mean_square.sum()
    last1, last2 = c.mean_square[-1] / total, c.mean_square[-2:].sum() / total
    assert 0.5 < last1 < 0.9 < 0.95 < last2 <= 1.0
    assert c.mean_square[:-2].sum() / total < 0.05  # the first 998 tokens share what little is left
    assert toy.longrun.credit_horizon(c.mean_square, share=0.95) == 2
    answer = _cells()["c20"]
    assert 'last token alone holds\n{eval}`toy.quote("long_last1_share", ".0%")`' in answer
    assert 'the last two {eval}`toy.quote("long_last2_share", ".0%")`' in answer
    assert "90%" not in answer


def test_the_count_rewards_noise_grows_in_proportion_to_the_length():
    """The long-credit Try this's answer: count reward, noise per token from 4 to 1,000 tokens, about L − 1 times a
    signal that stays near 0.16."""
    markov = toy.longrun.MarkovPolicy()
    for L in (4, 1000):
        c = toy.longrun.credit(markov, "count_target", X, L)
        assert c.noise.mean() == pytest.approx((L - 1) * c.mean_square.mean(), rel=1e-6)
        assert round(float(c.mean_square.mean()), 2) in (0.16, 0.17)
