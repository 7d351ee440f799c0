"""Inline math stays whole (issue 50, E1): a ``$…$`` span split across source lines so that the next line starts
with a list marker ("+ ", "- ", "* ", "1. ") turns that line into a list item, and the page shows a raw ``$``, a
stray bullet and English typeset as math. These tests fail on such a line in any notebook's Markdown cell."""

import re
from pathlib import Path

import nbformat
import pytest

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = sorted(p for p in (ROOT / "chapters").rglob("*.ipynb") if ".ipynb_checkpoints" not in p.parts)
LIST_MARKER = re.compile(r"\s*(?:[-+*]|\d+[.)])\s")
CODE = re.compile(r"`[^`]*`")  # inline code and {eval} quotes: their $ are not math


def broken_math_lines(markdown: str) -> list[str]:
    """The lines of ``markdown`` that start with a list marker while an inline ``$`` span is open: the paragraph's
    unescaped single ``$`` before them (outside code, ``$$`` blocks and fences) are odd in number."""
    out, open_span, fence, display = [], False, False, False
    for line in markdown.splitlines():
        stripped = line.strip()
        if stripped.startswith(("```", "~~~")):
            fence, open_span = not fence, False
            continue
        if fence:
            continue
        if stripped == "$$" or (stripped.startswith("$$") and stripped.count("$$") == 1):
            display, open_span = not display, False
            continue
        if display or not stripped:
            open_span = False  # a blank line ends a paragraph, and Markdown's inline math with it
            continue
        if open_span and LIST_MARKER.match(line):
            out.append(line)
        text = CODE.sub("", line).replace(r"\$", "").replace("$$", "")
        if text.count("$") % 2:
            open_span = not open_span
    return out


def test_the_checker_finds_a_split_span_and_passes_a_whole_one():
    assert broken_math_lines("so $p = e^{z_1}/(e^{z_1}\n+ e^{z_2})$. Each step") == ["+ e^{z_2})$. Each step"]
    assert broken_math_lines("so $p = a$\n+ b is a list item\n- c") == []
    assert broken_math_lines("one $x\n- y$ two\n\n- z") == ["- y$ two"]
    assert broken_math_lines("$$\na\n- b\n$$\n- c `$` d") == []


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.name for p in NOTEBOOKS])
def test_no_inline_math_span_is_broken_by_a_list_marker(path):
    nb = nbformat.read(path, as_version=4)
    bad = [(i, line) for i, cell in enumerate(nb.cells) if cell.cell_type == "markdown"
           for line in broken_math_lines(cell.source)]
    assert not bad, f"{path.name}: inline math split before a line Markdown reads as a list item: {bad}"
