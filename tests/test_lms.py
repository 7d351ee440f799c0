"""Issue 41: submissions as Canvas, Moodle and Gradescope hand them out (course/lms.py, ``course.py grade``).

Test archives are laid out as each platform writes them (non-ASCII names included): Canvas's flat
``<sortable name>[_LATE]_<user id>_<submission id>_<file>`` with ``-1`` on a resubmitted name, Moodle's
``<Full name>_<participant id>_assignsubmission_file_<file>`` flat or in folders, Gradescope's ``submission_<id>/``
with ``submission_metadata.yml``. Files are matched by the platform's id, never by the name in the file's name;
every oddity gets a line in the report; nothing is written outside the output folder. End to end, an archive from
each platform is graded in one command, each student's instance the one their own edition showed.
"""

from __future__ import annotations

import csv
import io
import os
import re
import subprocess
import time
import unicodedata
import zipfile
from html import escape
from pathlib import Path

import nbformat
import pytest

from course import cli, lms, maths, returns
from course import secret as course_secret
from course.tables import read_cell
from tests.test_assignments import NOTEBOOK, WEEK, answered
from tests.test_grading import LIMITS, own_uids
from toy.exercises import questions as Q

NB = {"cells": [], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}
CANVAS_ROSTER = ("Student,ID,SIS User ID,SIS Login ID,Section,Week 5 (123)\n"
                 "    Points Possible,,,,,18\n"
                 "\"Núñez, José\",1001,S1,jnunez,Sec A,\n"
                 "\"Mehr\u200cAbadi, Zahra\",1002,S2,zmehr,Sec A,\n"
                 "李小龍,1003,S3,li,Sec B,\n")
MOODLE_ROSTER = ("Identifier,Full name,Email address,Status,Grade,Maximum Grade,Grade can be changed,"
                 "Last modified (submission),Last modified (grade),Feedback comments\n"
                 "Participant 5501,José Núñez,jose@example.edu,Submitted for grading,,18.00,Yes,,,\n"
                 "Participant 5502,Zahra Mehr\u200cAbadi,zahra@example.edu,Submitted for grading,,18.00,Yes,,,\n"
                 "Participant 5503,李小龍,li@example.edu,No submission,,18.00,Yes,,,\n")
METADATA = """---
submission_9001:
  :submitters:
  - :name: José Núñez
    :sid: 'S1'
    :email: jose@example.edu
  :created_at: 2027-01-30 10:00:00.000000000 -08:00
  :score: 0.0
  :status: processed
submission_9002:
  :submitters:
  - :name: "Zahra Mehr\\u200cAbadi"
    :sid:
    :email: zmehr
  - :name: 李小龍
    :sid: S3
    :email: li@example.edu
  :created_at: 2027-01-30 11:00:00.000000000 -08:00
submission_9003:
  :submitters:
  - :name: Stranger
    :sid: X9
    :email: x@example.edu
"""
COURSE_ROSTER = "name,login,sis_id\n\"Núñez, José\",jnunez,S1\n\"Mehr\u200cAbadi, Zahra\",zmehr,S2\n李小龍,li,S3\n"


def nb_bytes(text: str = "") -> bytes:
    return nbformat.writes(nbformat.from_dict({**NB, "cells": [nbformat.v4.new_code_cell(text)]})).encode()


def make_zip(path, members: dict) -> None:
    with zipfile.ZipFile(path, "w") as z:
        for name, data in members.items():
            if isinstance(data, tuple):  # (data, unix mode): a symbolic link
                info = zipfile.ZipInfo(name)
                info.external_attr = data[1] << 16
                z.writestr(info, data[0])
            else:
                z.writestr(name, data)


def roster_of(tmp_path, text, name="roster.csv"):
    (tmp_path / name).write_text(text, encoding="utf-8")
    return lms.read_roster(tmp_path / name)


