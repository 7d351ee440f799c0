"""Grade a whole class: each submission in its own sandboxed process, several at once, with a progress bar.

``grade_folder`` writes, in ``out``:

- ``grades.csv``: one row per student, notebook and exercise (status, hidden cases passed, the message);
- ``gradebook.csv``: one row per student, one column per exercise (1 for a pass, else 0) and a total, for a
  gradebook to import;
- ``feedback/<student>.md``: what each student should read;
- ``run.json``: the seed of the hidden cases, the limits, and what the sandbox could put in force.
"""

from __future__ import annotations

import csv
import json
import os
import pickle
import queue
import secrets
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path

from .marks import AnswerKey, verdict
from .sandbox import Limits, end_process_group, process_group

HARNESS = Path(__file__).with_name("harness.py")
FIRST_UID = 61000  # as root, submission k of the ones running at once runs as user FIRST_UID + k


def submissions(folder: Path) -> list[tuple[str, Path]]:
    """(student, notebook) pairs: ``<student>/<notebook>.ipynb`` or ``<student>.ipynb``."""
    pairs = []
    for path in sorted(folder.rglob("*.ipynb")):
        if ".ipynb_checkpoints" in path.parts:
            continue
        rel = path.relative_to(folder)
        pairs.append((rel.parts[0] if len(rel.parts) > 1 else path.stem, path))
    return pairs


@dataclass
class Run:
    """What one grading process left: its records, and why it stopped early if it did."""

    records: dict = field(default_factory=dict)  # exercise -> record
    cell_problems: list = field(default_factory=list)
    sandbox: dict = field(default_factory=dict)
    problem: str = ""
    seconds: float = 0.0


def book_notebook_of(path: Path, notebook: dict, book: dict) -> str | None:
    """Which of the book's notebooks a submission is: by file name, else by the exercises its cells check."""
    if path.name in book:
        return path.name
    text = "\n".join("".join(c.get("source", "")) for c in notebook.get("cells", []) if isinstance(c, dict))
    overlap = {name: sum(f'"{ex}"' in text or f"'{ex}'" in text for ex, _ in exercises)
               for name, exercises in book.items()}
    best = max(overlap, key=overlap.get, default=None)
    return best if best and overlap[best] else None


def _kill_user(uid: int) -> None:
    """SIGKILL every process of ``uid`` (as root: whatever a submission started, in any session)."""
    for pid in os.listdir("/proc"):
        if pid.isdigit():
            try:
                if os.stat(f"/proc/{pid}").st_uid == uid:
                    os.kill(int(pid), signal.SIGKILL)
            except OSError:
                continue


