"""The course's command line (``python scripts/course.py ...``): editions, grading a class, an nbgrader folder.

    course.py editions [--out DIR] [--students ROSTER] [--assignment FILE]
    course.py grade CLASS [--out DIR] [--jobs N] [--timeout S] [--cell-timeout S] [--case-timeout S] [--seed N]
                          [--resume] [--student NAME ...] [--memory-mb M] [--processes P] [--disk-mb D]
                          [--anonymous] [--assignment FILE] [--roster ROSTER]
    course.py keys [--students ROSTER]
    course.py nbgrader [--out DIR]

Everything is written under one folder outside the repository, ``~/toybook-course`` (or ``$TOYBOOK_COURSE_DIR``):
``editions/``, ``grades/<class folder's name>/`` (``grades/<class>--<assignment file's name>/`` with
``--assignment``) and ``nbgrader-course/``, unless ``--out`` says otherwise. The course's secret
(``course-secret``, made by the first ``editions``) and the instructor's own files live there too: a roster or an
assignment file given by a relative path that is not in the current folder is looked for in the course folder, and
``roster.csv`` (or ``roster.txt``) there is the roster when none is given. A submission is
``CLASS/<student>/<notebook>.ipynb`` or ``CLASS/<student>.ipynb``.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import shlex
import shutil
import sys
from pathlib import Path

from . import lms, sandbox
from . import roster as rosters
from . import secret as course_secret
from .marks import Settings

ASSIGNMENT = "the-llm-as-a-policy"
ROOT = Path(__file__).resolve().parents[1]
NBGRADER_VENV = ROOT / ".venv-nbgrader"
COMMANDS_HEADING = "Then run, exactly as written (any shell, any PATH):"
CHECKSUM_NOTE = ("that the test cell's checksum has changed: nbgrader is putting back the hidden tests that the "
                 "release left out, as it should, and grades the cell as source/ has it")


def home() -> Path:
    """Where the course tools write by default: ``$TOYBOOK_COURSE_DIR``, else ``~/toybook-course``."""
    return Path(os.environ.get("TOYBOOK_COURSE_DIR") or Path.home() / "toybook-course").expanduser()


ROSTERS = ("roster.csv", "roster.txt")


def course_file(path: Path | None) -> Path | None:
    """``path`` as given, or, when it is relative and not in the current folder, the course folder's file of that
    name (where the instructor's roster and assignment files live, outside the repository)."""
    if path is None or path.is_absolute() or path.exists():
        return path
    return home() / path if (home() / path).exists() else path


def default_roster() -> Path | None:
    """The course folder's roster, if it has one."""
    return next((home() / name for name in ROSTERS if (home() / name).exists()), None)


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
        f"  # (autograde warns, once per code check, {CHECKSUM_NOTE})",
        f"  {cd} && {nbgrader} export   # grades.csv",
    ]


def grade(folder: Path, out: Path, jobs: int = 1, timeout: float = 600, cell_timeout: float = 120,
          case_timeout: float = 10, seed: int | None = None, limits: sandbox.Limits | None = None,
          resume: bool = False, students: list[str] | None = None, progress: bool = True,
          anonymous: bool = False, assignment_file: Path | None = None, secret: bytes | None = None,
          roster_file: Path | None = None, roster: dict | None = None, late: dict | None = None) -> dict:
    """Grade every submission in ``folder`` (``course.classroom.grade_class``) with the course's ``secret`` (None:
    instances drawn from the names alone) and the LMS identities of ``roster_file``; return what run.json says."""
    from . import editions
    from .classroom import grade_class

    settings = Settings(setup_seconds=cell_timeout, case_seconds=case_timeout, limits=limits or sandbox.Limits())
    book = editions.book()
    assignment = _assignment(assignment_file, book)
    if roster is None:
        roster = rosters.identities(lms.read_students(roster_file)) if roster_file else None
    return grade_class(folder, out, book, jobs=jobs, timeout=timeout, settings=settings, seed=seed,
                       resume=resume, students=students, progress=progress, anonymous=anonymous,
                       assignment=assignment, secret=secret, roster=roster, late=late)


def editions_book():
    from .editions import book

    return book()


def editions_book_names() -> list[str]:
    """The file names of the book's notebooks (what a submission is graded as)."""
    from .editions import book_notebooks

    return [Path(p).name for p in book_notebooks()]


def _assignment(path: Path | None, book: dict):
    """The assignment file at ``path`` (every exercise at its default points when None)."""
    from .assignment import load

    if path is None:
        return None
    assignment = load(path, {label: parts for nb in book.values() for label, parts in nb.parts.items()})
    if assignment.count_practice:
        from .coincidence import risk

        print(risk(assignment.count_practice))
    return assignment


