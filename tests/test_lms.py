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
import json
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
    assert lms.write_report(out, taken).read_text().count("\n  ") == len(taken.report) + len(taken.late) == 10


@pytest.mark.parametrize("marker", ["_late", "_LATE"])
def test_a_late_canvas_file_is_graded_and_flagged_in_either_case(tmp_path, marker):
    """Canvas's own code writes ``_late`` (older downloads ``_LATE``): either is Canvas's layout, graded, and
    flagged late in the report."""
    roster = roster_of(tmp_path, CANVAS_ROSTER)
    archive = tmp_path / "submissions.zip"
    make_zip(archive, {f"nunezjose{marker}_1001_5001_{NOTEBOOK}": nb_bytes("late"),
                       f"mehrabadizahra_1002_5002_{NOTEBOOK}": nb_bytes("on time")})
    assert lms.detect(archive) == "canvas"
    out = tmp_path / "out"
    taken = lms.intake(archive, out, roster, None, {NOTEBOOK})
    assert sorted(taken.matched) == ["Mehr\u200cAbadi, Zahra", "Núñez, José"] and not taken.report[:-1]
    assert taken.late == {"Núñez, José": f"Canvas marked nunezjose{marker}_1001_5001_{NOTEBOOK} late"}
    report = lms.write_report(out, taken).read_text(encoding="utf-8")
    assert f"-> Núñez, José (intake/Núñez, José/{NOTEBOOK}) (late: Canvas marked" in report
    assert "1 students handed in late:\n  Núñez, José: Canvas marked" in report


def test_moodles_worksheet_says_who_was_late(tmp_path):
    late = MOODLE_ROSTER.replace("Participant 5501,José Núñez,jose@example.edu,Submitted for grading,",
                                 "Participant 5501,José Núñez,jose@example.edu,Submitted for grading - 2 days 3 hours "
                                 "late,")
    roster = roster_of(tmp_path, late)
    archive = tmp_path / "moodle.zip"
    make_zip(archive, {f"José Núñez_5501_assignsubmission_file_{NOTEBOOK}": nb_bytes("jose"),
                       f"Zahra Mehr\u200cAbadi_5502_assignsubmission_file_{NOTEBOOK}": nb_bytes("zahra")})
    taken = lms.intake(archive, tmp_path / "out", roster, None, {NOTEBOOK})
    assert taken.late == {"José Núñez": "Moodle's worksheet says 2 days 3 hours late"}


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


def bomb(path) -> None:
    """A zip bomb as a real one is: two members that say they unpack to 4 GB each (the central directory's sizes
    set so; the data is a few bytes)."""
    make_zip(path, {f"a_1001_1_{NOTEBOOK}": b"x", f"b_1002_2_{NOTEBOOK}": b"y"})
    data = bytearray(path.read_bytes())
    at = 0
    while (at := data.find(b"PK\x01\x02", at)) >= 0:
        data[at + 24:at + 28] = (0xFFFFFFF0).to_bytes(4, "little")  # uncompressed size
        at += 4
    path.write_bytes(bytes(data))


def damaged(path) -> None:
    """A Canvas zip whose first member's compressed data is damaged (its CRC no longer holds)."""
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as z:
        z.writestr(f"nunezjose_1001_5001_{NOTEBOOK}", nb_bytes("x" * 2000))
        z.writestr(f"mehrabadizahra_1002_5002_{NOTEBOOK}", nb_bytes("fine"))
    data = bytearray(path.read_bytes())
    start = 30 + len(f"nunezjose_1001_5001_{NOTEBOOK}".encode())
    data[start + 20:start + 40] = bytes(20)
    path.write_bytes(bytes(data))