def test_canvas_and_moodle_exports_are_rosters_with_ids(tmp_path):
    canvas = roster_of(tmp_path, CANVAS_ROSTER)
    assert canvas.kind == "canvas" and [m.lms_id for m in canvas.members] == ["1001", "1002", "1003"]
    assert canvas.members[1].name == "Mehr\u200cAbadi, Zahra" and canvas.members[0].sis_id == "S1"
    moodle = roster_of(tmp_path, MOODLE_ROSTER)
    assert moodle.kind == "moodle" and [m.lms_id for m in moodle.members] == ["5501", "5502", "5503"]
    assert moodle.members[0].login == "jose@example.edu" and moodle.members[0].identifier == "Participant 5501"
    # the course's own roster reads an LMS export too, so editions may be written from it
    assert [s.name for s in lms.read_students(tmp_path / "roster.csv")] == [m.name for m in moodle.members]
    with pytest.raises(ValueError, match="already on line 3"):
        lms.parse_roster(CANVAS_ROSTER + "\"Other, One\",1001,S9,other,,\n")


def test_a_canvas_zip_is_matched_by_user_id_and_every_oddity_is_reported(tmp_path):
    roster = roster_of(tmp_path, CANVAS_ROSTER)
    archive = tmp_path / "submissions.zip"
    nfd = unicodedata.normalize("NFD", "núñezjosé")
    make_zip(archive, {
        f"{nfd}_LATE_1001_5001_{NOTEBOOK}": nb_bytes("first"),
        f"{nfd}_LATE_1001_5001_{NOTEBOOK[:-6]}-1.ipynb": nb_bytes("resubmitted"),
        f"someoneelse_1002_5002_{NOTEBOOK}": nb_bytes("zahra"),  # the name part is wrong: the id decides
        "李小龍_1003_5003_answers.pdf": b"%PDF",
        "李小龍_1003_5003_notebooks.zip": b"PK",
        "ghost_4242_5004_x.ipynb": nb_bytes(),
        "../evil.ipynb": nb_bytes(),
        "/abs.ipynb": nb_bytes(),
        "mehrabadizahra_1002_5002_link.ipynb": ("/etc/passwd", 0o120777),
        "README.txt": b"?",
    })
    assert lms.detect(archive) == "unknown"  # README.txt and the paths leaving the archive: not Canvas's names
    clean = tmp_path / "clean.zip"
    make_zip(clean, {f"{nfd}_LATE_1001_5001_{NOTEBOOK}": nb_bytes("first"),
                     f"someoneelse_1002_5002_{NOTEBOOK}": nb_bytes("zahra"), "李小龍_1003_5003_answers.pdf": b"%PDF"})
    assert lms.detect(clean) == "canvas"
    out = tmp_path / "out"
    taken = lms.intake(archive, out, roster, "canvas", {NOTEBOOK})
    said = "\n".join(taken.report)
    assert sorted(taken.matched) == ["Mehr\u200cAbadi, Zahra", "Núñez, José"]
    jose = out / "intake" / "Núñez, José" / NOTEBOOK
    assert b"resubmitted" in jose.read_bytes()  # -1 is the later one, graded as the book's notebook
    assert "two notebooks from one student" in said and "-1.ipynb was handed in later" in said
    assert b"zahra" in (out / "intake" / "Mehr\u200cAbadi, Zahra" / NOTEBOOK).read_bytes()
    assert "answers.pdf (李小龍): not a notebook" in said
    assert "notebooks.zip (李小龍): an archive inside the archive" in said
    assert "Canvas user id 4242 is not on the roster" in said
    assert "../evil.ipynb: a path leaving the archive" in said and "/abs.ipynb: a path leaving" in said
    assert "link.ipynb (Mehr\u200cAbadi, Zahra): a symbolic link" in said
    assert "README.txt: a file name Canvas does not write" in said
    assert "no notebook from 1 students on the roster: 李小龍" in said
    assert not (tmp_path / "evil.ipynb").exists() and not list(tmp_path.glob("abs*"))
    assert all(p.is_relative_to(out) for p in out.rglob("*"))
    assert lms.write_report(out, taken).read_text().count("\n  ") == len(taken.report)


