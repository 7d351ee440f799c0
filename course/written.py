"""Marking written answers by hand: one page per exercise with every student's answer beside the rubric and the
worked solution, and a marks file the instructor fills in.

``write_marking(out, answers, solutions, anonymous)`` writes, in ``out``:

- ``written/<exercise>.html``: the exercise's rubric (criteria and points), the book's worked solution, and each
  student's answer in turn (as text: nothing a student wrote is rendered or run), under the student's name or, with
  ``anonymous``, a pseudonym keyed by the course's secret (a classmate with the roster cannot recompute it), whose
  key is in ``written-key.csv``, beside the folder of pages, never in it (the pages can be handed to a marker);
- ``written-marks.csv``: one row per student, exercise and criterion, with the points available and an empty
  ``given`` column. An existing file is read first and written again with every mark already given kept, and rows
  added for new students or exercises (columns other than these six are not kept). It may have been saved by a
  spreadsheet as "CSV UTF-8" (with a byte-order mark) or with ";" between cells.

``read_marks(out)`` reads the filled-in file back: {(student, exercise): [(criterion, available, given or None)]}.
A ``given`` that is not a whole number from 0 to the points available is an error that names its row.
"""

from __future__ import annotations

import csv
import io
import secrets
from html import escape
from pathlib import Path

from toy.exercises.questions import RUBRICS, normal_name

from . import maths, private
from . import secret as course_secret
from .review import CSP
from .tables import read_cell
from .tables import to_csv as _csv

MARKS = "written-marks.csv"
KEY = "written-key.csv"  # beside written/, not in it
SALT = ".written-salt"  # the pseudonyms' key when the course has no secret (kept with the output, for --resume)
FIELDS = ["student", "exercise", "criterion", "text", "available", "given"]
STYLE = """
body{font:15px/1.5 system-ui,-apple-system,"Segoe UI",sans-serif;margin:1.5em auto;max-width:60em;padding:0 1em;
color:#1f2328;background:#fff}
h1{font-size:1.35em}h2{font-size:1.1em;margin-top:1.6em;border-top:1px solid #d0d7de;padding-top:.8em}
.rubric,.solution{background:#f6f8fa;border:1px solid #d0d7de;border-radius:6px;padding:.6em 1em}
pre{white-space:pre-wrap;overflow-wrap:anywhere;font:14px/1.45 ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;
border-left:3px solid #0969da;padding:.3em .8em;margin:.4em 0}
.empty{color:#9a6700}
.worked{white-space:pre-wrap;margin:.4em 0}
"""


class MarksError(ValueError):
    pass


def pseudonym_key(out: Path, secret: bytes | None) -> bytes:
    """What the pseudonyms are keyed by: the course's secret, else a random key kept in ``out`` (never in written/)."""
    if secret is not None:
        return secret
    path = out / SALT
    if not path.exists():
        private.write(path, secrets.token_hex(32))
    return bytes.fromhex(path.read_text().strip())


def page(exercise: str, answers: dict[str, str], solution: str, anonymous: bool, key: bytes = b"") -> str:
    """The marking page of one exercise: ``answers`` is {student: written answer} ("" when none was written); with
    ``anonymous``, each student is shown by a pseudonym made with ``key`` (``course/secret.py``)."""
    def _pseudonym(student, exercise):
        return course_secret.pseudonym(key, exercise, student)

    criteria = RUBRICS[exercise]
    total = sum(c.points for c in criteria)
    rubric = "".join(f"<li>[{i}] {escape(c.text)} <b>({c.points} pt)</b></li>" for i, c in enumerate(criteria, 1))
    blocks = []
    for student in sorted(answers, key=lambda s: _pseudonym(s, exercise) if anonymous else s):
        who = _pseudonym(student, exercise) if anonymous else student
        text = answers[student].strip()
        body = f"<pre>{escape(text)}</pre>" if text else '<p class="empty">No written answer.</p>'
        blocks.append(f"<h2>{escape(who)}</h2>{body}")
    why = maths.missing()
    unset = f'<p class="empty">(The maths is shown as LaTeX: {escape(why)}.)</p>' if why else ""
    return (
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
        f'<meta http-equiv="Content-Security-Policy" content="{CSP}; font-src data:">'
        '<meta name="viewport" content="width=device-width,initial-scale=1"><meta name="robots" content="noindex">'
        f"<title>Written answers: {escape(exercise)}</title><style>{STYLE}</style>"
        f"<style>{maths.stylesheet()}</style></head><body>"
        f"<h1>Written answers to {escape(exercise)} ({len(answers)} students, {total} points)</h1>"
        f"<p>Mark each answer against the criteria below and write the points into <code>{MARKS}</code> (column "
        "<code>given</code>, one row per student and criterion); then run <code>course.py grade</code> again with "
        "<code>--resume</code> to put the marks into the gradebook and the feedback.</p>"
        f'<div class="rubric"><b>Rubric</b><ol style="list-style:none;padding-left:0">{rubric}</ol></div>'
        f'<details class="solution"><summary>The book\'s worked solution</summary>'
        f'<div class="worked">{maths.typeset(solution)}</div>{unset}'
        f"</details>{''.join(blocks)}</body></html>\n")