def resume_command(argv: list[str], out: Path) -> str:
    """The command that puts the written marks into the gradebook: this one again, with ``--out`` and
    ``--resume`` (and without ``--seed`` or ``--student``, which ``--resume`` replaces)."""
    words, skip = [], False
    for word in argv:
        if skip:
            skip = False
            continue
        if word in ("--seed", "--student", "--out"):
            skip = True
            continue
        if word.startswith(("--seed=", "--student=", "--out=")) or word == "--resume":
            continue
        words.append(word)
    program = [sys.executable, str(ROOT / "scripts" / "course.py")]
    return shlex.join(program + words + ["--out", str(out), "--resume"])


Refused = object()
"""What ``load_secret`` returns when the course's secret cannot be read (it has said why)."""


def load_secret(command: str, without: str):
    """The course's secret for ``course.py command``: its bytes; None, saying what happens ``without`` it, when the
    course folder has none yet; ``Refused``, after printing the error, when it cannot be read."""
    try:
        secret = course_secret.load(home())
    except ValueError as err:
        print(f"course.py {command}: {err}", file=sys.stderr)
        return Refused
    if secret is None:
        print(f"course.py {command}: the course folder {home()} has no secret yet (course.py editions makes one), so "
              f"{without}", file=sys.stderr)
    return secret


def _positive(kind):
    def parse(text):
        value = kind(text)
        if value <= 0:
            raise argparse.ArgumentTypeError(f"must be more than 0, got {text}")
        return value
    return parse


def main(argv=None) -> int:
    """Run one command of ``course.py``: each is a function of its own below; returns the exit status."""
    parser = _parser()
    args = parser.parse_args(argv)
    if args.command == "editions":
        return _editions(args, parser)
    if args.command == "keys":
        return _keys(args, parser)
    if args.command == "grade":
        return _grade(args, parser, argv)
    if args.command == "gradescope":
        return _gradescope(args, parser)
    return _nbgrader(args)


def _parser() -> argparse.ArgumentParser:
    """The command line: one subcommand per tool, each with its options."""
    parser = argparse.ArgumentParser(prog="course.py", description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("editions", help="write the student and instructor editions")
    p.add_argument("--out", type=Path, default=None, help="default: ~/toybook-course/editions")
    p.add_argument("--assignment", type=Path, default=None, metavar="FILE", dest="assignment_file",
                   help="an assignment file (TOML: name, due, [points] per exercise label): the student editions show "
                        "it; grade with the same file")
    p.add_argument("--students", type=Path, default=None, metavar="ROSTER",
                   help="a file with one student's name per line, or a CSV file with columns name, login, sis_id: "
                        "student/<name>/ holds each one's own edition (default: the course folder's roster.csv or "
                        "roster.txt, if there is one)")
    p = sub.add_parser("grade", help="grade a folder of completed notebooks")
    p.add_argument("submissions", type=Path, help="a folder with a folder (or a notebook) per student, or what an "
                   "LMS hands out: Canvas's Download Submissions zip, Moodle's Download all submissions (zip or "
                   "folder), Gradescope's Export Submissions (zip or folder), matched to --roster by the LMS's ids")
    p.add_argument("--lms", choices=("auto", "canvas", "moodle", "gradescope", "folder"), default="auto",
                   help="how SUBMISSIONS is laid out (default: found from its file names)")
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
                   "(written-key.csv, beside the written/ folder, holds the key)")
    p.add_argument("--roster", type=Path, default=None, metavar="ROSTER", dest="roster_file",
                   help="the roster given to editions: its login and sis_id columns go into canvas.csv and moodle.csv "
                        "(default: the course folder's roster.csv or roster.txt, if there is one)")
    p = sub.add_parser("keys", help="print each student's line setting name and key, for a student edition without "
                       "names (the course's secret stays with you)")
    p.add_argument("--students", type=Path, default=None, metavar="ROSTER",
                   help="the roster (default: the course folder's roster.csv or roster.txt)")
    p = sub.add_parser("gradescope", help="write Gradescope's autograder zip (setup.sh, run_autograder, the book's "
                       "code, the course's secret, roster and assignment)")
    p.add_argument("--out", type=Path, default=None, help="default: ~/toybook-course/gradescope-autograder.zip")
    p.add_argument("--roster", type=Path, default=None, metavar="ROSTER", dest="roster_file",
                   help="the roster given to editions (default: the course folder's roster.csv or roster.txt)")
    p.add_argument("--assignment", type=Path, default=None, metavar="FILE", dest="assignment_file",
                   help="grade only the assignment's exercises, at its points")
    p = sub.add_parser("nbgrader", help="write an nbgrader course folder with the chapter as one assignment")
    p.add_argument("--out", type=Path, default=None, help="default: ~/toybook-course/nbgrader-course")
    p.add_argument("--assignment", default=ASSIGNMENT)
    return parser