def test_an_archive_too_big_or_too_full_is_refused_before_anything_is_unpacked(tmp_path, monkeypatch):
    roster = roster_of(tmp_path, CANVAS_ROSTER)
    archive = tmp_path / "big.zip"
    make_zip(archive, {f"a_1001_1_{NOTEBOOK}": b"x" * 5000})
    monkeypatch.setattr(lms, "MAX_ARCHIVE_BYTES", 1000)
    with pytest.raises(ValueError, match="would unpack to 5,000 bytes"):
        lms.intake(archive, tmp_path / "out", roster, "canvas")
    monkeypatch.setattr(lms, "MAX_ARCHIVE_BYTES", 10**9)
    monkeypatch.setattr(lms, "MAX_FILE_BYTES", 1000)
    taken = lms.intake(archive, tmp_path / "out", roster, "canvas", {NOTEBOOK})
    assert not taken.matched and "5,000 bytes, more than the 1,000" in "\n".join(taken.report)
    with pytest.raises(ValueError, match="no Canvas ids"):
        lms.intake(archive, tmp_path / "out", roster_of(tmp_path, COURSE_ROSTER, "r2.csv"), "canvas")
    full = tmp_path / "full.zip"  # too many files, each small: refused by their count, before any is unpacked
    make_zip(full, {f"a_1001_{i}_{NOTEBOOK}": b"{}" for i in range(4)})
    monkeypatch.setattr(lms, "MAX_MEMBERS", 3)
    with pytest.raises(ValueError, match="holds 4 files, more than the 3 the grader unpacks"):
        lms.intake(full, tmp_path / "out2", roster, "canvas")
    assert not (tmp_path / "out2" / "intake").exists()


@pytest.mark.parametrize("folders", [False, True])
def test_moodle_downloads_flat_or_in_folders_are_matched_by_participant_id(tmp_path, folders):
    roster = roster_of(tmp_path, MOODLE_ROSTER)
    if folders:
        members = {f"José Núñez_5501_assignsubmission_file/{NOTEBOOK}": nb_bytes("jose"),
                   f"Wrong Name_5502_assignsubmission_file/{NOTEBOOK}": nb_bytes("zahra"),
                   "李小龍_5503_assignsubmission_onlinetext/onlinetext.html": b"<p>hi</p>",
                   f"Nobody_7777_assignsubmission_file/{NOTEBOOK}": nb_bytes()}
    else:
        members = {f"José Núñez_5501_assignsubmission_file_{NOTEBOOK}": nb_bytes("jose"),
                   f"Wrong Name_5502_assignsubmission_file_{NOTEBOOK}": nb_bytes("zahra"),
                   "李小龍_5503_assignsubmission_onlinetext_onlinetext.html": b"<p>hi</p>",
                   f"Nobody_7777_assignsubmission_file_{NOTEBOOK}": nb_bytes()}
    archive = tmp_path / "moodle.zip"
    make_zip(archive, members)
    assert lms.detect(archive) == "moodle"
    taken = lms.intake(archive, tmp_path / "out", roster, None, {NOTEBOOK})
    said = "\n".join(taken.report)
    assert sorted(taken.matched) == ["José Núñez", "Zahra Mehr\u200cAbadi"]
    assert b"zahra" in (tmp_path / "out" / "intake" / "Zahra Mehr\u200cAbadi" / NOTEBOOK).read_bytes()
    assert "Moodle's onlinetext submission, not a file" in said and "participant 7777 is not on the roster" in said
    # the same download unzipped into a folder
    folder = tmp_path / "unzipped"
    zipfile.ZipFile(archive).extractall(folder)
    assert lms.detect(folder) == "moodle"
    assert sorted(lms.intake(folder, tmp_path / "out2", roster, None, {NOTEBOOK}).matched) == sorted(taken.matched)


def test_gradescopes_metadata_is_read_and_submitters_matched_by_sid_then_email(tmp_path):
    people = lms.gradescope_submitters(METADATA)
    assert people["9001"] == [{"name": "José Núñez", "sid": "S1", "email": "jose@example.edu"}]
    assert [p["name"] for p in people["9002"]] == ["Zahra Mehr\u200cAbadi", "李小龍"] and people["9002"][0]["sid"] == ""
    roster = roster_of(tmp_path, COURSE_ROSTER)
    archive = tmp_path / "gs.zip"
    make_zip(archive, {"assignment_export/submission_metadata.yml": METADATA.encode(),
                       f"assignment_export/submission_9001/{NOTEBOOK}": nb_bytes("jose"),
                       f"assignment_export/submission_9002/{NOTEBOOK}": nb_bytes("pair"),
                       f"assignment_export/submission_9003/{NOTEBOOK}": nb_bytes(),
                       f"assignment_export/submission_9004/{NOTEBOOK}": nb_bytes()})
    assert lms.detect(archive) == "gradescope"
    taken = lms.intake(archive, tmp_path / "out", roster, None, {NOTEBOOK})
    assert sorted(taken.matched) == ["Mehr\u200cAbadi, Zahra", "Núñez, José", "李小龍"]  # a pair: both graded
    said = "\n".join(taken.report)
    assert "submitters (X9) are not on the roster" in said and "submission 9004 is not in" in said


