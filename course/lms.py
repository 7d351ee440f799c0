"""Submissions as a learning platform hands them out: Canvas's "Download Submissions" zip, Moodle's "Download all
submissions" (a zip or its folder, flat or a folder per participant) and Gradescope's "Export Submissions" (its
``submission_<id>/`` folders and ``submission_metadata.yml``), matched to the roster by the platform's own ids.

The layouts (checked against each platform's documentation and the tools that read them, nbgrader's
``zip_collect`` among them):

- Canvas: flat files ``<sortable name>[_late]_<Canvas user id>_<attachment id>_<original file name>``, the sortable
  name lower-cased with its punctuation and spaces taken out, ``_late`` (Canvas's own code writes it in lower case;
  older downloads and other tools have ``_LATE``: either is read) on a file handed in after the due date; a file
  the student had already submitted under the same name gets ``-1``, ``-2``... before its extension. The roster is
  Canvas's gradebook export (columns Student, ID, SIS User ID, SIS Login ID, Section, one column per assignment,
  and a "Points Possible" row): a file is the student's whose ID is in it.
- Moodle: ``<Full name>_<participant id>_assignsubmission_file_<file name>`` (flat), or a folder
  ``<Full name>_<participant id>_assignsubmission_file`` holding the files ("Download submissions in folders"). The
  roster is the assignment's grading worksheet (Identifier "Participant <id>", Full name, Email address, ...).
- Gradescope: ``submission_<id>/`` holds what was submitted and ``submission_metadata.yml`` says who submitted each
  (``:submitters:`` with ``:name:``, ``:sid:`` and ``:email:``); a student is found by SID (the roster's SIS ID),
  else by email (the roster's login).

A file is never matched by its display name. The student it is matched to is the roster line's ``name``, the
name their edition was written for, so their instance (``course/secret.py``: the key is drawn from the name) is
the one their edition showed. ``intake`` copies each matched notebook into ``<out>/intake/<name>/``, the folder the
grader reads, and says in its report what became of every other file: not on the roster, a second file, not a
notebook, a zip inside the zip, a path leaving the archive, a link, too big. Nothing is written outside ``out``.
"""

from __future__ import annotations

import csv
import io
import json
import os
import re
import shutil
import stat
import zipfile
import zlib
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

from . import roster as rosters

LAYOUTS = ("canvas", "moodle", "gradescope")
MAX_FILE_BYTES = 100 * 1024 * 1024  # the grader's own limit for a notebook as saved (classroom.MAX_SAVED_BYTES)
MAX_ARCHIVE_BYTES = 4 * 1024**3  # unpacked, in all
MAX_MEMBERS = 100_000
METADATA = "submission_metadata.yml"

CANVAS = re.compile(r"^(?P<sortable>[^_/]*?)(?P<late>_(?i:late))?_(?P<user>\d+)_(?P<submission>\d+)_(?P<file>[^/]+)$")
MOODLE = re.compile(r"^(?P<name>[^/]+?)_(?P<participant>\d+)_assignsubmission_(?P<plugin>[a-z]+)(?:_(?P<file>.*))?$")
GRADESCOPE = re.compile(r"^submission_(?P<submission>\d+)$")
# what reading a damaged member (or one packed in a way Python cannot unpack, Deflate64 say) raises
DAMAGED = (zipfile.BadZipFile, zlib.error, EOFError, OSError, NotImplementedError, ValueError)
RESUBMITTED = re.compile(r"^(?P<stem>.+?)-(?P<n>\d+)(?P<ext>\.[^.]+)$")


@dataclass(frozen=True)
class Member:
    """A roster line: the name the student's edition has (their instance is drawn from it) and their ids."""

    name: str  # NFC; ``<name> (<id>)`` when two students share a name
    lms_id: str = ""  # Canvas's ID, Moodle's participant id
    login: str = ""  # SIS Login ID, Moodle's email, the roster's login
    sis_id: str = ""
    section: str = ""
    identifier: str = ""  # Moodle's "Participant <id>", as the worksheet has it
    status: str = ""  # Moodle's Status ("Submitted for grading", "... 2 days 3 hours late")
    display: str = ""  # the name exactly as the export has it (what the LMS shows and matches)
    written: str = ""  # ``name`` with the export's own bytes (an NFD name stays NFD): the edition's name