def run_submission(notebook: dict, key: AnswerKey, limits: Limits, timeout: float, cell_timeout: float,
                   case_time_limit: float = 10.0) -> Run:
    """Run one submission's notebook (a dict, as read from JSON) in a sandboxed grading process."""
    start = time.monotonic()
    root = Path(tempfile.mkdtemp(prefix="toy-grade-"))  # the grader's; the submission's is root/work
    work = root / "work"
    work.mkdir()
    if limits.uid is not None:
        root.chmod(0o711)  # another user may pass through to its working folder, not list or write here
        os.chown(work, limits.uid, limits.uid)
    token = secrets.token_hex(16)
    if os.geteuid() == 0:
        limits = replace(limits, pids_cgroup=process_group(f"toy-grade-{token}", limits.processes))
    job = {"token": token, "work": str(work), "notebook": notebook, "cell_timeout": cell_timeout,
           "exercises": key.job(case_time_limit)}
    (root / "job.pkl").write_bytes(pickle.dumps(job))
    (root / "limits.json").write_text(json.dumps(asdict(limits)))
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(work), "TMPDIR": str(work),
           "LANG": "C.UTF-8", "OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1",
           "TOY_EXPLORER_VIEW": "static", "MPLBACKEND": "Agg", "IPYTHONDIR": str(work / ".ipython"),
           "PYTHONDONTWRITEBYTECODE": "1"}
    run = Run()
    with open(root / "stderr.txt", "wb") as err:
        proc = subprocess.Popen([sys.executable, "-I", str(HARNESS), str(root)], cwd=root, env=env,
                                start_new_session=True, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                stderr=err)
        timed_out = False
        try:
            proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            timed_out = True
        finally:
            try:
                os.killpg(proc.pid, signal.SIGKILL)  # the process and anything it started in its session
            except ProcessLookupError:
                pass
            end_process_group(limits.pids_cgroup)  # and anything that left the session
            if limits.uid is not None:
                _kill_user(limits.uid)
            proc.wait()
    done, last_cell = False, 0
    results = root / "results.jsonl"
    for line in results.read_text(errors="replace").splitlines() if results.exists() else []:
        try:
            record = json.loads(line)
        except ValueError:
            continue
        if not isinstance(record, dict) or record.get("token") != token:
            continue  # not written by the grading process
        if "sandbox" in record:
            run.sandbox = record["sandbox"]
        elif "exercise" in record:
            run.records.setdefault(record["exercise"], record)
        elif "running" in record:
            last_cell = max(last_cell, record["running"])
        elif "cell" in record:
            if "timeout" in record:
                run.cell_problems.append(f"Code cell {record['cell']} used its {record['timeout']:g} s of CPU time and "
                                         "was stopped")
            else:
                run.cell_problems.append(f"Code cell {record['cell']} raised {record['error']}")
        elif record.get("done"):
            done = True
    if timed_out:
        run.problem = f"the notebook did not finish within {timeout:g} s"
    elif not done:
        code = proc.returncode
        how = f"signal {signal.Signals(-code).name}" if code < 0 else f"exit code {code}"
        if code == -signal.SIGXCPU:
            how += ", its CPU time was used up"
        tail = (root / "stderr.txt").read_text(errors="replace").strip().splitlines()[-1:] or [""]
        where = f"in code cell {last_cell}" if last_cell else "before its first cell"
        run.problem = (f"the notebook's process ended early ({how}) {where}"
                       + (f": {tail[0][:200]}" if tail[0] else ""))
    shutil.rmtree(root, ignore_errors=True)
    run.seconds = time.monotonic() - start
    return run


def probe_user(limits: Limits) -> tuple[Limits, str]:
    """As root, whether a dropped user can run Python and ``toy`` here (not where Python sits in a folder only root
    may read): run an empty notebook as that user. Returns the limits to use, and a note if the drop failed."""
    if os.geteuid() != 0 or limits.uid is not None:
        return limits, ""
    run = run_submission({"cells": []}, AnswerKey(0, {}), replace(limits, uid=FIRST_UID), 300, 60)
    if not run.problem:
        return replace(limits, uid=FIRST_UID), ""
    return limits, f"could not run as another user ({run.problem}); runs as the grader's user, root"


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