@pytest.mark.parametrize("case, said", [
    ("not a zip", r"submissions.zip is not a zip file \(File is not a zip file; it starts with b'%PDF-1.4'\)"),
    ("zipped again", r"submissions.zip holds only submissions.zip: the download was zipped again; give the zip inside"),
    ("zip bomb", r"submissions.zip would unpack to 8,589,934,560 bytes, more than the 4,294,967,296"),
])
def test_a_bad_archive_is_refused_with_its_own_reason_and_nothing_left_behind(tmp_path, monkeypatch, capsys, case,
                                                                              said):
    monkeypatch.setenv("TOYBOOK_COURSE_DIR", str(tmp_path / "course"))
    (tmp_path / "gradebook.csv").write_text(CANVAS_ROSTER, encoding="utf-8")
    archive = tmp_path / "submissions.zip"
    if case == "not a zip":
        archive.write_bytes(b"%PDF-1.4\n" + b"x" * 100)
    elif case == "zipped again":
        inner = tmp_path / "inner.zip"
        make_zip(inner, {f"nunezjose_1001_5001_{NOTEBOOK}": nb_bytes()})
        make_zip(archive, {"submissions.zip": inner.read_bytes()})
    else:
        bomb(archive)
    for lms_given in ([], ["--lms", "canvas"]):
        code = cli.main(["grade", str(archive), "--roster", str(tmp_path / "gradebook.csv"), *lms_given])
        err = capsys.readouterr().err
        assert code == 2 and re.search(said, err), err
        assert err.count("\n") == 1 and "Traceback" not in err  # one line: the real reason
        assert not (tmp_path / "course" / "grades").exists() or not any((tmp_path / "course" / "grades").iterdir())


def test_a_damaged_member_is_reported_and_the_rest_graded(tmp_path):
    roster = roster_of(tmp_path, CANVAS_ROSTER)
    archive = tmp_path / "submissions.zip"
    damaged(archive)
    assert lms.detect(archive) == "canvas"
    taken = lms.intake(archive, tmp_path / "out", roster, None, {NOTEBOOK})
    said = "\n".join(taken.report)
    assert list(taken.matched) == ["Mehr\u200cAbadi, Zahra"]
    assert re.search(rf"nunezjose_1001_5001_{re.escape(NOTEBOOK)} \(Núñez, José\): could not be unpacked, damaged "
                     r"in the zip \(.+\): not graded; download the submissions again", said), said


def test_an_empty_notebook_is_reported_as_empty(tmp_path):
    roster = roster_of(tmp_path, CANVAS_ROSTER)
    archive = tmp_path / "submissions.zip"
    make_zip(archive, {f"nunezjose_1001_5001_{NOTEBOOK}": b"", f"mehrabadizahra_1002_5002_{NOTEBOOK}": nb_bytes()})
    out = tmp_path / "out"
    taken = lms.intake(archive, out, roster, None, {NOTEBOOK})
    assert list(taken.matched) == ["Mehr\u200cAbadi, Zahra"]
    report = lms.write_report(out, taken).read_text(encoding="utf-8")
    assert f"  nunezjose_1001_5001_{NOTEBOOK} (Núñez, José): an empty file (0 bytes), not a notebook" in report


SHARED = CANVAS_ROSTER + "\"Kim, Alex\",1004,S4,,Sec A,\n\"Kim, Alex\",1005,,,Sec B,\n"


def test_two_students_of_one_name_are_told_apart_by_their_id(tmp_path):
    canvas = lms.parse_roster(SHARED)
    kims = [m for m in canvas.members if m.display == "Kim, Alex"]
    assert [(m.name, m.lms_id, m.written) for m in kims] == [("Kim, Alex (1004)", "1004", "Kim, Alex (1004)"),
                                                            ("Kim, Alex (1005)", "1005", "Kim, Alex (1005)")]
    moodle = lms.parse_roster(MOODLE_ROSTER + "Participant 5504,José Núñez,other@example.edu,,,18.00,Yes,,,\n")
    assert [m.name for m in moodle.members if m.display == "José Núñez"] == ["José Núñez (5501)", "José Núñez (5504)"]
    # the course's own roster: a CSV with a sis_id or login for each tells them apart, a list of names cannot
    from course import roster as rosters
    assert [s.name for s in rosters.parse("name,login,sis_id\nAna,ana1,\nAna,ana2,\n")] == ["Ana (ana1)", "Ana (ana2)"]
    with pytest.raises(ValueError, match="line 2: the name 'Ana' is already on line 1 .two students of one name"):
        rosters.parse("Ana\nAna\n")
    with pytest.raises(ValueError, match="line 7: the login 'same' is already on line 6"):  # one login for two: refused
        lms.parse_roster(CANVAS_ROSTER + "\"Kim, Alex\",1004,,same,,\n\"Kim, Alex\",1005,,same,,\n")


