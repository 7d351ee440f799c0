"""The chapter as an nbgrader assignment, written from the book's own notebooks in nbgrader's own cell metadata.

For each notebook of the book, the *source* version nbgrader starts from (``source/<assignment>/``):

- each code exercise becomes one **solution cell**: the stub's signature and docstring, then the book's solution
  body between ``### BEGIN SOLUTION`` and ``### END SOLUTION`` (``nbgrader generate_assignment`` replaces that
  region with ``raise NotImplementedError()`` in the students' release);
- each check cell becomes an **autograded test cell** (locked, one point): it runs ``toy.exercises.check`` on the
  student's function and asserts that it passed, and, between ``### BEGIN HIDDEN TESTS`` and
  ``### END HIDDEN TESTS``, does the same with a seed drawn when the course folder was written, which students
  never see;
- each question's answer cell (``toy.exercises.answer``) becomes a **solution cell** holding the answer for the
  course's instance between the solution markers, followed by an **autograded test cell** (locked, the question's
  points) that asserts the answer is right. Every student gets the course's instance, drawn from a name hashed
  from the hidden seed (a locked cell sets it, ``toy.exercises.student("course-<hash>")``, which does not give the
  seed away), never the book's setting, which the page shows;
- each written-answer cell (Markdown, ``toy_written``) becomes a **manually graded answer cell** worth the points of
  its exercise's rubric, which the cell above it shows (nbgrader's formgrader is where it is marked);
- the book's other solution cells (worked answers of derivations and predictions) are left out, as in the
  student edition; everything else is kept as it is.

nbgrader runs the notebooks in the kernel they name (``python3``): the course folder has its own (``jupyter/kernels``,
the book's environment, which has ``toy``), which its ``nbgrader_config.py`` puts first. That kernel shows the
explorers as their titles (it runs the notebooks for their checks), not as widgets, and the autograded notebooks keep
no widget state, so each weighs a fraction of a megabyte (118 MB per student with live widgets). Its test cells run in
the student's own kernel, so they share its limits: a notebook that patches ``toy.exercises.check`` can pass them.
``scripts/course.py grade`` does not have that weakness (the instructors' page compares the two)."""

from __future__ import annotations

import hashlib
import hmac
import json
import re
import secrets
from pathlib import Path

import nbformat

from toy.exercises.questions import QUESTIONS, RUBRICS, as_value

from . import private
from .marks import CHECK_CALL

ANSWER_CALL = re.compile(r"^toy\.exercises\.answer\(\s*[\"']([^\"']+)[\"']\s*,\s*\.\.\.\s*\)", re.M)

SOLUTION_TAG, EXERCISE_TAG = "solution", "exercise"
SCHEMA = 3


def _grade_id(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9_-]+", "-", text).strip("-")


def _split_docstring(source: str) -> tuple[list[str], list[str]]:
    """A function cell's lines up to the end of its docstring (or its ``def`` line), and the rest."""
    lines = source.rstrip("\n").split("\n")
    head = 1
    if len(lines) > 1:
        stripped = lines[1].strip()
        for quote in ('"""', "'''"):
            if stripped.startswith(quote):
                end = 1 if stripped.count(quote) >= 2 and len(stripped) > 3 else next(
                    i for i in range(2, len(lines)) if quote in lines[i])
                head = end + 1
    return lines[:head], lines[head:]


def solution_cell(solution: str) -> nbformat.NotebookNode:
    """The solution as an nbgrader solution cell, its body marked as the region students write."""
    head, body = _split_docstring(solution)
    indent = re.match(r"\s*", next((line for line in body if line.strip()), "    ")).group(0)
    source = "\n".join(head + [f"{indent}### BEGIN SOLUTION", *body, f"{indent}### END SOLUTION"])
    cell = nbformat.v4.new_code_cell(source)
    name = re.match(r"def (\w+)", solution).group(1)
    cell.metadata["nbgrader"] = {"grade": False, "solution": True, "locked": False, "task": False,
                                 "grade_id": _grade_id(f"solution-{name}"), "schema_version": SCHEMA}
    return cell


