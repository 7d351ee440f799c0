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

from toy.exercises.questions import QUESTIONS, RUBRICS, as_value, normal_name, questions_of

from . import private, roster
from . import secret as course_secret
from .assignment import WRITTEN, Assignment, points_text
from .classroom import BookNotebook
from .marks import exercises_checked
from .slicing import normal

ROOT = Path(__file__).resolve().parents[1]
CHAPTERS = ROOT / "chapters"
SOLUTION_TAG, EXERCISE_TAG = "solution", "exercise"
CHECK_CALL = re.compile(r"toy\.exercises\.check\(\s*[\"']([^\"']+)[\"']")
ASK_CALL = re.compile(r"toy\.exercises\.ask\(\s*[\"']([^\"']+)[\"']")
SOLUTION_FENCE = re.compile(r"^```\{solution\} (\S+)\n(?::[^\n]*\n)*\n?(.*?)^```", re.M | re.S)


def book_notebooks() -> list[Path]:
    """The section notebooks (4.1 to 4.5), which hold the exercises; the optional pages (key concepts, review)
    hold none and are not part of the course."""
    return sorted(p for p in CHAPTERS.rglob("4.*.ipynb") if ".ipynb_checkpoints" not in p.parts)


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


STUDENT_CELL = ("# The name your course knows you by: each question's answer is checked for your own instance of it, "
                "drawn from\n# this name (the grader draws it from the name you hand in under). If your course "
                "gave you a key, put it\n# beside the name: toy.exercises.student(\"Your Name\", \"your key\").\n"
                "toy.exercises.student({name!r})")


KEYED_CELL = ("# Your name as your course knows you, and your key: each question's answer is checked for your own "
              "instance of it,\n# drawn from them (the grader draws it from the name you hand in under). Keep "
              "both as they are.\ntoy.exercises.student({name!r}, {key!r})")


LABEL = re.compile(r"^```\{exercise\}[^\n]*\n:label: (ex-[\w-]+)", re.M)


def exercise_parts(nb) -> dict[str, dict[str, float]]:
    """{exercise label: {part: default points}} for a notebook's exercises, in order: the code checks that follow
    the exercise (1 point each), its graded questions (their points; a practice question is not graded) and its
    written answer (its rubric's points)."""
    parts: dict[str, dict[str, float]] = {}
    label = None
    for cell in nb.cells:
        found = LABEL.search(cell.source) if cell.cell_type == "markdown" else None
        if found:
            label = found.group(1)
            parts[label] = {q.name: float(q.points) for q in questions_of(label) if not q.practice}
            if label in RUBRICS:
                parts[label][f"{label} {WRITTEN}"] = float(sum(c.points for c in RUBRICS[label]))
        elif label and cell.cell_type == "code":
            for exercise in CHECK_CALL.findall(cell.source):
                parts[label][exercise] = 1.0
    return parts


def for_assignment(nb, assignment: Assignment):
    """``nb`` with the assignment's name and due date at the top and, under each exercise, its points in this
    assignment or that it is not part of it."""
    out = nbformat.from_dict(json.loads(json.dumps(nb)))
    parts = exercise_parts(out)
    picked = [label for label in parts if assignment.picks(label)]
    due = f", due **{assignment.due}**" if assignment.due else ""
    lines = [f"**Assignment: {assignment.name}**{due}."]
    lines += [f"- {{ref}}`{label}`: {points_text(sum(assignment.scale(label, parts[label]).values()))}"
              for label in picked] or ["- No exercise of this section is part of it."]
    cells = [nbformat.v4.new_markdown_cell("\n".join(lines), metadata={"tags": ["assignment"]})]
    for cell in out.cells:
        cells.append(cell)
        found = LABEL.search(cell.source) if cell.cell_type == "markdown" else None
        if found:
            label = found.group(1)
            said = (f"*This exercise: {points_text(sum(assignment.scale(label, parts[label]).values()))}.*"
                    if assignment.picks(label) else "*Not part of this assignment.*")
            cells.append(nbformat.v4.new_markdown_cell(said, metadata={"tags": ["assignment"]}))
    at = 1 if out.cells and out.cells[0].cell_type == "markdown" and out.cells[0].source.startswith("#") else 0
    out.cells = cells[1:at + 1] + cells[:1] + cells[at + 1:]
    return out


def with_student(nb, name: str | None, key: str | None = None):
    """``nb`` with the cell that names its student (``toy.exercises.student``, with the student's ``key`` when the
    course has a secret) after its first ``import toy``."""
    out = nbformat.from_dict(json.loads(json.dumps(nb)))
    at = next((i for i, c in enumerate(out.cells) if c.cell_type == "code" and "import toy" in c.source), None)
    if at is not None and any(ASK_CALL.search(c.source) for c in out.cells if c.cell_type == "code"):
        source = STUDENT_CELL.format(name=name) if not (name and key) else KEYED_CELL.format(name=name, key=key)
        out.cells.insert(at + 1, nbformat.v4.new_code_cell(source, metadata={"tags": ["student"]}))
    return out


COLAB_INSTALL = re.compile(r'^([ \t]*)%pip install --quiet "toy @ git\+https://github\.com/[\w.-]+/[\w.-]+"[ \t]*$',
                           re.M)