def test_an_nfd_name_is_kept_as_written_in_editions_and_canvas_files(tmp_path):
    from course import editions
    nfd = unicodedata.normalize("NFD", "Núñez, José")
    roster = lms.parse_roster(SHARED.replace("Núñez, José", nfd))
    jose = roster.members[0]
    assert jose.name == "Núñez, José" and jose.display == jose.written == nfd
    editions.write_editions(tmp_path / "eds", list(roster.students().values()))
    folders = {p.name for p in (tmp_path / "eds" / "student").iterdir()}
    assert nfd in folders and "Núñez, José" not in folders and {"Kim, Alex (1004)", "Kim, Alex (1005)"} <= folders
    cell = next(c.source for c in nbformat.read(tmp_path / "eds" / "student" / nfd / NOTEBOOK, 4).cells
                if "toy.exercises.student(" in c.source)
    assert repr(nfd) in cell


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


def own_notebook(home, secret, name: str, right: bool = True, folder: str | None = None) -> bytes:
    """``name``'s own edition (in ``folder``, the name as the roster wrote it), answered right or wrong."""
    nb = answered(home / "editions" / "student" / (folder or name) / NOTEBOOK, name,
                  course_secret.student_key(secret, name), right=right)
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
    # late: in the gradebook's column and in the student's feedback
    assert book[names[1]]["late"] == f"Canvas marked mehrabadizahra_LATE_1002_5002_{NOTEBOOK[:-6]}-1.ipynb late"
    assert book[names[0]]["late"] == "" == book[names[2]]["late"]
    # feedback back: a zip for "Re-upload submissions", each named exactly as its file was downloaded, and a
    # notebook (Canvas attaches it under the display name of the student's own file, a .ipynb)
    with zipfile.ZipFile(out / "canvas-feedback.zip") as z:
        assert sorted(z.namelist()) == sorted([f"nunezjose_1001_5001_{NOTEBOOK}",
                                               f"mehrabadizahra_LATE_1002_5002_{NOTEBOOK[:-6]}-1.ipynb",
                                               f"lixiaolong_1003_5003_{NOTEBOOK}"])
        feedback = nbformat.reads(z.read(f"nunezjose_1001_5001_{NOTEBOOK}").decode(), as_version=4)
        late = nbformat.reads(z.read(f"mehrabadizahra_LATE_1002_5002_{NOTEBOOK[:-6]}-1.ipynb").decode(), 4)
    nbformat.validate(feedback)
    assert [c.cell_type for c in feedback.cells] == ["markdown"]
    page = feedback.cells[0].source
    assert "Feedback for Núñez, José" in page and "Handed in late" not in page
    assert "Handed in late: Canvas marked" in late.cells[0].source
    assert "ex-4-3-discount-a" in page and "Your question: The result at work: at γ =" in page
    assert "right. right" not in page and "): right (the instance of Núñez, José)." in page  # reads as one verdict
    html = (out / "feedback-html" / f"{returns.safe_name(names[0])}.html").read_text(encoding="utf-8")
    assert self_contained(html) and "Feedback for Núñez, José" in html
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


# A class of ten as a real one comes: an NFD name, a ZWNJ, apostrophes, a leading "=", two students of one name,
# a CJK name; one hands in late, one an empty notebook, one a PDF. (Canvas's "Last, First"; Moodle's and
# Gradescope's "First Last"; what each hands in.)
NFD_JOSE = unicodedata.normalize("NFD", "Núñez, José"), unicodedata.normalize("NFD", "José Núñez")
CLASS = [(NFD_JOSE[0], NFD_JOSE[1], "right"), ("Mehr\u200cAbadi, Zahra", "Zahra Mehr\u200cAbadi", "right"),
         ("O'Brien, Siobhán", "Siobhán O'Brien", "wrong"), ("=Eve, Mallory", "=Mallory Eve", "right"),
         ("Kim, Alex", "Alex Kim", "right"), ("Kim, Alex", "Alex Kim", "wrong"), ("李小龍", "李小龍", "right"),
         ("D'Souza, Ana", "Ana D'Souza", "late"), ("Ng, Bo", "Bo Ng", "empty"), ("Smith, Cy", "Cy Smith", "pdf")]


