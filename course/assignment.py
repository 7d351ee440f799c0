"""An assignment: the exercises an instructor picks from the chapter, the points each is worth, and a due date.

It is a small TOML file::

    name = "Week 3: the LLM as a policy"
    due = "2027-01-15 23:59"
    [points]                  # exercise labels, as in the book, and what each is worth
    ex-4-1-value = 2
    ex-4-1-telescope = 9
    ex-4-1-predict = 1

An exercise is marked in *parts*, the gradebook's columns: its code check (``4.1-value``), its questions
(``ex-4-1-predict``) and its written answer (``ex-4-1-telescope written``). By default a check is worth 1, a question
its declared points and a written answer its rubric's points; an assignment scales an exercise's parts so that they
add up to its points. Without a file, every exercise counts at its default points.

A question whose instances coincide too often (``course/coincidence.py``: a classmate's right answer, or the page's,
right for more than 5 % of students) is *practice*: checked, never graded. An assignment may count practice
questions all the same, knowing that risk (the commands print the coincidence table of each one counted)::

    count_practice = true                                 # every practice question of the exercises picked
    count_practice = ["ex-4-1-predict", "ex-4-2-prior"]   # or these: question names or exercise labels
"""

from __future__ import annotations

import math
import tomllib
from dataclasses import dataclass, field
from pathlib import Path

import toy.exercises  # noqa: F401  (declares the questions)
from toy.exercises.questions import QUESTIONS, questions_of

WRITTEN = "written"  # a written answer's part: "ex-4-1-telescope written"


@dataclass
class Assignment:
    name: str = "The LLM as a Policy"
    due: str = ""
    points: dict = field(default_factory=dict)  # exercise label -> points; empty: every exercise, default points
    count_practice: frozenset = frozenset()  # the practice questions this assignment counts (marked like the rest)

    def picks(self, label: str) -> bool:
        return not self.points or label in self.points

    def counts(self, question: str) -> bool:
        """Whether ``question`` carries a mark here: a graded question, or a practice one the assignment counts."""
        q = QUESTIONS.get(question)
        return q is not None and (not q.practice or question in self.count_practice)

    def parts(self, label: str, parts: dict[str, float]) -> dict[str, float]:
        """Exercise ``label``'s parts ({part: default points}) with the practice questions this assignment counts."""
        counted = {q.name: float(q.points) for q in questions_of(label) if q.practice and q.name in self.count_practice}
        return {**counted, **parts} if counted else dict(parts)

    def scale(self, label: str, parts: dict[str, float]) -> dict[str, float]:
        """The points of each part of exercise ``label`` ({part: default points}) in this assignment."""
        if not self.picks(label):
            return {}
        parts = self.parts(label, parts)
        if not self.points:
            return dict(parts)
        total = sum(parts.values())
        return {part: self.points[label] * p / total for part, p in parts.items()}


@dataclass(frozen=True)
class Points:
    """The points rule of one assignment, the one every route that marks uses (``course.py grade``'s gradebook and
    Gradescope's results): a part's mark in the assignment is ``mark / default × worth``, where ``default`` is the
    part's points in the book (a check's 1, a question's declared points, a rubric's points) and ``worth`` its points
    in the assignment (``Assignment.scale``); a part the assignment does not grade is worth 0."""

    defaults: dict  # part -> its points in the book
    worth: dict  # part -> its points in this assignment (only the parts it grades)
    label_of: dict  # part -> the label of its exercise
    assignment: Assignment = field(default_factory=Assignment)

    def picks(self, part: str, label: str | None = None) -> bool:
        """Whether the assignment grades ``part`` (of the exercise ``label``, or the part's own exercise)."""
        return self.assignment.picks(label or self.label_of.get(part, part))

    def mark(self, part: str, mark: float) -> float:
        """The part's points in the assignment for ``mark`` of its default points (unrounded)."""
        worth = self.worth.get(part, 0)
        return mark / self.defaults[part] * worth if worth and part in self.defaults else 0


def points_rule(book: dict, assignment: Assignment | None = None) -> Points:
    """The ``Points`` rule of ``assignment`` (default: every exercise at its default points) over ``book``, the
    chapter's notebooks (``editions.book()``: each with ``parts``, {exercise label: {part: default points}})."""
    assignment = assignment or Assignment()
    labelled = [(label, parts) for nb in book.values() for label, parts in nb.parts.items()]
    return Points(defaults={part: p for label, parts in labelled for part, p in assignment.parts(label, parts).items()},
                  worth={part: p for label, parts in labelled for part, p in assignment.scale(label, parts).items()},
                  label_of={part: label for label, parts in labelled for part in assignment.parts(label, parts)},
                  assignment=assignment)  # defaults and labels include the practice questions the assignment counts


def load(path: Path, known: dict[str, dict[str, float]]) -> Assignment:
    """Read an assignment file; ``known`` is every exercise label with its parts. Errors name what is wrong."""
    try:
        data = tomllib.loads(Path(path).read_text(encoding="utf-8"))
    except OSError as err:
        raise ValueError(f"the assignment file {path} could not be read ({err.strerror})") from None
    except tomllib.TOMLDecodeError as err:
        raise ValueError(f"the assignment file {path} is not TOML: {err}") from None
    unknown = sorted(set(data) - {"name", "due", "points", "count_practice"})
    if unknown:
        raise ValueError(f"{path}: unknown keys {', '.join(unknown)} (allowed: name, due, points, count_practice)")
    points = data.get("points", {})
    counted = _counted(path, data.get("count_practice", False), points if isinstance(points, dict) else {}, known)
    if not isinstance(points, dict) or not points:
        raise ValueError(f"{path}: [points] must list at least one exercise label with its points")
    for label, value in points.items():
        if label not in known:
            raise ValueError(f"{path}: {label!r} is not an exercise of the chapter; known: {', '.join(known)}")
        if not known[label] and not any(q.exercise == label for q in map(QUESTIONS.get, counted)):
            graded = ", ".join(k for k, parts in known.items() if parts)
            raise ValueError(f"{path}: {label} has nothing graded (its questions are practice: too few instances "
                             f"for a mark to mean anything, see the instructors' page); exercises graded: {graded}; "
                             "or count its practice questions: count_practice = true")
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) or value <= 0:
            raise ValueError(f"{path}: the points of {label} must be a number above 0, got {value!r}")
    for key in ("name", "due"):
        if key in data and not isinstance(data[key], str):
            raise ValueError(f"{path}: {key} must be text in quotes, got {data[key]!r}")
    return Assignment(data.get("name", Assignment.name), data.get("due", ""), {k: float(v) for k, v in points.items()},
                      counted)


def _counted(path: Path, value, points: dict, known: dict) -> frozenset:
    """The practice questions ``count_practice`` names: all of the exercises picked (``true``), or those listed by
    question name or exercise label."""
    practice = [q for q in QUESTIONS.values() if q.practice]
    if value is False:
        return frozenset()
    if value is True:
        return frozenset(q.name for q in practice if not points or q.exercise in points)
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ValueError(f"{path}: count_practice must be true, false or a list of question names or exercise "
                         f"labels in quotes, got {value!r}")
    out = set()
    for name in value:
        found = [q.name for q in practice if name in (q.name, q.exercise)]
        if not found:
            raise ValueError(f"{path}: count_practice: {name!r} is not a practice question or an exercise with one; "
                             f"practice questions: {', '.join(q.name for q in practice)}")
        out.update(found)
    return frozenset(out)


def points_text(value: float) -> str:
    return f"{value:g} point" + ("" if value == 1 else "s")