def test_cell(exercise: str, function: str, hidden_seed: int, points: int = 1) -> nbformat.NotebookNode:
    """An autograded test cell: the book's check on the student's function, asserted, then again on hidden cases."""
    source = (f'result = toy.exercises.check("{exercise}", {function})\n'
              "assert result.passed, str(result)\n"
              "### BEGIN HIDDEN TESTS\n"
              f'result = toy.exercises.check("{exercise}", {function}, seed={hidden_seed})\n'
              "assert result.passed, str(result)\n"
              "### END HIDDEN TESTS")
    cell = nbformat.v4.new_code_cell(source)
    cell.metadata["nbgrader"] = {"grade": True, "solution": False, "locked": True, "task": False,
                                 "points": points, "grade_id": _grade_id(f"test-{exercise}"),
                                 "schema_version": SCHEMA}
    return cell


def course_student(hidden_seed: int, secret: bytes | None = None) -> str:
    """The name the course's instance of every question is drawn from: a hash of the hidden seed, keyed by the
    course's secret when there is one (``course/secret.py``), which the students' release shows, so that it does
    not give the seed of the hidden tests away."""
    if secret is not None:
        return "course-" + hmac.new(secret, f"nbgrader\0{hidden_seed}".encode(), hashlib.sha256).hexdigest()[:12]
    return "course-" + hashlib.sha256(f"questions\0{hidden_seed}".encode()).hexdigest()[:12]


def _nbgrader(cell, grade_id: str, **marks) -> nbformat.NotebookNode:
    cell.metadata["nbgrader"] = {"grade": False, "solution": False, "locked": False, "task": False, **marks,
                                 "grade_id": _grade_id(grade_id), "schema_version": SCHEMA}
    return cell


def answer_cells(question: str, hidden_seed: int, secret: bytes | None = None) -> list[nbformat.NotebookNode]:
    """A question's answer as a solution cell (the course instance's answer between the markers) and its test."""
    q = QUESTIONS[question]
    right = as_value(q, q.spec(q.instance(course_student(hidden_seed, secret)))["answer"])
    name = "answer_" + re.sub(r"\W", "_", question.removeprefix("ex-"))
    solution = nbformat.v4.new_code_cell(f"### BEGIN SOLUTION\n{name} = {right!r}\n### END SOLUTION\n"
                                         f"toy.exercises.answer({question!r}, {name})")
    test = nbformat.v4.new_code_cell(f"assert toy.exercises.answer({question!r}, {name}).right, "
                                     f"str(toy.exercises.answer({question!r}, {name}))")
    return [_nbgrader(solution, f"answer-{question}", solution=True),
            _nbgrader(test, f"test-{question}", grade=True, locked=True, points=q.points)]


def written_cell(cell, exercise: str) -> nbformat.NotebookNode:
    """A written answer as nbgrader's manually graded answer cell, worth its rubric's points."""
    points = sum(c.points for c in RUBRICS[exercise])
    return _nbgrader(nbformat.v4.new_markdown_cell(cell.source), f"written-{exercise}", grade=True, solution=True,
                     points=points)


def source_notebook(nb, hidden_seed: int, secret: bytes | None = None):
    """The nbgrader source version of one book notebook (outputs stripped); its one instance of the questions is
    drawn from the hidden seed and the course's ``secret``."""
    out = nbformat.from_dict(json.loads(json.dumps(nb)))
    cells, pending = [], {}
    for cell in out.cells:
        tags = cell.get("metadata", {}).get("tags", [])
        if cell.cell_type == "code":
            cell.outputs, cell.execution_count = [], None
        asked = ANSWER_CALL.match(cell.source) if cell.cell_type == "code" else None
        if asked and asked.group(1) in QUESTIONS and not QUESTIONS[asked.group(1)].practice:
            cells += answer_cells(asked.group(1), hidden_seed, secret)
            continue  # (a practice question's cell stays as it is: checked in the notebook, never graded)
        if cell.cell_type == "markdown" and cell.metadata.get("toy_written") in RUBRICS:
            cells.append(written_cell(cell, cell.metadata["toy_written"]))
            continue
        if cell.cell_type == "code" and EXERCISE_TAG in tags:
            continue  # the stub: the solution cell below takes its place
        if SOLUTION_TAG in tags:
            if cell.cell_type == "code" and re.match(r"def \w+", cell.source):
                pending[re.match(r"def (\w+)", cell.source).group(1)] = solution_cell(cell.source)
            continue
        checks = CHECK_CALL.findall(cell.source) if cell.cell_type == "code" else []
        if checks:
            for exercise, function in checks:
                if function in pending:
                    cells.append(pending.pop(function))
                cells.append(test_cell(exercise, function, hidden_seed))
            continue
        cells.append(cell)
        if cell.cell_type == "code" and "import toy" in cell.source and not any(
                "toy.exercises.student(" in c.source for c in cells) and any(
                ANSWER_CALL.match(c.source) for c in out.cells if c.cell_type == "code"):
            name = nbformat.v4.new_code_cell(f"toy.exercises.student({course_student(hidden_seed, secret)!r})  # the "
                                             "course's "
                                             "instance of the questions")
            cells.append(_nbgrader(name, "course-instance", locked=True))
    out.cells = cells
    out.metadata.pop("widgets", None)
    out.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    return out


