"""Questions: the part of an exercise that has one right answer but no function to write.

A question is declared once, in its section's module, with ``question(...)``. Its answer is computed by ``toy`` at
a *setting* (a dict such as ``{"eps": 0.001, "T": 40}``): the book's own setting, or a student's instance drawn
from the student's name (``draw``), so that reading the page's source gives away the book's answer only. An answer
is one of four kinds:

* ``number``: one number, right within ``tolerance`` (absolute);
* ``numbers``: several numbers (the four bars of a prediction), one per label, each within ``tolerance`` (one
  number for all, or a function of the setting giving one per number, when the prompt asks for significant figures);
* ``choice``: one of ``options`` (a sign is a choice among "negative", "zero", "positive");
* ``order``: every option, in order.

``mistakes(setting)`` lists wrong answers worth a word of their own (a population standard deviation where the
sample's is meant, ...) with the hint to give; a prediction box shows that hint too, beside the answer.
``accepted(setting)`` lists the answers that a method the prompt prescribes gives (an approximation: "use part
(c)", "close to uniform"), each with a note that gives the exact value and says why the approximation differs: an
answer between the exact value and such an approximation (each number, within the tolerance) is right, and the
note is said with it. What only a person can mark (a proof) gets a ``rubric``: criteria
with points, written from the worked solution.

From one declaration come three views, all judged by ``judge`` on the question's ``spec`` (plain JSON):

* in the built page, an answer box (``ask``'s static view) that the page script ``book/_static/toy/toy-answers.js``
  judges with the same rules, offline, keeping the reader's answers in the browser;
* in a notebook, ``answer(name, value)``, which checks the reader's answer for their own instance (``student``);
* in the course grader (``course``), which reads each ``answer`` call of a submission and judges it against the
  student's instance.
"""

from __future__ import annotations

import json
import math
import numbers
import os
import re
import unicodedata
import zlib
from collections.abc import Callable
from dataclasses import dataclass, field
from html import escape

import numpy as np

from .. import checks

KINDS = ("number", "numbers", "choice", "order")
ANSWER_KEY = "toy_answer"
"""Output metadata key of an ``answer`` call's record (read by the course grader)."""
STUDENT_ENV = "TOY_STUDENT"
VIEW_ENV = "TOY_EXPLORER_VIEW"  # the same switch as the explorers': static in the built book, live in a kernel
_ID = re.compile(r"ex-\d-\d-[a-z0-9-]+")
DRAWS = 50
"""How many draws a student's instance may take to differ from the book's setting (which the page shows)."""
SHOWN_AS_IN_MENUS = ("reward", "features")
"""Settings whose values a prompt shows as the explorers' menus do: "sum to target", not "sum_to_target"."""


def normal_name(name: str) -> str:
    """A name as it is compared and hashed everywhere: stripped and in Unicode's NFC form (a name typed on one
    machine and unzipped on another may arrive decomposed, NFD); nothing else of it changes (a zero-width
    non-joiner stays)."""
    return unicodedata.normalize("NFC", name).strip()


def _seed_text(student: str, key: str | None) -> str:
    if key:
        return "key:" + normal_name(key)
    return normal_name(student)


def _json(setting: dict) -> str:
    return json.dumps({k: _plain(v) for k, v in setting.items()}, sort_keys=True, default=str)


