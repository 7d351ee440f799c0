"""The grading process of one submission (run by the grader as ``python -I harness.py JOB``; never imported).

In this order, so that nothing of the submission runs before the grader's part is in place:

1. read the job the grader left in ``JOB/job.pkl`` (and delete it): the notebook, each exercise's function name,
   the hidden cases' inputs (never the answers: those stay with the grader), the forbidden references;
2. enter the sandbox (``sandbox.py``), importing nothing but the standard library before it;
3. import ``toy`` and bind what the marking needs (``toy.exercises.call``, with its module's names as they are
   now), then open an IPython shell and run the submission's code cells one by one, each with a CPU-time limit;
4. right after the cell that checks an exercise (and at the end, for any exercise whose check cell is gone),
   call the submission's function on the hidden inputs, and write what it returned (or raised) to
   ``JOB/results.jsonl``, one JSON line per exercise, each with the job's token.

The grader compares the answers with its own references (``marks.py``). Nothing the notebook displays counts.
"""

from __future__ import annotations

import importlib.util
import io
import json
import os
import pickle
import re
import signal
import sys
import types
from pathlib import Path


class CellTimeLimit(KeyboardInterrupt):
    """Raised in a cell that used up its CPU time."""


class _Sink(io.TextIOBase):
    """Where the submission's printed output goes: nowhere (the grader reads no output)."""

    def write(self, text):
        return len(text)


def _encode(value, np) -> dict:
    """What the function returned, as JSON the grader can compare (numbers, arrays) or describe (anything else)."""
    try:
        if isinstance(value, (bool, np.bool_)):
            return {"other": type(value).__name__, "repr": repr(value)}
        if isinstance(value, (int, float, np.integer, np.floating)) or (
                isinstance(value, np.ndarray) and value.shape == ()):
            return {"number": float(value), "type": type(value).__name__}
        arr = np.asarray(value, dtype=float)
        if arr.size > 100_000:
            return {"array": None, "shape": list(arr.shape), "type": type(value).__name__}
        return {"array": arr.tolist(), "shape": list(arr.shape), "type": type(value).__name__}
    except Exception:  # noqa: BLE001 - any other object is described, not compared
        try:
            text = repr(value)[:200]
        except Exception:  # noqa: BLE001
            text = "<no repr>"
        return {"other": type(value).__name__, "repr": text}


def _snapshot(fn):
    """``fn`` with a copy of its module's names as they are now: later rebinding by the submission misses it."""
    return types.FunctionType(fn.__code__, dict(fn.__globals__), fn.__name__, fn.__defaults__, fn.__closure__)


def main(job_dir: Path) -> None:
    raw = (job_dir / "job.pkl").read_bytes()
    (job_dir / "job.pkl").unlink()
    limits = json.loads((job_dir / "limits.json").read_text())
    out = open(job_dir / "results.jsonl", "a", buffering=1)  # opened before the sandbox drops the user
    spec = importlib.util.spec_from_file_location("toy_sandbox", Path(__file__).with_name("sandbox.py"))
    sandbox = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = sandbox  # dataclasses look their module up there
    spec.loader.exec_module(sandbox)
    report = sandbox.enter(sandbox.Limits(**limits))
    main_pid, dumps, write = os.getpid(), json.dumps, out.write

    job = pickle.loads(raw)  # imports toy (and numpy) inside the sandbox
    token = job["token"]

    def emit(record: dict) -> None:
        if os.getpid() != main_pid:  # a forked child of the submission: it never reports, and stops here
            os._exit(0)
        write(dumps({"token": token, **record}) + "\n")

    emit({"sandbox": report})
    os.chdir(job["work"])
    import numpy as np

    from toy.exercises import call
    call = _snapshot(call)

    from IPython.core.interactiveshell import InteractiveShell
    from traitlets.config import Config

    config = Config()
    config.HistoryManager.enabled = False
    shell = InteractiveShell.instance(config=config)
    sys.stdout = sys.stderr = _Sink()
    marked = set()

    def mark(exercise: dict, cell: int) -> None:
        marked.add(exercise["name"])
        fn = shell.user_ns.get(exercise["function"])
        if not callable(fn):
            emit({"exercise": exercise["name"], "missing": exercise["function"], "cell": cell})
            return
        outcomes = []
        for args in exercise["cases"]:
            outcome = call(fn, args, exercise["time_limit"], exercise["forbidden_keys"])
            value = _encode(outcome.value, np) if outcome.kind == "returned" else None
            outcomes.append({"kind": outcome.kind, "detail": outcome.detail, "value": value})
            if outcome.kind != "returned":
                break
        emit({"exercise": exercise["name"], "outcomes": outcomes, "cell": cell})

    def stop_cell(signum, frame):
        raise CellTimeLimit

    signal.signal(signal.SIGPROF, stop_cell)  # CPU time: toy's checks keep SIGALRM for their own limit
    cells = [c for c in job["notebook"]["cells"] if c.get("cell_type") == "code"]
    for i, cell in enumerate(cells, start=1):
        source = cell["source"] if isinstance(cell["source"], str) else "".join(cell["source"])
        emit({"running": i})
        signal.setitimer(signal.ITIMER_PROF, job["cell_timeout"])
        try:
            result = shell.run_cell(source, store_history=False)
        finally:
            signal.setitimer(signal.ITIMER_PROF, 0)
        error = result.error_before_exec or result.error_in_exec
        if isinstance(error, CellTimeLimit):
            emit({"cell": i, "timeout": job["cell_timeout"]})
        elif error is not None:
            emit({"cell": i, "error": f"{type(error).__name__}: {error}".rstrip(": ")[:300]})
        for exercise in job["exercises"]:
            pattern = r"check\(\s*[\"']" + re.escape(exercise["name"]) + r"[\"']"
            if exercise["name"] not in marked and re.search(pattern, source):
                mark(exercise, i)
    for exercise in job["exercises"]:
        if exercise["name"] not in marked:
            mark(exercise, len(cells))
    emit({"done": True})
    out.flush()
    os._exit(0)  # not the submission's atexit hooks or leftover threads


if __name__ == "__main__":
    main(Path(sys.argv[1]))
