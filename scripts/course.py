"""Course tools: the student and instructor editions, grading a class, and an nbgrader course folder.

    python scripts/course.py editions [--out editions]
    python scripts/course.py grade SUBMISSIONS [--out grades] [--jobs 4] [--seed N] [--timeout 600]
                                   [--cell-timeout 120] [--memory-mb 3072] [--processes 64] [--file-mb 64]
    python scripts/course.py nbgrader [--out nbgrader-course]

Editions. The book's notebooks mark each solution with the cell tag ``solution`` (the code cell that solves an
exercise, and the markdown cells around it that open and close its solution block). The instructor edition is the
notebooks as they are; the student edition drops every cell tagged ``solution``, so each exercise is left as its
stub (a function that raises NotImplementedError) followed by its check.

Grading (``toy.grading``). Each submission runs in a sandboxed process of its own; after the cell that checks an
exercise, the grader calls the submission's function on hidden cases drawn with the run's seed and compares the
answers with its own references. Nothing the notebook displays counts. A submission is either
``SUBMISSIONS/<student>/<notebook>.ipynb`` or ``SUBMISSIONS/<student>.ipynb``.

nbgrader. The same notebooks as one nbgrader assignment (``toy.grading.nbgrader_release``): solution regions and
autograded test cells in nbgrader's own cell metadata, for courses that already run nbgrader.
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
from pathlib import Path

import nbformat

from toy.grading.sandbox import Limits

ROOT = Path(__file__).resolve().parents[1]
CHAPTERS = ROOT / "chapters"
SOLUTION_TAG = "solution"
ASSIGNMENT = "the-llm-as-a-policy"
CHECK_CALL = re.compile(r"toy\.exercises\.check\(\s*[\"']([^\"']+)[\"']")


def book_notebooks() -> list[Path]:
    return sorted(p for p in CHAPTERS.rglob("*.ipynb") if ".ipynb_checkpoints" not in p.parts)


def strip_outputs(nb) -> None:
    for cell in nb.cells:
        if cell.cell_type == "code":
            cell.outputs, cell.execution_count = [], None
    nb.metadata.pop("widgets", None)


def student_edition(nb):
    """A copy of ``nb`` without the cells tagged ``solution``."""
    out = nbformat.from_dict(json.loads(json.dumps(nb)))
    out.cells = [c for c in out.cells if SOLUTION_TAG not in c.get("metadata", {}).get("tags", [])]
    strip_outputs(out)
    return out


def exercises_in(nb) -> list[str]:
    """The names of the exercises a notebook checks, in order."""
    names = []
    for cell in nb.cells:
        if cell.cell_type == "code":
            names += [n for n in CHECK_CALL.findall(cell.source) if n not in names]
    return names


def write_editions(out: Path) -> dict[str, list[Path]]:
    """Write ``out/student`` and ``out/instructor``: one notebook per section, folders ready to hand out."""
    written = {"student": [], "instructor": []}
    for edition in written:
        folder = out / edition
        if folder.exists():
            shutil.rmtree(folder)
        folder.mkdir(parents=True)
    for path in book_notebooks():
        nb = nbformat.read(path, as_version=4)
        strip_outputs(nb)
        for edition, version in (("instructor", nb), ("student", student_edition(nb))):
            target = out / edition / path.name
            nbformat.write(version, target)
            written[edition].append(target)
    return written


# -- grading (toy.grading) -----------------------------------------------------------------------------------------
def book_exercises() -> dict[str, list[tuple[str, str]]]:
    """{notebook file name: [(exercise, function name), ...]} from the book's own notebooks."""
    from toy.grading.marks import exercises_checked

    return {path.name: exercises_checked(nbformat.read(path, as_version=4)) for path in book_notebooks()}


def grade(folder: Path, out: Path, timeout: float = 600, cell_timeout: float = 120, seed: int | None = None,
          jobs: int = 1, limits=None, progress: bool = True) -> dict:
    """Grade every submission in ``folder`` (see ``toy.grading.batch``); return what was written where."""
    from toy.grading.batch import grade_folder

    return grade_folder(folder, out, book_exercises(), jobs=jobs, timeout=timeout, cell_timeout=cell_timeout,
                        seed=seed, limits=limits, progress=progress)


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("editions", help="write the student and instructor editions")
    p.add_argument("--out", type=Path, default=ROOT / "editions")
    p = sub.add_parser("grade", help="grade a folder of completed notebooks")
    p.add_argument("submissions", type=Path)
    p.add_argument("--out", type=Path, default=Path("grades"))
    p.add_argument("--jobs", type=int, default=1, help="submissions graded at once")
    p.add_argument("--timeout", type=float, default=600, help="seconds (wall clock) for one notebook in all")
    p.add_argument("--cell-timeout", type=float, default=120, help="seconds of CPU time for one cell")
    p.add_argument("--seed", type=int, default=None, help="seed of the hidden cases (default: a fresh one per run, "
                   "written to run.json; the book uses 0)")
    p.add_argument("--memory-mb", type=int, default=Limits.memory_mb, help="address space of one submission")
    p.add_argument("--processes", type=int, default=Limits.processes, help="processes one submission may start")
    p.add_argument("--file-mb", type=int, default=Limits.file_mb, help="largest file one submission may write")
    p = sub.add_parser("nbgrader", help="write an nbgrader course folder with the chapter as one assignment")
    p.add_argument("--out", type=Path, default=ROOT / "nbgrader-course")
    p.add_argument("--assignment", default=ASSIGNMENT)
    args = parser.parse_args(argv)
    if args.command == "editions":
        written = write_editions(args.out)
        for edition, paths in written.items():
            print(f"{edition}: {len(paths)} notebooks in {args.out / edition}")
    elif args.command == "grade":
        if not args.submissions.is_dir():
            parser.error(f"submissions folder {args.submissions} does not exist")
        if args.jobs < 1:
            parser.error(f"--jobs must be at least 1, got {args.jobs}")
        limits = Limits(memory_mb=args.memory_mb, cpu_seconds=int(args.timeout) + 60, processes=args.processes,
                        file_mb=args.file_mb)
        about = grade(args.submissions, args.out, args.timeout, args.cell_timeout, args.seed, args.jobs, limits)
        for what in ("grades", "gradebook", "feedback"):
            print(f"{what}: {about[what]}")
        print(f"seed of the hidden cases: {about['seed']}")
        for what, said in about["sandbox"].items():
            if what != "limits":
                print(f"sandbox, {what}: {said}")
    else:
        from toy.grading.nbgrader_release import write_course

        source = write_course(args.out, book_notebooks(), args.assignment)
        print(f"then, in {args.out}: nbgrader generate_assignment {args.assignment} --create")
        print(f"nbgrader course folder: {args.out} (source notebooks in {source})")


if __name__ == "__main__":
    main()
