"""Course tools: write the student and instructor editions, and grade a folder of completed notebooks.

    python scripts/course.py editions [--out editions]
    python scripts/course.py grade SUBMISSIONS [--out grades] [--timeout 600] [--cell-timeout 120] [--seed 1]

Editions. The book's notebooks mark each solution with the cell tag ``solution`` (the code cell that solves an
exercise, and the markdown cells around it that open and close its solution block). The instructor edition is the
notebooks as they are; the student edition drops every cell tagged ``solution``, so each exercise is left as its
stub (a function that raises NotImplementedError) followed by its check.

Grading. Each notebook of a submission is executed in its own process with a time limit per cell and for the whole
notebook, so a crash or an endless loop in one submission does not stop the others. The checks' results (the
``toy_check`` record each ``toy.exercises.check`` output carries) become one CSV row per student, notebook and
exercise, and a short feedback file per student. A submission is either ``SUBMISSIONS/<student>/<notebook>.ipynb``
or ``SUBMISSIONS/<student>.ipynb``.

Why not otter-grader or nbgrader: otter's master-notebook format (raw cells with BEGIN/END markers) would show in
the book, and its grading runs in Docker by default; nbgrader needs a course directory, a database and its own
cell metadata. The book already has checks in ``toy.exercises``; what is left is two small steps, kept here.
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import re
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import nbformat

ROOT = Path(__file__).resolve().parents[1]
CHAPTERS = ROOT / "chapters"
SOLUTION_TAG = "solution"
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


# -- grading --------------------------------------------------------------------------------------------------------
def run_one(notebook: Path, result: Path, cell_timeout: int) -> None:
    """Execute one notebook (in this process's kernel) and write the checks it displayed to ``result`` as JSON."""
    from nbclient import NotebookClient
    from nbclient.exceptions import DeadKernelError

    nb = nbformat.read(notebook, as_version=4)
    client = NotebookClient(nb, timeout=cell_timeout, kernel_name="python3", allow_errors=True,
                            interrupt_on_timeout=True, resources={"metadata": {"path": str(notebook.parent)}})
    problem = ""
    try:
        client.execute()
    except DeadKernelError:
        problem = "the kernel died while running the notebook"
    except Exception as err:  # noqa: BLE001 - any failure of one submission is reported, never raised
        problem = f"the notebook could not be run: {type(err).__name__}: {err}"
    checks, errors = {}, []
    for cell in nb.cells:
        for out in cell.get("outputs", []):
            record = out.get("metadata", {}).get("toy_check")
            if record:
                checks[record["exercise"]] = record
            if out.get("output_type") == "error" and out.get("ename") == "KeyboardInterrupt":
                errors.append(f"A cell did not finish within {cell_timeout} s and was stopped")
            elif out.get("output_type") == "error":
                errors.append(f"A cell raised {out.get('ename')}: {out.get('evalue')}"[:300])
    result.write_text(json.dumps({"checks": checks, "errors": errors, "problem": problem}))


def submissions(folder: Path) -> list[tuple[str, Path]]:
    """(student, notebook) pairs: ``<student>/<notebook>.ipynb`` or ``<student>.ipynb``."""
    pairs = []
    for path in sorted(folder.rglob("*.ipynb")):
        if ".ipynb_checkpoints" in path.parts:
            continue
        rel = path.relative_to(folder)
        student = rel.parts[0] if len(rel.parts) > 1 else path.stem
        pairs.append((student, path))
    return pairs


def expected_exercises(notebook_name: str) -> list[str]:
    """The exercises the book's notebook of that name checks (empty for an unknown notebook)."""
    for path in book_notebooks():
        if path.name == notebook_name:
            return exercises_in(nbformat.read(path, as_version=4))
    return []


def grade(folder: Path, out: Path, timeout: int, cell_timeout: int, seed: int) -> Path:
    """Grade every submission in ``folder``; write ``out/grades.csv`` and ``out/feedback/<student>.md``."""
    out.mkdir(parents=True, exist_ok=True)
    (out / "feedback").mkdir(exist_ok=True)
    work = out / "runs"
    work.mkdir(exist_ok=True)
    env = {**os.environ, "TOY_CHECK_SEED": str(seed)}
    env.pop("TOY_EXPLORER_VIEW", None)
    rows, feedback = [], {}
    for i, (student, notebook) in enumerate(submissions(folder)):
        result = work / f"{i:04d}.json"
        result.unlink(missing_ok=True)
        cmd = [sys.executable, str(Path(__file__).resolve()), "run-one", str(notebook), str(result),
               "--cell-timeout", str(cell_timeout)]
        proc = subprocess.Popen(cmd, env=env, cwd=notebook.parent, start_new_session=True,
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            proc.wait(timeout=timeout)
            outcome = json.loads(result.read_text()) if result.exists() else {
                "checks": {}, "errors": [], "problem": "the grader could not run this notebook"}
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)  # the runner, its kernel and anything they started
            proc.wait()
            outcome = {"checks": {}, "errors": [], "problem": f"the notebook did not finish within {timeout} s"}
        names = expected_exercises(notebook.name) or list(outcome["checks"])
        lines = feedback.setdefault(student, [])
        lines.append(f"\n## {notebook.name}\n")
        if outcome["problem"]:
            lines.append(f"- Problem: {outcome['problem']}.")
        for name in names:
            rec = outcome["checks"].get(name)
            if rec is None:
                status, message, passed, total = "not run", outcome["problem"] or (
                    "the check never ran: an earlier cell failed" if outcome["errors"] else "the check never ran"), 0, 0
            else:
                status, message = rec["status"], rec["message"]
                passed, total = rec["cases_passed"], rec["cases_total"]
            rows.append({"student": student, "notebook": notebook.name, "exercise": name, "status": status,
                         "cases_passed": passed, "cases_total": total, "message": message})
            lines.append(f"- **{name}**: {status}. {message}")
        for err in outcome["errors"][:3]:
            lines.append(f"- {err}.")
    csv_path = out / "grades.csv"
    with csv_path.open("w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=["student", "notebook", "exercise", "status", "cases_passed",
                                               "cases_total", "message"])
        writer.writeheader()
        writer.writerows(rows)
    for student, lines in feedback.items():
        mine = [r for r in rows if r["student"] == student]
        n_pass = sum(r["status"] == "pass" for r in mine)
        head = f"# Feedback for {student}\n\n{n_pass} of {len(mine)} checked exercises pass.\n"
        (out / "feedback" / f"{student}.md").write_text(head + "\n".join(lines) + "\n")
    shutil.rmtree(work, ignore_errors=True)
    return csv_path


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("editions", help="write the student and instructor editions")
    p.add_argument("--out", type=Path, default=ROOT / "editions")
    p = sub.add_parser("grade", help="grade a folder of completed notebooks")
    p.add_argument("submissions", type=Path)
    p.add_argument("--out", type=Path, default=Path("grades"))
    p.add_argument("--timeout", type=int, default=600, help="seconds for one notebook in all")
    p.add_argument("--cell-timeout", type=int, default=120, help="seconds for one cell")
    p.add_argument("--seed", type=int, default=1, help="seed of the hidden cases (the book uses 0)")
    p = sub.add_parser("run-one", help=argparse.SUPPRESS)
    p.add_argument("notebook", type=Path)
    p.add_argument("result", type=Path)
    p.add_argument("--cell-timeout", type=int, default=120)
    args = parser.parse_args(argv)
    if args.command == "editions":
        written = write_editions(args.out)
        for edition, paths in written.items():
            print(f"{edition}: {len(paths)} notebooks in {args.out / edition}")
    elif args.command == "grade":
        if not args.submissions.is_dir():
            parser.error(f"submissions folder {args.submissions} does not exist")
        path = grade(args.submissions, args.out, args.timeout, args.cell_timeout, args.seed)
        print(f"grades: {path}\nfeedback: {args.out / 'feedback'}")
    else:
        run_one(args.notebook, args.result, args.cell_timeout)


if __name__ == "__main__":
    main()
