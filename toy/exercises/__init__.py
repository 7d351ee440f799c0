"""Checks for the book's exercises: a student's function against the reference in ``toy``, on hidden cases.

``check(name, fn)`` runs ``fn`` on randomised cases (seeded, so a notebook shows the same result every run;
``seed=`` or TOY_CHECK_SEED draws others) and compares with the reference. It never raises: whatever the
student's function does (not implemented, wrong type or shape, an exception, an endless loop), the result says
in words what happened, with the inputs, what was expected and what came back, and the notebook carries on.

Each result is displayed as text, with a machine-readable record in the output's metadata (key ``toy_check``).
The course grader (the ``course`` package, beside ``toy``) reads neither: it calls the student's functions itself,
in a sandbox, and judges the answers with the same ``judge`` step as ``check``. Each exercise may use a few named
parts of ``toy`` and nothing else (``allow``): while the check runs, a call into any other part of ``toy`` is
reported in words ("forbidden", ``forbidden.py``), and the student's function is given the hidden policies with
only the attributes every exercise may read; the grader's sandbox holds a ``toy`` made of the allowed parts alone.
The exercises themselves are registered by one module per section (``section41`` ...), with ``register``,
``allow`` and ``forbid`` from ``registry``.
"""

from __future__ import annotations

import contextlib
import json
import math
import os
import signal
import threading
import zlib
from collections.abc import Callable
from dataclasses import dataclass
from html import escape

import numpy as np

from .. import checks
from . import section41, section42, section43, section44, section45  # noqa: F401  (each registers its exercises)
from .forbidden import CallWatch, Rules, code_keys, shown
from .questions import QUESTIONS, RUBRICS, answer, ask, student  # noqa: F401  (the exercises' questions)
from .registry import EXERCISES, Case, Exercise

CHECK_KEY = "toy_check"
CHECKS_ENV = "TOY_CHECKS"
"""Set to "not run" by the book's build (book/_ext/toybook.py) in the kernels that execute the notebooks: a built
page cannot run a reader's code, so its checks show as not run (and say where to run them), never as a pass under
the stub above them. Unset everywhere else (JupyterLab, Colab, Live code, the grader, nbgrader): checks run."""
NOT_RUN = "not run here: this page cannot run your code. Run the check in JupyterLab, Colab or Live code."

@dataclass
class CheckResult:
    """What a check found. ``status`` is one of: pass, fail, not implemented, error, timeout, forbidden, and
    not run (in the built book's static page, which runs no reader's code)."""

    exercise: str
    status: str
    message: str
    cases_passed: int = 0
    cases_total: int = 0

    @property
    def passed(self) -> bool:
        return self.status == "pass"

    def __str__(self) -> str:
        mark = {"pass": "✓", "not implemented": "…", "not run": "…"}.get(self.status, "✗")
        return f"{mark} {self.exercise}: {self.message}"

    def _repr_mimebundle_(self, include=None, exclude=None):
        record = {"exercise": self.exercise, "status": self.status, "message": self.message,
                  "cases_passed": self.cases_passed, "cases_total": self.cases_total}
        colour = {"pass": "#1a7f37", "not implemented": "#9a6700", "not run": "#6e7781"}.get(self.status, "#cf222e")
        html = (f'<div class="toy-check" style="border-left:4px solid {colour};padding:0.3em 0.8em">'
                f"{escape(str(self))}</div>")
        return {"text/plain": str(self), "text/html": html}, {CHECK_KEY: json.loads(json.dumps(record))}


class _TimeLimit(Exception):
    pass


@contextlib.contextmanager
def _time_limit(seconds: float):
    """Interrupt the block after ``seconds`` (POSIX main thread only; elsewhere no limit is applied)."""
    usable = hasattr(signal, "setitimer") and threading.current_thread() is threading.main_thread()
    if not usable:
        yield
        return

    def handler(signum, frame):
        raise _TimeLimit

    old = signal.signal(signal.SIGALRM, handler)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)


FEEDBACK_DIGITS = 12
"""Significant figures of the expected and returned numbers in a failed check's message: enough to show a difference
just above the tolerance (at 6, a check failed with "expected 0.500333, but the function returned 0.500333")."""