@dataclass
class Roster:
    kind: str  # canvas, moodle or roster (course/roster.py's own)
    members: list[Member]
    columns: list[str] = field(default_factory=list)  # the export's header, to write grades back in its shape
    rows: list[list[str]] = field(default_factory=list)  # the export's rows, likewise

    def students(self) -> dict[str, rosters.Student]:
        """{name: roster.Student}, for the grader's own exports."""
        return {m.name: rosters.Student(m.name, m.login or m.name, m.sis_id, m.written) for m in self.members}


def read_roster(path: Path) -> Roster:
    """The roster at ``path``: Canvas's gradebook export, Moodle's grading worksheet, or the course's own roster
    (``course/roster.py``); ValueError naming every bad line."""
    try:
        text = Path(path).read_text(encoding="utf-8-sig")
    except OSError as err:
        raise ValueError(f"the roster {path} could not be read ({err.strerror})") from None
    except UnicodeDecodeError:
        raise ValueError(f"the roster {path} is not UTF-8 text: save it as UTF-8") from None
    return parse_roster(text, str(path))


def read_students(path: Path) -> list[rosters.Student]:
    """The students of a roster file: the course's own (``course.roster``), or an LMS's export (Canvas's gradebook
    CSV, Moodle's grading worksheet), told apart by its header."""
    text = rosters.read_text(path)
    if _kind(next(csv.reader(io.StringIO(text.lstrip("\ufeff"))), [])) != "roster":
        return list(parse_roster(text, str(path)).students().values())
    return rosters.read(path)


def _kind(header: list[str]) -> str:
    names = {h.strip().lower() for h in header}
    if {"student", "id", "sis login id"} <= names:
        return "canvas"
    if {"identifier", "full name"} <= names:
        return "moodle"
    return "roster"


def parse_roster(text: str, where: str = "the roster") -> Roster:
    text = text.lstrip("\ufeff")
    rows = list(csv.reader(io.StringIO(text, newline="")))
    header = rows[0] if rows else []
    kind = _kind(header)
    if kind == "roster":
        students = rosters.parse(text, where)
        return Roster("roster", [Member(s.name, "", s.login, s.sis_id, display=s.as_written, written=s.as_written)
                                 for s in students])
    at = {h.strip().lower(): i for i, h in enumerate(header)}

    def cell(row, column):
        i = at.get(column)
        return row[i] if i is not None and i < len(row) else ""

    entries, members, ids = [], [], {}
    for line, row in enumerate(rows[1:], start=2):
        if kind == "canvas":
            lms_id = cell(row, "id").strip()
            if not lms_id:  # "Points Possible" and blank lines
                continue
            entry = {"name": cell(row, "student"), "login": cell(row, "sis login id"),
                     "sis_id": cell(row, "sis user id"), "id": lms_id}
            member = dict(lms_id=lms_id, section=cell(row, "section"))
        else:
            identifier = cell(row, "identifier").strip()
            found = re.search(r"(\d+)\s*$", identifier)
            if not identifier:
                continue
            if not found:
                raise ValueError(f"{where} line {line}: the Identifier {identifier!r} has no participant number")
            entry = {"name": cell(row, "full name"), "login": cell(row, "email address"), "sis_id": ""}
            entry["id"] = found.group(1)
            member = dict(lms_id=found.group(1), identifier=identifier, status=cell(row, "status"))
        if not entry["name"].strip():
            raise ValueError(f"{where} line {line}: the id {member['lms_id']} has no name")
        if member["lms_id"] in ids:
            raise ValueError(f"{where} line {line}: the id {member['lms_id']} is already on line "
                             f"{ids[member['lms_id']]}")
        ids[member["lms_id"]] = line
        entries.append((line, entry))
        members.append({**member, "display": entry["name"]})
    # the same rules as the course's own roster (NFC; two students of one name told apart by their LMS id)
    students = rosters._checked(entries, where)
    pairs = zip(students, members, strict=True)
    return Roster(kind, [Member(s.name, login=s.login, sis_id=s.sis_id, written=s.as_written, **m) for s, m in pairs],
                  header, rows[1:])


