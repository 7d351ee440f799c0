"""Issue 40: assignments honoured end to end, for a class of 10 with the names of issue 40 (course/classroom.py,
course/cli.py).

``course.py editions`` and ``course.py grade --assignment week.toml --anonymous`` from a course folder with a roster
(ZWNJ, NFD, a quote, a CJK name, an apostrophe, a 150-character name, logins that start like formulas): only the
assignment's exercises are graded and paged; the feedback carries each part's points and the total; grades.csv agrees
with the gradebook; the output goes to a folder of the assignment's own, which another assignment may not overwrite;
marked by hand and resumed, every student has their marks in the gradebook and in Canvas and Moodle files an LMS
would match.
"""

from __future__ import annotations

import csv
import json
import shutil
import time
import unicodedata
from html import escape

import nbformat
import pytest

from course import cli, written
from course import secret as course_secret
from course.tables import read_cell
from tests.test_grading import LIMITS, own_uids
from toy.exercises import questions as Q

NOTEBOOK = "4.3-classical-vs-llm-rl.ipynb"
WEEK = '''name = "Week 5"
due = "2027-02-01 23:59"
[points]
ex-4-3-discounted-return = 2
ex-4-3-discount = 14
'''
NAMES = ["Zahra Mehr\u200cAbadi", "José Núñez", "'Quinn", "李小龍", "O'Brien", "N" * 150, "Ana", "Bo", "Cy", "Di"]
LOGINS = ["zmehr", "=jnunez", "-quinn", "@li", "+obrien", "nlong", "ana", "bo", "cy", "di"]
PICKED = ["ex-4-3-discount-a", "ex-4-3-discount-b"]  # b is practice: in grades.csv, worth nothing


def answered(edition, name: str, key: str, right: bool):
    nb = nbformat.read(edition, as_version=4)
    for cell in nb.cells:
        for question in PICKED:
            if cell.source.startswith(f'toy.exercises.answer("{question}", ...)'):
                q = Q.QUESTIONS[question]
                value = Q.as_value(q, q.spec(q.instance(name, key))["answer"]) if right else -123.0
                cell.source = f"toy.exercises.answer({question!r}, {value!r})"
        if cell.get("metadata", {}).get("toy_written") == "ex-4-3-discount":
            cell.source += "\n\nThe discount shortens the horizon."
    return nb


@pytest.fixture
def course(tmp_path, monkeypatch):
    own_uids(monkeypatch)
    home = tmp_path / "course"
    home.mkdir()
    monkeypatch.setenv("TOYBOOK_COURSE_DIR", str(home))
    with open(home / "roster.csv", "w", newline="", encoding="utf-8") as f:
        w = csv.writer(f)
        w.writerow(["name", "login", "sis_id"])
        w.writerows([[n, login, f"S{i:03}"] for i, (n, login) in enumerate(zip(NAMES, LOGINS, strict=True))])
    (home / "week.toml").write_text(WEEK)
    assert cli.main(["editions", "--assignment", "week.toml"]) == 0  # both files found in the course folder
    secret = course_secret.load(home)
    subs = tmp_path / "subs"
    for i, name in enumerate(NAMES):
        folder = subs / (unicodedata.normalize("NFD", name) if name.startswith("José") else name)
        folder.mkdir(parents=True)
        nb = answered(home / "editions" / "student" / name / NOTEBOOK, name, course_secret.student_key(secret, name),
                      right=i != 9)
        nbformat.write(nb, folder / NOTEBOOK)
    return home, subs


def grade(subs, *more) -> int:
    return cli.main(["grade", str(subs), "--assignment", "week.toml", "--anonymous", "--no-progress", "--jobs", "2",
                     "--timeout", "120", "--memory-mb", str(LIMITS.memory_mb), *more])


def read(path):
    with open(path, newline="", encoding="utf-8") as f:
        return list(csv.DictReader(f))