def _show(value) -> str:
    if isinstance(value, np.ndarray):
        return np.array2string(value, precision=6, suppress_small=False, separator=", ")
    if isinstance(value, float):
        return f"{value:.6g}"
    return repr(value)


def _compare(ex: Exercise, got, want) -> str | None:
    """None if ``got`` matches ``want``; otherwise what is wrong, in words."""
    if ex.kind == "number":
        if isinstance(got, (bool, np.bool_)) or not isinstance(got, (int, float, np.integer, np.floating)) and not (
            isinstance(got, np.ndarray) and got.shape == ()
        ):
            return f"expected a number, but the function returned {type(got).__name__} {_show(got)}"
        got = float(got)
        if not math.isfinite(got):
            return f"expected {_show(float(want))}, but the function returned {got}"
        allowed = max(ex.tolerance, ex.relative * abs(float(want)))
        if abs(got - float(want)) > allowed:  # digits enough to show the difference (issue 50c: "0.500333" twice)
            return (f"expected {float(want):.{FEEDBACK_DIGITS}g}, but the function returned {got:.{FEEDBACK_DIGITS}g}"
                    f" (off by {abs(got - float(want)):.3g}; the check allows {allowed:.3g})")
        return None
    want = np.asarray(want, dtype=float)
    try:
        arr = np.asarray(got, dtype=float)
    except (TypeError, ValueError):
        return f"expected an array of shape {want.shape}, but the function returned {type(got).__name__} {got!r:.80}"
    if arr.shape != want.shape:
        return f"expected an array of shape {want.shape}, but the function returned one of shape {arr.shape}"
    if not np.all(np.isfinite(arr)):
        return f"expected {_show(want)}, but the function returned {_show(arr)} (not all finite)"
    if not np.allclose(arr, want, atol=ex.tolerance, rtol=ex.relative):
        off = np.abs(arr - want)
        i = int(np.argmax(off - (ex.tolerance + ex.relative * np.abs(want))))  # furthest outside the tolerance
        return (f"expected {_show(want)}, but the function returned {_show(arr)} (entry {i}: expected "
                f"{want.ravel()[i]:.{FEEDBACK_DIGITS}g}, returned {arr.ravel()[i]:.{FEEDBACK_DIGITS}g}, off by "
                f"{off.ravel()[i]:.3g}; the check allows {ex.tolerance + ex.relative * abs(want.ravel()[i]):.3g})")
    return None


def seed_for(name: str, seed: int) -> int:
    """The seed of exercise ``name``'s hidden cases for a run seeded ``seed`` (the book uses 0)."""
    checks.choose("exercise name", name, EXERCISES)
    return checks.positive_int("seed", seed, low=0) + zlib.crc32(name.encode())


@dataclass
class Outcome:
    """What the student's function did on one case: ``kind`` is "returned" (with ``value``), "not implemented",
    "timeout", "error" (``detail``: the exception in words) or "forbidden" (``detail``: the reference called)."""

    kind: str
    value: object = None
    detail: str = ""


def call(fn: Callable, args: tuple, time_limit: float = 10.0, rules: Rules | None = None) -> Outcome:
    """Call the student's ``fn(*args)`` once, under a time limit and the watch that holds it to ``rules`` (what the
    exercise may use of toy; None: no watch). A call the rules do not allow makes the outcome "forbidden" whatever
    happened after it, as in the grader's sandbox, where that call raises at once."""
    watch = CallWatch(rules) if rules is not None else contextlib.nullcontext()
    try:
        with _time_limit(time_limit), watch:
            got = fn(*args)
        outcome = Outcome("returned", got)
    except NotImplementedError:
        outcome = Outcome("not implemented")
    except _TimeLimit:
        outcome = Outcome("timeout", detail=f"{time_limit:g}")
    except Exception as err:  # noqa: BLE001 - the student's code raised: report it, never a traceback from toy
        outcome = Outcome("error", detail=f"{type(err).__name__}: {err}")
    if rules is None:
        return outcome
    if watch.seen:
        return Outcome("forbidden", detail=watch.seen[0])
    if not watch.still_intact:
        return Outcome("error", detail="the function switched off the check's watch on forbidden references")
    return outcome