@dataclass(frozen=True)
class Question:
    """One checkable question. ``prompt`` is plain text with ``{name}`` fields filled from the setting."""

    name: str
    exercise: str
    prompt: str
    kind: str
    answer: Callable[[dict], object]
    setting: dict
    draw: Callable[[np.random.Generator], dict] | None = None
    tolerance: float | Callable[[dict], list] = 0.005
    labels: tuple[str, ...] = ()
    options: tuple[str, ...] = ()
    option_hints: dict = field(default_factory=dict)
    mistakes: Callable[[dict], list] | None = None
    predict: bool = False
    points: int = 1
    accepted: Callable[[dict], list] | None = None
    practice: bool = False

    def instance(self, student: str | None = None, key: str | None = None) -> dict:
        """The setting of ``student``'s instance, or the book's when ``student`` is None. It is drawn from the
        student's ``key`` (a course's own, made from the course secret: see ``student``), else from the name
        (NFC-normalised, so "José" typed either way is one student)."""
        if student is None or self.draw is None:
            return dict(self.setting)
        seed = _seed_text(student, key)
        # seeded by the exercise, so that an exercise's questions drawn alike share one instance; never the book's
        rng = np.random.default_rng([zlib.crc32(seed.encode()), zlib.crc32(self.exercise.encode())])
        for _ in range(DRAWS):
            drawn = dict(self.draw(rng))
            if _json(drawn) != _json(self.setting):
                return drawn
        raise ValueError(f"question {self.name}: {DRAWS} draws in a row gave the book's own setting")

    def prompt_at(self, setting: dict) -> str:
        """The prompt with the setting filled in, values shown as the explorers' menus show them."""
        return self.prompt.format(**{k: v.replace("_", " ") if k in SHOWN_AS_IN_MENUS and isinstance(v, str) else v
                                     for k, v in setting.items()})

    def spec(self, setting: dict | None = None) -> dict:
        """Everything a view needs to ask and judge the question at ``setting`` (the book's by default), as JSON."""
        setting = dict(self.setting if setting is None else setting)
        right = _normalise(self, self.answer(setting))
        if isinstance(right, str):
            raise ValueError(f"question {self.name}: toy's own answer is malformed: {right}")
        if self.kind in ("number", "numbers"):
            right = _clean(right)
        tolerance = self.tolerance_at(setting, len(right))
        accepted = []
        for value, note in (self.accepted(setting) if self.accepted else []):
            value = _normalise(self, value)
            if isinstance(value, str) or self.kind not in ("number", "numbers"):
                raise ValueError(f"question {self.name}: an accepted approximation is malformed: {value}")
            if not isinstance(note, str) or not note.strip():
                raise ValueError(f"question {self.name}: an accepted approximation needs a note with the exact value")
            if not self._same(_clean(value), right, tolerance):  # an approximation as good as exact needs no note
                accepted.append({"value": _clean(value), "note": note})
        said = []
        for wrong, hint in (self.mistakes(setting) if self.mistakes else []):
            wrong = _normalise(self, wrong)
            if isinstance(wrong, str):
                raise ValueError(f"question {self.name}: a listed mistake is malformed: {wrong}")
            if self.kind in ("number", "numbers"):
                wrong = _clean(wrong)
            # a mistake that coincides, at this setting, with the answer says nothing; with an earlier mistake, the
            # reader may have made either, so the hint names both
            if self._same(wrong, right, tolerance) or any(_between(wrong, right, a["value"], tolerance)
                                                          for a in accepted):
                continue
            earlier = next((m for m in said if self._same(wrong, m["value"], tolerance)), None)
            if earlier is None:
                said.append({"value": wrong, "hint": hint})
            elif hint not in earlier["hint"]:
                earlier["hint"] += f" Or: {hint[:1].lower()}{hint[1:]}"
        return {
            "name": self.name, "exercise": self.exercise, "kind": self.kind,
            "prompt": self.prompt_at(setting),
            "setting": {k: _plain(v) for k, v in setting.items()},
            "labels": list(self.labels), "options": list(self.options),
            "option_hints": {str(k): v for k, v in self.option_hints.items()},
            "tolerance": tolerance, "answer": right, "mistakes": said, "predict": self.predict,
            "points": self.points, "accepted": accepted,
        }

    def tolerance_at(self, setting: dict, n: int) -> float | list:
        """The tolerance at ``setting``: one number, or one per number of the answer (``n`` of them)."""
        if not callable(self.tolerance):
            return self.tolerance
        tol = [float(t) for t in self.tolerance(setting)]
        if len(tol) != n or not all(math.isfinite(t) and t > 0 for t in tol):
            raise ValueError(f"question {self.name}: the tolerance must give {n} positive numbers, got {tol}")
        return tol

    def _same(self, a: list, b: list, tolerance) -> bool:
        if self.kind in ("choice", "order"):
            return a == b
        return all(abs(x - y) <= _tol(tolerance, i) for i, (x, y) in enumerate(zip(a, b, strict=True)))


@dataclass(frozen=True)
class Criterion:
    text: str
    points: int


QUESTIONS: dict[str, Question] = {}
RUBRICS: dict[str, tuple[Criterion, ...]] = {}


def _plain(value):
    return value.item() if isinstance(value, np.generic) else value