# --- the archive's files -------------------------------------------------------------------------------------


@dataclass
class File:
    path: str  # inside the archive, with "/"
    size: int
    read: object  # () -> bytes
    link: bool = False


def _archive_files(source: Path, report: list[str]) -> list[File]:
    """Every file of the zip or folder ``source``, none of them written anywhere; what cannot be one is reported."""
    files = []
    if source.is_dir():
        for parent, dirs, names in os.walk(source, followlinks=False):
            for d in list(dirs):
                if os.path.islink(os.path.join(parent, d)):
                    report.append(f"{Path(parent, d).relative_to(source)}: a symbolic link to a folder: not followed, "
                                  "nothing in it graded")
            dirs[:] = sorted(d for d in dirs if not os.path.islink(os.path.join(parent, d)))
            for name in sorted(names):
                full = Path(parent) / name
                info = os.lstat(full)
                rel = full.relative_to(source).as_posix()
                files.append(File(rel, info.st_size, lambda full=full: _read_capped(full),
                                  link=stat.S_ISLNK(info.st_mode)))
        return files
    try:
        archive = zipfile.ZipFile(source)
    except OSError as err:
        raise ValueError(f"{source} could not be read ({err.strerror or err})") from None
    except (zipfile.BadZipFile, EOFError, ValueError) as err:
        with open(source, "rb") as f:
            start = f.read(8)
        raise ValueError(f"{source} is not a zip file ({err}; it starts with {start!r}): give the zip the LMS "
                         "downloads, or the folder it unzips to") from None
    infos = archive.infolist()
    if len(infos) > MAX_MEMBERS:
        raise ValueError(f"{source} holds {len(infos):,} files, more than the {MAX_MEMBERS:,} the grader unpacks: "
                         "nothing was unpacked")
    total = sum(i.file_size for i in infos)
    if total > MAX_ARCHIVE_BYTES:
        raise ValueError(f"{source} would unpack to {total:,} bytes, more than the {MAX_ARCHIVE_BYTES:,} the grader "
                         "unpacks: nothing was unpacked (download it in parts, by section)")
    for info in infos:
        if info.is_dir():
            continue
        name = info.filename.replace("\\", "/")
        parts = PurePosixPath(name).parts
        if name.startswith("/") or re.match(r"^[A-Za-z]:", name) or ".." in parts:
            report.append(f"{info.filename}: a path leaving the archive's folder: not unpacked, not graded")
            continue
        link = stat.S_ISLNK(info.external_attr >> 16)
        files.append(File(name, info.file_size, lambda info=info: _read_member(archive, info), link=link))
    return files


def _not_zipped_again(source: Path, files: list[File]) -> list[File]:
    """``files``, or a ValueError when the zip ``source`` holds only zips that no platform names so: the download
    zipped once more (a zip that each student handed in is named as the platform names their files)."""
    paths = [f.path for f in files if not _ignored(f.path)]
    if not source.is_dir() and paths and all(p.lower().endswith(".zip") and not CANVAS.match(p)
                                             and not MOODLE.match(PurePosixPath(p).parts[0]) for p in paths):
        raise ValueError(f"{source} holds only {', '.join(paths[:3])}{' ...' if len(paths) > 3 else ''}: the download "
                         "was zipped again; give the zip inside it (unzip this one once)")
    return files


def _read_capped(path: Path) -> bytes:
    with open(path, "rb", opener=lambda p, flags: os.open(p, flags | os.O_NOFOLLOW)) as f:
        return f.read(MAX_FILE_BYTES + 1)


def _read_member(archive: zipfile.ZipFile, info: zipfile.ZipInfo) -> bytes:
    with archive.open(info) as f:
        return f.read(MAX_FILE_BYTES + 1)


