"""Marks, computed by the grader in its own process: hidden cases, reference answers, and one exercise graded.

For each notebook the grader draws the hidden cases with the run's seed and computes the reference answers with
its own ``toy`` (``AnswerKey``). ``grade_exercise`` then starts a sandbox for one exercise of one submission
(``sandbox.py``), sends it the code the exercise runs (every cell the student wrote, and the book's own cells it
needs: ``slicing.py``), then the hidden inputs one at a time, and judges each reply here, with the same words as
``toy.exercises.check``. The sandbox never sees an answer, the seed, or another exercise's cases. A reply that is
late, too long or malformed costs that exercise (the others are graded in sandboxes of their own), and whatever
goes wrong while grading one exercise is a row for that exercise, never for the submission.
"""

from __future__ import annotations

import json
import re
import time
from dataclasses import dataclass, field

from toy.exercises import EXERCISES, CheckResult, Outcome, hidden_cases, judge

from . import protocol, sandbox, slicing
from .channel import Channel, Ended, Late
from .restricted import restricted_toy

CHECK_CALL = re.compile(r"toy\.exercises\.check\(\s*[\"']([^\"']+)[\"']\s*,\s*(\w+)")


def exercises_checked(nb) -> list[tuple[str, str]]:
    """(exercise, function name) for each check call in a notebook's code cells, in order."""
    found = []
    for cell in nb.cells:
        if cell.cell_type == "code":
            found += [pair for pair in CHECK_CALL.findall(cell.source) if pair not in found]
    return found


@dataclass
class AnswerKey:
    """The hidden cases of some exercises for one run, with the reference answers (kept by the grader)."""

    seed: int
    functions: dict  # exercise -> the function name the book's notebook checks
    cases: dict = field(default_factory=dict)
    answers: dict = field(default_factory=dict)
    inputs: dict = field(default_factory=dict)  # exercise -> each case's inputs as plain data

    def __post_init__(self):
        for name in self.functions:
            self.cases[name] = hidden_cases(name, self.seed)
            self.answers[name] = [EXERCISES[name].reference(*case.args) for case in self.cases[name]]
            self.inputs[name] = [protocol.encode_case(name, case.args) for case in self.cases[name]]


@dataclass
class Settings:
    """How long the parts of one exercise may take (wall clock, seconds), and the sandbox's limits."""

    setup_seconds: float = 120.0  # the code the exercise needs
    case_seconds: float = 10.0  # one hidden case
    limits: sandbox.Limits = field(default_factory=sandbox.Limits)


@dataclass
class Graded:
    """One exercise of one submission: the verdict, what stopped it if something did, and the student's own code
    the grader ran (``[(cell, source)]``; the book's unchanged cells it also ran are not listed)."""

    result: CheckResult
    problems: list = field(default_factory=list)
    code: list = field(default_factory=list)
    seconds: float = 0.0


def _ended_words(proc, group, when: str) -> str:
    code = proc.poll()
    if group.out_of_memory():
        return f"the sandbox used up its memory {when} and was stopped"
    if code is not None and code < 0:
        return f"the sandbox's process was killed {when} (signal {-code})"
    said = sandbox.stderr_tail(proc)  # bubblewrap's own words, if it could not start (the student's go nowhere)
    return (f"the sandbox's process ended {when}" + (f" (exit code {code})" if code else "")
            + (f": {protocol.read_text(said, 200)}" if said else ""))


def grade_exercise(cells: list[str], exercise: str, function: str, key: AnswerKey, settings: Settings,
                   book_cells: frozenset = frozenset()) -> Graded:
    """Grade ``exercise`` of one submission whose code cells are ``cells`` (``book_cells``: the ``slicing.normal``
    sources of the book's own cells, which the grader may skip when unchanged). Never raises."""
    start = time.monotonic()
    n = len(key.cases[exercise])
    try:
        return _grade(cells, exercise, function, key, settings, book_cells, start)
    except Exception as err:  # noqa: BLE001 - one exercise's row, whatever went wrong
        return Graded(CheckResult(exercise, "error", f"the grader could not grade this exercise ({type(err).__name__}"
                                  f": {protocol.read_text(str(err), 200)})", 0, n), seconds=time.monotonic() - start)


def _grade(cells, exercise, function, key, settings, book_cells, start) -> Graded:
    n = len(key.cases[exercise])
    run, mine, problems = slicing.cells_to_run(cells, exercise, function, book_cells)
    code = {cell: source for cell, source in run}
    graded = Graded(CheckResult(exercise, "error", "not graded", 0, n), problems, [(c, code[c]) for c in mine])
    missing = CheckResult(exercise, "missing", f"the notebook defines no function {function} and checks none "
                          f"for {exercise} (in the cells up to its last check)", 0, n)
    if not run:
        return Graded(missing, problems, [], time.monotonic() - start)

    def finish(result: CheckResult) -> Graded:
        graded.result, graded.seconds = result, time.monotonic() - start
        return graded

    proc, group = sandbox.start(restricted_toy(exercise), settings.limits)
    channel = Channel(proc)
    when = "while running the notebook's code"
    try:
        channel.send({"setup": {"cells": run, "exercise": exercise, "function": function}})
        reply = channel.receive(settings.setup_seconds)
        said = reply.get("problems", [])
        if not isinstance(said, list):
            raise protocol.BadReply("problems that are not a list")
        graded.problems += [protocol.read_text(p) for p in said[:5]]
        if "missing" in reply:
            return finish(missing)
        if reply.get("ready") is not True:
            raise protocol.BadReply("a reply that is not the answer to the set-up")
        for i, case in enumerate(key.cases[exercise]):
            when = f"on hidden case {i + 1}"
            channel.send({"call": key.inputs[exercise][i]})
            try:
                outcome = _outcome(channel.receive(settings.case_seconds))
            except Late:
                outcome = Outcome("timeout", detail=f"{settings.case_seconds:g}")
            result = judge(EXERCISES[exercise], i, n, case, outcome, key.answers[exercise][i])
            if result:
                return finish(result)
        return finish(CheckResult(exercise, "pass", f"all {n} hidden cases pass.", n, n))
    except Late:
        return finish(CheckResult(exercise, "timeout", f"the notebook's code did not finish within "
                                  f"{settings.setup_seconds:g} s", 0, n))
    except Ended:
        channel.close()
        proc.wait()
        return finish(CheckResult(exercise, "error", _ended_words(proc, group, when), 0, n))
    except protocol.BadReply as err:
        return finish(CheckResult(exercise, "error", f"the sandbox sent {err} {when}", 0, n))
    finally:
        channel.close()
        sandbox.stop(proc, group)


def _outcome(reply: dict) -> Outcome:
    kind = reply.get("kind")
    if kind == "returned":
        return Outcome("returned", protocol.read_answer(reply.get("value")))
    if kind in ("not implemented", "error", "forbidden"):
        return Outcome(kind, detail=protocol.read_text(reply.get("detail", ""), 300))
    if kind == "bad reply":
        raise protocol.BadReply(protocol.read_text(reply.get("detail", "a malformed reply"), 200))
    raise protocol.BadReply("a reply of no known kind")


def result_record(graded: Graded) -> dict:
    """The part of a graded exercise the class run keeps (JSON)."""
    r = graded.result
    return {"exercise": r.exercise, "status": r.status, "message": r.message, "cases_passed": r.cases_passed,
            "cases_total": r.cases_total, "problems": graded.problems, "seconds": round(graded.seconds, 3),
            "code": json.loads(json.dumps(graded.code))}