def question(name: str, exercise: str, prompt: str, kind: str, answer: Callable, setting: dict, *,
             draw: Callable | None = None, tolerance: float | Callable = 0.005, labels=(), options=(),
             option_hints=None, mistakes: Callable | None = None, predict: bool = False, points: int = 1,
             accepted: Callable | None = None, practice: bool = False) -> Question:
    """Declare a question (see the module docstring). ``practice``: checked in the notebook, never graded (its
    instances are too few for a classmate's answer, or the page's, to be wrong for another student)."""
    name, exercise = checks.text("name", name), checks.text("exercise", exercise)
    if not _ID.fullmatch(exercise) or not name.startswith(exercise):
        raise ValueError(f"question {name!r}: the exercise must be a label such as 'ex-4-1-predict' that starts the "
                         f"question's name, got {exercise!r}")
    checks.choose("question kind", kind, {k: k for k in KINDS})
    if not callable(answer) or any(f is not None and not callable(f) for f in (draw, mistakes, accepted)):
        raise checks.fail("answer and draw (and mistakes, accepted)", "functions", (answer, draw, mistakes, accepted))
    if accepted is not None and kind not in ("number", "numbers"):
        raise ValueError(f"question {name!r}: only a number can be approximated ('accepted')")
    labels, options = tuple(labels), tuple(options)
    if kind == "numbers" and len(labels) < 2:
        raise ValueError(f"question {name!r}: a 'numbers' question labels each of its numbers")
    if kind in ("choice", "order") and len(options) < 2:
        raise ValueError(f"question {name!r}: a {kind!r} question needs at least two options")
    tolerance = tolerance if callable(tolerance) else checks.positive_finite("tolerance", tolerance)
    q = Question(name, exercise, checks.text("prompt", prompt), kind, answer, dict(setting), draw, tolerance,
                 labels, options, dict(option_hints or {}), mistakes, checks.flag("predict", predict),
                 checks.positive_int("points", points), accepted,
                 checks.flag("practice", practice))
    QUESTIONS[name] = q  # its answers are computed when asked for (tests/test_questions.py computes every one)
    return q


def rubric(exercise: str, *criteria: tuple[str, int]) -> tuple[Criterion, ...]:
    """Declare how a written answer to ``exercise`` is marked: ``(criterion, points)`` pairs."""
    if not isinstance(exercise, str) or not _ID.fullmatch(exercise):
        raise checks.fail("exercise", "an exercise label such as 'ex-4-1-telescope'", exercise)
    if not criteria:
        raise ValueError(f"rubric({exercise!r}): give at least one (criterion, points)")
    made = []
    for criterion in criteria:
        if not isinstance(criterion, tuple) or len(criterion) != 2:
            raise checks.fail("criterion", "a pair (text, points)", criterion)
        text, points = criterion
        if not isinstance(text, str) or not text.strip():
            raise checks.fail("criterion", "a sentence saying what earns the points", text)
        made.append(Criterion(text, checks.positive_int("criterion points", points)))
    RUBRICS[exercise] = tuple(made)
    return RUBRICS[exercise]


def questions_of(exercise: str) -> list[Question]:
    """The questions of one exercise, in the order they were declared."""
    checks.text("exercise", exercise)
    return [q for q in QUESTIONS.values() if q.exercise == exercise]


# -- judging: the same rules as book/_static/toy/toy-answers.js ------------------------------------------------------

def _option_index(q, given) -> int | str:
    """Index of the option ``given`` names (its text, any case; or its letter, "a", "b", ...); else a complaint."""
    if isinstance(given, str):
        text = given.strip().lower()
        for i, option in enumerate(q.options):
            if text in (option.lower(), chr(ord("a") + i)):
                return i
    allowed = ", ".join(f"{chr(ord('a') + i)}: {o!r}" for i, o in enumerate(q.options))
    return f"expected one of the options ({allowed}), got {checks.show(given)}"


