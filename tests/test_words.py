"""The main-path word count (scripts/words.py, issue 39): what it leaves out, and the chapter's length budget."""

from __future__ import annotations

import importlib.util
import json
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
_spec = importlib.util.spec_from_file_location("words", ROOT / "scripts" / "words.py")
words = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(words)

BEFORE_ISSUE_39 = 15_289  # scripts/words.py on main at bcdc389 (CONTRIBUTING, "Length: the main path")


def count(markdown: str) -> int:
    return words.words(words.main_path(markdown))


def test_the_main_path_leaves_out_folded_boxes_code_and_display_math():
    lesson = "The last token decides most of the variance."
    assert count(lesson) == 8
    folded = [
        "```{dropdown} How sure is this? (20 seeds)\nTwenty seeds, each one a long story here.\n```",
        ":::{dropdown} Title\nHidden words here.\n:::",
        "```{admonition} Derivation\n:class: dropdown\nHidden words here.\n```",
        "```{exercise} An exercise\n:label: ex-x\nWords of the exercise.\n```",
        "```{solution} ex-x\nWords of the solution.\n```",
        "<details><summary>More</summary>Hidden words.</details>",
        "```python\nx = toy.values(policy)\n```",
        "$$\nA(s, y) = V(s y) - V(s)\n$$",
        "<!-- a comment for authors -->",
    ]
    for box in folded:
        assert count(lesson + "\n\n" + box) == 8, box


def test_an_open_box_a_quoted_number_and_inline_maths_count_as_read():
    assert count("```{note} A note\nRead on the page.\n```") == 2 + 4  # its title and its text
    assert count("The error is {eval}`toy.quote(\"se9\", \".3f\")` at $K = 9$.") == 6
    assert count("See [the paper](../../book/references.bib#li2023remax).") == 3


def test_the_chapter_keeps_its_halved_main_path():
    """Issue 39 asked for about half of the main path before it; 4.5, a preview, is the shortest section."""
    sections = words.counts()
    assert sum(sections.values()) <= 0.55 * BEFORE_ISSUE_39, sections
    chapter = {name: n for name, n in sections.items() if name[:2] == "4."}
    assert len(chapter) == 5 and min(chapter, key=chapter.get).startswith("4.5"), chapter


SEED_EVIDENCE = re.compile("|".join([
    r"\b\w+\s+of\s+(the\s+)?\w+\s+seeds\b",  # "k of 20 seeds"
    r"\b(across|in)\s+(all\s+|the\s+|every\s+)?(\w+\s+)?seeds\b",  # "across the 20 seeds", "in all seeds"
    r"(?<!means )\bover\s+(all\s+|the\s+)?(\w+\s+)?seeds\b",  # "over 20 seeds" (a figure's "means over" aside)
    r"\bevery\s+seed\b",
]), re.I)


def main_path_of(page: Path) -> str:
    notebook = json.loads(page.read_text())
    return "\n".join(words.main_path(words._source(cell)) for cell in notebook["cells"]
                     if cell["cell_type"] == "markdown"
                     and "remove-cell" not in cell.get("metadata", {}).get("tags", []))


def test_seed_counts_and_ranges_stay_in_the_folded_boxes():
    """Issue 39: "k of 20 seeds" and ranges over seeds go in the "How sure is this?" dropdowns, not the lesson."""
    for sentence in ["It wins in {eval}`toy.quote('k')` of 20 seeds.", "The slope ranges across the 20 seeds.",
                     "It held in every seed."]:
        assert SEED_EVIDENCE.search(words.main_path(sentence)), sentence
    for sentence in ["Lines are means over {eval}`toy.quote('n')` seeds; the grey line is the optimum.",
                     "One seeded run (seed 0)."]:  # what a figure draws, said once
        assert not SEED_EVIDENCE.search(words.main_path(sentence)), sentence
    for page in sorted(words.CHAPTER.glob("4.[2-5]-*.ipynb")):
        found = [m.group(0) for m in SEED_EVIDENCE.finditer(main_path_of(page))]
        assert found == [], (page.stem, found)


def test_the_optional_pages_are_counted_apart_and_sit_where_a_reader_opens_them():
    """Issue 49: the key concepts (before 4.3) and the review (after 4.5) are pages a reader opens on purpose, so
    their words are counted on their own and not in the main path's total."""
    optional = words.optional_counts()
    assert "key-concepts" in optional and set(optional) <= set(words.OPTIONAL), optional
    assert not set(optional) & set(words.counts())
    assert all(n > 0 for n in optional.values()), optional
    toc = (ROOT / "_toc.yml").read_text()
    assert toc.index("key-concepts") < toc.index("4.3-classical-vs-llm-rl")
    if "review" in optional:
        assert toc.index("review") > toc.index("4.5-connections")
