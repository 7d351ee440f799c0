"""How long an author waits for the book: a clean build, its PDFs, and a rebuild after one prose edit.

Prints, asserting nothing (each figure with its target, "ok" or "MISSED", and the machine's load average):

* **clean build**: ``jupyter-book build -W -n --keep-going`` of a copy of the book's sources in a temporary folder,
  nothing recorded before (every notebook executed, every page printed); target at most 3 minutes;
* **its PDFs**: the part of it that printed and put together the PDFs (from the build's ``toypdf:`` line); target
  at most 60 s;
* **one-edit rebuild**: a sentence added to a Markdown cell of ``EDITED``, built again over the first build (its
  execution records and prints kept beside the html folder): which notebooks were executed and which pages
  printed, and how long it took; target at most 60 s;
* with ``--compare``: a clean build of the edited sources in another folder, with ``--busy N`` busy loops running
  beside it (default 2), and whether every file of it equals the rebuild's, byte for byte.

The goals (issue 42) are for a quiet machine: read the load beside each figure.

Run: .venv/bin/python benchmarks/bench_rebuild.py [--compare] [--busy N]
"""

from __future__ import annotations

import argparse
import filecmp
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "book" / "_ext"))
sys.path.insert(0, str(ROOT))  # the busy loops are the tests' own
import toysite  # noqa: E402

from tests.conftest import busy_loops  # noqa: E402

EDITED = "chapters/04-the-llm-as-a-policy/4.2-easy-and-hard"
SENTENCE = "An author adds this sentence and rebuilds."
GOALS = {"clean build": 180.0, "its PDFs": 60.0, "one-edit rebuild": 60.0}


def load() -> str:
    return "load average " + ", ".join(f"{x:.1f}" for x in os.getloadavg())


def copy_sources(dest: Path) -> None:
    for name in toysite.INPUT_PATHS:
        src = ROOT / name
        if src.is_dir():
            shutil.copytree(src, dest / name, ignore=shutil.ignore_patterns(*toysite.SKIPPED))
        else:
            shutil.copy2(src, dest / name)


def build(root: Path, out: Path | None, log: Path) -> tuple[float, str]:
    jb = Path(sys.executable).with_name("jupyter-book")
    cmd = [str(jb), "build", str(root), "-W", "-n", "--keep-going", *(["--path-output", str(out)] if out else [])]
    start = time.monotonic()
    env = {**os.environ, "SOURCE_DATE_EPOCH": os.environ.get("SOURCE_DATE_EPOCH", "1767225600")}
    proc = subprocess.run(cmd, capture_output=True, text=True, env=env)
    took = time.monotonic() - start
    log.write_text(proc.stdout + proc.stderr)
    if proc.returncode != 0:
        sys.exit(f"the build failed (log in {log}):\n{(proc.stdout + proc.stderr)[-3000:]}")
    return took, proc.stdout


def report(name: str, seconds: float, detail: str = "") -> None:
    goal = GOALS.get(name)
    verdict = "" if goal is None else f" (target {goal:.0f} s: {'ok' if seconds <= goal else 'MISSED'})"
    print(f"{name}: {seconds:.1f} s{verdict}{detail}; {load()}", flush=True)


def pdf_seconds(log: str) -> float:
    m = re.search(r"toypdf: \d+ PDFs \(.*?\) in ([\d.]+) s", log)
    return float(m.group(1)) if m else float("nan")


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--compare", action="store_true", help="also build the edited book afresh and compare")
    parser.add_argument("--busy", type=int, default=2, help="busy loops beside the comparison build")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="bench-rebuild-") as tmp:
        src = Path(tmp) / "book"
        copy_sources(src)
        print(f"The book's sources copied to {src}; {load()}", flush=True)
        took, log = build(src, None, Path(tmp) / "clean.log")
        executed = re.findall(r"([\w.-]+)\.ipynb: Executed notebook in", log)
        report("clean build", took, f" ({len(executed)} notebooks executed)")
        report("its PDFs", pdf_seconds(log))

        notebook = src / f"{EDITED}.ipynb"
        nb = json.loads(notebook.read_text())
        prose = next(c for c in nb["cells"] if c["cell_type"] == "markdown" and len("".join(c["source"])) > 300)
        prose["source"] = "".join(prose["source"]).rstrip("\n") + f"\n\n{SENTENCE}\n"
        notebook.write_text(json.dumps(nb, indent=1, ensure_ascii=False) + "\n")
        took, log = build(src, None, Path(tmp) / "rebuild.log")
        executed = re.findall(r"([\w.-]+)\.ipynb: Executed notebook in", log)
        printed = re.findall(r"toypdf: (\S+\.pdf): printed in", log)
        together = re.findall(r"toypdf: (\S+\.pdf): the chapter's", log)
        report("one-edit rebuild", took, f" (executed {', '.join(executed) or 'nothing'}; printed "
               f"{', '.join(printed) or 'nothing'}; put together {', '.join(together) or 'nothing'}; its PDFs "
               f"{pdf_seconds(log):.1f} s)")
        if args.compare:
            with busy_loops(args.busy):
                took, log = build(src, Path(tmp) / "clean2", Path(tmp) / "clean2.log")
            report(f"clean build of the edited book beside {args.busy} busy loops", took,
                   f" (its PDFs {pdf_seconds(log):.1f} s)")
            first, second = src / "_build" / "html", Path(tmp) / "clean2" / "_build" / "html"
            files = sorted(p.relative_to(first) for p in first.rglob("*") if p.is_file())
            others = sorted(p.relative_to(second) for p in second.rglob("*") if p.is_file())
            differ = [str(f) for f in files if f in others and not filecmp.cmp(first / f, second / f, shallow=False)]
            only = sorted(set(map(str, files)) ^ set(map(str, others)))
            print(f"the rebuild and the clean build under load: {len(files)} files, "
                  + ("byte-identical" if not differ and not only else
                     f"{len(differ)} differ ({differ[:5]}), {len(only)} in one only ({only[:5]})"), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