def test_a_plain_folder_is_still_the_graders_own_layout(tmp_path):
    (tmp_path / "Ana").mkdir()
    (tmp_path / "Ana" / NOTEBOOK).write_bytes(nb_bytes())
    assert lms.detect(tmp_path) is None


# --- end to end: one command per platform ----------------------------------------------------------------------


def lms_course(tmp_path, monkeypatch, roster_text):
    """A course folder whose editions were written from the LMS's own roster export (``gradebook.csv``)."""
    own_uids(monkeypatch)
    home = tmp_path / "course"
    home.mkdir()
    monkeypatch.setenv("TOYBOOK_COURSE_DIR", str(home))
    (home / "gradebook.csv").write_text(roster_text, encoding="utf-8")
    (home / "week.toml").write_text(WEEK)
    assert cli.main(["editions", "--assignment", "week.toml", "--students", "gradebook.csv"]) == 0
    return home, course_secret.load(home)


@pytest.fixture
def canvas_course(tmp_path, monkeypatch):
    return lms_course(tmp_path, monkeypatch, CANVAS_ROSTER)


@pytest.fixture
def moodle_course(tmp_path, monkeypatch):
    return lms_course(tmp_path, monkeypatch, MOODLE_ROSTER)


def grade_archive(archive, out) -> int:
    return cli.main(["grade", str(archive), "--roster", "gradebook.csv", "--assignment", "week.toml", "--out",
                     str(out), "--no-progress", "--jobs", "2", "--timeout", "120", "--memory-mb",
                     str(LIMITS.memory_mb)])


def self_contained(page: str) -> bool:
    """No script, and nothing fetched: no http(s) or protocol-relative address in any src, href or url()."""
    return ("<script" not in page.lower() and not re.search(r"""<[^>]+\s(src|href)\s*=\s*["']?(https?:)?//""", page)
            and not re.search(r"url\(\s*['\"]?(https?:)?//", page))


def own_notebook(home, secret, name: str, right: bool = True) -> bytes:
    nb = answered(home / "editions" / "student" / name / NOTEBOOK, name, course_secret.student_key(secret, name),
                  right=right)
    return nbformat.writes(nb).encode()


