"""Grades and feedback handed back as each platform takes them in, after ``course.py grade`` has graded its download
(``course/lms.py``):

- ``feedback-html/<student>.html``: each student's feedback as one self-contained HTML page (the maths typeset by
  KaTeX with its stylesheet and fonts inlined, no script, nothing fetched: it opens from the disk), per exercise and
  question what was right and what was wrong and why, and the question as their own instance put it;
- Canvas: ``canvas-import.csv``, the gradebook import (Student, ID, SIS User ID, SIS Login ID, Section and the
  assignment's column: the export's own column when its name starts with the assignment's, so Canvas matches the
  students by ID and the column to the assignment), and ``canvas-feedback.zip`` for "Re-upload submissions": each
  student's feedback as a **notebook** (one Markdown cell: Jupyter typesets its maths), named exactly as their file
  was downloaded. Canvas's ``infer_comment_context_from_filename`` takes the first two all-digit parts of the name
  (between ``_``) as the user id and the attachment id, and ``generate_comments_from_files`` attaches the file to
  the comment under the *display name of that attachment* (``FileInContext.attach(..., display_name)``): the
  student downloads it as ``4.2-easy-and-hard.ipynb``, whatever was uploaded. So what is uploaded is a notebook, and
  it opens as one;
- Moodle: ``moodle-worksheet.csv``, the grading worksheet as downloaded with Grade (and Feedback comments) filled in,
  matched by its Identifier column ("Upload grading worksheet"), and ``moodle-feedback.zip`` for "Upload multiple
  feedback files in a zip", each page named ``<Full name>_<participant id>_assignsubmission_file_feedback.html`` as
  Moodle names its downloads.
"""

from __future__ import annotations

import csv
import re
import zipfile
from html import escape
from pathlib import Path

import nbformat
from markdown_it import MarkdownIt

from toy.exercises import questions

from . import maths, private
from . import secret as course_secret
from .classroom import atomic_write, safe_name
from .lms import Intake, Roster
from .tables import read_cell
from .tables import to_csv as _csv

MATH_PLACEHOLDER = "TOYMATHPLACEHOLDER{}X"
PAGE = """<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'; font-src data:">
<title>{title}</title>
<style>body{{font-family:system-ui,sans-serif;max-width:48rem;margin:2rem auto;padding:0 1rem;line-height:1.5}}
.instance{{color:#333;background:#f4f4f4;padding:.2rem .5rem;border-radius:4px}}{katex}</style>
</head><body>
{body}
</body></html>
"""


def _read(path: Path) -> list[dict]:
    with open(path, newline="", encoding="utf-8") as f:
        return [{k: read_cell(v) for k, v in row.items()} for row in csv.DictReader(f)]


def _with_instances(markdown: str, instances: dict[str, str]) -> str:
    """The feedback's Markdown with each question's line followed by its ``instances`` prompt (the student's own)."""
    lines = []
    for line in markdown.splitlines():
        lines.append(line)
        found = re.match(r"^- \*\*(ex-[\w-]+)\*\*", line)
        if found and found.group(1) in instances:
            lines.append(f"  - Your question: {instances[found.group(1)]}")
    return "\n".join(lines)


def feedback_notebook(markdown: str, instances: dict[str, str]) -> str:
    """The feedback as a notebook (nbformat 4, one Markdown cell, no code): what Canvas hands the student under their
    own notebook's file name. ``<`` and ``>`` outside the maths become entities, so no text of the student's is
    ever HTML when the cell is rendered."""
    text = _with_instances(markdown, instances)
    parts, last = [], 0
    for m in maths.MATH.finditer(text):
        parts += [text[last:m.start()].replace("<", "&lt;").replace(">", "&gt;"), m.group(0)]
        last = m.end()
    parts.append(text[last:].replace("<", "&lt;").replace(">", "&gt;"))
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_markdown_cell("".join(parts))])
    nb.metadata["toybook"] = {"feedback": True}
    return nbformat.writes(nb)


def feedback_page(markdown: str, title: str, instances: dict[str, str]) -> str:
    """The feedback's Markdown as one HTML page; each question's line followed by its ``instances`` prompt (the
    student's own). Student text stays text (raw HTML is never passed through)."""
    text = _with_instances(markdown, instances)
    formulas = []

    def hold(m: re.Match) -> str:
        formulas.append((m.group(1) if m.group(1) is not None else m.group(2), m.group(1) is not None))
        return MATH_PLACEHOLDER.format(len(formulas) - 1)

    text = maths.MATH.sub(hold, text)
    body = MarkdownIt("commonmark", {"html": False}).render(text)
    rendered = maths.render(formulas) if formulas else []
    for i, (tex, display) in enumerate(formulas):
        html = rendered[i] if rendered[i] else escape(("$$%s$$" if display else "$%s$") % tex)
        body = body.replace(MATH_PLACEHOLDER.format(i), html)
    return PAGE.format(title=escape(title), body=body, katex=maths.stylesheet() if any(rendered) else "")


