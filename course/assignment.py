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
"""

from __future__ import annotations

import math
import tomllib
from dataclasses import dataclass, field
from pathlib import Path

WRITTEN = "written"  # a written answer's part: "ex-4-1-telescope written"


@dataclass
class Assignment:
    name: str = "The LLM as a Policy"
    due: str = ""
    points: dict = field(default_factory=dict)  # exercise label -> points; empty: every exercise, default points

    def picks(self, label: str) -> bool:
        return not self.points or label in self.points

    def scale(self, label: str, parts: dict[str, float]) -> dict[str, float]:
        """The points of each part of exercise ``label`` ({part: default points}) in this assignment."""
        if not self.picks(label):
            return {}
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
    return Points(defaults={part: p for _, parts in labelled for part, p in parts.items()},
                  worth={part: p for label, parts in labelled for part, p in assignment.scale(label, parts).items()},
                  label_of={part: label for label, parts in labelled for part in parts}, assignment=assignment)


def load(path: Path, known: dict[str, dict[str, float]]) -> Assignment:
    """Read an assignment file; ``known`` is every exercise label with its parts. Errors name what is wrong."""
    try:
        data = tomllib.loads(Path(path).read_text(encoding="utf-8"))
    except OSError as err:
        raise ValueError(f"the assignment file {path} could not be read ({err.strerror})") from None
    except tomllib.TOMLDecodeError as err:
        raise ValueError(f"the assignment file {path} is not TOML: {err}") from None
    unknown = sorted(set(data) - {"name", "due", "points"})
    if unknown:
        raise ValueError(f"{path}: unknown keys {', '.join(unknown)} (allowed: name, due, points)")
    points = data.get("points", {})
    if not isinstance(points, dict) or not points:
        raise ValueError(f"{path}: [points] must list at least one exercise label with its points")
    for label, value in points.items():
        if label not in known:
            raise ValueError(f"{path}: {label!r} is not an exercise of the chapter; known: {', '.join(known)}")
        if not known[label]:
            graded = ", ".join(k for k, parts in known.items() if parts)
            raise ValueError(f"{path}: {label} has nothing graded (its questions are practice: too few instances "
                             f"for a mark to mean anything, see the instructors' page); exercises graded: {graded}")
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) or value <= 0:
            raise ValueError(f"{path}: the points of {label} must be a number above 0, got {value!r}")
    for key in ("name", "due"):
        if key in data and not isinstance(data[key], str):
            raise ValueError(f"{path}: {key} must be text in quotes, got {data[key]!r}")
    return Assignment(data.get("name", Assignment.name), data.get("due", ""), {k: float(v) for k, v in points.items()})


def points_text(value: float) -> str:
    return f"{value:g} point" + ("" if value == 1 else "s")