def _editions(args, parser) -> int:
    """course.py editions: the student and instructor editions, and the course secret on the first run."""
    from .editions import book, repository, write_editions

    out = args.out or home() / "editions"
    roster_file = course_file(args.students) or default_roster()
    try:
        roster = lms.read_students(roster_file) if roster_file else None
        assignment = _assignment(course_file(args.assignment_file), book())
        secret = course_secret.make(home())
        url, why = repository()
        made = write_editions(out, roster, assignment, secret, url)
    except ValueError as err:
        parser.error(str(err))
    for edition, paths in made.items():
        print(f"{edition}: {len(paths)} notebooks in {out / edition}")
    if roster:
        print(f"roster: {len(roster)} students from {roster_file}")
    else:
        print("no roster: the student edition has no names, so students check their answers at the book's "
              "setting until they set their name and key (made from the course secret, which only you have); "
              "give --students ROSTER (or put roster.txt in the course folder) for each student's own edition, "
              "name and key set, or hand out the lines course.py keys --students ROSTER prints")
    print(f"course secret: {course_secret.path(home())} (each student's instance is drawn from it: keep it, back "
          "it up, and never hand it out)")
    if url:
        print(f"on Colab the editions install toy from {url} ({why})")
    else:
        print(f"on Colab the editions cannot install toy: the book has no repository ({why}). Set repository.url "
              "in _config.yml to your copy's https://github.com/<owner>/<name> (README: Publish your own copy) "
              "and run editions again; until then the Colab cell says to ask you for the install line")
    return 0


def _keys(args, parser) -> int:
    """course.py keys: each student's line that sets their name and key."""
    roster_file = course_file(args.students) or default_roster()
    if roster_file is None:
        parser.error("keys: give --students ROSTER, or put roster.txt or roster.csv in the course folder")
    try:
        students = lms.read_students(roster_file)
        secret = course_secret.load(home())
    except ValueError as err:
        parser.error(str(err))
    if secret is None:
        parser.error(f"keys: the course folder {home()} has no secret yet: run course.py editions first")
    for student in students:
        print(f"{student.name}\ttoy.exercises.student({student.name!r}, "
              f"{course_secret.student_key(secret, student.name)!r})")
    return 0


def _grade(args, parser, argv) -> int:
    """course.py grade: an LMS's download taken in (or the grader's own folder), graded, and the files written."""
    if not args.submissions.exists():
        parser.error(f"submissions folder {args.submissions} does not exist")
    assignment_file = course_file(args.assignment_file)
    base = args.submissions.resolve()
    name = (base.name if base.is_dir() else base.stem) + (f"--{assignment_file.stem}" if assignment_file else "")
    out = (args.out or home() / "grades" / name).resolve()
    try:
        layout = None if args.lms == "folder" else (lms.detect(base) if args.lms == "auto" else args.lms)
    except ValueError as err:
        print(f"course.py grade: {err}", file=sys.stderr)
        return 2
    if layout is None and not base.is_dir():
        parser.error(f"{args.submissions} is a file, not a folder: give --lms canvas, moodle or gradescope")
    roster_file = course_file(args.roster_file) or default_roster()
    lms_roster = taken = None
    if layout is not None:
        took = _intake(args, base, out, layout, roster_file)
        if isinstance(took, int):
            return took
        lms_roster, taken = took
    secret = load_secret("grade", "each instance is drawn from the name alone")
    if secret is Refused:
        return 2
    limits = sandbox.Limits(memory_mb=args.memory_mb, processes=args.processes, disk_mb=args.disk_mb,
                            cpu_seconds=int(args.timeout) + 60)
    try:
        about = grade(taken.folder if lms_roster else args.submissions, out, args.jobs, args.timeout,
                      args.cell_timeout, args.case_timeout,
                      args.seed, limits, args.resume, args.student, progress=not args.no_progress,
                      anonymous=args.anonymous, assignment_file=assignment_file, secret=secret,
                      roster_file=roster_file, roster=lms_roster.students() if lms_roster else None,
                      late=taken.late if lms_roster else None)
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
    _say_graded(about, out, taken, lms_roster, secret, argv)
    return 0