def class_rosters() -> dict[str, str]:
    """Each platform's own roster of CLASS: Canvas's gradebook export, Moodle's grading worksheet (downloaded after
    the due date: its Status says who was late), and the course's roster.csv (for Gradescope: SID and email)."""
    texts = {}
    for kind, header in (("canvas", ["Student", "ID", "SIS User ID", "SIS Login ID", "Section", "Week 5 (123)"]),
                         ("moodle", MOODLE_ROSTER.splitlines()[0].split(",")), ("roster", ["name", "login", "sis_id"])):
        buffer = io.StringIO()
        w = csv.writer(buffer, lineterminator="\n")
        w.writerow(header)
        if kind == "canvas":
            w.writerow(["    Points Possible", "", "", "", "", "18"])
        for i, (last_first, first_last, fate) in enumerate(CLASS, start=1):
            if kind == "canvas":
                w.writerow([last_first, 2000 + i, f"S{i:02}", f"s{i:02}", "Sec A", ""])
            elif kind == "moodle":
                status = "Submitted for grading" + (" - 1 day 2 hours late" if fate == "late" else "")
                w.writerow([f"Participant {6000 + i}", first_last, f"s{i:02}@example.edu", status, "", "18.00", "Yes",
                            "", "", ""])
            else:
                w.writerow([first_last, f"s{i:02}@example.edu", f"S{i:02}"])
        texts[kind] = buffer.getvalue()
    return texts


def download(kind: str, course: Path, roster_text: str) -> bytes:
    """The platform's download of CLASS, laid out as ``kind`` writes it: each notebook the student's own edition,
    answered right or wrong; a late file (Canvas marks its name), an empty notebook and a PDF."""
    secret = course_secret.load(course)
    members = lms.parse_roster(roster_text).members
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as z:
        if kind == "gradescope":
            z.writestr("submission_metadata.yml", "".join(
                f"submission_{100 + i}:\n  :submitters:\n  - :name: \"{m.display}\"\n    :sid: {m.sis_id}\n"
                f"    :email: {m.login}\n" for i, m in enumerate(members)))
        for i, (m, (_, _, fate)) in enumerate(zip(members, CLASS, strict=True)):
            data = b"" if fate == "empty" else b"%PDF-1.4" if fate == "pdf" else \
                own_notebook(course, secret, m.name, fate != "wrong", m.written)
            file = "notes.pdf" if fate == "pdf" else NOTEBOOK
            sortable = re.sub(r"\W", "", m.display.lower())
            member = {"canvas": f"{sortable}{'_late' if fate == 'late' else ''}_{m.lms_id}_{900 + i}_{file}",
                      "moodle": f"{m.display}_{m.lms_id}_assignsubmission_file_{file}",
                      "gradescope": f"submission_{100 + i}/{file}"}[kind]
            z.writestr(member, data)
    return buffer.getvalue()