def detect(source: Path) -> str | None:
    """Which platform laid out the zip or folder ``source`` (None: a folder per student, the grader's own); a
    ValueError with the reason when it is no archive the grader reads (not a zip, too big, zipped again)."""
    files = _not_zipped_again(source, _archive_files(source, []))
    paths = [f.path for f in files if not _ignored(f.path)]
    if any(PurePosixPath(p).name == METADATA for p in paths):
        return "gradescope"
    tops = {PurePosixPath(p).parts[0] for p in paths}
    if tops and all(MOODLE.match(t) for t in tops):
        return "moodle"
    flat = [p for p in paths if "/" not in p]
    if flat and len(flat) == len(paths) and all(CANVAS.match(p) for p in flat):
        return "canvas"
    return None if source.is_dir() else "unknown"


def _ignored(path: str) -> bool:
    parts = PurePosixPath(path).parts
    return any(p.startswith(".") or p == "__MACOSX" for p in parts)


# --- Gradescope's metadata -----------------------------------------------------------------------------------


def _scalar(text: str) -> str:
    text = text.strip()
    if text in ("", "~", "null"):
        return ""
    if text.startswith('"') and text.endswith('"') and len(text) >= 2:
        try:
            return json.loads(text)
        except ValueError:
            return text[1:-1]
    if text.startswith("'") and text.endswith("'") and len(text) >= 2:
        return text[1:-1].replace("''", "'")
    return text


def gradescope_submitters(text: str) -> dict[str, list[dict]]:
    """{submission id: [{name, sid, email}, ...]} from ``submission_metadata.yml`` (the part of YAML it uses: a
    mapping of ``submission_<id>`` to Ruby-symbol keys, ``:submitters:`` a list of mappings)."""
    out: dict[str, list[dict]] = {}
    current, in_submitters, person, indent = None, False, None, 0
    for raw in text.splitlines():
        if not raw.strip() or raw.lstrip().startswith("#"):
            continue
        top = re.match(r"^[\"']?submission_(\d+)[\"']?:\s*$", raw)
        if top:
            current, in_submitters, person = top.group(1), False, None
            out[current] = []
            continue
        if current is None:
            continue
        here = len(raw) - len(raw.lstrip(" "))
        line = raw.strip()
        key = re.match(r"^(-\s+)?:?(\w+):(?:\s+(.*))?$", line)
        if not key:
            continue
        dash, name, value = key.group(1), key.group(2), key.group(3)
        if name == "submitters" and not dash:
            in_submitters, indent, person = True, here, None
            continue
        if in_submitters:
            if dash and here >= indent:
                person = {}
                out[current].append(person)
            elif here <= indent:
                in_submitters, person = False, None
                continue
            if person is not None and name in ("name", "sid", "email"):
                person[name] = _scalar(value or "")
    return out


# --- intake --------------------------------------------------------------------------------------------------


@dataclass
class Intake:
    layout: str
    folder: Path  # <out>/intake: <name>/<notebook>.ipynb, what the grader reads
    report: list[str]
    matched: dict = field(default_factory=dict)  # name -> [(archive path, staged path)]
    names: dict = field(default_factory=dict)  # name -> the file's name as downloaded (Canvas re-uploads it)
    late: dict = field(default_factory=dict)  # name -> why the LMS says they handed in late


def _target_name(file_name: str, book_names: set[str]) -> str:
    """The file name a submitted notebook is graded under: Canvas's ``-1`` taken off when that makes it one of the
    book's notebooks; anything not a plain file name becomes ``submission.ipynb``."""
    name = PurePosixPath(file_name).name
    again = RESUBMITTED.match(name)
    if again and name not in book_names and again["stem"] + again["ext"] in book_names:
        name = again["stem"] + again["ext"]
    if not re.fullmatch(r"[\w][\w .()+-]*\.ipynb", name) or len(name.encode()) > 150:
        name = "submission.ipynb"
    return name