def test_a_class_of_ten_graded_by_assignment_anonymously_marked_and_resumed(course, capsys):
    home, subs = course
    start = time.monotonic()
    assert grade(subs) == 0
    seconds = time.monotonic() - start
    said = capsys.readouterr().out
    out = home / "grades" / "subs--week"
    assert out.is_dir() and "--resume" in said and "written-marks.csv" in said  # the written-marks command
    # only the assignment's exercises: graded, paged, in grades.csv
    grades = read(out / "grades.csv")
    assert {r["exercise"] for r in grades} == {"4.3-discounted-return", *PICKED, "ex-4-3-discount written"}
    assert sorted(p.name for p in (out / "written").iterdir()) == ["ex-4-3-discount.html"]
    page = (out / "written" / "ex-4-3-discount.html").read_text()
    assert not any(f"<h2>{escape(n)}</h2>" in page for n in NAMES) and (out / written.KEY).exists()
    assert page.count("<h2>student ") == 10
    # marked by hand, then resumed
    rows = read(out / written.MARKS)
    assert {r["student"] for r in rows} == set(NAMES)
    for r in rows:
        r["given"] = r["available"]
    with open(out / written.MARKS, "w", newline="", encoding="utf-8") as f:
        w = csv.DictWriter(f, fieldnames=written.FIELDS)
        w.writeheader()
        w.writerows(rows)
    assert grade(subs, "--resume") == 0
    assert len(read(out / written.MARKS)) == len(rows)  # no duplicate rows
    book = {read_cell(r["student"]): r for r in read(out / "gradebook.csv")}
    assert set(book) == set(NAMES)
    for name in NAMES:
        assert book[name]["ex-4-3-discount written"] == "12", (name, book[name])  # 6 rubric points, scaled by 2
    assert [book[n]["total"] for n in NAMES] == ["14"] * 9 + ["12"], book  # the last answered wrong
    # grades.csv agrees with the gradebook
    for r in read(out / "grades.csv"):
        if r["exercise"] in book[NAMES[0]]:
            assert r["mark"] == book[read_cell(r["student"])][r["exercise"]], r
    # the feedback carries points and the total
    feedback = (out / "feedback" / "Ana.md").read_text()
    assert "**Week 5: 14 of 16 points**" in feedback and "(2 of 2 points)" in feedback
    assert "(0 of 2 points)" in feedback  # the code exercise, not implemented in the edition
    # the LMS files: the roster's logins and SIS IDs, those that start like formulas escaped (issue 47) and named in
    # by-hand.txt, since canvas.csv and moodle.csv have no LMS id to match them by
    canvas = list(csv.reader(open(out / "canvas.csv", encoding="utf-8")))
    assert {read_cell(r[3]) for r in canvas[2:]} == set(LOGINS)
    assert {r[2] for r in canvas[2:]} == {f"S{i:03}" for i in range(10)}
    assert not [r[3] for r in canvas[2:] if r[3][:1] in "=+-@"]
    moodle = {read_cell(r[0]): r[1] for r in list(csv.reader(open(out / "moodle.csv", encoding="utf-8")))[1:]}
    assert moodle == {login: book[n]["total"] for n, login in zip(NAMES, LOGINS, strict=True)}
    by_hand = (out / "by-hand.txt").read_text()
    assert sum(f"  {n}\n" in by_hand for n, login in zip(NAMES, LOGINS, strict=True) if login[0] in "=+-@") == 4
    run = json.loads((out / "run.json").read_text())
    assert run["assignment"]["name"] == "Week 5"
    print(f"class of 10 graded with --assignment and --anonymous in {seconds:.1f} s")


def test_another_assignment_never_overwrites_this_ones_folder(course, capsys, tmp_path):
    home, subs = course
    out = tmp_path / "shared"
    assert grade(subs, "--out", str(out)) == 0
    (home / "other.toml").write_text(WEEK.replace("Week 5", "Week 6").replace("= 16", "= 8"))
    code = cli.main(["grade", str(subs), "--assignment", "other.toml", "--no-progress", "--out", str(out)])
    assert code == 2 and "another assignment" in capsys.readouterr().err
    assert json.loads((out / "run.json").read_text())["assignment"]["name"] == "Week 5"
    shutil.rmtree(out)


# --- issue 48: an assignment may count practice questions, the coincidence table shown as the risk ---------------