@pytest.mark.slow
def test_every_command_of_route_3_runs_as_printed(tmp_path, monkeypatch):
    """A class of ten with awkward names, from each platform's own download to its upload files, by the commands
    the instructors' page prints, run as printed."""
    own_uids(monkeypatch)
    root = Path(__file__).resolve().parents[1]
    env = {k: v for k, v in os.environ.items() if k != "TOYBOOK_COURSE_DIR"} | {"HOME": str(tmp_path)}
    course = tmp_path / "toybook-course"
    course.mkdir()
    (tmp_path / "Downloads").mkdir()
    rosters = class_rosters()
    (course / "canvas-gradebook.csv").write_text(rosters["canvas"], encoding="utf-8")
    (course / "moodle-worksheet.csv").write_text(rosters["moodle"], encoding="utf-8")
    (course / "roster.csv").write_text(rosters["roster"], encoding="utf-8")
    blocks = route_blocks()
    assert len(blocks) == 3 and all(any(line.startswith("# writes") for line in b) for b in blocks)
    kinds = {"submissions.zip": "canvas", "moodle-submissions.zip": "moodle", "gradescope-export.zip": "gradescope"}
    graded = {}
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
                kind = kinds[found.group(1)]
                text = rosters["roster" if kind == "gradescope" else kind]
                (tmp_path / "Downloads" / found.group(1)).write_bytes(download(kind, course, text))
            done = subprocess.run(["bash", "-c", line], cwd=root, env=env, capture_output=True, text=True,
                                  timeout=900)
            assert done.returncode == 0, (line, done.stdout[-2000:], done.stderr[-2000:])
            if found:
                assert "8 notebooks from 8 students of 10 on the roster" in done.stdout, done.stdout
                graded[kind] = course / "grades" / found.group(1)[:-4]
    assert sorted(graded) == ["canvas", "gradescope", "moodle"]
    for kind, out in graded.items():
        roster = lms.parse_roster(rosters["roster" if kind == "gradescope" else kind])
        fates = {m.name: fate for m, (_, _, fate) in zip(roster.members, CLASS, strict=True)}
        with open(out / "gradebook.csv", newline="", encoding="utf-8") as f:
            book = {read_cell(r["student"]): r for r in csv.DictReader(f)}
        kims = [m.name for m in roster.members if m.name.startswith(("Kim, Alex (", "Alex Kim ("))]
        assert len(kims) == 2 and all(k in book for k in kims), (kind, kims)
        assert set(book) == {n for n, fate in fates.items() if fate not in ("empty", "pdf")}, kind
        for name, row in book.items():  # each student's own instance: right where they answered right
            assert (float(row["ex-4-3-discount-a"]) > 0) == (fates[name] != "wrong"), (kind, name, row)
        report = (out / "intake-report.txt").read_text(encoding="utf-8")
        assert "(0 bytes)" in report and "notes.pdf" in report and "not a notebook" in report, report
        late = next(m.name for m in roster.members if fates[m.name] == "late")
        if kind != "gradescope":  # Gradescope marks lateness itself; its export does not say
            assert book[late]["late"] and not any(r["late"] for n, r in book.items() if n != late), kind
            assert "1 students handed in late:" in report
    # Canvas: the import by ID, each name as the export wrote it (NFD stays NFD); the feedback notebooks
    with open(graded["canvas"] / "canvas-import.csv", newline="", encoding="utf-8") as f:
        back = list(csv.reader(f))
    assert back[2][:2] == [NFD_JOSE[0], "2001"] and [r[1] for r in back[2:]] == [str(2000 + i) for i in
                                                                                (1, 2, 3, 4, 5, 6, 7, 8)]
    with zipfile.ZipFile(graded["canvas"] / "canvas-feedback.zip") as z:
        names = z.namelist()
        assert len(names) == 8 and all(n.endswith(NOTEBOOK) for n in names)
        assert any("_late_2008_" in n for n in names) and any(n.startswith("eve") for n in names)
        for n in names:
            nbformat.validate(nbformat.reads(z.read(n).decode(), as_version=4))
    # Moodle: the worksheet as downloaded, graded by Identifier; a feedback page per participant, named as Moodle does
    with open(graded["moodle"] / "moodle-worksheet.csv", newline="", encoding="utf-8") as f:
        sheet = list(csv.DictReader(f))
    assert [r["Identifier"] for r in sheet] == [f"Participant {6000 + i}" for i in range(1, 11)]
    assert [bool(r["Grade"]) for r in sheet] == [True] * 8 + [False] * 2
    with zipfile.ZipFile(graded["moodle"] / "moodle-feedback.zip") as z:
        assert sorted(z.namelist()) == sorted(f"{first_last}_{6000 + i}_assignsubmission_file_feedback.html"
                                              for i, (_, first_last, fate) in enumerate(CLASS, start=1)
                                              if fate not in ("empty", "pdf"))


# --- the smaller things of issue 48 -----------------------------------------------------------------------------


