"""Speed of grading a class: 40 submissions of section 4.1 (honest, partly done, wrong and forbidden answers, in
even shares) graded with two jobs, each exercise in its own bubblewrap sandbox. Prints its figures; asserts nothing.

Target (issue 20): at most 5 minutes on 2 cores for 40 submissions of one section.

Run: .venv/bin/python benchmarks/bench_grading.py [--students 40] [--jobs 2]
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

import nbformat

from course import cli

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the tests' hostile class lives in tests/
from tests import hostile_class as hc

KINDS = {
    "honest": hc.honest(),
    "own_way": hc.honest(hc.OWN_VALUE, hc.OWN_PROBABILITY, hc.OWN_ADVANTAGES),
    "partly_done": hc.honest(value="def value_of_prefix(policy, reward, prompt, prefix):\n"
                                   "    raise NotImplementedError"),
    "wrong": hc.honest(probability="def response_probability(policy, prompt, response):\n    return 0.5"),
    "shortcut": hc.honest(value="def value_of_prefix(policy, reward, prompt, prefix):\n"
                                "    return toy.value(policy, reward, prompt, prefix)"),
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--students", type=int, default=40)
    parser.add_argument("--jobs", type=int, default=2)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        cls = Path(tmp) / "class"
        kinds = list(KINDS.values())
        for i in range(args.students):
            nb = nbformat.v4.new_notebook()
            nb.cells = [nbformat.v4.new_code_cell(s) for s in kinds[i % len(kinds)]]
            (cls / f"student{i:03d}").mkdir(parents=True)
            nbformat.write(nb, cls / f"student{i:03d}" / hc.NOTEBOOK)
        load = os.getloadavg()[0]
        start = time.monotonic()
        about = cli.grade(cls, Path(tmp) / "out", jobs=args.jobs, progress=False)
        seconds = time.monotonic() - start
    exercises = args.students * len(hc.EXERCISES)
    verdict = "ok" if seconds <= 300 or args.students != 40 else "MISSED"
    print(f"grading {args.students} submissions of 4.1 ({exercises} sandboxed exercises) with {args.jobs} jobs on "
          f"{os.cpu_count()} cores: {seconds:.1f} s in all ({about['seconds']:.1f} s grading, the rest computing "
          f"the reference answers), {seconds / exercises * args.jobs:.2f} s per exercise per job "
          f"[target <= 300 s: {verdict}] (load average {load:.2f} before the run)")


if __name__ == "__main__":
    main()
