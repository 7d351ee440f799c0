"""Grade a whole class: every submission, each exercise in its own sandbox, several at once; a run that always
finishes, resumes, and leaves nothing behind.

``grade_class`` writes, in ``out`` (each file written whole, then renamed into place):

- ``gradebook.csv``: one row per student, one column per exercise (1 for a pass, else 0), a total, and ``flags``
  (a count of near-copies per exercise, e.g. ``4.1-value: 1 flag``, for the instructor to look at: flagged is not
  zero);
- ``grades.csv``: one row per student, notebook and exercise (status, hidden cases passed, the message, time);
- ``similarity.csv``: every flagged pair: its similarity, the exercise's threshold, the distinctive k-grams shared
  and needed, and its review page;
- ``review/<exercise>--<student>--<other>--<hash>.html``: for each flagged pair, the two answers side by side with
  what matched highlighted (``review.py``);
- ``feedback/<student>.md``: what each student should read;
- ``results/``: one JSON file per submission, written as soon as it is graded (what ``--resume`` reuses);
- ``run.json``: the seed of the hidden cases, the settings, what the sandbox enforces, and how long it took.

A submission that cannot be read or graded (not a notebook, JSON nested too deep, a symbolic link, a file too
large, anything the grader did not expect) gets its row and its reason, and the class goes on. Two runs can grade
at once; two runs cannot write one output folder at once (a lock says so). Ctrl-C or SIGTERM kills the running
sandboxes, starts no further exercise, writes the gradebook of the submissions graded whole (a second Ctrl-C
meanwhile is ignored), and ``--resume`` grades the rest.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import os
import re
import secrets
import signal
import stat
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path

from toy.exercises import CheckResult, questions

from . import answers, private, sandbox, similarity
from . import secret as course_secret
from .assignment import WRITTEN, Assignment, points_rule, points_text
from .marks import AnswerKey, Settings, grade_exercise, result_record
from .tables import formula_like
from .tables import to_csv as _csv

PRACTICE_NOTE = "a practice question: checked, not graded"  # answers.mark_answers's note
MAX_NOTEBOOK_BYTES = 20 * 1024 * 1024  # what a notebook may weigh without the widget state its Jupyter saved
MAX_SAVED_BYTES = 100 * 1024 * 1024  # what it may weigh as saved, widget state and all (10 to 36 MB with live widgets)
MAX_CODE_CHARS = 1_000_000  # in all code cells (a chapter of the book has about 40,000)
VERSION = 5  # of the results files: a change to grading makes --resume grade again
STOPPING = threading.Event()  # set on Ctrl-C: submissions in progress start no further exercise


@dataclass
class BookNotebook:
    """What the grader knows of one of the book's notebooks: its exercises and, for copy detection, the code
    handed out for each function (the stub) and the book's solution."""

    exercises: list  # [(exercise, function name)]
    stubs: dict = field(default_factory=dict)  # function -> source
    solutions: dict = field(default_factory=dict)  # function -> source
    cells: frozenset = frozenset()  # the student edition's code cells (slicing.normal): the book's own code
    questions: list = field(default_factory=list)  # exercises with questions (toy.exercises.questions), in order
    written: list = field(default_factory=list)  # exercises whose written answer is marked by rubric
    worked: dict = field(default_factory=dict)  # exercise -> the book's worked solution (Markdown)
    parts: dict = field(default_factory=dict)  # exercise label -> {part (a gradebook column): default points}