def test_a_canvas_download_is_graded_in_one_command_with_each_students_own_instance(canvas_course, tmp_path,
                                                                                   capsys):
    home, secret = canvas_course
    names = ["Núñez, José", "Mehr\u200cAbadi, Zahra", "李小龍"]
    archive = tmp_path / "submissions.zip"
    make_zip(archive, {
        f"nunezjose_1001_5001_{NOTEBOOK}": own_notebook(home, secret, names[0]),
        f"mehrabadizahra_LATE_1002_5002_{NOTEBOOK[:-6]}-1.ipynb": own_notebook(home, secret, names[1]),
        f"lixiaolong_1003_5003_{NOTEBOOK}": own_notebook(home, secret, names[2], right=False),
        "lixiaolong_1003_5003_notes.pdf": b"%PDF",
    })
    out = tmp_path / "out"
    start = time.monotonic()
    code = grade_archive(archive, out)
    seconds = time.monotonic() - start
    said = capsys.readouterr().out
    assert code == 0, said
    assert "intake (canvas): 3 notebooks from 3 students of 3 on the roster, matched by Canvas id" in said
    assert "notes.pdf (李小龍): not a notebook" in said
    with open(out / "gradebook.csv", newline="", encoding="utf-8") as f:
        book = {read_cell(r["student"]): r for r in csv.DictReader(f)}
    assert set(book) == set(names)
    right = [q for q in ("ex-4-3-discount-a", "ex-4-3-discount-b") if q in book[names[0]]]  # -b is practice
    assert right
    for q in right:  # their own edition's instance, marked right; the third answered wrong
        assert float(book[names[0]][q]) == float(book[names[1]][q]) > 0 == float(book[names[2]][q]), book
    canvas = list(csv.reader(open(out / "canvas.csv", encoding="utf-8")))
    assert {r[3] for r in canvas[2:]} == {"jnunez", "zmehr", "li"}
    assert all(p.resolve().is_relative_to(out.resolve()) for p in out.rglob("*"))
    assert not (tmp_path / "course" / "grades").exists()
    # grades back: Canvas's import, matched by ID, in the export's own column
    with open(out / "canvas-import.csv", newline="", encoding="utf-8") as f:
        back = list(csv.reader(f))
    assert back[0] == ["Student", "ID", "SIS User ID", "SIS Login ID", "Section", "Week 5 (123)"]
    assert back[1][0] == "Points Possible"
    ids = {r[1]: r[5] for r in back[2:]}
    assert ids == {"1001": book[names[0]]["total"], "1002": book[names[1]]["total"], "1003": book[names[2]]["total"]}
    # feedback back: a zip for "Re-upload submissions", each page named as its file was downloaded
    with zipfile.ZipFile(out / "canvas-feedback.zip") as z:
        assert sorted(z.namelist()) == sorted([f"nunezjose_1001_5001_{NOTEBOOK}.html",
                                               f"mehrabadizahra_LATE_1002_5002_{NOTEBOOK[:-6]}-1.ipynb.html",
                                               f"lixiaolong_1003_5003_{NOTEBOOK}.html"])
        page = z.read(f"nunezjose_1001_5001_{NOTEBOOK}.html").decode()
    assert self_contained(page) and "Feedback for Núñez, José" in page
    assert "ex-4-3-discount-a" in page and "Your question: The result at work: at γ =" in page
    key = course_secret.student_key(secret, names[0])
    q = Q.QUESTIONS["ex-4-3-discount-a"]
    assert escape(q.spec(q.instance(names[0], key))["prompt"], quote=False) in page  # the instance their edition showed
    print(f"Canvas download of 3 graded and returned in {seconds:.1f} s")


def test_a_moodle_download_is_graded_and_returned_as_moodle_takes_it_in(moodle_course, tmp_path, capsys):
    home, secret = moodle_course
    names = ["José Núñez", "Zahra Mehr\u200cAbadi", "李小龍"]
    archive = tmp_path / "moodle.zip"
    make_zip(archive, {
        f"José Núñez_5501_assignsubmission_file/{NOTEBOOK}": own_notebook(home, secret, names[0]),
        f"Zahra Mehr\u200cAbadi_5502_assignsubmission_file/{NOTEBOOK}": own_notebook(home, secret, names[1], False),
        "李小龍_5503_assignsubmission_file/notes.txt": b"no notebook",
    })
    out = tmp_path / "out"
    assert grade_archive(archive, out) == 0
    said = capsys.readouterr().out
    assert "intake (moodle): 2 notebooks from 2 students of 3 on the roster" in said and "notes.txt (李小龍)" in said
    with open(out / "gradebook.csv", newline="", encoding="utf-8") as f:
        book = {read_cell(r["student"]): r for r in csv.DictReader(f)}
    assert float(book[names[0]]["ex-4-3-discount-a"]) > 0 == float(book[names[1]]["ex-4-3-discount-a"])
    with open(out / "moodle-worksheet.csv", newline="", encoding="utf-8") as f:
        sheet = list(csv.DictReader(f))
    assert [r["Identifier"] for r in sheet] == ["Participant 5501", "Participant 5502", "Participant 5503"]
    assert [r["Grade"] for r in sheet] == [book[names[0]]["total"], book[names[1]]["total"], ""]
    assert sheet[0]["Maximum Grade"] == "18.00" and sheet[2]["Status"] == "No submission"
    with zipfile.ZipFile(out / "moodle-feedback.zip") as z:
        assert sorted(z.namelist()) == sorted(["José Núñez_5501_assignsubmission_file_feedback.html",
                                               "Zahra Mehr\u200cAbadi_5502_assignsubmission_file_feedback.html"])
        page = z.read("José Núñez_5501_assignsubmission_file_feedback.html").decode()
    assert self_contained(page) and "Feedback for José Núñez" in page


