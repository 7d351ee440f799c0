"""The third claim review's findings (issue 50c), each pinned where it says something the toy can check."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from tests.test_claims_issue50b import said
from toy import imitation, reward_models
from toy.policy import reference_policy


def test_the_value_convention_is_stated_where_the_two_meet():
    """E2, I3, I4: key concepts puts the reward on the last step and V = 0 after it, the rest of the chapter counts
    a complete response's value as its reward; each page says which it uses where Q = V(s·a) is written."""
    kc = said("key-concepts.ipynb")
    assert r"$Q(s, a) = r(s, a) + \gamma V(s \cdot a)$, and with $\gamma = 1$" in kc
    assert "the rest of the chapter counts a complete response's value as its reward" in kc
    assert r"$A(s_t, y_t) = r_t + V(s_{t+1}) - V(s_t)$" in kc
    assert r"$V = r(x, y)$ at a complete response, so $Q(s, a) = V(s \cdot a)$" in said("4.1-formal-mapping.ipynb")
    assert "with a complete response's value taken as its reward" in said("review.ipynb")


def test_vineppo_restarts_from_reasoning_step_boundaries():
    """I6: VinePPO estimates values at the boundaries of reasoning steps; on the toy, every state."""
    assert "rollouts restarted from each reasoning-step boundary of a response (on the toy, every state)" \
        in said("4.3-classical-vs-llm-rl.ipynb")


def test_only_the_tabular_score_of_an_unseen_response_stays_at_zero():
    """I10: the ridge penalty keeps the tabular score of a response no comparison mentions at 0; the additive part
    (and so the default "both" model) still scores it through its per-position weights."""
    assert "keeps the tabular score of a response no comparison mentions at 0" in said("4.2-easy-and-hard.ipynb")
    unseen = {}
    for features in ("tabular", "additive", "both"):
        proxy = reward_models.ProxyReward(reference_policy(), "sum_to_target", 2, 8, features=features)
        seen = set(proxy.data.a.tolist()) | set(proxy.data.b.tolist())
        scores = np.delete(proxy.table.ravel(), sorted(seen))
        unseen[features] = float(np.abs(scores).max())
    assert unseen["tabular"] == 0 and unseen["additive"] > 0.1 and unseen["both"] > 0.1


def test_the_action_space_table_has_the_length_its_title_quotes():
    """I9: the title quotes 1,000 tokens (10^4,701 responses, about 10^22 in play at h = 0.05); the table has that
    column, so both can be read from it."""
    from toy.page.explorers import easy_hard
    from toy.page.tables import figure_tables

    fig = easy_hard.action_space_figure()
    (table,) = figure_tables(fig)
    i = table["header"].index("1000")
    rows = {r[0]: r[1:] for r in table["rows"]}
    assert rows["every response, |V| = 50,257 (GPT-2)"][i] == "4,701" and "10^4,701" in fig.layout.title.text
    assert rows["in play at h = 0.05 nats/token"][i] == "21.7" and "about 10^22" in fig.layout.title.text
    assert "4" in table["header"]  # the toy's length, which the figure marks


def test_claim_review_5_wordings():
    """Round-5 claim review: ReMax's baseline is one greedy response (4.1 says 'other responses', not 'several');
    off-policy data need not be older (index); J_BC charges the step of the first mistake too (4.4: 'from its
    first mistake on', Σ_t [1 − (1 − ε)^t] has ε at t = 1); 4.2's "ends at a right response" is a true reward
    above 0.99, as ends_right counts it."""
    chapter = Path(__file__).resolve().parents[1] / "chapters" / "04-the-llm-as-a-policy"
    text = {p.name: p.read_text(encoding="utf-8") for p in chapter.iterdir() if p.suffix in (".ipynb", ".md")}
    assert "rewards of several responses" not in text["4.1-formal-mapping.ipynb"]
    assert "rewards of other responses to the same prompt" in text["4.1-formal-mapping.ipynb"]
    assert "another, older policy" not in text["index.md"]
    assert "from its first mistake on" in text["4.4-post-training-pipeline.ipynb"]
    eps, horizon = 0.01, 10
    charged_from = sum(1 - (1 - eps) ** t for t in range(1, horizon + 1))
    assert imitation.behaviour_cloning_cost(eps, horizon) == pytest.approx(charged_from)
    assert charged_from - sum(1 - (1 - eps) ** (t - 1) for t in range(1, horizon + 1)) == pytest.approx(
        1 - (1 - eps) ** horizon)  # 'after' would leave out one step's share at each t
    assert "a right response (a true reward above 0.99)" in text["4.2-easy-and-hard.ipynb"]
    assert "end_true(n, features, s) > 0.99" in text["4.2-easy-and-hard.ipynb"]
