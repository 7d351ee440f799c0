"""Issue 50, the second claim review (I1–I7, A1–A2): each corrected sentence against toy and the notebook's words.

(A3, the format gate's seeds, is in tests/test_claims_issue50.py; I6, TD(0) at the explorer's seed, in
tests/test_claims_43_44.py.)"""

from __future__ import annotations

import inspect
import json
from pathlib import Path

import numpy as np

from toy import exploration, imitation, offpolicy, reward_models
from toy.page.explorers import classical, easy_hard
from toy.policy import reference_policy

CHAPTER = Path(__file__).resolve().parents[1] / "chapters" / "04-the-llm-as-a-policy"


def said(name: str) -> str:
    """The notebook's Markdown, its lines joined by spaces."""
    cells = json.loads((CHAPTER / name).read_text())["cells"]
    return " ".join(" ".join("".join(c["source"]) for c in cells if c["cell_type"] == "markdown").split())


def code(name: str) -> str:
    cells = json.loads((CHAPTER / name).read_text())["cells"]
    return "\n".join("".join(c["source"]) for c in cells if c["cell_type"] == "code")


def test_sixteen_updates_behind_the_variance_is_a_mean_over_the_run_from_28_to_half():
    """I1: 'the variance of w averages 12.7 over the run (28 at its start, 0.5 at its end): a batch with that variance
    is worth only 7% of its samples'; one window's batch is worth from 3% to 68%."""
    path = offpolicy.policy_path(reference_policy(), "sum_to_target", 2, classical.RUN_UPDATES, 5.0)
    windows = np.array([offpolicy.weight_variance(path[n], path[n - 16], 2)[0]
                        for n in range(16, classical.RUN_UPDATES + 1)])
    assert len(windows) == 15 and windows[0] == windows.max() and windows[-1] == windows.min()
    assert (round(windows.mean(), 1), round(windows[0]), round(windows[-1], 1)) == (12.7, 28, 0.5)
    assert round(100 / (1 + windows.mean())) == 7  # the worth of a batch with the mean variance
    assert round(100 / (1 + windows[0])) == 3 and round(100 / (1 + windows[-1])) == 68  # what single batches are worth
    text = said("4.3-classical-vs-llm-rl.ipynb")
    assert ('the variance of $w$ averages {eval}`toy.quote("w16", ".1f")` over the run ({eval}`toy.quote("w16_first", '
            '".0f")` at its start, {eval}`toy.quote("w16_last", ".1f")` at its end): a batch with that variance is '
            'worth only {eval}`toy.quote("ess16", ".0f")`%') in text
    assert "w16_windows[0]" in code("4.3-classical-vs-llm-rl.ipynb")
    title = classical.staleness_explorer().figure_for(lr=5.0, k=16).layout.title.text
    assert "Var[w] averaged over the run = " in title and "a batch with that variance is worth 7%" in title


def test_daggers_bound_is_u_t_epsilon_and_the_toys_u_is_one_step():
    """I2: 'pays about uTε, u the most one mistake adds to the cost'; the toy's DAgger pays one step per mistake."""
    text = said("4.4-post-training-pipeline.ipynb")
    assert "pays about $uT\\epsilon$, $u$ the most one mistake adds to the cost" in text
    assert "DAgger's pays for each mistake only ($u = 1$)" in text
    for eps, T in ((0.01, 80), (0.1, 20)):
        assert imitation.dagger_cost(eps, T) == eps * T
    runs = imitation.simulate(0.1, 30, episodes=500, rng=0)  # DAgger's cost is its number of mistakes
    steps = np.diff(runs["dagger"], axis=1, prepend=0)
    assert set(np.unique(steps)) <= {0.0, 1.0}


def test_the_deadly_triad_can_make_values_diverge_not_always_does():
    text = said("4.3-classical-vs-llm-rl.ipynb")
    assert "the combination that can make value estimates diverge" in text and "known to make" not in text


def test_the_reward_model_is_ridge_penalised_with_l2_1():
    """I4: 'fitted to them by ridge-penalised maximum likelihood'; the solution names l2 = 1, not a small penalty."""
    l2 = inspect.signature(reward_models.ProxyReward).parameters["l2"].default
    assert l2 == inspect.signature(reward_models.fit_bradley_terry).parameters["l2"].default == 1.0
    text = said("4.2-easy-and-hard.ipynb")
    assert "is fitted to them by ridge-penalised maximum likelihood" in text
    assert 'a ridge penalty $(\\ell_2/2)\\,\\|\\mathbf w\\|^2$, $\\ell_2 =$ {eval}`toy.quote("bt_l2", "g")`' in text
    assert "small ridge penalty" not in text
    assert 'toy.glue("bt_l2", proxy_defaults["l2"].default' in code("4.2-easy-and-hard.ipynb")
    # Comparisons one score orders perfectly: the penalty keeps the weights finite; as it vanishes they grow.
    columns, d = reward_models.feature_columns("both", 4, 5)
    data = reward_models.Comparisons(np.array([0, 1]), np.array([2, 3]), np.array([True, True]))
    norms = [np.linalg.norm(reward_models.fit_bradley_terry(columns, d, data, l2)) for l2 in (1.0, 1e-2, 1e-4)]
    assert norms[0] < norms[1] < norms[2] and norms[2] > 3 * norms[0]
    # a feature no compared response uses keeps weight 0 (an unseen response scores 0)
    w = reward_models.fit_bradley_terry(columns, d, data, 1.0)
    used = np.unique(columns[[0, 1, 2, 3]])
    assert np.all(np.delete(w, used) == 0)


def test_the_long_run_value_depends_on_length_last_token_and_accumulated_reward():
    assert "only through its length, its last token and what the reward has accumulated so far" in said(
        "4.2-easy-and-hard.ipynb")


def test_at_lambda_0_the_advantage_is_one_td_error():
    text = said("4.5-connections.ipynb")
    assert ("At $\\lambda = 0$ the advantage is one TD error, the token's reward plus the one-step difference of the "
            "critic's values") in text


def test_ppos_objective_is_compared_with_the_optimums_not_a_fraction_of_it():
    assert 'its objective reaches {eval}`toy.quote("kc_ppo_obj30", ".3f")`, against the optimum\'s' in said(
        "key-concepts.ipynb")


def test_the_cold_terse_prior_is_quoted_at_the_sliders_tau():
    """A2: 'Push the terse prior for prompt 2 to τ = 0.316: … probability 0.0019, and the ratio climbs to 969' (the
    slider's grid, as the Try-this answer quotes it, not τ = 0.3)."""
    t = easy_hard.TEMPERATURES[2]
    cool = reference_policy("terse", t)
    p = exploration.success_probability(cool, "sum_to_target", 2)
    nsr = exploration.gradient_moments(cool, "sum_to_target", 2).noise_to_signal
    assert (format(t, ".3g"), format(p, ".4f"), format(nsr, ",.0f")) == ("0.316", "0.0019", "969")
    assert nsr > 20 * exploration.gradient_moments(reference_policy("terse"), "sum_to_target", 2).noise_to_signal
    text = said("4.2-easy-and-hard.ipynb")
    assert ('Push the terse prior for prompt 2 to $\\tau =$ {eval}`toy.quote("t_try", ".3g")`: it now samples a '
            'rewarded response with probability {eval}`toy.quote("p_terse2_cool", ".4f")`, and the ratio climbs to '
            '{eval}`toy.quote("nsr_terse2_cool", ",.0f")`') in text
    assert "p_cold" not in text