def grade_folder(folder: Path, out: Path, book: dict, jobs: int = 1, timeout: float = 600,
                 cell_timeout: float = 120, seed: int | None = None, limits: Limits | None = None,
                 progress: bool = True) -> dict:
    """Grade every submission in ``folder`` (see the module's docstring for what is written to ``out``).

    ``book`` maps a notebook's file name to its exercises, [(exercise, function name), ...], read from the book's
    own notebooks (a submission that deletes a check cell is still marked on that exercise)."""
    seed = secrets.randbelow(2**31) if seed is None else seed
    pairs = submissions(folder)
    keys = {name: AnswerKey(seed, dict(exercises)) for name, exercises in book.items()}
    limits, user_note = probe_user(limits or Limits())
    slots = queue.Queue()
    for k in range(jobs):
        slots.put(k)

    def grade_one(student: str, path: Path) -> tuple[str, str | None, Run]:
        slot = slots.get()
        try:
            try:
                notebook = json.loads(path.read_text())
            except (OSError, ValueError) as err:
                return student, None, Run(problem=f"{path.name} could not be read as a notebook ({err})")
            name = book_notebook_of(path, notebook, book)
            if name is None:
                return student, None, Run(problem=f"{path.name} is not one of the book's notebooks")
            mine = replace(limits, uid=limits.uid + slot) if limits.uid is not None else limits
            return student, name, run_submission(notebook, keys[name], mine, timeout, cell_timeout)
        finally:
            slots.put(slot)

    bar = Progress(len(pairs)) if progress else None
    runs = []
    with ThreadPoolExecutor(max_workers=jobs) as pool:
        futures = [pool.submit(grade_one, student, path) for student, path in pairs]
        if bar:
            bar.show(0, min(jobs, len(pairs)))
        for done, future in enumerate(as_completed(futures), start=1):
            runs.append(future.result())
            if bar:
                bar.show(done, min(jobs, len(pairs) - done))
    runs.sort(key=lambda r: (r[0], r[1] or ""))
    report = next((run.sandbox for _, _, run in runs if run.sandbox), {"limits": asdict(limits)})
    if user_note:
        report = {**report, "user": user_note}
    return write_reports(out, runs, keys, book, {"seed": seed, "jobs": jobs, "timeout": timeout,
                                                 "cell_timeout": cell_timeout, "sandbox": report})


def write_reports(out: Path, runs: list, keys: dict, book: dict, about: dict) -> dict:
    """Write grades.csv, gradebook.csv, feedback/ and run.json; return ``about`` with the paths added."""
    out.mkdir(parents=True, exist_ok=True)
    (out / "feedback").mkdir(exist_ok=True)
    rows, feedback = [], {}
    for student, name, run in runs:
        lines = feedback.setdefault(student, [])
        lines.append(f"\n## {name or 'a notebook'}\n")
        if run.problem:
            lines.append(f"- Problem: {run.problem}.")
        key = keys.get(name)
        for ex in key.functions if key else []:
            result = verdict(key, ex, run.records.get(ex), run.problem or (
                "the notebook never got to this exercise: an earlier cell failed" if run.cell_problems else ""))
            rows.append({"student": student, "notebook": name, "exercise": ex, "status": result.status,
                         "cases_passed": result.cases_passed, "cases_total": result.cases_total,
                         "mark": int(result.passed), "message": result.message})
            lines.append(f"- **{ex}**: {result.status}. {result.message}")
        lines += [f"- {problem}." for problem in run.cell_problems[:3]]
    with (out / "grades.csv").open("w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=["student", "notebook", "exercise", "status", "cases_passed",
                                               "cases_total", "mark", "message"])
        writer.writeheader()
        writer.writerows(rows)
    graded = {r["exercise"] for r in rows}
    columns = [ex for exercises in book.values() for ex, _ in exercises if ex in graded]
    with (out / "gradebook.csv").open("w", newline="") as f:
        writer = csv.writer(f)
        writer.writerow(["student", *columns, "total"])
        for student in sorted(feedback):
            marks = {r["exercise"]: r["mark"] for r in rows if r["student"] == student}
            writer.writerow([student, *(marks.get(ex, 0) for ex in columns), sum(marks.values())])
    for student, lines in feedback.items():
        mine = [r for r in rows if r["student"] == student]
        head = (f"# Feedback for {student}\n\n{sum(r['mark'] for r in mine)} of {len(mine)} checked exercises "
                "pass (the grader's own hidden cases, not the ones your notebook showed).\n")
        (out / "feedback" / f"{student}.md").write_text(head + "\n".join(lines) + "\n")
    about = {**about, "submissions": len(runs), "grades": str(out / "grades.csv"),
             "gradebook": str(out / "gradebook.csv"), "feedback": str(out / "feedback")}
    (out / "run.json").write_text(json.dumps(about, indent=2))
    return about
