"""One points rule (``course.assignment.points_rule``): the command line's gradebook (``classroom.write_reports``)
and Gradescope's results (``gradescope.grade``) give the same points for the same graded submission."""

from __future__ import annotations

import csv

import pytest

from course import classroom, editions, gradescope
from course.assignment import Assignment, points_rule
from course.marks import AnswerKey

NOTEBOOK = "4.4-post-training-pipeline.ipynb"
WEEK = {"ex-4-4-bc-cost": 3.0, "ex-4-4-closed-form": 7.0, "ex-4-4-predict": 2.5, "ex-4-1-value": 4.0}


def record(student: str, passes: dict, marks: dict) -> dict:
    """What ``classroom.grade_submission`` returns for a graded 4.4 notebook."""
    return {"student": student, "notebook": NOTEBOOK, "file": NOTEBOOK,
            "exercises": [{"exercise": ex, "status": "pass" if ok else "fail", "message": "m", "cases_passed": int(ok),
                           "cases_total": 1} for ex, ok in passes.items()],
            "answers": [{"question": q, "status": "right" if m else "wrong", "message": "m", "mark": m}
                        for q, m in marks.items()],
            "written": {}}


CASES = [({"4.4-bc-cost": True, "4.4-sft-counts": True}, {"ex-4-4-closed-form": 1, "ex-4-4-predict": 1}),
         ({"4.4-bc-cost": False, "4.4-sft-counts": True}, {"ex-4-4-closed-form": 0, "ex-4-4-predict": 1}),
         ({"4.4-bc-cost": True, "4.4-sft-counts": False}, {"ex-4-4-closed-form": 1, "ex-4-4-predict": 0})]


@pytest.mark.parametrize("points", [WEEK, {}], ids=["assignment", "default points"])
@pytest.mark.parametrize(("passes", "marks"), CASES)
def test_command_line_and_gradescope_give_the_same_points(tmp_path, monkeypatch, points, passes, marks):
    book = editions.book()
    assignment = Assignment("Week", "", points)
    graded = record("student", passes, marks)
    keys = {name: AnswerKey(0, dict(nb.exercises)) for name, nb in book.items()}

    out = tmp_path / "out"
    (out / "feedback").mkdir(parents=True)
    classroom.write_reports(out, [graded], book, keys, assignment=assignment)
    with open(out / "grades.csv", encoding="utf-8") as f:
        command_line = {row["exercise"]: float(row["mark"]) for row in csv.DictReader(f)}

    root = tmp_path / "autograder"
    config = gradescope._config(root)
    config.mkdir(parents=True)
    if points:
        (config / "assignment.toml").write_text("[points]\n" + "".join(f'{k} = {v}\n' for k, v in points.items()),
                                                encoding="utf-8")
    (config / "roster.csv").write_text("name,login,sis_id\nstudent,student@example.edu,S1\n", encoding="utf-8")
    (root / "submission_metadata.json").write_text('{"users": [{"name": "student", "sid": "S1"}]}', encoding="utf-8")
    (root / "submission").mkdir()
    (root / "submission" / NOTEBOOK).write_text("{}", encoding="utf-8")
    monkeypatch.setattr(classroom, "grade_submission", lambda *args, **kw: graded)
    monkeypatch.setattr(gradescope, "_isolation", lambda limits: {"isolation": "none (test)", "user": "-",
                                                                  "limits": "-"})
    results = gradescope.grade(root, seed=0)
    on_gradescope = {t["name"].rsplit(" (", 1)[0]: t["score"] for t in results["tests"] if t["max_score"]}

    assert command_line and command_line.keys() - {""} == on_gradescope.keys()
    for part, mark in on_gradescope.items():
        assert command_line[part] == pytest.approx(mark, abs=0.005), part
    assert sum(command_line.values()) == pytest.approx(results["score"], abs=0.01)
    rule = points_rule(book, assignment)
    assert on_gradescope == {p: pytest.approx(rule.mark(p, 1 if passes.get(p) or marks.get(p) else 0), abs=1e-4)
                             for p in on_gradescope}


def test_the_rule_is_mark_over_default_times_worth():
    book = editions.book()
    rule = points_rule(book, Assignment("Week", "", WEEK))
    assert rule.worth["ex-4-4-closed-form"] == pytest.approx(0.7) and rule.worth["ex-4-4-closed-form written"] == \
        pytest.approx(6.3)
    assert rule.mark("ex-4-4-closed-form written", 4.5) == pytest.approx(4.5 / 9 * 6.3)
    assert rule.mark("4.4-bc-cost", 1) == 3.0 and rule.mark("4.4-bc-cost", 0) == 0
    assert rule.mark("4.4-sft-counts", 1) == 0  # not in the assignment: worth nothing
    assert rule.picks("4.1-value") and not rule.picks("4.1-token-advantages")
    assert points_rule(book).mark("4.4-sft-counts", 1) == 1.0  # without an assignment: the default points
