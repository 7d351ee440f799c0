"""The course's command line (``python scripts/course.py ...``): editions, grading a class, an nbgrader folder.

    course.py editions [--out DIR] [--students ROSTER] [--assignment FILE]
    course.py grade CLASS [--out DIR] [--jobs N] [--timeout S] [--cell-timeout S] [--case-timeout S] [--seed N]
                          [--resume] [--student NAME ...] [--memory-mb M] [--processes P] [--disk-mb D]
                          [--anonymous] [--assignment FILE]
    course.py nbgrader [--out DIR]

Everything is written under one folder outside the repository, ``~/toybook-course`` (or ``$TOYBOOK_COURSE_DIR``):
``editions/``, ``grades/<class folder's name>/`` and ``nbgrader-course/``, unless ``--out`` says otherwise.
A submission is ``CLASS/<student>/<notebook>.ipynb`` or ``CLASS/<student>.ipynb``.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import shlex
import sys
from pathlib import Path

from . import sandbox
from .marks import Settings

ASSIGNMENT = "the-llm-as-a-policy"
ROOT = Path(__file__).resolve().parents[1]
NBGRADER_VENV = ROOT / ".venv-nbgrader"
COMMANDS_HEADING = "Then run, exactly as written (any shell, any PATH):"


def home() -> Path:
    """Where the course tools write by default: ``$TOYBOOK_COURSE_DIR``, else ``~/toybook-course``."""
    return Path(os.environ.get("TOYBOOK_COURSE_DIR") or Path.home() / "toybook-course").expanduser()


def nbgrader_commands(out: Path, assignment: str) -> list[str]:
    """What an instructor runs in the course folder, each command whole: nbgrader by its full path, so neither PATH
    nor an activated environment matters (``nbgrader_config.py`` finds the kernel and ``alembic``)."""
    nbgrader = shlex.quote(str(NBGRADER_VENV / "bin" / "nbgrader"))
    lines = []
    if not (NBGRADER_VENV / "bin" / "nbgrader").exists():
        lines += [f"nbgrader is not installed in {NBGRADER_VENV} yet; install it first (once):",
                  f"  python3 -m venv {shlex.quote(str(NBGRADER_VENV))} && {shlex.quote(str(NBGRADER_VENV))}"
                  f"/bin/python -m pip install -r {shlex.quote(str(ROOT / 'requirements-nbgrader.txt'))}"]
    cd = f"cd {shlex.quote(str(out))}"
    return lines + [
        COMMANDS_HEADING,
        f"  {cd} && {nbgrader} generate_assignment {assignment} --create   # release/ for the students",
        f"  # collect each student's notebooks into submitted/<student>/{assignment}/, then:",
        f"  {cd} && {nbgrader} autograde {assignment} --create",
        f"  {cd} && {nbgrader} export   # grades.csv",
    ]


def grade(folder: Path, out: Path, jobs: int = 1, timeout: float = 600, cell_timeout: float = 120,
          case_timeout: float = 10, seed: int | None = None, limits: sandbox.Limits | None = None,
          resume: bool = False, students: list[str] | None = None, progress: bool = True,
          anonymous: bool = False, assignment_file: Path | None = None) -> dict:
    """Grade every submission in ``folder`` (``course.classroom.grade_class``); return what run.json says."""
    from . import editions
    from .classroom import grade_class

    settings = Settings(setup_seconds=cell_timeout, case_seconds=case_timeout, limits=limits or sandbox.Limits())
    book = editions.book()
    assignment = _assignment(assignment_file, book)
    return grade_class(folder, out, book, jobs=jobs, timeout=timeout, settings=settings, seed=seed,
                       resume=resume, students=students, progress=progress, anonymous=anonymous,
                       assignment=assignment)


def _assignment(path: Path | None, book: dict):
    """The assignment file at ``path`` (every exercise at its default points when None)."""
    from .assignment import load

    return None if path is None else load(path, {label: parts for nb in book.values()
                                                 for label, parts in nb.parts.items()})


def _positive(kind):
    def parse(text):
        value = kind(text)
        if value <= 0:
            raise argparse.ArgumentTypeError(f"must be more than 0, got {text}")
        return value
    return parse


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="course.py", description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("editions", help="write the student and instructor editions")
    p.add_argument("--out", type=Path, default=None, help="default: ~/toybook-course/editions")
    p.add_argument("--assignment", type=Path, default=None, metavar="FILE", dest="assignment_file",
                   help="an assignment file (TOML: name, due, [points] per exercise label): the student editions show "
                        "it; grade with the same file")
    p.add_argument("--students", type=Path, default=None, metavar="ROSTER",
                   help="a file with one student's name per line: student/<name>/ holds each one's own edition")
    p = sub.add_parser("grade", help="grade a folder of completed notebooks")
    p.add_argument("submissions", type=Path)
    p.add_argument("--out", type=Path, default=None, help="default: ~/toybook-course/grades/<CLASS's name>")
    p.add_argument("--jobs", type=_positive(int), default=min(os.cpu_count() or 1, 4),
                   help="submissions graded at once (default: the cores, at most 4)")
    p.add_argument("--timeout", type=_positive(float), default=600, help="seconds for one submission in all")
    p.add_argument("--cell-timeout", type=_positive(float), default=120,
                   help="seconds for the notebook's code to run before the graded function is ready")
    p.add_argument("--case-timeout", type=_positive(float), default=10, help="seconds for one hidden case")
    p.add_argument("--seed", type=int, default=None, help="seed of the hidden cases (default: a fresh one per run, "
                   "written to run.json)")
    p.add_argument("--resume", action="store_true", help="keep the results of submissions already graded in --out "
                   "(same seed, unchanged since) and grade the rest")
    p.add_argument("--student", action="append", default=None, metavar="NAME",
                   help="grade only this student again (repeat for more); the others' results are kept")
    p.add_argument("--memory-mb", type=_positive(int), default=sandbox.Limits.memory_mb,
                   help="memory of one sandbox, its files in /tmp included")
    p.add_argument("--processes", type=_positive(int), default=sandbox.Limits.processes,
                   help="processes and threads of one sandbox")
    p.add_argument("--disk-mb", type=_positive(int), default=sandbox.Limits.disk_mb,
                   help="what one sandbox may write in all")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    p.add_argument("--assignment", type=Path, default=None, metavar="FILE", dest="assignment_file",
                   help="grade only the assignment's exercises, at its points (the file given to editions)")
    p.add_argument("--anonymous", action="store_true", help="the pages for marking written answers show no names "
                   "(written/key.csv holds the key)")
    p = sub.add_parser("nbgrader", help="write an nbgrader course folder with the chapter as one assignment")
    p.add_argument("--out", type=Path, default=None, help="default: ~/toybook-course/nbgrader-course")
    p.add_argument("--assignment", default=ASSIGNMENT)
    args = parser.parse_args(argv)

    if args.command == "editions":
        from .editions import book, write_editions

        out = args.out or home() / "editions"
        roster = None
        if args.students:
            try:
                roster = [n for n in args.students.read_text(encoding="utf-8").splitlines() if n.strip()]
            except OSError as err:
                parser.error(f"--students {args.students}: {err.strerror}")
        try:
            made = write_editions(out, roster, _assignment(args.assignment_file, book()))
        except ValueError as err:
            parser.error(str(err))
        for edition, paths in made.items():
            print(f"{edition}: {len(paths)} notebooks in {out / edition}")
    elif args.command == "grade":
        if not args.submissions.is_dir():
            parser.error(f"submissions folder {args.submissions} does not exist")
        out = args.out or home() / "grades" / args.submissions.resolve().name
        limits = sandbox.Limits(memory_mb=args.memory_mb, processes=args.processes, disk_mb=args.disk_mb,
                                cpu_seconds=int(args.timeout) + 60)
        try:
            about = grade(args.submissions, out, args.jobs, args.timeout, args.cell_timeout, args.case_timeout,
                          args.seed, limits, args.resume, args.student, progress=not args.no_progress,
                          anonymous=args.anonymous, assignment_file=args.assignment_file)
        except sandbox.Refused as err:
            print(f"course.py grade: refused: {err}", file=sys.stderr)
            return 2
        except (ValueError, RuntimeError) as err:  # written.MarksError included: a mark out of range
            print(f"course.py grade: {err}", file=sys.stderr)
            return 2
        except KeyboardInterrupt:
            print(f"\nstopped: the gradebook of what was graded is in {out}; run again with --resume to finish",
                  file=sys.stderr)
            return 130
        for what in ("gradebook", "grades", "similarity", "feedback", "written", "written_marks", "canvas", "moodle"):
            print(f"{what}: {about[what]}")
        print(f"seed of the hidden cases: {about['seed']}; {about['submissions']} submissions, "
              f"{about['graded_now']} graded now in {about['seconds']:g} s")
        for what, said in about["sandbox"].items():
            print(f"sandbox, {what}: {said}")
    else:
        from .editions import book_notebooks
        from .nbgrader_release import write_course

        out = (args.out or home() / "nbgrader-course").resolve()
        missing = [m for m in ("ipykernel", "numpy", "toy") if importlib.util.find_spec(m) is None]
        if missing:
            print(f"course.py nbgrader: {sys.executable} lacks {', '.join(missing)}, and the notebooks are graded in "
                  "this Python: run it as .venv/bin/python scripts/course.py (after bash scripts/setup.sh)",
                  file=sys.stderr)
            return 2
        source = write_course(out, book_notebooks(), args.assignment, python=sys.executable)
        print(f"nbgrader course folder: {out} (source notebooks in {source}; the notebooks are graded in this "
              f"Python, {sys.executable}, registered in the folder as the kernel python3)")
        for line in nbgrader_commands(out, args.assignment):
            print(line)
    return 0