def test_widget_state_does_not_cost_a_student_their_notebook(tmp_path):
    """nbconvert saves the widget state (25.8 MB for a chapter's live figures): the 20 MB limit bounds what
    matters, the notebook without it; a notebook as heavy in what matters is still refused."""
    from course import classroom

    state = {"application/vnd.jupyter.widget-state+json": {"state": {"m": {"data": "x" * (25 * 1024 * 1024)}}}}
    heavy = {**NB, "cells": [nbformat.v4.new_code_cell("x = 1")], "metadata": {"widgets": state}}
    path = tmp_path / NOTEBOOK
    path.write_text(json.dumps(heavy))
    assert path.stat().st_size > classroom.MAX_NOTEBOOK_BYTES
    cells, data = classroom.read_cells(path)
    assert cells == ["x = 1"] and len(data) == path.stat().st_size
    too_much = {**NB, "cells": [nbformat.v4.new_code_cell("x = 1", outputs=[nbformat.v4.new_output(
        "stream", text="y" * (25 * 1024 * 1024))])]}
    path.write_text(json.dumps(too_much))
    with pytest.raises(classroom.Unreadable, match="bytes without its widget state, more than the 20,971,520"):
        classroom.read_cells(path)
    path.write_bytes(b"")
    with pytest.raises(classroom.Unreadable, match="is empty \\(0 bytes\\), not a notebook"):
        classroom.read_cells(path)
    # and the LMS's download takes it in, not "more than ... bytes: not graded"
    archive = tmp_path / "submissions.zip"
    make_zip(archive, {f"nunezjose_1001_5001_{NOTEBOOK}": json.dumps(heavy).encode()})
    taken = lms.intake(archive, tmp_path / "out", roster_of(tmp_path, CANVAS_ROSTER), None, {NOTEBOOK})
    assert list(taken.matched) == ["Núñez, José"]


def test_resume_says_every_written_mark_is_given_once_it_is(tmp_path):
    from course.classroom import write_reports
    from tests.test_names import book_and_keys, fill_marks, record

    book, keys = book_and_keys()
    (tmp_path / "feedback").mkdir()
    assert write_reports(tmp_path, [record("Ana"), record("Bo")], book, keys)["to_mark"] > 0
    fill_marks(tmp_path, lambda row: row["available"])
    assert write_reports(tmp_path, [record("Ana"), record("Bo")], book, keys)["to_mark"] == 0


def test_the_uid_isolation_is_named_so_and_leaves_nothing_in_tmp(monkeypatch, tmp_path):
    """Forced with TOYBOOK_SANDBOX=uid, the autograder's run says it is the uid isolation, not bubblewrap; and what
    a sandbox's uid wrote where any user may write (/tmp, /dev/shm) goes when the sandbox is stopped."""
    import secrets

    from course import gradescope, sandbox

    monkeypatch.setenv("TOYBOOK_SANDBOX", "uid")
    monkeypatch.setattr(sandbox, "requirements", lambda: None)
    monkeypatch.setattr(sandbox, "probe", lambda limits: {"tool": "t", "user": "u", "limits": "l"})
    assert gradescope._isolation(LIMITS)["isolation"] == "another uid, without namespaces (TOYBOOK_SANDBOX=uid)"
    monkeypatch.delenv("TOYBOOK_SANDBOX")
    assert gradescope._isolation(LIMITS)["isolation"] == "bubblewrap"
    if os.geteuid() != 0:
        pytest.skip("files of another uid: this part needs root")
    uid = own_uids(monkeypatch)[0] + 7
    theirs = [Path(f"/tmp/toybook-left-{secrets.token_hex(4)}"), Path(f"/dev/shm/toybook-left-{secrets.token_hex(4)}")]
    mine = Path(f"/tmp/toybook-kept-{secrets.token_hex(4)}")
    for folder in theirs:
        (folder / "inside").mkdir(parents=True)
        (folder / "inside" / "f").write_text("x")
        (folder / "inside" / "link").symlink_to(tmp_path)  # removed, never followed
        for p in (folder, folder / "inside", folder / "inside" / "f", folder / "inside" / "link"):
            os.lchown(p, uid, uid)
    loose = Path(f"/tmp/toybook-loose-{secrets.token_hex(4)}")
    loose.write_text("x")
    os.chown(loose, uid, uid)
    mine.write_text("kept")
    (tmp_path / "still").write_text("here")
    try:
        sandbox._remove_files_of(uid)
        assert not any(p.exists() for p in [*theirs, loose])
        assert mine.read_text() == "kept" and (tmp_path / "still").exists()
    finally:
        for p in [*theirs, loose, mine]:
            subprocess.run(["rm", "-rf", str(p)], check=False)