def _normalise(q, given):
    """``given`` in the form ``judge`` takes (a list of floats, or of option indices), or a complaint (str)."""
    if q.kind == "choice":
        i = _option_index(q, given)
        return i if isinstance(i, str) else [i]
    if q.kind == "order":
        if isinstance(given, str) or not isinstance(given, (list, tuple)) or len(given) != len(q.options):
            return f"expected all {len(q.options)} options in order, got {checks.show(given)}"
        order = [_option_index(q, g) for g in given]
        bad = [o for o in order if isinstance(o, str)]
        if bad:
            return bad[0]
        if len(set(order)) != len(order):
            return f"expected each option once, got {checks.show(given)}"
        return order
    want = 1 if q.kind == "number" else len(q.labels)
    values = [given] if q.kind == "number" else given
    if isinstance(values, np.ndarray):
        values = values.tolist()
    if isinstance(values, (str, bytes)) or not isinstance(values, (list, tuple)) or len(values) != want:
        what = "one number" if want == 1 else f"{want} numbers ({', '.join(q.labels)})"
        return f"expected {what}, got {checks.show(given)}"
    out = []
    for v in values:
        if isinstance(v, np.generic):
            v = v.item()
        if isinstance(v, bool) or not isinstance(v, numbers.Real) or not _finite(v):
            huge = isinstance(v, int) and v.bit_length() > 10_000
            shown = "an integer of too many digits" if huge else checks.show(v)
            return f"expected finite numbers, got {shown}"
        out.append(float(v))
    return out


def _finite(v, digits: int = 308) -> bool:
    """Whether ``v`` (a real number) is finite as a float, without overflowing (an int of 400 digits is not)."""
    if isinstance(v, int):
        return v.bit_length() <= digits * 3.33
    try:
        return math.isfinite(float(v))
    except (OverflowError, ValueError):
        return False


def normalised(q: Question, given):
    """``given`` as ``judge`` takes it (floats, or option indices), or None if it is not an answer to ``q``."""
    try:
        out = _normalise(q, given)
    except (OverflowError, ValueError, TypeError, RecursionError):
        return None
    return None if isinstance(out, str) else out


def as_value(q: Question, given):
    """A normalised answer (as ``answer``'s record stores it) back in the form ``answer`` takes; None if malformed."""
    if not isinstance(given, list) or not given or len(given) > 64:
        return None
    if q.kind in ("choice", "order"):
        if not all(isinstance(i, int) and not isinstance(i, bool) and 0 <= i < len(q.options) for i in given):
            return None
        texts = [q.options[i] for i in given]
        return texts[0] if q.kind == "choice" else texts
    return given[0] if q.kind == "number" else given


def _clean(values: list) -> list:
    """toy's own numbers as a page shows them: 12 significant digits, and rounding noise below 1e-12 as 0."""
    return [0.0 if abs(v) < 1e-12 else float(f"{v:.12g}") for v in values]


@dataclass
class Verdict:
    right: bool
    fields: list[bool]
    hint: str


def _tol(tolerance, i: int) -> float:
    """The tolerance of the answer's number ``i`` (a spec's tolerance is one number, or one per number)."""
    return (tolerance[i] if isinstance(tolerance, list) else tolerance) + 1e-12


def _between(given: list, right: list, approx: list, tolerance) -> bool:
    """Each number of ``given`` lies between the exact one and the approximation's, within the tolerance."""
    return all(min(r, a) - _tol(tolerance, i) <= g <= max(r, a) + _tol(tolerance, i)
               for i, (g, r, a) in enumerate(zip(given, right, approx, strict=True)))


def judge(spec: dict, given: list) -> Verdict:
    """Judge ``given`` (normalised: floats, or option indices) against ``spec['answer']``; a wrong answer gets a hint
    that says what is wrong, never what is right. An answer that a prescribed approximation gives (``accepted``) is
    right, and its hint is the approximation's note: the exact value, and why the approximation differs."""
    right, kind = spec["answer"], spec["kind"]
    if kind in ("number", "numbers"):
        tol = spec["tolerance"]
        fields = [abs(g - r) <= _tol(tol, i) for i, (g, r) in enumerate(zip(given, right, strict=True))]
        if all(fields):
            return Verdict(True, fields, "")
        for a in spec.get("accepted", []):
            if _between(given, right, a["value"], tol):
                return Verdict(True, [True] * len(fields), a["note"])
        for m in spec["mistakes"]:
            if all(abs(g - w) <= _tol(tol, i) for i, (g, w) in enumerate(zip(given, m["value"], strict=True))):
                return Verdict(False, fields, m["hint"])
        labels = spec["labels"] or ["the number"]
        first = fields.index(False)
        way = "too high" if given[first] > right[first] else "too low"
        if len(fields) == 1:
            return Verdict(False, fields, f"Not quite: {way}.")
        return Verdict(False, fields, f"{sum(fields)} of {len(fields)} right; {labels[first]} is {way}.")
    fields = [g == r for g, r in zip(given, right, strict=True)]
    if all(fields):
        return Verdict(True, fields, "")
    for m in spec["mistakes"]:
        if given == m["value"]:
            return Verdict(False, fields, m["hint"])
    if kind == "choice":
        return Verdict(False, fields, spec["option_hints"].get(str(given[0]), "Not that one."))
    return Verdict(False, fields, f"{sum(fields)} of {len(fields)} in the right place.")