KERNEL_DIR = Path("jupyter") / "kernels" / "python3"  # in the course folder, found through nbgrader_config.py
KERNEL_ENV = {"TOY_EXPLORER_VIEW": "text"}
"""The graded kernel's environment: explorers as their title only (``toy/page/explorer.py``'s text view, which
computes nothing: autograde needs the checks, not the figures), figures in the book's static view, none as live
widgets, so an autograded notebook stores no widget state (each live explorer's FigureWidget carries about
5 MB of plotly.js: 118 MB of notebooks per student before)."""
CONFIG = """\
c = get_config()  # noqa: F821 - nbgrader's config loader provides it
c.CourseDirectory.course_id = "{assignment}"
c.Execute.timeout = 300  # seconds per cell
# An autograded notebook keeps no widget state: the kernel shows explorers as their titles (TOY_EXPLORER_VIEW=text in
# jupyter/kernels/python3/kernel.json), and after the run nbgrader drops the notebook's metadata other than its
# kernel and language, so the widget state a student's Jupyter saved with the notebook (megabytes) goes too.
# Cells keep theirs (nbgrader's own marks).
c.ClearMetadataPreprocessor.enabled = True
c.ClearMetadataPreprocessor.clear_cell_metadata = False
c.ClearMetadataPreprocessor.preserve_nb_metadata_mask = {{"kernelspec", "language_info"}}

# Written by `scripts/course.py nbgrader`, so that nbgrader's commands work however they are started:
import os, sys  # noqa: E401,E402
from pathlib import Path  # noqa: E402

_here = Path(__file__).resolve().parent
# the notebooks run in the kernel `python3` of this folder (jupyter/kernels/python3: the book's environment, with
# numpy and toy), not in nbgrader's own Python, which has neither
os.environ["JUPYTER_PATH"] = os.pathsep.join(
    [str(_here / "jupyter"), *filter(None, os.environ.get("JUPYTER_PATH", "").split(os.pathsep))])
# nbgrader starts `alembic` (its database migrations) by name: the one beside nbgrader's Python
os.environ["PATH"] = os.pathsep.join([str(Path(sys.executable).parent), os.environ.get("PATH", "")])
"""


def write_kernel(out: Path, python: str) -> Path:
    """The kernel spec ``python3`` in the course folder, running ``python`` (which must have ipykernel, numpy and
    toy: the book's ``.venv``) with ``KERNEL_ENV`` set."""
    folder = out / KERNEL_DIR
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "kernel.json").write_text(json.dumps({
        "argv": [python, "-m", "ipykernel_launcher", "-f", "{connection_file}"],
        "display_name": "Python 3 (the book's toy)", "language": "python", "env": dict(KERNEL_ENV)},
        indent=1) + "\n")
    return folder


def write_course(out: Path, notebooks: list[Path], assignment: str, hidden_seed: int | None = None,
                 python: str | None = None, secret: bytes | None = None) -> Path:
    """Write an nbgrader course folder: ``nbgrader_config.py``, ``source/<assignment>/<notebook>.ipynb`` and the
    kernel the notebooks are graded in (``python``, default this Python); the one instance of the questions is
    drawn with the course's ``secret``."""
    import sys

    hidden_seed = secrets.randbelow(2**31) if hidden_seed is None else hidden_seed
    source = out / "source" / assignment
    source.mkdir(parents=True, exist_ok=True)
    for path in notebooks:
        private.write(source / path.name,
                      nbformat.writes(source_notebook(nbformat.read(path, as_version=4), hidden_seed, secret)) + "\n")
    (out / "nbgrader_config.py").write_text(CONFIG.format(assignment=assignment))
    write_kernel(out, python or sys.executable)
    return source
