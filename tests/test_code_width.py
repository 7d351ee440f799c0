"""Every line of every notebook's code cells fits the book's code column (79 characters), checked on the source.

At a 1280 px window the book's code column holds about 80 characters of its monospace font; a longer line scrolls
sideways, and its end (often a comment) looks cut off at the box's right edge. Characters are counted, not bytes:
π, τ or ∇ is one. Hidden cells are held to the same width, since JupyterLab and the Colab editions show them.
"""

from pathlib import Path

import nbformat
import pytest

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = sorted(p for p in (ROOT / "chapters").rglob("*.ipynb") if ".ipynb_checkpoints" not in p.parts)
IDS = [p.name for p in NOTEBOOKS]
WIDTH = 79


def too_long(path: Path) -> list[str]:
    """Each code-cell source line of the notebook longer than ``WIDTH`` characters, as where it is and what."""
    nb = nbformat.read(path, as_version=4)
    found = []
    for index, cell in enumerate(nb.cells):
        if cell.cell_type != "code":
            continue
        for number, line in enumerate(cell.source.split("\n"), start=1):
            if len(line) > WIDTH:
                found.append(f"{path.name}, cell {index} (id {cell.get('id', '?')}), line {number}: "
                             f"{len(line)} characters: {line}")
    return found


def test_there_are_notebooks():
    assert any(p.name.startswith("4.1") for p in NOTEBOOKS)


@pytest.mark.parametrize("path", NOTEBOOKS, ids=IDS)
def test_code_lines_fit_the_code_column(path):
    found = too_long(path)
    assert not found, f"{len(found)} code line(s) longer than {WIDTH} characters:\n" + "\n".join(found)


def test_the_check_counts_characters_not_bytes(tmp_path):
    nb = nbformat.v4.new_notebook()
    fits = "x = 1  # " + "π" * (WIDTH - 9)  # 79 characters, more than 79 bytes
    nb.cells = [nbformat.v4.new_markdown_cell("#" * 200), nbformat.v4.new_code_cell(f"{fits}\n{fits}τ")]
    nbformat.write(nb, tmp_path / "wide.ipynb")
    (found,) = too_long(tmp_path / "wide.ipynb")
    assert found.startswith("wide.ipynb, cell 1 (id ") and "line 2: 80 characters" in found
