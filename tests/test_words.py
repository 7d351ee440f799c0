"""The main-path word count (scripts/words.py, issue 39): what it leaves out, and the chapter's length budget."""

from __future__ import annotations

import importlib.util
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
