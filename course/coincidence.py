"""How often a question's instances coincide: for each question, over a class of many names with a course secret,
the chance that a classmate's right answer is also right for another student, and the chance that the book page's
answer is right for a student. A graded question keeps both at or below ``LIMIT``; one that cannot is declared
``practice=True`` (checked in the notebook, never graded). ``python -m course.coincidence`` prints the table.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

import numpy as np

from toy.exercises.questions import QUESTIONS, Question, judge

from .secret import student_key

LIMIT = 0.05
NAMES = 1000
SECRET = bytes(range(32))  # any secret: the keys it makes are as random as any course's


@dataclass
class Row:
    question: str
    settings: int  # distinct instances among the names
    classmate: float  # P(a classmate's right answer is right for another student)
    book: float  # P(the page's answer is right for a student)
    practice: bool

    @property
    def holds(self) -> bool:
        return self.classmate <= LIMIT and self.book <= LIMIT


def _right(q: Question, specs: list[dict]) -> np.ndarray:
    """right[i, j]: instance i's right answer is judged right for instance j (by ``judge``: instance j's tolerance,
    one number or one per number, and the approximations it accepts)."""
    answers = [s["answer"] for s in specs]
    if q.kind not in ("number", "numbers"):
        keys = [json.dumps(x) for x in answers]
        return np.array([[x == y for y in keys] for x in keys])
    a = np.array(answers, float)
    tol = np.array([np.broadcast_to(np.asarray(s["tolerance"], float), a.shape[1:]) for s in specs])
    right = (np.abs(a[:, None, :] - a[None, :, :]) <= tol[None, :, :] + 1e-12).all(axis=2)
    if any(s.get("accepted") for s in specs):  # an approximation widens what is right: judge each pair
        right |= np.array([[judge(sj, [float(x) for x in ai]).right for sj in specs] for ai in answers])
    return right


def measure(q: Question, names: int = NAMES, secret: bytes = SECRET) -> Row:
    """The question's row of the table, over ``names`` students of a course with ``secret``."""
    if q.draw is None:
        return Row(q.name, 1, 1.0, 1.0, q.practice)
    groups: dict[str, list] = {}
    for i in range(names):
        setting = q.instance(f"student {i}", student_key(secret, f"student {i}"))
        groups.setdefault(json.dumps(setting, sort_keys=True, default=str), [setting, 0])[1] += 1
    settings = list(groups.values())
    specs = [q.spec(s) for s, _ in settings]
    w = np.array([n for _, n in settings], float)
    right = _right(q, specs).astype(float)
    same = (w[:, None] * w[None, :] * right).sum() - w.sum()  # ordered pairs of two different students
    classmate = same / (w.sum() * (w.sum() - 1))
    book = _right(q, [q.spec(), *specs]).astype(float)[0, 1:]
    return Row(q.name, len(settings), float(classmate), float((w * book).sum() / w.sum()), q.practice)


def table(names: int = NAMES) -> list[Row]:
    return [measure(q, names) for q in QUESTIONS.values()]


def text(rows: list[Row]) -> str:
    lines = [f"{'question':24} {'instances':>9} {'classmate':>9} {'book page':>9}  graded?"]
    for r in rows:
        lines.append(f"{r.question:24} {r.settings:9d} {r.classmate:9.3f} {r.book:9.3f}  "
                     f"{'practice' if r.practice else 'graded'}")
    return "\n".join(lines)


def risk(questions) -> str:
    """What an assignment that counts the practice ``questions`` takes on: their rows of the table, and what the
    numbers mean."""
    rows = [measure(QUESTIONS[q], NAMES) for q in sorted(questions)]
    copied = sum(1 for r in rows if r.classmate > LIMIT)
    return (f"count_practice: {len(rows)} practice questions count for marks. Over {NAMES:,} names, 'classmate' is "
            "the chance that a classmate's right answer is also right for a student, 'book page' the chance that "
            f"the page's own answer is: above {LIMIT:.0%} a mark there can be copied ({copied} of these). The risk "
            "you take:\n" + text(rows))


if __name__ == "__main__":
    import toy.exercises  # noqa: F401  (declares the questions)

    print(text(table()))