def intake(source: Path, out: Path, roster: Roster, layout: str | None = None,
           book_names: set[str] | frozenset = frozenset()) -> Intake:
    """Copy each notebook of the platform's archive or folder ``source`` into ``out/intake/<name>/``, matched to
    ``roster`` by the platform's id; return what was done and the report of every file not graded."""
    layout = layout or detect(source)
    if layout not in LAYOUTS:
        raise ValueError(f"{source} is not laid out as Canvas, Moodle or Gradescope write their downloads: give "
                         "--lms canvas, moodle or gradescope, or a folder with a folder per student")
    report: list[str] = []
    files = _not_zipped_again(source, _archive_files(source, report))
    folder = out / "intake"
    by_id = {m.lms_id: m for m in roster.members if m.lms_id}
    by_sid, by_login = rosters.identity_keys(roster.members)
    if layout in ("canvas", "moodle") and not by_id:
        raise ValueError(f"the roster ({roster.kind}) has no {layout.capitalize()} ids: give --roster the "
                         + ("gradebook export (Student, ID, SIS User ID, SIS Login ID, Section)" if layout == "canvas"
                            else "grading worksheet (Identifier, Full name, Email address, ...)")
                         + f" of this course, from {layout.capitalize()}")
    submitters, base = {}, "."
    if layout == "gradescope":
        meta = [f for f in files if PurePosixPath(f.path).name == METADATA]
        if not meta:
            raise ValueError(f"{source} has no {METADATA}: export the submissions again from Gradescope")
        if len(meta) > 1:
            report.append(f"{len(meta)} files named {METADATA}: {meta[0].path} is read, "
                          + ", ".join(m.path for m in meta[1:]) + " are not")
        try:
            submitters = gradescope_submitters(meta[0].read().decode("utf-8", "replace"))
        except DAMAGED as err:
            raise ValueError(f"{source}: {meta[0].path} is damaged in the zip ({err}): download the export "
                             "again") from None
        base = str(PurePosixPath(meta[0].path).parent)  # the export's own folder, when the zip has one
    if folder.exists():
        shutil.rmtree(folder)
    folder.mkdir(parents=True)
    members = {m.name: m for m in roster.members}
    candidates: dict[str, list[tuple[tuple, File, str]]] = {}  # name -> [(order, file, file name)]
    for f in files:
        if _ignored(f.path) or PurePosixPath(f.path).name == METADATA:
            continue
        path = f.path
        if layout == "gradescope" and base != ".":
            path = f.path[len(base) + 1:] if f.path.startswith(base + "/") else "/" + f.path  # outside: unmatched
        who, file_name, order, why = _match(path, layout, by_id, by_sid, by_login, submitters)
        if why:
            report.append(f"{f.path}: {why}: not graded")
            continue
        for member in who:
            candidates.setdefault(member.name, []).append((order, f, file_name))
    result = Intake(layout, folder, report)
    for name in sorted(candidates):
        usable = []
        for order, f, file_name in sorted(candidates[name], key=lambda c: c[0]):
            lower = file_name.lower()
            if f.link:
                report.append(f"{f.path} ({name}): a symbolic link: not followed, not graded")
            elif lower.endswith((".zip", ".tar", ".gz", ".tgz", ".7z", ".rar")):
                report.append(f"{f.path} ({name}): an archive inside the archive: not unpacked, not graded (ask "
                              "for the notebook itself)")
            elif not lower.endswith(".ipynb"):
                report.append(f"{f.path} ({name}): not a notebook (.ipynb): not graded")
            elif f.size == 0:
                report.append(f"{f.path} ({name}): an empty file (0 bytes), not a notebook: not graded")
            elif f.size > MAX_FILE_BYTES:
                report.append(f"{f.path} ({name}): {f.size:,} bytes, more than the {MAX_FILE_BYTES:,} a notebook may "
                              "have: not graded")
            else:
                usable.append((order, f, file_name))
        chosen: dict[str, tuple] = {}
        for order, f, file_name in usable:  # in the order handed in: a later one replaces an earlier one
            target = _target_name(file_name, set(book_names))
            key = target if target in book_names else "*"
            if key in chosen:
                report.append(f"{chosen[key][1].path} ({name}): two notebooks from one student; {f.path} was handed "
                              f"in later and is graded, this one is not")
            chosen[key] = (order, f, target)
        for _order, f, target in chosen.values():
            try:
                data = f.read()
            except DAMAGED as err:
                report.append(f"{f.path} ({name}): could not be unpacked, damaged in the zip ({err}): not graded; "
                              "download the submissions again")
                continue
            if len(data) > MAX_FILE_BYTES:
                report.append(f"{f.path} ({name}): more than {MAX_FILE_BYTES:,} bytes unpacked: not graded")
                continue
            home = folder / name
            home.mkdir(exist_ok=True)
            (home / target).write_bytes(data)
            result.matched.setdefault(name, []).append((f.path, home / target))
            result.names.setdefault(name, []).append(PurePosixPath(f.path).name)
            why = _late(layout, f.path, members[name])
            if why:
                result.late[name] = why
    missing = [m.name for m in roster.members if m.name not in result.matched]
    if missing:
        report.append(f"no notebook from {len(missing)} students on the roster: " + ", ".join(missing))
    return result