# -- the notebook's views ------------------------------------------------------------------------------------------

_student: list = [None, None, False]  # the name, its key, and whether the notebook set them (even to None)


def student(name: str | None, key: str | None = None) -> str | None:
    """Answer for ``name``'s own instance from now on (the name as the course lists it); None: the book's setting.
    ``key``: the student's own key, which a course's editions write beside the name (made from the course's secret,
    so that no one can compute a classmate's instance from the name alone)."""
    if name is not None and (not isinstance(name, str) or not name.strip()):
        raise checks.fail("student", "a name (text) or None for the book's setting", name)
    if key is not None and (not isinstance(key, str) or not key.strip()):
        raise checks.fail("key", "the key your course gave you (text), or None", key)
    _student[:] = [None if name is None else normal_name(name), None if key is None else key.strip(), True]
    return _student[0]


def current_student() -> str | None:
    if _student[2]:
        return _student[0]
    return normal_name(os.environ.get(STUDENT_ENV) or "") or None


def current_key() -> str | None:
    return _student[1] if _student[2] else None


def _question(name: str) -> Question:
    if name not in QUESTIONS:
        raise checks.fail("question", f"one of {', '.join(QUESTIONS)}", name)
    return QUESTIONS[name]


@dataclass
class AnswerResult:
    """What ``answer`` found; shown as a line, with a record the grader can read (key ``toy_answer``)."""

    question: str
    status: str  # right, wrong, not answered, malformed
    message: str
    given: list | None = None
    student: str | None = None
    shown: bool = field(default=False, repr=False, compare=False)

    @property
    def right(self) -> bool:
        return self.status == "right"

    def __str__(self) -> str:
        mark = {"right": "✓", "not answered": "…"}.get(self.status, "✗")
        return f"{mark} {self.question}: {self.message}"

    def _repr_mimebundle_(self, include=None, exclude=None):
        colour = {"right": "#1a7f37", "not answered": "#9a6700"}.get(self.status, "#cf222e")
        html = (f'<div class="toy-check" style="border-left:4px solid {colour};padding:0.3em 0.8em">'
                f"{escape(str(self))}</div>")
        record = {"question": self.question, "status": self.status, "given": self.given, "student": self.student}
        return {"text/plain": str(self), "text/html": html}, {ANSWER_KEY: record}

    def show(self) -> AnswerResult:
        """Display this result now, with its record, in a Jupyter kernel (nothing elsewhere): so a cell whose
        ``answer`` is printed, followed by other statements, or one of several, still leaves its record."""
        try:
            from IPython import get_ipython
            from IPython.display import publish_display_data
        except ImportError:
            return self
        shell = get_ipython()
        if shell is None or not hasattr(shell, "display_pub"):
            return self
        data, metadata = self._repr_mimebundle_()
        publish_display_data(data, metadata)
        self.shown = True
        return self

    def _ipython_display_(self):
        """The cell's last value: already shown by ``answer`` (once is enough), else shown now."""
        if not self.shown:
            self.show()


def check_answer(name: str, value, student_name: str | None = None, key: str | None = None) -> AnswerResult:
    """Judge ``value`` as the answer to question ``name`` for ``student_name``'s instance (None: the book's), drawn
    from the student's ``key`` when there is one. Never raises for a bad answer: what is wrong is said in the
    result."""
    q = _question(name)
    if value is Ellipsis:
        return AnswerResult(name, "not answered", "not answered yet: replace ... with your answer and run this cell "
                            f"again ({_what(q)}).", None, student_name)
    given = _normalise(q, value)
    if isinstance(given, str):
        return AnswerResult(name, "malformed", given + ".", None, student_name)
    verdict = judge(q.spec(q.instance(student_name, key)), given)
    whose = f" (the instance of {student_name})" if student_name and q.draw else ""
    if verdict.right:
        note = f" {verdict.hint}" if verdict.hint else ""
        return AnswerResult(name, "right", f"right{whose}.{note}", given, student_name)
    return AnswerResult(name, "wrong", f"{verdict.hint}{whose}", given, student_name)