def atomic_write(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` so that a reader sees the old file or the new one, never half of one; 0600, for
    the instructor alone (``course.private``: marks, names and feedback)."""
    private.write(path, text)


def safe_name(text: str) -> str:
    """A student's name as a file name: letters, digits, ``.``, ``-`` and ``_`` only, and a short hash of the name
    when that changed it (so that "a b" and "a_b" stay two files)."""
    name = re.sub(r"[^\w.-]", "_", text).lstrip(".")[:100] or "_"
    return name if name == text else f"{name}-{hashlib.sha256(text.encode()).hexdigest()[:8]}"


def submissions(folder: Path) -> list[tuple[str, Path]]:
    """(student, notebook) pairs: ``<student>/.../<notebook>.ipynb`` or ``<student>.ipynb``; links not followed.
    The student's name is the folder's (or file's), in Unicode's NFC form, as the roster's names are."""
    pairs = []
    for parent, dirs, files in os.walk(folder, followlinks=False):
        dirs[:] = sorted(d for d in dirs if not d.startswith(".") and d != ".ipynb_checkpoints")
        for name in sorted(files):
            if name.endswith(".ipynb"):
                path = Path(parent) / name
                rel = path.relative_to(folder)
                student = rel.parts[0] if len(rel.parts) > 1 else path.stem
                pairs.append((questions.normal_name(student), path))
    return pairs


class Unreadable(ValueError):
    pass


def read_cells(path: Path) -> tuple[list[str], bytes]:
    """The code cells' sources of a submitted notebook, and its bytes; Unreadable says why not."""
    try:
        info = os.lstat(path)
    except OSError as err:
        raise Unreadable(f"{path.name} could not be read ({err.strerror})") from None
    if stat.S_ISLNK(info.st_mode):
        raise Unreadable(f"{path.name} is a symbolic link: submit the notebook itself")
    if not stat.S_ISREG(info.st_mode):
        raise Unreadable(f"{path.name} is not a regular file")
    if info.st_size == 0:
        raise Unreadable(f"{path.name} is empty (0 bytes), not a notebook: save the notebook and hand it in again")
    if info.st_size > MAX_SAVED_BYTES:
        raise Unreadable(f"{path.name} is {info.st_size:,} bytes, more than the {MAX_SAVED_BYTES:,} a notebook "
                         "may have as saved (clear its outputs)")
    with open(path, "rb", opener=lambda p, flags: os.open(p, flags | os.O_NOFOLLOW | os.O_NONBLOCK)) as f:
        data = f.read(MAX_SAVED_BYTES + 1)
    try:
        notebook = json.loads(data)
    except RecursionError:
        raise Unreadable(f"{path.name} is JSON nested too deeply to be a notebook") from None
    except (ValueError, UnicodeDecodeError) as err:
        raise Unreadable(f"{path.name} is not a notebook: not JSON ({type(err).__name__})") from None
    cells = notebook.get("cells") if isinstance(notebook, dict) else None
    if not isinstance(cells, list):
        raise Unreadable(f"{path.name} is not a notebook: it has no list of cells")
    if len(data) > MAX_NOTEBOOK_BYTES:  # the limit bounds what matters: the widget state (nbconvert's default) is not
        meta = notebook.get("metadata")
        widgets = len(json.dumps(meta.get("widgets"))) if isinstance(meta, dict) and "widgets" in meta else 0
        if len(data) - widgets > MAX_NOTEBOOK_BYTES:
            raise Unreadable(f"{path.name} is {len(data) - widgets:,} bytes without its widget state, more than the "
                             f"{MAX_NOTEBOOK_BYTES:,} a notebook may have (clear its outputs)")
    sources = []
    for cell in cells:
        if not isinstance(cell, dict) or cell.get("cell_type") != "code":
            continue
        source = cell.get("source", "")
        if isinstance(source, list) and all(isinstance(s, str) for s in source):
            source = "".join(source)
        if not isinstance(source, str):
            raise Unreadable(f"{path.name} is not a notebook: a code cell's source is not text")
        sources.append(source)
    size = sum(len(source) for source in sources)
    if size > MAX_CODE_CHARS:
        raise Unreadable(f"{path.name} has {size:,} characters of code, more than the {MAX_CODE_CHARS:,} the grader "
                         "reads")
    return sources, data


def which_notebook(path: Path, cells: list[str], book: dict) -> str | None:
    """Which of the book's notebooks a submission is: by file name, else by the exercises its cells check."""
    if path.name in book:
        return path.name
    text = "\n".join(cells)
    overlap = {name: sum(f'"{ex}"' in text or f"'{ex}'" in text for ex, _ in nb.exercises)
               for name, nb in book.items()}
    best = max(overlap, key=overlap.get, default=None)
    return best if best and overlap[best] else None


def grade_submission(student: str, path: Path, book: dict, keys: dict, settings: Settings,
                     timeout: float, secret: bytes | None = None, assignment: Assignment | None = None) -> dict:
    """One submission's record: its notebook, digest, and each exercise's result (never raises). ``secret``: the
    course's, which the student's instance is drawn from; ``assignment``: only its exercises are graded."""
    assignment = assignment or Assignment()
    record = {"version": VERSION, "student": student, "file": str(path), "notebook": None, "digest": None,
              "problem": "", "exercises": []}
    start = time.monotonic()
    try:
        cells, data = read_cells(path)
        record["digest"] = hashlib.sha256(data).hexdigest()
        name = which_notebook(path, cells, book)
        if name is None:
            record["problem"] = f"{path.name} is not one of the book's notebooks"
            return record
        record["notebook"] = name
        label_of = {part: label for label, parts in book[name].parts.items() for part in parts}
        for exercise, function in book[name].exercises:
            if not assignment.picks(label_of.get(exercise, exercise)):
                continue  # not part of the assignment: not run at all
            if STOPPING.is_set():
                record["problem"] = "the run was stopped"
                break
            left = timeout - (time.monotonic() - start)
            if left <= 0:
                n = len(keys[name].cases[exercise])
                record["exercises"].append({"exercise": exercise, "status": "not run", "message": "the submission "
                                            f"used up its {timeout:g} s before this exercise", "cases_passed": 0,
                                            "cases_total": n, "problems": [], "seconds": 0.0, "code": []})
                continue
            mine = replace(settings, setup_seconds=min(settings.setup_seconds, left),
                           case_seconds=min(settings.case_seconds, left))
            graded = grade_exercise(cells, exercise, function, keys[name], mine, book[name].cells)
            record["exercises"].append(result_record(graded))
        notebook = json.loads(data)
        key = course_secret.student_key(secret, student)
        record["answers"] = _mark_answers(notebook, student, [ex for ex in book[name].questions
                                                              if assignment.picks(ex)], key)
        record["written"] = _written(notebook, [ex for ex in book[name].written if assignment.picks(ex)])
    except Unreadable as err:
        record["problem"] = str(err)
    except Exception as err:  # noqa: BLE001 - a submission the grader did not expect still gets its row
        record["problem"] = f"the grader could not grade this submission ({type(err).__name__}: {err})"[:500]
    record["seconds"] = round(time.monotonic() - start, 3)
    return record


def _mark_answers(notebook: dict, student: str, exercises: list[str], key: str | None) -> list[dict]:
    """The questions' rows (``answers.mark_answers``); if the answers cannot be read at all, a row for each question
    that says why, and the written answers and code exercises still count."""
    try:
        return answers.mark_answers(notebook, student, exercises, key)
    except Exception as err:  # noqa: BLE001 - the questions' rows, whatever went wrong
        why = f"the answers could not be read ({type(err).__name__})"
        return [{"question": q.name, "status": "not readable", "mark": 0, "points": 0 if q.practice else q.points,
                 "message": why} for q in questions.QUESTIONS.values() if q.exercise in exercises]


def _written(notebook: dict, exercises: list[str]) -> dict[str, str]:
    """The written answers to ``exercises``; one that cannot be read is said as its text, for the marker."""
    try:
        return {ex: text for ex, text in answers.written_answers(notebook).items() if ex in exercises}
    except Exception as err:  # noqa: BLE001
        return {ex: f"(the grader could not read this notebook's written answers: {type(err).__name__})"
                for ex in exercises}


class Progress:
    """One line on a terminal (else one line per graded submission): a bar, counts, and the time left."""

    def __init__(self, total: int, stream=sys.stderr, width: int = 30):
        self.total, self.stream, self.width, self.start = total, stream, width, time.monotonic()
        self.tty = getattr(stream, "isatty", lambda: False)()

    def line(self, done: int, running: int) -> str:
        filled = self.width * done // max(self.total, 1)
        bar = "#" * filled + "-" * (self.width - filled)
        if done == 0:
            left = "time left: estimating"
        else:
            seconds = (time.monotonic() - self.start) / done * (self.total - done)
            left = f"about {int(seconds // 60)}m {int(seconds % 60):02d}s left" if done < self.total else "done"
        return f"[{bar}] {done}/{self.total} graded, {running} running, {left}"

    def show(self, done: int, running: int) -> None:
        end = "\r" if self.tty and done < self.total else "\n"
        self.stream.write(self.line(done, running) + end)
        self.stream.flush()


class Busy(RuntimeError):
    """Another grading run is writing the same output folder."""


@contextlib.contextmanager
def _lock(out: Path):
    private.folder(out)
    with open(out / ".lock", "a+", opener=lambda p, flags: os.open(p, flags, 0o600)) as f:
        try:
            fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise Busy(f"another grading run is writing {out}: wait for it, or give this one another --out") from None
        try:
            yield
        finally:
            fcntl.flock(f, fcntl.LOCK_UN)


@contextlib.contextmanager
def _stop_on_sigterm():
    """SIGTERM stops the run like Ctrl-C (KeyboardInterrupt in the main thread)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def interrupt(signum, frame):
        raise KeyboardInterrupt

    old = signal.signal(signal.SIGTERM, interrupt)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, old)


def grade_class(folder: Path, out: Path, book: dict, jobs: int = 1, timeout: float = 600,
                settings: Settings | None = None, seed: int | None = None, resume: bool = False,
                students: list[str] | None = None, progress: bool = True, anonymous: bool = False,
                assignment: Assignment | None = None, secret: bytes | None = None,
                roster: dict | None = None, late: dict | None = None) -> dict:
    """Grade every submission in ``folder`` into ``out`` (see the module's docstring); return run.json's content.

    ``book`` maps each notebook's file name to its ``BookNotebook``. ``resume``: reuse the results of submissions
    already graded in ``out`` with the same seed, unchanged since. ``students``: grade only these again and keep
    the others' results (both take the seed from ``out/run.json``). ``secret``: the course's (``course/secret.py``),
    which each student's instance and the anonymous pseudonyms are drawn from; None: instances drawn from the names
    alone. ``roster``: {name: ``roster.Student``}, each student's login and SIS ID for the LMS exports. ``late``:
    {name: why}, who the LMS says handed in late (``lms.Intake.late``): the gradebook then has a column ``late``
    and their feedback says so."""
    problem = sandbox.requirements()
    if problem:
        raise sandbox.Refused(problem)
    settings = settings or Settings()
    with _lock(out), _stop_on_sigterm():
        sandbox.sweep()
        enforced = sandbox.probe(settings.limits)
        previous = json.loads((out / "run.json").read_text()) if (out / "run.json").exists() else {}
        seed = _run_seed(out, previous, seed, resume or bool(students))
        which = {"name": (assignment or Assignment()).name, "points": (assignment or Assignment()).points}
        if assignment is not None and assignment.count_practice:
            which["count_practice"] = sorted(assignment.count_practice)
        if "assignment" in previous and previous["assignment"] != which:
            raise ValueError(f"{out} holds the grades of another assignment ({previous['assignment']['name']!r}, "
                             f"{len(previous['assignment']['points']) or 'every'} exercises): give this one an --out "
                             "of its own (each assignment's output goes to a folder of its own)")
        results = out / "results"
        private.folder(results)
        private.folder(out / "feedback")
        pairs = submissions(folder)
        if students:
            students = [questions.normal_name(s) for s in students]
            unknown = sorted(set(students) - {s for s, _ in pairs})
            if unknown:
                raise ValueError(f"no submission from {', '.join(unknown)} in {folder}")
        keys = {name: AnswerKey(seed, dict(nb.exercises)) for name, nb in book.items()}
        about = {"seed": seed, "assignment": which, "jobs": jobs, "timeout": timeout,
                 "setup_seconds": settings.setup_seconds, "case_seconds": settings.case_seconds,
                 "limits": asdict(settings.limits), "sandbox": enforced, "submissions": len(pairs)}
        atomic_write(out / "run.json", json.dumps({**previous, **about, "finished": False}, indent=2))

        records, todo = _kept_and_todo(folder, pairs, results, seed, resume, students)
        bar = Progress(len(pairs)) if progress else None
        start = time.monotonic()
        interrupted = _grade_each(todo, records, len(pairs), jobs, bar, seed,
                                  (book, keys, settings, timeout, secret, assignment))
        about["seconds"] = round(time.monotonic() - start, 1)
        about["graded_now"] = sum(1 for _, _, file in todo if file in records)
        about["finished"] = not interrupted
        if interrupted:
            about["interrupted"] = (f"stopped after {len(records)} of {len(pairs)} submissions: run again with "
                                    "--resume to grade the rest")
        paths = write_reports(out, list(records.values()), book, keys, anonymous, assignment, secret, roster, late)
        about.update(paths)
        atomic_write(out / "run.json", json.dumps({**about, "seed": seed}, indent=2))
    if interrupted:
        if threading.current_thread() is threading.main_thread():
            signal.signal(signal.SIGINT, signal.default_int_handler)
        raise KeyboardInterrupt
    return about


def _run_seed(out: Path, previous: dict, seed: int | None, again: bool) -> int:
    """The seed of the hidden cases: the earlier run's in ``out`` when grading ``again`` (--resume, --student), which
    a --seed given must match; else the one given, or a fresh one."""
    if again:
        if "seed" not in previous:
            raise ValueError(f"nothing to resume in {out}: it has no run.json from an earlier run")
        if seed is not None and seed != previous["seed"]:
            raise ValueError(f"--seed {seed} differs from the seed of the run in {out} ({previous['seed']})")
        seed = previous["seed"]
    return secrets.randbelow(2**31) if seed is None else seed


def _kept_and_todo(folder: Path, pairs: list, results: Path, seed: int, resume: bool, students) -> tuple[dict, list]:
    """The records kept from an earlier run ({result file: record}: the students not named again, or, resuming,
    the submissions unchanged since with the same seed) and what is graded now ([(student, path, result file)])."""
    records, todo = {}, []
    for student, path in pairs:
        where = hashlib.sha256(str(path.relative_to(folder)).encode()).hexdigest()[:8]
        file = results / f"{safe_name(student)}--{safe_name(path.name)}--{where}.json"
        old = _load(file)
        if old and (students and student not in students or resume and _still_current(old, path, seed)):
            records[file] = old
        else:
            todo.append((student, path, file))
    return records, todo


def _grade_each(todo: list, records: dict, total: int, jobs: int, bar, seed: int, how: tuple) -> bool:
    """Grade each (student, path, result file) of ``todo``, ``jobs`` at once (``how``: grade_submission's book,
    keys, settings, timeout, secret and assignment), each record written as it is done and put in ``records``.
    Returns whether Ctrl-C stopped it (every sandbox is stopped before it returns)."""
    interrupted = False
    pool = ThreadPoolExecutor(max_workers=jobs)
    try:
        futures = {pool.submit(grade_submission, student, path, *how): file
                   for student, path, file in todo}
        done = len(records)
        if bar:
            bar.show(done, min(jobs, len(todo)))
        for future in as_completed(futures):
            record = {**future.result(), "seed": seed}
            records[futures[future]] = record
            atomic_write(futures[future], json.dumps(record))
            done += 1
            if bar:
                bar.show(done, min(jobs, total - done))
    except KeyboardInterrupt:
        interrupted = True
        STOPPING.set()
        if threading.current_thread() is threading.main_thread():
            signal.signal(signal.SIGINT, signal.SIG_IGN)  # a second Ctrl-C must not cut the clean-up short
            signal.signal(signal.SIGTERM, signal.SIG_IGN)
        sandbox.stop_all()
    finally:
        pool.shutdown(wait=True, cancel_futures=True)
        sandbox.stop_all()
        STOPPING.clear()
    return interrupted


def _load(file: Path) -> dict | None:
    try:
        record = json.loads(file.read_text())
    except (OSError, ValueError):
        return None
    return record if isinstance(record, dict) and record.get("version") == VERSION else None


def _still_current(record: dict, path: Path, seed: int) -> bool:
    try:
        digest = hashlib.sha256(path.read_bytes()).hexdigest()
    except OSError:
        return False
    return record.get("seed") == seed and record.get("digest") == digest


def write_reports(out: Path, records: list[dict], book: dict, keys: dict, anonymous: bool = False,
                  assignment: Assignment | None = None, secret: bytes | None = None,
                  roster: dict | None = None, late: dict | None = None) -> dict:
    """Write gradebook.csv, grades.csv, similarity.csv, review/ and feedback/ from the submissions' records.

    The gradebook's ``flags`` says how many flags each exercise has (``4.1-value: 1 flag``); similarity.csv has one
    row per flag and student (a pair of classmates is two rows) with the score, the threshold, the distinctive
    fragments shared and needed, and ``review``: the path, relative to ``out``, of the flag's page in review/
    (``course/review.py``: the two answers side by side)."""
    from . import review, written  # (here, not at the top: only the reports use them)

    records = sorted(records, key=lambda r: (r.get("student", ""), r.get("notebook") or ""))
    assignment = assignment or Assignment()
    rule = points_rule(book, assignment)
    worth = rule.worth  # each part's points in this assignment
    rows, feedback, written_texts = _record_rows(records, book, keys, rule)
    flagged = _copies(records, book)
    pages = review.write_pages(out, flagged, atomic_write)
    marking = written.write_marking(out, written_texts, {ex: t for nb in book.values() for ex, t in nb.worked.items()},
                                    anonymous, atomic_write, secret)
    _hand_marked_rows(out, rule, rows, feedback, written_texts)
    graded = {r["exercise"] for r in rows}
    columns = [part for nb in book.values() for label, parts in nb.parts.items()
               for part in assignment.parts(label, parts)
               if part in worth and (part in graded or part.endswith(WRITTEN) and part.split()[0] in written_texts)]
    counts, similar = _flag_rows(flagged, pages)
    gradebook = []
    for student in sorted(feedback):
        marks = {r["exercise"]: r["mark"] for r in rows if r["student"] == student and r["exercise"] in worth}
        total = _points(sum(m for m in marks.values() if m != ""))
        mine = counts.get(student, {})
        flags = "; ".join(f"{ex}: {n} flag{'s' if n > 1 else ''}" for ex, n in sorted(
            mine.items(), key=lambda item: columns.index(item[0]) if item[0] in columns else len(columns)))
        gradebook.append([student, *(marks.get(ex, 0) for ex in columns), total, flags]
                         + ([] if late is None else [late.get(student, "")]))
    fields = ["student", "notebook", "exercise", "status", "cases_passed", "cases_total", "mark", "points", "message",
              "seconds"]
    atomic_write(out / "grades.csv", _csv(fields, [[r[f] for f in fields] for r in rows]))
    atomic_write(out / "gradebook.csv", _csv(["student", *columns, "total", "flags"]
                                             + ([] if late is None else ["late"]), gradebook))
    possible = _points(sum(worth[c] for c in columns))
    total_of = {row[0]: row[len(columns) + 1] for row in gradebook}
    _write_lms_files(out, total_of, roster, assignment, possible)
    atomic_write(out / "similarity.csv", _csv(["exercise", "student", "other", "similarity", "threshold", "shared",
                                               "min_shared", "review"], sorted(similar)))
    _write_feedback(out, feedback, rows, total_of, assignment.name, possible, late)
    return {"gradebook": str(out / "gradebook.csv"), "grades": str(out / "grades.csv"),
            "similarity": str(out / "similarity.csv"), "review": str(out / "review"),
            "feedback": str(out / "feedback"), "written": str(out / "written"), "canvas": str(out / "canvas.csv"),
            "moodle": str(out / "moodle.csv"),
            "written_marks": str(out / written.MARKS), "marking_pages": len(marking),
            "to_mark": sum(1 for r in rows if r["status"] == "to mark")}


def _scaled(rule, part: str, mark):
    """A part's mark in this assignment's points ("" when not marked yet; 0 for a part that is not graded)."""
    return mark if mark == "" else _points(rule.mark(part, mark))


def _record_rows(records: list[dict], book: dict, keys: dict, rule) -> tuple[list, dict, dict]:
    """grades.csv's rows for the checks and questions of every record, each student's feedback lines so far, and the
    written answers to mark ({exercise: {student: text}})."""
    worth, picked = rule.worth, rule.picks

    def scaled(part: str, mark):
        return _scaled(rule, part, mark)

    rows, feedback, written_texts = [], {}, {}
    for record in records:
        student, name = record["student"], record.get("notebook")
        lines = feedback.setdefault(student, [])
        lines.append(f"\n## {name or Path(record.get('file', 'a notebook')).name}\n")
        if record.get("problem"):
            lines.append(f"- Problem: {record['problem']}.")
        done = {r["exercise"]: r for r in record.get("exercises", [])}
        for exercise, _ in book[name].exercises if name in book else []:
            if not picked(exercise):
                continue
            r = done.get(exercise) or {"status": "not run", "message": record.get("problem") or "not graded",
                                       "cases_passed": 0, "cases_total": len(keys[name].cases[exercise])}
            result = CheckResult(exercise, r["status"], r["message"], r["cases_passed"], r["cases_total"])
            mark = scaled(exercise, int(result.passed))
            rows.append({"student": student, "notebook": name, "exercise": exercise, "status": result.status,
                         "cases_passed": result.cases_passed, "cases_total": result.cases_total,
                         "mark": mark, "points": _points(worth.get(exercise, 0)), "message": result.message,
                         "seconds": r.get("seconds", 0)})
            lines.append(f"- **{exercise}** ({_said(mark, worth.get(exercise, 0))}): {result.status}. "
                         f"{result.message}")
            lines += [f"  - {p}." for p in r.get("problems", [])[:3]]
        for a in record.get("answers", []):
            q = questions.QUESTIONS.get(a["question"])
            if q is None or not picked(q.name, q.exercise):
                continue
            counted = q.practice and rule.assignment.counts(q.name)  # a practice question this assignment counts
            message = a["message"].replace(PRACTICE_NOTE, "counted by this assignment") if counted else a["message"]
            mark = scaled(q.name, (q.points if a["status"] == "right" else 0) if counted else a["mark"])
            rows.append({"student": student, "notebook": name, "exercise": a["question"], "status": a["status"],
                         "cases_passed": "", "cases_total": "", "mark": mark,
                         "points": _points(worth.get(q.name, 0)), "message": message, "seconds": 0})
            said = "practice" if q.practice and not counted else _said(mark, worth.get(q.name, 0))
            lines.append(f"- **{a['question']}** ({said}): {verdict(a['status'], message, '.')}")
        for exercise, text in record.get("written", {}).items():
            if picked(f"{exercise} {WRITTEN}", exercise):
                written_texts.setdefault(exercise, {})[student] = text
        if name not in book:
            rows.append({"student": student, "notebook": "", "exercise": "", "status": "not graded",
                         "cases_passed": 0, "cases_total": 0, "mark": 0, "points": "",
                         "message": record.get("problem", ""), "seconds": 0})
    return rows, feedback, written_texts


def _hand_marked_rows(out: Path, rule, rows: list, feedback: dict, written_texts: dict) -> None:
    """The written answers marked by hand (written-marks.csv) as rows of grades.csv and lines of the feedback."""
    from . import written

    worth = rule.worth

    def scaled(part: str, mark):
        return _scaled(rule, part, mark)

    by_hand = written.read_marks(out)
    for (student, exercise), criteria in sorted(by_hand.items()):
        if student not in feedback or exercise not in written_texts:
            continue
        done = all(g is not None for _, _, g in criteria)
        mark = sum(g or 0 for _, _, g in criteria)
        part = f"{exercise} {WRITTEN}"
        rows.append({"student": student, "notebook": "", "exercise": part,
                     "status": "marked" if done else "to mark", "cases_passed": "", "cases_total": "",
                     "mark": scaled(part, mark) if done else "", "points": _points(worth.get(part, 0)),
                     "message": f"{mark} of {sum(a for _, a, _ in criteria)} rubric points" if done else
                     "not marked yet", "seconds": 0})
        texts = [c.text for c in questions.RUBRICS[exercise]]
        feedback[student].append(f"\n### {exercise} (written, marked by hand: "
                                 f"{_said(scaled(part, mark) if done else '', worth.get(part, 0))})\n")
        feedback[student] += [f"- {'✓' if g == a else '✗' if g == 0 else '~' if g is not None else '…'} "
                              f"{texts[i - 1] if 0 < i <= len(texts) else i}: "
                              f"{'not marked yet' if g is None else f'{g} of {a} pt'}" for i, a, g in criteria]


def _flag_rows(flagged: list, pages: dict) -> tuple[dict, list]:
    """How many flags each student has per exercise, and similarity.csv's rows (a pair of classmates is two)."""
    counts: dict[str, dict[str, int]] = {}  # student -> exercise -> flags
    similar = []  # one row per flag and per student in it (a pair of classmates is two rows)
    for match, _, _ in flagged:
        pairs = [(match.student, match.other)] + ([] if match.book else [(match.other, match.student)])
        for student, other in pairs:
            mine = counts.setdefault(student, {})
            mine[match.exercise] = mine.get(match.exercise, 0) + 1
            similar.append([match.exercise, student, other, f"{match.score:.3f}", f"{match.threshold:.2f}",
                            len(match.shared), match.min_shared,
                            pages[(match.exercise, match.student, match.other)]])
    return counts, similar


def _write_lms_files(out: Path, total_of: dict, roster: dict | None, assignment: Assignment, possible) -> None:
    """canvas.csv and moodle.csv: the totals ({student: points}) in each LMS's gradebook import, and by-hand.txt."""
    # Canvas's gradebook import (a new column makes a new assignment; students matched by SIS Login ID) and Moodle's
    # "Import grades from CSV" (map Username to the user's username): the folder names are the students' logins
    # (no cell starts a formula, identity cells included: a login that would is escaped, so that student is matched
    # by hand, and by-hand.txt names them; canvas-import.csv and moodle-worksheet.csv match by the LMS's own id)
    who = {name: (roster or {}).get(name) for name in total_of}
    login = {name: s.login if s else name for name, s in who.items()}
    sis = {name: s.sis_id if s else "" for name, s in who.items()}
    as_written = {name: getattr(s, "as_written", name) if s else name for name, s in who.items()}  # NFD stays NFD
    atomic_write(out / "canvas.csv", _csv(["Student", "ID", "SIS User ID", "SIS Login ID", "Section", assignment.name],
                                          [["Points Possible", "", "", "", "", possible]]
                                          + [[as_written[name], "", sis[name], login[name], "", total]
                                             for name, total in total_of.items()]))
    atomic_write(out / "moodle.csv", _csv(["Username", assignment.name],
                                          [[login[name], total] for name, total in total_of.items()]))
    by_hand = sorted(name for name in login if formula_like(login[name]) or formula_like(sis[name]))
    if by_hand:
        atomic_write(out / "by-hand.txt", "These students' login or SIS ID starts with = + - or @, which canvas.csv "
                     "and moodle.csv escape (a spreadsheet would run it): enter their marks by hand, or grade with the "
                     "LMS's own export as --roster (matched by its id):\n" + "".join(f"  {n}\n" for n in by_hand))
    else:
        (out / "by-hand.txt").unlink(missing_ok=True)


def _write_feedback(out: Path, feedback: dict, rows: list, total_of: dict, name: str, possible,
                    late: dict | None = None) -> None:
    """One feedback page per student: the total, how many checks pass and answers are right (and whether the LMS
    says it came late: ``late``, {student: why}), then each part."""
    for student, lines in feedback.items():
        mine = [r for r in rows if r["student"] == student and r["exercise"] and r["cases_total"] != ""]
        answered = [r for r in rows if r["student"] == student and r["exercise"] in questions.QUESTIONS]
        total = total_of[student]
        head = (f"# Feedback for {student}\n\n**{name}: {total} of {possible} points**"
                + (" (written answers not marked yet)" if any(r["student"] == student and r["mark"] == ""
                                                             for r in rows) else "") + ".\n\n"
                f"{sum(1 for r in mine if r['status'] == 'pass')} of {len(mine)} checked exercises "
                "pass (the grader's own hidden cases, not the ones your notebook showed).\n")
        if late and student in late:
            head += f"\nHanded in late: {late[student]}.\n"
        if answered:
            head += (f"{sum(1 for r in answered if r['status'] == 'right')} of {len(answered)} answers are right "
                     "(for your own instance of each question: the one drawn from your name).\n")
        atomic_write(out / "feedback" / f"{safe_name(student)}.md", head + "\n".join(lines) + "\n")


def verdict(status: str, message: str, joint: str = ":") -> str:
    """A verdict and its message as one reads them: the message alone when it starts by saying the verdict
    ("right (the instance of Ana)."), else both ("wrong: 0.5 is the return at γ = 1 ...")."""
    return message if message.lower().startswith(status.lower()) else f"{status}{joint} {message}"


def _said(mark, points) -> str:
    """A part's mark as the feedback says it: "2 of 2 points", "not marked yet of 9 points", "practice"."""
    return f"{'not marked yet' if mark == '' else mark} of {points_text(_points(points))}"


def _points(value: float) -> float | int:
    """Points as a gradebook shows them: a whole number as one, else to two decimals."""
    value = round(value, 2)
    return int(value) if value == int(value) else value


def _final_code(code: list, function: str = "", exercise: str = "") -> str:
    """The code compared for an exercise: of the student's own cells the grader ran (``[[cell, source], ...]``,
    whole, magics included), the statements the graded function needs (``similarity.code_for``): its last
    definition and the helpers, constants and tables it uses, not the other exercises' answers, the stub it
    replaced, the checks or scratch code. The function is the one the student's own check call passes, else
    ``function``; without either, every cell."""
    sources = [source for _, source in code]
    function = similarity.checked_function(sources, exercise) or function
    return similarity.code_for(sources, function) if function else "\n\n".join(sources)


def _copies(records: list[dict], book: dict) -> list[tuple[similarity.Match, str, str]]:
    """(match, the student's code, the other's code or the book's solution) for each flagged pair, exercise by
    exercise (``similarity.find_copies``, calibrated on ``course/calibration/<exercise>/``)."""
    flagged = []
    for name, nb in book.items():
        for exercise, function in nb.exercises:
            codes = {}
            for record in records:
                if record.get("notebook") != name:
                    continue
                for r in record.get("exercises", []):
                    if r["exercise"] == exercise and r.get("code"):
                        codes[record["student"]] = _final_code(r["code"], function, exercise)
            solution = nb.solutions.get(function, "")
            for match in similarity.find_copies(codes, solution, nb.stubs.get(function, ""), exercise):
                flagged.append((match, codes[match.student], solution if match.book else codes[match.other]))
    return sorted(flagged, key=lambda f: (f[0].exercise, f[0].student, f[0].other))