def _instances(student: str, secret: bytes | None, asked: list[str]) -> dict[str, str]:
    key = course_secret.student_key(secret, student)
    out = {}
    for name in asked:
        q = questions.QUESTIONS.get(name)
        if q is not None:
            try:
                out[name] = q.spec(q.instance(student, key))["prompt"]
            except Exception:  # noqa: BLE001 - the page says the rest
                continue
    return out


def write(out: Path, taken: Intake, roster: Roster, secret: bytes | None, assignment: str) -> dict[str, str]:
    """Write the pages, the grade imports and the feedback zips of ``taken.layout`` into ``out``; return their
    paths by name."""
    gradebook = _read(out / "gradebook.csv")
    grades = _read(out / "grades.csv")
    total = {r["student"]: r["total"] for r in gradebook}
    pages = out / "feedback-html"
    private.folder(pages)
    page_of, notebook_of = {}, {}
    for student in total:
        md = out / "feedback" / f"{safe_name(student)}.md"
        text = md.read_text(encoding="utf-8") if md.exists() else f"# Feedback for {student}\n"
        asked = [r["exercise"] for r in grades if r["student"] == student and r["exercise"] in questions.QUESTIONS]
        instances = _instances(student, secret, asked)
        page = pages / f"{safe_name(student)}.html"
        atomic_write(page, feedback_page(text, f"Feedback for {student}", instances))
        page_of[student] = page
        if taken.layout == "canvas":
            notebook_of[student] = pages / f"{safe_name(student)}.ipynb"
            atomic_write(notebook_of[student], feedback_notebook(text, instances))
    paths = {"feedback_pages": str(pages)}
    members = {m.name: m for m in roster.members}
    if taken.layout == "canvas":
        possible = _possible(out)
        column = next((c for c in roster.columns if c.startswith(assignment + " (")), assignment)
        rows = [["Points Possible", "", "", "", "", possible]]
        rows += [[m.display or m.name, m.lms_id, m.sis_id, m.login, m.section, total[m.name]]
                 for m in roster.members if m.name in total]
        atomic_write(out / "canvas-import.csv", _csv(["Student", "ID", "SIS User ID", "SIS Login ID", "Section",
                                                      column], rows))
        zipped = {downloaded: notebook_of[name] for name, names in taken.names.items() if name in notebook_of
                  for downloaded in names[:1]}
        paths["canvas_import"] = str(out / "canvas-import.csv")
        paths["canvas_feedback"] = _zip(out / "canvas-feedback.zip", zipped)
    elif taken.layout == "moodle":
        header = list(roster.columns)
        at = {h.strip().lower(): i for i, h in enumerate(header)}
        rows = []
        for member, row in zip(roster.members, [r for r in roster.rows if _identifier(r, at)], strict=False):
            row = list(row) + [""] * (len(header) - len(row))
            if member.name in total and "grade" in at:
                row[at["grade"]] = total[member.name]
                if "feedback comments" in at:
                    row[at["feedback comments"]] = (f"{total[member.name]} points: see the feedback file for each "
                                                    "exercise and question")
            rows.append(row)
        atomic_write(out / "moodle-worksheet.csv", _csv(header, rows))
        zipped = {f"{(members[name].display or name).replace('_', ' ')}_{members[name].lms_id}_assignsubmission_file_"
                  "feedback.html": page_of[name] for name in taken.matched if name in page_of and name in members}
        paths["moodle_worksheet"] = str(out / "moodle-worksheet.csv")
        paths["moodle_feedback"] = _zip(out / "moodle-feedback.zip", zipped)
    return paths


def _identifier(row: list[str], at: dict) -> bool:
    i = at.get("identifier")
    return i is not None and i < len(row) and bool(row[i].strip())


def _possible(out: Path) -> str:
    with open(out / "canvas.csv", newline="", encoding="utf-8") as f:
        rows = list(csv.reader(f))
    return rows[1][-1] if len(rows) > 1 else ""


def _zip(path: Path, files: dict[str, Path]) -> str:
    with private.replacing(path) as tmp, zipfile.ZipFile(tmp, "w", zipfile.ZIP_DEFLATED) as z:
        for name, source in sorted(files.items()):
            z.write(source, name)
    return str(path)