NO_NAME = ("no name is set (toy.exercises.student(None)), so this was checked at the book's setting; a course marks "
           "the instance of your own name: set it with toy.exercises.student(\"Your Name\", ...) as your course "
           "gave it, and run the answers again")


def answer(name: str, value) -> AnswerResult:
    """The notebook's check of question ``name``: judge ``value`` for this reader's instance (``student``). In
    Jupyter the result is displayed at once, with a record of the value judged (``toy_answer``, read by the course
    grader), so ``print(answer(...))``, statements after it and several answers in one cell all leave theirs."""
    result = check_answer(name, value, current_student(), current_key())
    if result.student is None and _question(name).draw is not None and result.status in ("right", "wrong") \
            and _student[2]:
        result.message += f" (note: {NO_NAME})"
    return result.show()


def _what(q: Question) -> str:
    if q.kind == "number":
        return "one number"
    if q.kind == "numbers":
        return f"a list of {len(q.labels)} numbers: {', '.join(q.labels)}"
    letters = ", ".join(f"{chr(ord('a') + i)}: {o!r}" for i, o in enumerate(q.options))
    return f"one option ({letters})" if q.kind == "choice" else f"every option, in order ({letters})"


@dataclass
class Ask:
    """The questions and rubric of one exercise, as ``ask`` displays them."""

    exercise: str
    student: str | None
    key: str | None = None

    def static_html(self) -> str:
        specs = [q.spec() for q in questions_of(self.exercise)]  # the book's setting: what the page may show
        boxes = "".join(
            f'<div class="toy-answer" data-name="{escape(s["name"])}"><p class="toy-answer-prompt">'
            f'{escape(s["prompt"])}</p><noscript>Checking this answer in the page needs JavaScript.</noscript>'
            f'<script type="application/json" class="toy-answer-spec">'
            f'{json.dumps(s, separators=(",", ":")).replace("</", "<" + chr(92) + "/")}</script></div>'
            for s in specs)
        return f'<div class="toy-answers">{boxes}{_rubric_html(self.exercise)}</div>'

    def text(self) -> str:
        lines = []
        for q in questions_of(self.exercise):
            setting = q.instance(self.student, self.key)
            whose = f" (your instance, {self.student})" if self.student and q.draw else ""
            whose += " (practice: checked here, not graded)" if q.practice else ""
            lines.append(f"{q.name}{whose}: {q.prompt_at(setting)}\n  answer with "
                         f"toy.exercises.answer({q.name!r}, ...), where ... is {_what(q)}")
        for c in RUBRICS.get(self.exercise, ()):
            lines.append(f"  [{c.points} pt] {c.text}")
        return "\n".join(lines)

    def _repr_mimebundle_(self, include=None, exclude=None):
        view = os.environ.get(VIEW_ENV, "live")
        if view in ("static", "page"):
            return {"text/html": self.static_html(), "text/plain": self.text()}
        html = "".join(f"<p>{escape(line)}</p>" for line in self.text().split("\n"))
        return {"text/html": f'<div class="toy-answers-text">{html}</div>', "text/plain": self.text()}


def _rubric_html(exercise: str) -> str:
    criteria = RUBRICS.get(exercise)
    if not criteria:
        return ""
    total = sum(c.points for c in criteria)
    items = "".join(f"<li>{escape(c.text)} <span class=\"toy-rubric-points\">({c.points} pt)</span></li>"
                    for c in criteria)
    return (f'<details class="toy-rubric"><summary>How a written answer is marked ({total} points)</summary>'
            f"<ul>{items}</ul></details>")


def ask(exercise: str) -> Ask:
    """Show exercise ``exercise``'s questions (an answer box in the built page) and its rubric."""
    if exercise not in {q.exercise for q in QUESTIONS.values()} | set(RUBRICS):
        known = sorted({q.exercise for q in QUESTIONS.values()} | set(RUBRICS))
        raise checks.fail("exercise", f"an exercise with questions or a rubric ({', '.join(known)})", exercise)
    return Ask(exercise, current_student(), current_key())
