"""The class list: each student's name (as the course knows them: their edition's folder, the name their
submission is handed in under) and, from a CSV roster, their identity in the learning platform.

A roster is either a text file, one name per line, or a CSV file with a header naming its columns: ``name``
(required), ``login`` (Canvas's SIS Login ID, Moodle's username; default: the name) and ``sis_id`` (Canvas's SIS
User ID; default: none). Names are compared in Unicode's NFC form ("José" typed on one machine and unzipped as NFD
on another is one student) and kept otherwise exactly as written (a zero-width non-joiner stays).

``read(path)`` refuses a roster with any bad line before anything is written, and names each: a duplicate, a name
starting with ``.`` (a hidden folder, never graded), a name with a path character or a control character, a name
too long to be a folder. Two students of one name are told apart by their id where the roster has one (the LMS's
id, else the SIS ID, else the login of a CSV roster): each becomes ``<name> (<id>)`` (``Kim, Alex (1002)``), the
name of their folders, their edition and their instance; a plain list of names cannot tell them apart and is
refused. Each student's name is also kept as the roster wrote it (``written``: an NFD name stays NFD), for what is
handed back to the student or the LMS.
"""

from __future__ import annotations

import csv
import io
import unicodedata
from dataclasses import dataclass, field
from pathlib import Path

from toy.exercises.questions import normal_name

MAX_NAME_BYTES = 200  # a folder name may have 255 bytes; the grader's files add a little to it
COLUMNS = ("name", "login", "sis_id")


@dataclass(frozen=True)
class Student:
    name: str  # in NFC, compared and hashed (the instance is drawn from it)
    login: str
    sis_id: str = ""
    written: str = field(default="", compare=False)  # the name as the roster wrote it ("": as ``name``)

    @property
    def as_written(self) -> str:
        return self.written or self.name


def problem(name: str) -> str | None:
    """Why ``name`` cannot be a student's name (a folder of its own), or None."""
    if not name:
        return "an empty name"
    if name.startswith("."):
        return f"{name!r} starts with '.', which makes a hidden folder that is never graded"
    bad = [c for c in name if c in "/\\\0" or unicodedata.category(c) == "Cc"]
    if bad:
        return f"{name!r} holds {bad[0]!r}, a path or control character"
    size = len(name.encode("utf-8"))
    if size > MAX_NAME_BYTES:
        return (f"{name[:40]!r}... is {size} bytes long in UTF-8 ({len(name)} characters); a name may have at most "
                f"{MAX_NAME_BYTES}")
    return None


def parse(text: str, where: str = "the roster", csv_file: bool | None = None) -> list[Student]:
    """The students of a roster's ``text``; ValueError naming every bad line."""
    text = text.lstrip("\ufeff")
    first = text.split("\n", 1)[0]
    if csv_file is None:
        csv_file = "name" in [c.strip().lower() for c in first.replace(";", ",").split(",")]
    entries: list[tuple[int, dict]] = []
    if csv_file:
        try:
            dialect = csv.Sniffer().sniff(first, delimiters=",;\t")
        except csv.Error:
            dialect = csv.excel
        reader = csv.DictReader(io.StringIO(text, newline=""), dialect=dialect)
        fields = [(f or "").strip().lower() for f in reader.fieldnames or []]
        if "name" not in fields:
            raise ValueError(f"{where}: a CSV roster needs a column 'name' (and may have {', '.join(COLUMNS[1:])})")
        unknown = [f for f in fields if f not in COLUMNS]
        if unknown:
            raise ValueError(f"{where}: unknown columns {', '.join(unknown)} (allowed: {', '.join(COLUMNS)})")
        reader.fieldnames = fields
        for line, row in enumerate(reader, start=2):
            entries.append((line, {k: (row.get(k) or "") for k in COLUMNS}))
    else:
        for line, raw in enumerate(text.split("\n"), start=1):
            entries.append((line, {"name": raw.rstrip("\r"), "login": "", "sis_id": ""}))
    return _checked(entries, where)