NO_REPOSITORY = ("raise RuntimeError(\"This edition does not know where the book's toy package comes from: ask your "
                 "instructor for the install line, %pip install 'toy @ git+https://github.com/<owner>/<name>'\")")


def repository() -> tuple[str | None, str]:
    """The book's repository as the book's build finds it (``book/_ext/toysite.py``), and where it came from."""
    import sys

    folder = str(ROOT / "book" / "_ext")
    if folder not in sys.path:
        sys.path.insert(0, folder)
    import toysite

    return toysite.repository()


def colab_setup(nb, url: str | None):
    """``nb`` with its Colab set-up cell installing ``toy`` from ``url`` (the book's repository); without one, the
    cell says on Colab that it does not know where to install from (never a placeholder's failing install)."""
    out = nbformat.from_dict(json.loads(json.dumps(nb)))
    for cell in out.cells:
        if cell.cell_type == "code" and "colab-setup" in cell.get("metadata", {}).get("tags", []):
            line = (f'%pip install --quiet "toy @ git+{url}"' if url else NO_REPOSITORY)
            cell.source = COLAB_INSTALL.sub(lambda m, line=line: m.group(1) + line, cell.source)
    return out


def write_editions(out: Path, students: list | None = None, assignment: Assignment | None = None,
                   secret: bytes | None = None, url: str | None = None) -> dict[str, list[Path]]:
    """Write ``out/student`` and ``out/instructor``: one notebook per section, folders ready to hand out. With
    ``students`` (names, or ``roster.Student``), ``out/student/<name>/`` holds each student's own edition, their
    name already set (and, with the course's ``secret``, their key: ``course/secret.py``); a bad roster is refused,
    naming each bad line, before anything is written. With an ``assignment``, the student editions show its name,
    due date and points. ``url``: the book's repository, which the Colab set-up cell installs ``toy`` from."""
    given = [s if isinstance(s, roster.Student) else roster.Student(s, s, "", s) for s in students or []]
    # refuses duplicates, hidden or over-long names, paths; each edition keeps the name as the roster wrote it
    checked = roster.from_names([s.name for s in given])
    as_written = {normal_name(s.name): s.as_written for s in given}
    names = [as_written.get(s.name, s.name) for s in checked]
    written = {"student": [], "instructor": []}
    private.folder(out)
    for edition in written:
        folder = out / edition
        if folder.exists():
            shutil.rmtree(folder)
        private.folder(folder)
    for path in book_notebooks():
        nb = colab_setup(nbformat.read(path, as_version=4), url)
        strip_outputs(nb)
        target = out / "instructor" / path.name
        private.write(target, nbformat.writes(answered_at_the_books_setting(nb)) + "\n")
        written["instructor"].append(target)
        for name in names or [None]:
            folder = out / "student" / name if name else out / "student"
            private.folder(folder)
            edition = with_student(student_edition(nb), name, course_secret.student_key(secret, name or ""))
            if assignment is not None:
                edition = for_assignment(edition, assignment)
            private.write(folder / path.name, nbformat.writes(edition) + "\n")
            written["student"].append(folder / path.name)
    return written


ANSWER_CELL = re.compile(r'^toy\.exercises\.answer\("([^"]+)", \.\.\.\)', re.M)


def answered_at_the_books_setting(nb):
    """``nb`` with each question's ``...`` replaced by its answer at the book's setting (the instructor edition:
    every question right when run, as the page's answer boxes are; graded under a student's name it answers the
    book's instance, not that student's)."""
    out = nbformat.from_dict(json.loads(json.dumps(nb)))
    for cell in out.cells:
        if cell.cell_type != "code":
            continue

        def right(m: re.Match) -> str:
            q = QUESTIONS.get(m.group(1))
            if q is None:
                return m.group(0)
            return f"toy.exercises.answer({q.name!r}, {as_value(q, q.spec()['answer'])!r})"

        cell.source = ANSWER_CELL.sub(right, cell.source).replace("  # replace ... with your answer",
                                                                  "  # the answer at the book's setting")
    return out


def _defines(source: str) -> str | None:
    match = re.match(r"\s*def (\w+)", source)
    return match.group(1) if match else None


def book() -> dict[str, BookNotebook]:
    """{notebook file name: its exercises, stubs and solutions} from the book's own notebooks."""
    found = {}
    for path in book_notebooks():
        nb = nbformat.read(path, as_version=4)
        entry = BookNotebook(exercises_checked(nb), cells=frozenset(
            normal(c.source) for c in student_edition(nb).cells if c.cell_type == "code"), parts=exercise_parts(nb))
        for cell in nb.cells:
            tags = cell.get("metadata", {}).get("tags", [])
            for exercise in ASK_CALL.findall(cell.source) if cell.cell_type == "code" else ():
                if questions_of(exercise):
                    entry.questions.append(exercise)
                if exercise in RUBRICS:
                    entry.written.append(exercise)
            for exercise, text in SOLUTION_FENCE.findall(cell.source) if cell.cell_type == "markdown" else ():
                entry.worked[exercise] = text.strip()
            if cell.cell_type == "code" and _defines(cell.source):
                if SOLUTION_TAG in tags:
                    entry.solutions[_defines(cell.source)] = cell.source
                elif EXERCISE_TAG in tags:
                    entry.stubs[_defines(cell.source)] = cell.source
        found[path.name] = entry
    return found
