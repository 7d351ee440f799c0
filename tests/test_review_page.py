"""The chapter review (issue 49, round two): a compact list of the key formulas, each linked to the section that
derives it, and a link to section 4.3's table in place of a second copy of it."""

from __future__ import annotations

import json
import re
from pathlib import Path

CHAPTER = Path(__file__).resolve().parents[1] / "chapters" / "04-the-llm-as-a-policy"
REVIEW = CHAPTER / "review.ipynb"


def _cells():
    return json.loads(REVIEW.read_text(encoding="utf-8"))["cells"]


def _labels() -> set[str]:
    """Every MyST label and exercise label of the chapter's pages."""
    text = "\n".join(p.read_text(encoding="utf-8") for p in CHAPTER.glob("*.ipynb")) + \
        (CHAPTER / "index.md").read_text(encoding="utf-8")
    return set(re.findall(r"\(([\w-]+)\)=", text)) | set(re.findall(r":label: ([\w-]+)", text))


def test_the_review_links_to_the_table_and_does_not_repeat_it():
    sources = ["".join(c["source"]) for c in _cells()]
    assert not any("fate_table" in s for s in sources)
    assert any("{ref}`table <sec-4-3-table>`" in s for s in sources)


def test_each_key_formula_links_to_a_section_that_exists():
    text = next("".join(c["source"]) for c in _cells() if "## Key formulas" in "".join(c["source"]))
    block = text.split("## Key formulas", 1)[1]
    bullets = re.split(r"\n- ", "\n" + block.strip())[1:]
    assert len(bullets) >= 10
    labels = _labels()
    pages = {p.stem for p in CHAPTER.glob("*.ipynb")}
    for bullet in bullets:
        refs = re.findall(r"\{ref\}`(?:[^`<]*<)?([\w-]+)>?`", bullet)
        docs = re.findall(r"\{doc\}`(?:[^`<]*<)?([\w.-]+)>?`", bullet)
        assert refs or docs, bullet[:60]
        assert all(r in labels for r in refs), (bullet[:60], refs)
        assert all(d in pages for d in docs), (bullet[:60], docs)
    for name in ("RLOO", "GRPO", "ReMax", "GAE", "TD error", "clipped objective", "SFT"):
        assert name in block, name