def _intake(args, base: Path, out: Path, layout: str, roster_file: Path | None):
    """An LMS's download taken into ``out``/intake, each file matched to the roster by the LMS's ids, the report said:
    (the roster, the intake), or the exit status when nothing can be graded."""
    if roster_file is None:
        print(f"course.py grade: {args.submissions} is {layout}'s download: give --roster, the LMS's roster "
              "export (Canvas's gradebook CSV, Moodle's grading worksheet) or the roster given to editions, "
              "so each file is matched to its student by id", file=sys.stderr)
        return 2
    made = not out.exists()
    try:
        lms_roster = lms.read_roster(roster_file)
        taken = lms.intake(base, out, lms_roster, layout if layout != "unknown" else None,
                           set(editions_book_names()))
    except ValueError as err:
        if made and out.exists():  # nothing left behind: no empty grades/<name> folder
            shutil.rmtree(out)
        print(f"course.py grade: {err}", file=sys.stderr)
        return 2
    report = lms.write_report(out, taken)
    print(f"intake ({taken.layout}): {sum(len(v) for v in taken.matched.values())} notebooks from "
          f"{len(taken.matched)} students of {len(lms_roster.members)} on the roster, matched by "
          f"{'SID or email' if layout == 'gradescope' else layout.capitalize() + ' id'}; report: {report}")
    for line in taken.report:
        print(f"  {line}")
    for late, why in sorted(taken.late.items()):
        print(f"  late: {late} ({why})")
    if not taken.matched:
        print("course.py grade: no notebook matched a student on the roster: nothing to grade",
              file=sys.stderr)
        return 2
    return lms_roster, taken


def _say_graded(about: dict, out: Path, taken, lms_roster, secret, argv) -> None:
    """Where the grades went (and the LMS's import files, for a download), the run's seed and sandbox, and the command
    that merges the written marks."""
    for what in ("gradebook", "grades", "similarity", "feedback", "written", "written_marks", "canvas", "moodle"):
        print(f"{what}: {about[what]}")
    if lms_roster is not None:
        from . import returns

        for what, where in returns.write(out, taken, lms_roster, secret, about["assignment"]["name"]).items():
            print(f"{what}: {where}")
        if taken.layout == "gradescope":
            print("nothing here goes back to Gradescope: its marks come from the autograder (course.py "
                  "gradescope); canvas.csv and moodle.csv carry these to your LMS")
    print(f"seed of the hidden cases: {about['seed']}; {about['submissions']} submissions, "
          f"{about['graded_now']} graded now in {about['seconds']:g} s")
    for what, said in about["sandbox"].items():
        print(f"sandbox, {what}: {said}")
    if about.get("marking_pages") and about.get("to_mark", 1):
        print(f"written answers: {about['marking_pages']} marking pages in {about['written']}; fill in the column "
              f"given of {about['written_marks']}, then run:")
        print("  " + resume_command(sys.argv[1:] if argv is None else list(argv), out))
    elif about.get("marking_pages"):
        print(f"written answers: every mark of {about['written_marks']} is given, and in the gradebook")


def _gradescope(args, parser) -> int:
    """course.py gradescope: the autograder's zip."""
    from .gradescope import write_autograder

    try:
        secret = course_secret.load(home())
        roster_file = course_file(args.roster_file) or default_roster()
        assignment_file = course_file(args.assignment_file)
        if not roster_file:
            raise ValueError("the autograder needs the class roster (--roster roster.csv, with sis_id or login "
                             "for each student): a submission's instance comes from the roster alone")
        lms.read_students(roster_file)
        if assignment_file and _assignment(assignment_file, editions_book()).count_practice:
            raise ValueError(f"{assignment_file}: the Gradescope autograder does not count practice questions "
                             "yet; give it an assignment file without count_practice")
    except ValueError as err:
        parser.error(str(err))
    out = (args.out or home() / "gradescope-autograder.zip").resolve()
    write_autograder(out, secret, roster_file, assignment_file)
    print(f"autograder: {out}")
    print(f"  roster: {roster_file} (submitters matched by SID, else email); assignment: "
          f"{assignment_file or 'every exercise'}; course secret: {'in it' if secret else 'none yet'} "
          "(the zip is the instructor's: never hand it out)")
    print("  Gradescope: Programming Assignment > Configure Autograder > Zip file upload: this file")
    return 0


def _nbgrader(args) -> int:
    """course.py nbgrader: an nbgrader course folder and the commands to run in it."""
    from .editions import book_notebooks
    from .nbgrader_release import write_course

    out = (args.out or home() / "nbgrader-course").resolve()
    missing = [m for m in ("ipykernel", "numpy", "toy") if importlib.util.find_spec(m) is None]
    if missing:
        print(f"course.py nbgrader: {sys.executable} lacks {', '.join(missing)}, and the notebooks are graded in "
              "this Python: run it as .venv/bin/python scripts/course.py (after bash scripts/setup.sh)",
              file=sys.stderr)
        return 2
    secret = load_secret("nbgrader", "the class's one instance of the questions is drawn from this folder's "
                         "hidden seed alone")
    if secret is Refused:
        return 2
    source = write_course(out, book_notebooks(), args.assignment, python=sys.executable, secret=secret)
    print(f"nbgrader course folder: {out} (source notebooks in {source}; the notebooks are graded in this "
          f"Python, {sys.executable}, registered in the folder as the kernel python3)")
    for line in nbgrader_commands(out, args.assignment):
        print(line)
    return 0