def test_a_feedback_page_typesets_maths_and_passes_no_html_through():
    page = returns.feedback_page("# Feedback\n\n- **ex-4-3-discount-a** (1 of 1): right. $\\gamma^2$ is it\n"
                                 "- <script>alert(1)</script> <img src=http://x.example/a.png>\n",
                                 "t", {"ex-4-3-discount-a": "at γ = 0.7"})
    assert self_contained(page) and "&lt;script&gt;" in page and "Your question: at γ = 0.7" in page
    assert not self_contained('<img src="https://x.example/a.png">') and not self_contained("<script></script>")
    assert ("katex" in page) != bool(maths.missing())  # typeset where KaTeX is installed


# --- the instructors' page: every command of Route 3 run as printed ---------------------------------------------

ROUTE = "### Route 3: what your LMS hands out, and back"


def route_blocks() -> list[list[str]]:
    page = (Path(__file__).resolve().parents[1] / "book" / "instructors.md").read_text(encoding="utf-8")
    section = page.split(ROUTE, 1)[1].split("\n## ", 1)[0].split("\n### ", 1)[0]
    return [[line for line in block.split("```", 1)[0].splitlines() if line.strip()]
            for block in section.split("```bash\n")[1:]]


def download(kind: str, course: Path, names: list[str], ids: list[str]) -> bytes:
    """The LMS's download of the editions ``names`` (each answered right), laid out as ``kind`` writes it."""
    secret = course_secret.load(course)
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as z:
        if kind == "gradescope":
            z.writestr("submission_metadata.yml", "".join(
                f"submission_{100 + i}:\n  :submitters:\n  - :name: {n}\n    :sid: {sid}\n    :email: x{i}@x\n"
                for i, (n, sid) in enumerate(zip(names, ids, strict=True))))
        for i, (name, lms_id) in enumerate(zip(names, ids, strict=True)):
            data = own_notebook(course, secret, name)
            member = {"canvas": f"student{i}_{lms_id}_{900 + i}_{NOTEBOOK}",
                      "moodle": f"{name}_{lms_id}_assignsubmission_file_{NOTEBOOK}",
                      "gradescope": f"submission_{100 + i}/{NOTEBOOK}"}[kind]
            z.writestr(member, data)
    return buffer.getvalue()


@pytest.mark.slow
def test_every_command_of_route_3_runs_as_printed(tmp_path, monkeypatch):
    own_uids(monkeypatch)
    root = Path(__file__).resolve().parents[1]
    env = {k: v for k, v in os.environ.items() if k != "TOYBOOK_COURSE_DIR"} | {"HOME": str(tmp_path)}
    course = tmp_path / "toybook-course"
    course.mkdir()
    (tmp_path / "Downloads").mkdir()
    (course / "canvas-gradebook.csv").write_text(CANVAS_ROSTER, encoding="utf-8")
    (course / "moodle-worksheet.csv").write_text(MOODLE_ROSTER, encoding="utf-8")
    (course / "roster.csv").write_text(COURSE_ROSTER, encoding="utf-8")
    blocks = route_blocks()
    assert len(blocks) == 3 and all(any(line.startswith("# writes") for line in b) for b in blocks)
    kinds = {"submissions.zip": ("canvas", CANVAS_ROSTER), "moodle-submissions.zip": ("moodle", MOODLE_ROSTER),
             "gradescope-export.zip": ("gradescope", COURSE_ROSTER)}
    for block in blocks:
        for line in block:
            if line.startswith("# writes"):
                written = line.split("# writes ", 1)[1].split(":", 1)
                folder = Path(written[0].replace("~", str(tmp_path)))
                assert folder.exists(), line
                for name in (written[1].split(",") if len(written) > 1 else []):
                    assert (folder / name.strip()).exists(), (folder, name)
                continue
            found = re.search(r"~/Downloads/(\S+)", line)
            if found:  # the download the LMS would give, from the editions just written
                kind, text = kinds[found.group(1)]
                roster = lms.parse_roster(text)
                ids = [m.lms_id or m.sis_id for m in roster.members]
                (tmp_path / "Downloads" / found.group(1)).write_bytes(
                    download(kind, course, [m.name for m in roster.members], ids))
            done = subprocess.run(["bash", "-c", line], cwd=root, env=env, capture_output=True, text=True,
                                  timeout=600)
            assert done.returncode == 0, (line, done.stdout[-2000:], done.stderr[-2000:])
            if found:
                assert "3 notebooks from 3 students of 3 on the roster" in done.stdout, done.stdout
