"""Every 'Try this' of 4.1 and 4.2 has its answer folded right after it (round two of the newcomer's review): the
next thing on the page is a ``{dropdown} The answer`` (only hidden bookkeeping cells between), and the answer quotes
glued numbers. The numbers' claims are checked in tests/test_credit_claims.py (4.1) and tests/test_claims_42.py."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
CHAPTER = ROOT / "chapters" / "04-the-llm-as-a-policy"


def _visible(name: str) -> list[str]:
    """The Markdown and visible code of a notebook, cell by cell, bookkeeping cells left out."""
    nb = json.loads((CHAPTER / name).read_text(encoding="utf-8"))
    cells = []
    for cell in nb["cells"]:
        tags = cell.get("metadata", {}).get("tags", [])
        if "remove-cell" in tags:
            continue
        cells.append("".join(cell["source"]))
    return cells


@pytest.mark.parametrize("name, count", [("4.1-formal-mapping.ipynb", 2), ("4.2-easy-and-hard.ipynb", 6)])
def test_every_try_this_is_followed_by_its_folded_answer(name, count):
    cells = _visible(name)
    tries = [i for i, text in enumerate(cells) if re.search(r"^(#+ |\*\*)Try this", text, re.M)]
    assert len(tries) == count, tries
    for i in tries:
        after = cells[i + 1].lstrip()
        assert after.startswith("```{dropdown} The answer"), (name, cells[i][:80], after[:80])
        answer = after.split("\n```", 1)[0]
        assert "{eval}`toy.quote(" in answer, (name, answer[:80])
