"""The book's notebooks for a course: the student edition (no solutions) and the instructor edition (all of it).

The book's notebooks mark each solution with the cell tag ``solution`` (the code cell that solves an exercise, and
the markdown cells around it that open and close its solution block). The instructor edition is the notebooks as
they are; the student edition drops every cell tagged ``solution``, so each exercise is left as its stub (a
function that raises NotImplementedError) followed by its check. ``book()`` reads, for the grader, each notebook's
exercises with the stub and the solution of each function (the code handed out, and the code to compare copies
with).
"""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import nbformat

from .classroom import BookNotebook
from .marks import exercises_checked
from .slicing import normal

ROOT = Path(__file__).resolve().parents[1]
CHAPTERS = ROOT / "chapters"
SOLUTION_TAG, EXERCISE_TAG = "solution", "exercise"
CHECK_CALL = re.compile(r"toy\.exercises\.check\(\s*[\"']([^\"']+)[\"']")


def book_notebooks() -> list[Path]:
    return sorted(p for p in CHAPTERS.rglob("*.ipynb") if ".ipynb_checkpoints" not in p.parts)


def strip_outputs(nb) -> None:
    for cell in nb.cells:
        if cell.cell_type == "code":
            cell.outputs, cell.execution_count = [], None
    nb.metadata.pop("widgets", None)


def student_edition(nb):
    """A copy of ``nb`` without the cells tagged ``solution``."""
    out = nbformat.from_dict(json.loads(json.dumps(nb)))
    out.cells = [c for c in out.cells if SOLUTION_TAG not in c.get("metadata", {}).get("tags", [])]
    strip_outputs(out)
    return out


def exercises_in(nb) -> list[str]:
    """The names of the exercises a notebook checks, in order."""
    names = []
    for cell in nb.cells:
        if cell.cell_type == "code":
            names += [n for n in CHECK_CALL.findall(cell.source) if n not in names]
    return names


def write_editions(out: Path) -> dict[str, list[Path]]:
    """Write ``out/student`` and ``out/instructor``: one notebook per section, folders ready to hand out."""
    written = {"student": [], "instructor": []}
    for edition in written:
        folder = out / edition
        if folder.exists():
            shutil.rmtree(folder)
        folder.mkdir(parents=True)
    for path in book_notebooks():
        nb = nbformat.read(path, as_version=4)
        strip_outputs(nb)
        for edition, version in (("instructor", nb), ("student", student_edition(nb))):
            target = out / edition / path.name
            nbformat.write(version, target)
            written[edition].append(target)
    return written


def _defines(source: str) -> str | None:
    match = re.match(r"\s*def (\w+)", source)
    return match.group(1) if match else None


def book() -> dict[str, BookNotebook]:
    """{notebook file name: its exercises, stubs and solutions} from the book's own notebooks."""
    found = {}
    for path in book_notebooks():
        nb = nbformat.read(path, as_version=4)
        entry = BookNotebook(exercises_checked(nb), cells=frozenset(
            normal(c.source) for c in student_edition(nb).cells if c.cell_type == "code"))
        for cell in nb.cells:
            tags = cell.get("metadata", {}).get("tags", [])
            if cell.cell_type == "code" and _defines(cell.source):
                if SOLUTION_TAG in tags:
                    entry.solutions[_defines(cell.source)] = cell.source
                elif EXERCISE_TAG in tags:
                    entry.stubs[_defines(cell.source)] = cell.source
        found[path.name] = entry
    return found