def from_names(names: list[str], where: str = "the roster") -> list[Student]:
    """Students from a list of names (line numbers counted from 1); ValueError naming every bad one."""
    return _checked([(i, {"name": n, "login": "", "sis_id": ""}) for i, n in enumerate(names, 1)], where)


def _told_apart(entries: list[tuple[int, dict]]) -> dict[int, str]:
    """{line: id} for each student whose name another also has, where every one of that name has an id (``id``,
    the LMS's own, else ``sis_id``, else ``login``) and no two of them the same."""
    by_name: dict[str, list[tuple[int, str]]] = {}
    for line, row in entries:
        the_id = (row.get("id") or row.get("sis_id") or row.get("login") or "").strip()
        by_name.setdefault(normal_name(row["name"]), []).append((line, the_id))
    out = {}
    for same in by_name.values():
        ids = [i for _, i in same]
        if len(same) > 1 and all(ids) and len(set(ids)) == len(ids):
            out.update(same)
    return out


def _checked(entries: list[tuple[int, dict]], where: str) -> list[Student]:
    students, bad, seen = [], [], {}
    entries = [(line, row) for line, row in entries if row["name"].strip() or row["login"].strip()]  # blank lines
    apart = _told_apart(entries)
    for line, row in entries:
        name, written = normal_name(row["name"]), row["name"].strip()
        if line in apart:
            name, written = f"{name} ({apart[line]})", f"{written} ({apart[line]})"
        login = normal_name(row["login"]) or name
        said = problem(name)
        if said:
            bad.append(f"line {line}: {said}")
            continue
        for what, value in (("name", name), ("login", login)):
            if (what, value) in seen:
                bad.append(f"line {line}: the {what} {value!r} is already on line {seen[(what, value)]}"
                           + ("" if what == "login" or row.get("id") else " (two students of one name: a CSV roster "
                              "with a login or sis_id for each tells them apart)"))
            seen.setdefault((what, value), line)
        students.append(Student(name, login, row["sis_id"].strip(), written if written != name else ""))
    if bad:
        raise ValueError(f"{where} was refused, nothing was written; fix these lines:\n  " + "\n  ".join(bad))
    return students


def read_text(path: Path) -> str:
    """The text of the roster file at ``path``, or a ValueError that says why it cannot be read."""
    try:
        return Path(path).read_text(encoding="utf-8")
    except OSError as err:
        raise ValueError(f"the roster {path} could not be read ({err.strerror})") from None
    except UnicodeDecodeError:
        raise ValueError(f"the roster {path} is not UTF-8 text: save it as UTF-8") from None


def read(path: Path) -> list[Student]:
    """The students of the course's own roster file at ``path`` (see the module docstring); an LMS's export is read
    by ``course.lms.read_students``, which takes either."""
    return parse(read_text(path), str(path), True if Path(path).suffix.lower() == ".csv" else None)


def identities(students: list[Student]) -> dict[str, Student]:
    """{name: student}, for the grader's exports (the name being the submission's folder)."""
    return {s.name: s for s in students}


def identity_keys(members) -> tuple[dict, dict]:
    """({SIS ID: member}, {login, lower case: member}) of roster members (anything with ``sis_id`` and ``login``),
    in NFC: what ``find_submitter`` looks a submitter up in."""
    by_sid = {normal_name(m.sis_id): m for m in members if m.sis_id}
    by_login = {normal_name(m.login).lower(): m for m in members if m.login}
    return by_sid, by_login


def find_submitter(person: dict, by_sid: dict, by_login: dict):
    """The roster member a Gradescope submitter (``{"sid": ..., "email": ...}`` of its submission metadata) is, and
    how they were found: by their SID, else by their email as the roster's ``login``, both in NFC (the email in any
    case); ``(None, "")`` if neither is on the roster. Never by their name, which they can edit on Gradescope."""
    sid = normal_name(str(person.get("sid") or ""))
    email = normal_name(str(person.get("email") or "")).lower()
    if sid and sid in by_sid:
        return by_sid[sid], f"SID {sid}"
    if email and email in by_login:
        return by_login[email], f"email {email}"
    return None, ""