def test_an_assignment_may_count_practice_questions_and_is_shown_the_risk(tmp_path, capsys):
    from course import cli, editions
    from course.assignment import load
    from course.classroom import write_reports
    from course.marks import AnswerKey
    from toy.exercises.questions import QUESTIONS

    book = editions.book()
    known = {label: parts for nb in book.values() for label, parts in nb.parts.items()}
    practice = {q.name for q in QUESTIONS.values() if q.practice and q.exercise in ("ex-4-3-discounted-return",
                                                                                     "ex-4-3-discount")}
    assert practice == {"ex-4-3-discount-b"}
    (tmp_path / "plain.toml").write_text(WEEK)
    (tmp_path / "all.toml").write_text(WEEK.replace("[points]", "count_practice = true\n[points]"))
    (tmp_path / "one.toml").write_text(WEEK.replace("[points]", 'count_practice = ["ex-4-3-discount"]\n[points]'))
    plain, counted = load(tmp_path / "plain.toml", known), load(tmp_path / "all.toml", known)
    assert plain.count_practice == frozenset() and counted.count_practice == practice
    assert load(tmp_path / "one.toml", known).count_practice == practice
    for bad, said in (("count_practice = 3", "must be true, false or a list"),
                      ('count_practice = ["ex-4-3-discount-a"]', "'ex-4-3-discount-a' is not a practice question")):
        (tmp_path / "bad.toml").write_text(WEEK.replace("[points]", bad + "\n[points]"))
        with pytest.raises(ValueError, match=said):
            load(tmp_path / "bad.toml", known)
    # an exercise with only practice questions can be picked once they count
    only = next(label for label, parts in known.items() if not parts
                and any(q.practice and q.exercise == label for q in QUESTIONS.values()))
    (tmp_path / "only.toml").write_text(f'name = "x"\n[points]\n{only} = 3\n')
    with pytest.raises(ValueError, match="count_practice = true"):
        load(tmp_path / "only.toml", known)
    (tmp_path / "only.toml").write_text(f'name = "x"\ncount_practice = true\n[points]\n{only} = 3\n')
    assert load(tmp_path / "only.toml", known).scale(only, known[only])  # it has points now
    # graded: the practice question's right answer earns its share of the exercise's 14 points
    nb = {NOTEBOOK: book[NOTEBOOK]}
    keys = {NOTEBOOK: AnswerKey(1, dict(book[NOTEBOOK].exercises))}
    answered_right = [{"question": q, "status": "right", "mark": 0 if QUESTIONS[q].practice else QUESTIONS[q].points,
                       "points": 0, "message": "right" + (" (a practice question: checked, not graded)"
                                                         if QUESTIONS[q].practice else "")}
                      for q in ("ex-4-3-discount-a", "ex-4-3-discount-b")]
    record = {"student": "Ana", "notebook": NOTEBOOK, "exercises": [], "answers": answered_right, "written": {}}
    totals = {}
    for name, assignment in (("plain", plain), ("counted", counted)):
        out = tmp_path / name
        (out / "feedback").mkdir(parents=True)
        write_reports(out, [record], nb, keys, assignment=assignment)
        with open(out / "gradebook.csv", newline="", encoding="utf-8") as f:
            totals[name] = next(csv.DictReader(f))
    a, b = QUESTIONS["ex-4-3-discount-a"].points, QUESTIONS["ex-4-3-discount-b"].points
    rest = sum(known["ex-4-3-discount"].values())  # its graded parts: question a and the written answer
    assert "ex-4-3-discount-b" not in totals["plain"]
    assert float(totals["plain"]["ex-4-3-discount-a"]) == pytest.approx(14 * a / rest, abs=0.01)
    assert float(totals["counted"]["ex-4-3-discount-a"]) == pytest.approx(14 * a / (rest + b), abs=0.01)
    assert float(totals["counted"]["ex-4-3-discount-b"]) == pytest.approx(14 * b / (rest + b), abs=0.01)
    assert float(totals["counted"]["total"]) > float(totals["plain"]["total"])
    feedback = (tmp_path / "counted" / "feedback" / "Ana.md").read_text(encoding="utf-8")
    assert "**ex-4-3-discount-b** (" in feedback and "counted by this assignment" in feedback
    # the commands print the coincidence table of each practice question counted
    cli._assignment(tmp_path / "all.toml", book)
    said = capsys.readouterr().out
    assert "count_practice: 1 practice questions count for marks" in said
    row = next(line for line in said.splitlines() if line.startswith("ex-4-3-discount-b"))
    assert row.split()[-1] == "practice" and float(row.split()[2]) > 0.05  # why it is practice: the risk
    # the autograder does not count them yet: it refuses the file rather than mark otherwise than grade
    roster_file = tmp_path / "roster.csv"
    roster_file.write_text("name,login,sis_id\nAna,ana@example.edu,S1\n", encoding="utf-8")
    with pytest.raises(SystemExit):
        cli.main(["gradescope", "--roster", str(roster_file), "--assignment", str(tmp_path / "all.toml"),
                  "--out", str(tmp_path / "ag.zip")])
    assert "does not count practice questions yet" in capsys.readouterr().err and not (tmp_path / "ag.zip").exists()