def _match(path: str, layout: str, by_id: dict, by_sid: dict, by_login: dict, submitters: dict):
    """(students, file name, order, why not): whose file ``path`` is, by the platform's id."""
    parts = PurePosixPath(path).parts
    if layout == "canvas":
        found = CANVAS.match(path) if len(parts) == 1 else None
        if not found:
            return [], "", (), "a file name Canvas does not write (<name>_<user id>_<submission id>_<file>)"
        member = by_id.get(found["user"])
        if member is None:
            return [], "", (), f"Canvas user id {found['user']} is not on the roster"
        again = RESUBMITTED.match(found["file"])
        return [member], found["file"], (int(found["submission"]), int(again["n"]) if again else 0), ""
    if layout == "moodle":
        found = MOODLE.match(parts[0])
        if not found:
            return [], "", (), "a name Moodle does not write (<Full name>_<participant id>_assignsubmission_...)"
        if len(parts) == 1:
            file_name = found["file"] or ""
        else:
            file_name = "/".join(parts[1:])
        if found["plugin"] != "file":
            return [], "", (), f"Moodle's {found['plugin']} submission, not a file"
        member = by_id.get(found["participant"])
        if member is None:
            return [], "", (), f"Moodle participant {found['participant']} is not on the roster"
        return [member], PurePosixPath(file_name).name, (path,), ""
    found = GRADESCOPE.match(parts[0]) if len(parts) > 1 else None
    if not found:
        return [], "", (), "not inside a submission_<id>/ folder"
    people = submitters.get(found["submission"])
    if not people:
        return [], "", (), f"submission {found['submission']} is not in {METADATA}"
    members, unknown = [], []
    for person in people:
        member, _ = rosters.find_submitter(person, by_sid, by_login)
        (members.append(member) if member else unknown.append(person.get("sid") or person.get("email") or "?"))
    if not members:
        return [], "", (), f"its submitters ({', '.join(unknown)}) are not on the roster (by SID, then email)"
    return members, PurePosixPath(path).name, (int(found["submission"]), path), ""


def _late(layout: str, path: str, member: Member) -> str:
    """Why the platform says ``member``'s file ``path`` came in late, or "": Canvas marks the file's name, Moodle's
    grading worksheet (downloaded after the due date) says it in the Status column."""
    if layout == "canvas":
        found = CANVAS.match(PurePosixPath(path).name)
        return f"Canvas marked {PurePosixPath(path).name} late" if found and found["late"] else ""
    if layout == "moodle":
        found = re.search(r"[^-\n]*\blate\b", member.status, re.I)
        return f"Moodle's worksheet says {found.group(0).strip()}" if found else ""
    return ""


def write_report(out: Path, taken: Intake) -> Path:
    """``out/intake-report.txt``: every file graded, for whom, and every one not graded, with why."""
    lines = [f"layout: {taken.layout}", ""]
    for name, pairs in sorted(taken.matched.items()):
        for original, staged in pairs:
            late = f" (late: {taken.late[name]})" if name in taken.late else ""
            lines.append(f"graded: {original} -> {name} ({staged.relative_to(out)}){late}")
    lines += ["", f"{len(taken.late)} students handed in late:"] + [f"  {name}: {why}"
                                                                     for name, why in sorted(taken.late.items())]
    lines += ["", f"{len(taken.report)} files or students need a look:"] + [f"  {r}" for r in taken.report]
    path = out / "intake-report.txt"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path