def judge(ex: Exercise, i: int, n: int, case: Case, outcome: Outcome, want) -> CheckResult | None:
    """None if case ``i`` (of ``n``) passes; otherwise the result that ends the check, in words."""
    name = ex.name
    if outcome.kind == "not implemented":
        rule = f" ({ex.forbidden.rule}; {ex.allowed.rule})" if ex.forbidden else f" ({ex.allowed.rule})"
        return CheckResult(name, "not implemented", "not yet implemented: fill in the function and run this cell"
                           f" again{rule}.", 0, n)
    if outcome.kind == "timeout":
        return CheckResult(name, "timeout", f"case {i + 1} ({case.description}) did not finish within "
                           f"{outcome.detail} s: is there a loop that never ends?", i, n)
    if outcome.kind == "error":
        return CheckResult(name, "error", f"case {i + 1} ({case.description}) raised {outcome.detail}", i, n)
    if outcome.kind == "forbidden":
        said = ex.forbidden.message(outcome.detail) if ex.forbidden else f"this exercise does not use {outcome.detail}"
        return CheckResult(name, "forbidden", f"{said} (case {i + 1} called it): {ex.allowed.rule}.", i, n)
    problem = _compare(ex, outcome.value, want)
    if problem:
        return CheckResult(name, "fail", f"case {i + 1} of {n}: for {case.description}, {problem}.", i, n)
    return None


def hidden_cases(name: str, seed: int) -> list[Case]:
    """Exercise ``name``'s hidden cases for a run seeded ``seed``."""
    seed = seed_for(name, seed)  # checks name and seed
    return EXERCISES[name].cases(np.random.default_rng(seed))


def forbidden_keys(name: str) -> dict:
    """The code keys (see ``forbidden.code_keys``) of the shortcuts exercise ``name`` names in its messages (what is
    allowed is decided by its allow-list: ``rules``)."""
    ex = checks.choose("exercise name", name, EXERCISES)
    return code_keys(ex.forbidden.references) if ex.forbidden else {}


_RULES: dict[str, Rules] = {}


def _rules(name: str) -> Rules:
    """Exercise ``name``'s rules for the watch, compiled once."""
    ex = EXERCISES[name]
    if name not in _RULES or _RULES[name].forbidden is not ex.forbidden or _RULES[name].allowed is not ex.allowed:
        _RULES[name] = Rules(name, ex.forbidden, ex.allowed)
    return _RULES[name]


def _as_given(args: tuple) -> tuple:
    """The hidden inputs as the student's function is given them (``forbidden.shown``); one copy per policy."""
    copies = {}
    return tuple(copies.setdefault(id(a), shown(a)) for a in args)


def check(name: str, fn: Callable, n_cases: int | None = None, time_limit: float = 10.0,
          seed: int | None = None) -> CheckResult:
    """Run ``fn`` on the hidden cases of exercise ``name`` and compare with the reference. Never raises.

    ``seed`` picks the hidden cases (default: TOY_CHECK_SEED, else 0). A call into a part of toy that the exercise
    does not allow ends the check with status "forbidden". In the book's build (TOY_CHECKS="not run") the check is
    not run: the page shows the unsolved stub above it (the solution is folded), and a reader there cannot run
    anything, so it says where to run it instead of showing a pass nobody earned."""
    if n_cases is not None:
        n_cases = checks.positive_int("n_cases", n_cases, low=1)
    time_limit = checks.positive_finite("time_limit", time_limit)
    if seed is not None:
        seed = checks.positive_int("seed", seed, low=0)
    if name not in EXERCISES:
        return CheckResult(name, "error", f"there is no exercise {name!r}; known: {', '.join(EXERCISES)}")
    ex = EXERCISES[name]
    if not callable(fn):
        return CheckResult(name, "error", f"expected a function, but got {type(fn).__name__} {fn!r:.80}")
    if os.environ.get(CHECKS_ENV) == "not run":
        return CheckResult(name, "not run", NOT_RUN)
    seed = int(os.environ.get("TOY_CHECK_SEED", "0")) if seed is None else seed
    cases = hidden_cases(name, seed)[:n_cases]
    rules = _rules(name)
    for i, case in enumerate(cases):
        want = ex.reference(*case.args)
        result = judge(ex, i, len(cases), case, call(fn, _as_given(case.args), time_limit, rules), want)
        if result:
            return result
    return CheckResult(name, "pass", f"all {len(cases)} hidden cases pass.", len(cases), len(cases))
