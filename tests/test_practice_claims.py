"""Issue 51: the claims written for practitioners (folded boxes of 4.3 to 4.5, the fate table's rows), each
recomputed from toy, not read from a notebook, and checked against what its sentence says. The sentences are quoted
in each test's docstring with the glued numbers left out (…).
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

import toy
from toy.discount import ShiftedReward, discounted_optimum, mean_length

CHAPTER = Path(__file__).resolve().parents[1] / "chapters" / "04-the-llm-as-a-policy"
NB43 = CHAPTER / "4.3-classical-vs-llm-rl.ipynb"
NB44 = CHAPTER / "4.4-post-training-pipeline.ipynb"
NB45 = CHAPTER / "4.5-connections.ipynb"
X = 2


def markdown(path: Path) -> list[str]:
    return ["".join(c["source"]) for c in json.loads(path.read_text())["cells"] if c["cell_type"] == "markdown"]


def paragraph_with(path: Path, needle: str) -> str:
    """The first paragraph of the notebook's Markdown that contains ``needle``."""
    for cell in markdown(path):
        for par in re.split(r"\n\s*\n", cell):
            if needle in par:
                return par
    raise AssertionError(f"{path.name}: no paragraph contains {needle!r}")


def row(concept: str) -> toy.fates.Row:
    return next(r for r in toy.fates.ROWS if r.concept == concept)


# -- 1 (a): the discount's length preference has the sign of the reward --------------------------------------------
def test_the_discount_favours_the_shorter_response_only_for_a_positive_reward():
    """4.3: 'of two equally good responses the shorter wins when r > 0 (the longer when r < 0)'; the box: 'at γ = 1
    nothing changes … (the optimum writes … digits), but at γ = 0.9 it writes …, longer than π_ref's …, where the
    unshifted reward gave …'. The fate table: 'for stopping early when rewards are positive, for going on when they
    are negative'."""
    assert "the longer when $r < 0$" in paragraph_with(NB43, "of two equally good responses")
    box = paragraph_with(NB43, "Shift the sum reward down by 1")
    assert "longer than" in box and "nothing changes" in box
    ref = toy.reference_policy(eos=True)
    penalty = ShiftedReward("sum_to_target", -1.0)
    length = {(r, g): mean_length(discounted_optimum(ref, r, g, 0.1), X)
              for r in ("sum_to_target", penalty) for g in (1.0, 0.9)}
    assert length[penalty, 1.0] == pytest.approx(length["sum_to_target", 1.0], rel=1e-12)
    assert length[penalty, 0.9] > mean_length(ref, X) > length["sum_to_target", 0.9]
    assert length[penalty, 0.9] > length[penalty, 1.0]
    why = row("Discount γ").why
    assert "positive" in why and "negative" in why