def read_marks(out: Path) -> dict[tuple[str, str], list[tuple[int, int, int | None]]]:
    """The marks file in ``out``, as {(student, exercise): [(criterion, available, given or None)]}."""
    path = out / MARKS
    if not path.exists():
        return {}
    marks: dict = {}
    with open(path, newline="", encoding="utf-8-sig") as f:  # a spreadsheet's "CSV UTF-8" starts with a BOM
        content = f.read()
    try:  # and a spreadsheet in some locales writes ";" between cells
        dialect = csv.Sniffer().sniff(content.split("\n", 1)[0], delimiters=",;\t")
    except csv.Error:
        dialect = csv.excel
    reader = csv.DictReader(io.StringIO(content, newline=""), dialect=dialect)
    if reader.fieldnames is None or not set(FIELDS) <= set(reader.fieldnames):
        raise MarksError(f"{path} must have the columns {', '.join(FIELDS)}")
    for line, row in enumerate(reader, start=2):
        try:
            criterion, available = int(row["criterion"]), int(row["available"])
        except (TypeError, ValueError):
            raise MarksError(f"{path}, line {line}: criterion and available must be whole numbers") from None
        written = (row["given"] or "").strip()
        given = None
        if written:
            try:
                given = int(written)
            except ValueError:
                given = -1
            if not 0 <= given <= available:
                raise MarksError(f"{path}, line {line}: given must be a whole number from 0 to {available}, got "
                                 f"{written!r}")
        student = normal_name(read_cell(row["student"] or ""))
        marks.setdefault((student, row["exercise"]), []).append((criterion, available, given))
    return marks


def _criterion_text(exercise: str, i: int) -> str:
    criteria = RUBRICS.get(exercise, ())
    return criteria[i - 1].text if 0 < i <= len(criteria) else ""


def write_marking(out: Path, answers: dict[str, dict[str, str]], solutions: dict[str, str], anonymous: bool,
                  write, secret: bytes | None = None) -> dict:
    """Write the marking pages and add the missing rows to the marks file (see the module docstring).
    ``answers`` is {exercise: {student: text}}; returns {exercise: the page's path relative to ``out``}."""
    folder = out / "written"
    private.folder(folder)
    key = pseudonym_key(out, secret) if anonymous else b""
    pages = {}
    for exercise, mine in sorted(answers.items()):
        name = f"{exercise}.html"
        write(folder / name, page(exercise, mine, solutions.get(exercise, "(not found)"), anonymous, key))
        pages[exercise] = f"written/{name}"
    for old in (folder / "key.csv",):  # where an earlier version kept the key, next to the pages
        old.unlink(missing_ok=True)
    if anonymous:
        rows = [[course_secret.pseudonym(key, ex, s), ex, s] for ex, mine in answers.items() for s in mine]
        write(out / KEY, _csv(["pseudonym", "exercise", "student"], sorted(rows)))
    have = read_marks(out)
    rows = []
    path = out / MARKS
    if path.exists():
        rows = [[student, exercise, i, text, available, "" if given is None else given]
                for (student, exercise), criteria in have.items() for i, available, given in criteria
                for text in [_criterion_text(exercise, i)]]
    for exercise, mine in sorted(answers.items()):
        for student in sorted(mine):
            if (student, exercise) in have:
                continue
            rows += [[student, exercise, i, c.text, c.points, ""] for i, c in enumerate(RUBRICS[exercise], 1)]
    write(path, _csv(FIELDS, rows))
    return pages
