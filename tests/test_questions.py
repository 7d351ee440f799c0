"""The exercises' questions (toy.exercises.questions): one declaration, three views that judge alike.

Every question's answer is computed by toy at the book's setting and at students' instances; the right answer is
right, each listed mistake gets its own hint, a near miss is wrong; the page script (book/_static/toy/toy-answers.js,
run by Node) judges every one of those answers exactly as Python does; the static view shows only the book's
setting; bad input gets words, not a traceback. Section 4.1's answers are checked against brute force.
"""

import json
import re
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest

import toy
from tests import brute
from toy.exercises import questions as Q

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = ROOT / "book" / "_static" / "toy" / "toy-answers.js"
NAMES = [f"student-{i}" for i in range(8)] + ["Ada Lovelace", "李雷"]
node = pytest.mark.skipif(shutil.which("node") is None, reason="Node.js runs the page script")


def tol(spec: dict, i: int) -> float:
    """The tolerance of the answer's number ``i``."""
    return spec["tolerance"][i] if isinstance(spec["tolerance"], list) else spec["tolerance"]


def within(spec: dict, given: list) -> bool:
    """Right by the rule the prompts state: each number within the tolerance of toy's, or between toy's and an
    approximation the prompt prescribes."""
    right = spec["answer"]
    return (all(abs(g - r) <= tol(spec, i) + 1e-12 for i, (g, r) in enumerate(zip(given, right, strict=True)))
            or any(all(min(r, a) - tol(spec, i) - 1e-12 <= g <= max(r, a) + tol(spec, i) + 1e-12
                       for i, (g, r, a) in enumerate(zip(given, right, x["value"], strict=True)))
                   for x in spec["accepted"]))


def answers_to_try(spec: dict, rng: np.random.Generator) -> list[list]:
    """The right answer, each mistake and accepted approximation, near misses on every field (of the answer and
    of each approximation), and a few random answers, normalised."""
    right = spec["answer"]
    tries = [list(right)] + [list(m["value"]) for m in spec["mistakes"]] + [list(a["value"]) for a in spec["accepted"]]
    if spec["kind"] in ("number", "numbers"):
        for centre in [right] + [a["value"] for a in spec["accepted"]]:
            for i in range(len(right)):
                for step in (3, -3, 0.5, -0.5):
                    near = list(centre)
                    near[i] += step * tol(spec, i)
                    tries.append(near)
        tries += [list(right + rng.normal(0, 0.3, len(right))) for _ in range(3)]
    elif spec["kind"] == "choice":
        tries += [[i] for i in range(len(spec["options"]))]
    else:
        tries += [list(rng.permutation(len(spec["options"])).tolist()) for _ in range(4)]
    return tries


def all_specs():
    specs = []
    for q in Q.QUESTIONS.values():
        specs.append(q.spec())
        specs += [q.spec(q.instance(name)) for name in NAMES[:3]]
    return specs


@pytest.mark.parametrize("name", sorted(Q.QUESTIONS))
def test_every_question_judges_its_own_answers(name):
    q = Q.QUESTIONS[name]
    rng = np.random.default_rng(0)
    for student in [None, *NAMES]:
        spec = q.spec(q.instance(student))
        assert spec["prompt"] and "{" not in spec["prompt"], spec["prompt"]
        if spec["kind"] in ("number", "numbers"):
            assert all(np.isfinite(spec["answer"]))
        right = Q.as_value(q, spec["answer"])
        assert Q.check_answer(name, right, student).status == "right"
        for m in spec["mistakes"]:
            verdict = Q.judge(spec, m["value"])
            assert not verdict.right and verdict.hint == m["hint"]
        for a in spec["accepted"]:  # an approximation the prompt prescribes is right, with the exact value said
            verdict = Q.judge(spec, a["value"])
            assert verdict.right and verdict.hint == a["note"]
            assert Q.check_answer(name, Q.as_value(q, a["value"]), student).message.endswith(a["note"])
        if spec["kind"] in ("number", "numbers"):
            near = list(spec["answer"])
            away = max([near[-1]] + [a["value"][-1] for a in spec["accepted"]])  # past any approximation's
            near[-1] = away + 3 * tol(spec, len(near) - 1)
            verdict = Q.judge(spec, near)
            assert not verdict.right and verdict.fields[-1] is False
        for given in answers_to_try(spec, rng):
            verdict = Q.judge(spec, given)
            assert verdict.right == (given == spec["answer"] if spec["kind"] in ("choice", "order") else
                                     within(spec, given))
            assert verdict.right or verdict.hint


def test_instances_differ_between_students_and_stay_put():
    drawn = [q for q in Q.QUESTIONS.values() if q.draw is not None]
    assert drawn, "no question draws students' instances"
    for q in drawn:
        answers = {json.dumps(q.spec(q.instance(n))["answer"]) for n in NAMES}
        assert len(answers) >= 2, f"{q.name}: every student gets the same answer"
        assert q.instance("Ada Lovelace") == q.instance("Ada Lovelace")


@node
def test_the_page_script_judges_as_python_does():
    rng = np.random.default_rng(1)
    cases = [(spec, given) for spec in all_specs() for given in answers_to_try(spec, rng)]
    program = (f"const a = require({json.dumps(str(SCRIPT))});"
               "const cases = JSON.parse(require('fs').readFileSync(0, 'utf8'));"
               "process.stdout.write(JSON.stringify(cases.map(([s, g]) => a.judge(s, g))));")
    out = subprocess.run(["node", "-e", program], input=json.dumps(cases), capture_output=True, text=True,
                         check=True).stdout
    for (spec, given), js in zip(cases, json.loads(out), strict=True):
        py = Q.judge(spec, given)
        assert (js["right"], js["fields"], js["hint"]) == (py.right, py.fields, py.hint), (spec["name"], given)


@node
def test_a_prediction_box_says_a_listed_mistakes_hint_and_an_approximations_note():
    """Recorded predictions, as the page says them (toy-answers.js's ``predicted``): a listed mistake (or a chosen
    option with a hint of its own) gets its hint beside the answer; an accepted approximation is right, with its note
    (the exact value and why it differs); the exact answer, or a wrong one that is no listed mistake, gets neither.
    A checked answer's box (``said``) gives an accepted approximation's note after "Right"."""
    cases = []
    for spec in all_specs():
        cases += [(spec, m["value"], "mistake") for m in spec["mistakes"]]
        cases += [(spec, a["value"], "accepted") for a in spec["accepted"]]
        cases += [(spec, list(spec["answer"]), "right")]
        if spec["kind"] == "choice":
            cases += [(spec, [int(k)], "option") for k in spec["option_hints"] if [int(k)] != spec["answer"]]
    assert {kind for _, _, kind in cases} == {"mistake", "accepted", "right", "option"}
    program = (f"const a = require({json.dumps(str(SCRIPT))});"
               "const cases = JSON.parse(require('fs').readFileSync(0, 'utf8'));"
               "process.stdout.write(JSON.stringify(cases.map(([s, g]) => "
               "[a.predicted(s, g).text, a.said(a.judge(s, g))])));")
    out = subprocess.run(["node", "-e", program], input=json.dumps([c[:2] for c in cases]), capture_output=True,
                         text=True, check=True).stdout
    for (spec, given, kind), (text, said) in zip(cases, json.loads(out), strict=True):
        hint = Q.judge(spec, given).hint
        if kind == "right":
            assert text.startswith("✓ Your prediction was right. ") and said == "✓ Right.", (spec["name"], text)
        elif kind == "accepted":
            assert text.startswith("✓ Your prediction was right. ") and text.endswith(" " + hint), (spec["name"], text)
            assert said == "✓ Right. " + hint
        else:
            assert text.startswith("✗ ") and text.endswith(" " + hint) and said == "✗ " + hint, (spec["name"], text)


def test_a_prescribed_prediction_is_right_and_told_the_exact_value():
    """Exercise 8 (ex-4-2-resets) lets the reader take the tokens left as uniform at τ = 10, so 2/15 (or 0.133 for
    it); Exercise 23 (ex-4-4-predict) says to predict with part (c), so (T + 1)/2 and (T − (1 − ε)/ε)/(εT). Both
    are right, and the feedback gives toy's exact value; an answer beyond the approximation is still wrong."""
    spec = Q.QUESTIONS["ex-4-2-resets"].spec()
    exact = spec["answer"][0]
    for said in (2 / 15, round(2 / 15, 3)):
        verdict = Q.judge(spec, [said])
        assert verdict.right and f"{exact:.4f}" in verdict.hint and "uniform" in verdict.hint, verdict
    assert abs(round(2 / 15, 3) - exact) > spec["tolerance"]  # the case the issue met: 0.133 against 0.1317
    assert not Q.judge(spec, [2 / 15 + 3 * spec["tolerance"]]).right
    assert not Q.judge(spec, [exact - 3 * spec["tolerance"]]).right
    q = Q.QUESTIONS["ex-4-4-predict"]
    for student in [None, *NAMES]:
        s = q.instance(student)
        spec = q.spec(s)
        eps, T = s["eps_big"], s["T_big"]
        approx = [(s["T_small"] + 1) / 2, (T - (1 - eps) / eps) / (eps * T)]
        verdict = Q.judge(spec, [round(a, 2) for a in approx])
        assert verdict.right and f"{spec['answer'][0]:.2f}" in verdict.hint, (student, verdict)
        assert abs(approx[0] - spec["answer"][0]) > spec["tolerance"]  # part (c) is off by more than the title's digit
        assert not Q.judge(spec, [approx[0] + 3 * spec["tolerance"], approx[1]]).right
        assert Q.check_answer("ex-4-4-predict", approx, student).status == "right"


GIVEAWAYS = {  # what each question tests, as its solution writes it: a hint names the mistake, never this step
    "ex-4-1-telescope": ("minus V(x)", "− V(x)", "r − V"),
    "ex-4-2-bt": ("log σ(r̂(w", "log σ(r̂(winner", "σ(r̂(w) − r̂(l))"),
    "ex-4-3-clip-b": ("1/p", "1/(1 + ε", "cannot pass 1", "at most"),
    "ex-4-5-rloo-b": ("contains r_i", "what is lost", "what is kept", "shorter than", "1 − 1/n", "(n − 1)/n"),
}


def test_hints_name_the_mistake_without_doing_the_step():
    """The four hints that handed over the step the question tests (issue 39): none says it any more, at the book's
    setting or a student's; each still names what the mistake was."""
    for name, phrases in GIVEAWAYS.items():
        q = Q.QUESTIONS[name]
        for student in [None, *NAMES[:3]]:
            spec = q.spec(q.instance(student))
            hints = [m["hint"] for m in spec["mistakes"]] + list(spec["option_hints"].values())
            assert hints, name
            for hint in hints:
                assert not any(p in hint for p in phrases), (name, hint)


DIGITS = {"one": 1, "two": 2, "three": 3, "four": 4}


def test_an_answer_rounded_as_its_prompt_says_is_right():
    """Where a prompt names a precision ("two decimals", "to one decimal", "three significant figures"), toy's answer
    rounded so is right, at the book's setting and every student's instance. So 0.85 for ex-4-3-discount-b (0.8459),
    −0.71 for ex-4-5-predict-b (−0.7070) and 124 for ex-4-2-prior-b's ratio (124.25), which were marked wrong."""
    said = 0
    for name, q in Q.QUESTIONS.items():
        if q.kind not in ("number", "numbers"):
            continue
        for student in [None, *NAMES]:
            spec = q.spec(q.instance(student))
            prompt = spec["prompt"].lower()
            decimals = [DIGITS[w] for w in re.findall(r"\b(one|two|three|four) decimals?\b", prompt)]
            figures = [DIGITS[w] for w in re.findall(r"\b(one|two|three|four) significant figures\b", prompt)]
            rounded = [[round(a, d) for a in spec["answer"]] for d in decimals]
            rounded += [[float(f"{a:.{d}g}") for a in spec["answer"]] for d in figures]
            for given in rounded:
                said += 1
                assert Q.judge(spec, given).right, (name, student, given, spec["answer"])
    assert said > 50
    for name, given in (("ex-4-3-discount-b", [0.85]), ("ex-4-5-predict-b", [-0.71, 0.71])):
        assert Q.judge(Q.QUESTIONS[name].spec(), given).right, name
    spec = Q.QUESTIONS["ex-4-2-prior-b"].spec()
    assert Q.judge(spec, spec["answer"][:3] + [round(spec["answer"][3])]).right
    assert not Q.judge(spec, spec["answer"][:3] + [spec["answer"][3] + 1]).right


@node
def test_the_page_script_reads_numbers_as_readers_type_them():
    typed = ["0.16", " -0.2 ", "\u22120.2", "4/25", "16 %", "1e-3", ".5", "1,000", "abc", "", "1/0", "0.1.2", "--1"]
    program = (f"const a = require({json.dumps(str(SCRIPT))});"
               f"process.stdout.write(JSON.stringify({json.dumps(typed)}.map(a.parseNumber)));")
    out = json.loads(subprocess.run(["node", "-e", program], capture_output=True, text=True, check=True).stdout)
    assert out == [0.16, -0.2, -0.2, 0.16, None, 0.001, 0.5, 1000, None, None, None, None, None]  # "16 %": ambiguous


def test_the_static_view_holds_the_books_setting_only(monkeypatch):
    monkeypatch.setattr(Q, "_student", [None, None, False])  # as in a fresh kernel: no student(...) call yet
    monkeypatch.setenv(Q.VIEW_ENV, "static")
    monkeypatch.setenv(Q.STUDENT_ENV, "student-0")  # a student's name never reaches the page
    for exercise in sorted({q.exercise for q in Q.QUESTIONS.values()}):
        html = Q.ask(exercise)._repr_mimebundle_()["text/html"]
        specs = [json.loads(m.replace("<\\/", "</")) for m in re.findall(
            r'<script type="application/json" class="toy-answer-spec">(.*?)</script>', html)]
        assert specs == [json.loads(json.dumps(q.spec())) for q in Q.questions_of(exercise)]
    monkeypatch.setenv(Q.VIEW_ENV, "live")
    text = Q.ask("ex-4-1-telescope")._repr_mimebundle_()["text/plain"]
    assert "your instance, student-0" in text


def test_the_notebook_check_says_what_is_wrong():
    assert Q.check_answer("ex-4-1-predict", ...).status == "not answered"
    for bad in ([1, 2], "many", [0.1] * 7 + [float("nan")], [0.1] * 7 + [True], None):
        result = Q.check_answer("ex-4-1-predict", bad)
        assert result.status == "malformed" and "expected" in result.message, bad
    with pytest.raises(ValueError, match="question must be one of"):
        Q.answer("ex-9-9-nothing", 1)
    with pytest.raises(ValueError, match="exercise must be an exercise with questions"):
        Q.ask("ex-9-9-nothing")
    bundle, meta = Q.check_answer("ex-4-1-telescope", 0.5)._repr_mimebundle_()
    assert meta[Q.ANSWER_KEY]["given"] == [0.5] and "text/plain" in bundle


def test_bad_declarations_are_refused():
    ok = dict(answer=lambda s: 1.0, setting={})
    with pytest.raises(ValueError, match="question kind"):
        Q.question("ex-9-9-x", "ex-9-9-x", "p", "essay", **ok)
    with pytest.raises(ValueError, match="labels each"):
        Q.question("ex-9-9-x", "ex-9-9-x", "p", "numbers", **ok)
    with pytest.raises(ValueError, match="at least two options"):
        Q.question("ex-9-9-x", "ex-9-9-x", "p", "choice", **ok, options=("only",))
    with pytest.raises(ValueError, match="exercise must be a label"):
        Q.question("x", "4.1", "p", "number", **ok)
    broken = Q.question("ex-9-9-x", "ex-9-9-x", "p", "number", answer=lambda s: float("nan"), setting={})
    try:
        with pytest.raises(ValueError, match="toy's own answer is malformed"):
            broken.spec()
    finally:
        del Q.QUESTIONS["ex-9-9-x"]
    with pytest.raises(ValueError, match="at least one"):
        Q.rubric("ex-9-9-x")
    assert "ex-9-9-x" not in Q.QUESTIONS and "ex-9-9-x" not in Q.RUBRICS


def test_every_exercise_in_the_book_is_checked_asked_or_marked_by_rubric():
    """Each of the chapter's 30 exercises is followed, before the next one, by a code check or its questions."""
    import nbformat

    from course import editions

    seen, unchecked = [], []
    for path in editions.book_notebooks():
        label = None
        for cell in nbformat.read(path, as_version=4).cells:
            found = re.search(r":label: (ex-[\w-]+)", cell.source) if "{exercise}" in cell.source else None
            if found:
                if label:
                    unchecked.append(label)
                label = found.group(1)
                seen.append(label)
            elif label and cell.cell_type == "code" and re.search(r"toy\.exercises\.(check|ask)\(", cell.source):
                label = None
        if label:
            unchecked.append(label)
    assert len(seen) == 30 and not unchecked, unchecked
    asked = {q.exercise for q in Q.QUESTIONS.values()} | set(Q.RUBRICS)
    assert asked <= set(seen)


# -- section 4.1's answers, against brute force ----------------------------------------------------------------

def test_41_telescope_is_the_reward_minus_the_value_by_brute_force():
    q = Q.QUESTIONS["ex-4-1-telescope"]
    for student in [None, *NAMES]:
        s = q.instance(student)
        policy = toy.reference_policy(s["preset"], s["temperature"])
        reward = toy.get_reward(s["reward"])
        want = reward(2, tuple(s["response"])) - brute.value(policy, reward, 2)
        assert q.spec(s)["answer"] == [pytest.approx(want, abs=1e-9)]


def test_41_predict_under_a_uniform_prior_spreads_the_count_rewards_credit_evenly():
    """The book's setting (issue 49: the count reward, which no Try this or dropdown above the exercise answers): each
    token is the target with probability 1/5 on its own, so every blue bar is p(1 − p) and every orange one three
    times that. The sum reward, which Try this 3 and the prior dropdown answer, is still a student's possible draw."""
    q = Q.QUESTIONS["ex-4-1-predict"]
    p = 1 / 5
    assert q.spec()["answer"] == pytest.approx([p * (1 - p)] * 4 + [3 * p * (1 - p)] * 4)
    sum_setting = {"preset": "uniform", "temperature": 1.0, "reward": "sum_to_target"}
    assert q.spec(sum_setting)["answer"] == pytest.approx([0, 0, 0, p * (1 - p), p * (1 - p), p * (1 - p),
                                                           p * (1 - p), 0])
    policy = toy.reference_policy("uniform", 1.0)
    for reward_name in sorted({q.instance(student)["reward"] for student in NAMES}):
        reward = toy.get_reward(reward_name)
        prefixes = [y[:t] for y in np.ndindex(5, 5, 5, 5) for t in range(5)]
        V = {p: brute.value(policy, reward, 2, p) for p in set(prefixes)}  # each prefix once, by enumeration
        signal = [np.mean([(V[y[:t + 1]] - V[y[:t]]) ** 2 for y in np.ndindex(5, 5, 5, 5)]) for t in range(4)]
        setting = {"preset": "uniform", "temperature": 1.0, "reward": reward_name}
        assert q.spec(setting)["answer"][:4] == pytest.approx(signal, abs=1e-9)
        assert q.spec(setting)["answer"][4:] == pytest.approx([sum(signal) - x for x in signal], abs=1e-9)


# -- students' settings lie on the explorers' grids ----------------------------------------------------------------

class _Label(str):
    """A setting that holds a control's label (the text its menu shows), not its value."""


ON_EXPLORERS = {  # question: (explorer in toy.page.explorers.ALL, setting → [(control, value or _Label)])
    "ex-4-1-telescope": ("credit_assignment", lambda s: [
        ("preset", s["preset"]), ("temperature", s["temperature"]), ("reward", s["reward"]),
        *((f"y{t}", a) for t, a in enumerate(s["response"]))]),
    "ex-4-1-predict": ("credit_assignment", lambda s: [
        ("preset", s["preset"]), ("temperature", s["temperature"]), ("reward", s["reward"])]),
    "ex-4-2-resets": ("resets", lambda s: [
        ("prefix", s["prefix"]), ("prefix", _Label(s["state"])), ("temperature", s["temperature"])]),
    **{f"ex-4-2-prior-{part}": ("prior", lambda s: [
        ("preset", "pretrained"), ("reward", "sum_to_target"), ("prompt", s["first"]), ("prompt", s["second"])])
       for part in "abc"},
    "ex-4-2-goodhart-a": ("goodhart", lambda s: [
        ("comparisons", s["fewer"]), ("comparisons", s["more"]), ("dataset", _Label(str(s["set"]))),
        ("features", "tabular"), ("features", "additive"), ("beta", 0.01)]),
    "ex-4-2-drift": ("drift", lambda s: [("prompt", s["prompt"]), ("reward", _Label(s["reward"]))]),
    # (β is no control of the drift explorer: its curve spans DRIFT_BETAS, and the question reads π_ref's chance in
    # the title; the test below checks that every student's β lies on that grid)
    "ex-4-2-optimum": ("drift", lambda s: [("prompt", s["prompt"]), ("reward", _Label(s["reward"]))]),
    "ex-4-3-discount-a": ("discount", lambda s: [("gamma", s["gamma"]), ("beta", s["beta"])]),
    "ex-4-3-discount-b": ("discount", lambda s: [
        ("gamma", s["gamma"]), ("beta", s["beta"]), ("prompt", s["prompt"]), ("reward", "sum_to_target")]),
    "ex-4-3-bootstrap-a": ("bootstrapping", lambda s: [
        ("features", _Label(s["critic"])), ("n", s["n"]), ("averaged", s["averaged"])]),
    "ex-4-3-bootstrap-b": ("bootstrapping", lambda s: [("features", _Label(s["critic"])), ("averaged", s["averaged"])]),
    "ex-4-3-clip-a": ("clipping", lambda s: [("eps_high", s["eps_high"])]),
    "ex-4-3-clip-b": ("clipping", lambda s: [("eps_high", s["eps_high"])]),
    "ex-4-4-predict": ("compounding_errors", lambda s: [
        ("eps", s["eps_small"]), ("T", s["T_small"]), ("eps", s["eps_big"]), ("T", s["T_big"])]),
    "ex-4-5-predict-a": ("group_advantages", lambda s: [
        ("method", "grpo"), ("reward", s["reward"]), ("group", s["group"]), ("n", s["n1"]), ("n", s["n2"])]),
    "ex-4-5-predict-b": ("group_advantages", lambda s: [
        ("method", "grpo"), ("reward", s["reward"]), ("group", s["group"]), ("n", 2)]),
    "ex-4-5-lambda-c": ("value_estimates", lambda s: [
        ("reward", s["reward"]), ("features", s["features"]), ("n_data", s["n_data"]), ("lam", s["lam"])]),
}


def test_students_settings_are_values_the_explorers_offer():
    """A question read off an explorer draws each student's setting among the values its controls offer (the
    explorer's own constants, imported by toy.exercises), and the prompt its questions assume is the explorer's."""
    import inspect

    from toy.exercises import section41, section42, section43
    from toy.page.explorers import ALL

    drawn = {name for name, q in Q.QUESTIONS.items()
             if q.draw is not None and any(word in q.prompt for word in ("explorer", "Figure"))}
    assert drawn <= set(ON_EXPLORERS), sorted(drawn - set(ON_EXPLORERS))
    explorers = {}
    for name, (key, controls_of) in ON_EXPLORERS.items():
        q = Q.QUESTIONS[name]
        assert q.draw is not None, name
        if key not in explorers:
            explorers[key] = ALL[key]()
        explorer = explorers[key]
        control = {c.name: c for c in explorer.controls}
        for student in [None, *(f"student-{i}" for i in range(20))]:
            for c, v in controls_of(q.instance(student)):
                if isinstance(v, _Label):
                    assert v in control[c].labels, (name, student, c, v, control[c].labels)
                    v = control[c].values[control[c].labels.index(v)]
                control[c].index(v)  # one of the control's values, else a ValueError naming them
                explorer.state(**{c: v})
    from toy.page.explorers import easy_hard
    for student in [None, *(f"student-{i}" for i in range(20))]:
        assert Q.QUESTIONS["ex-4-2-optimum"].instance(student)["beta"] in easy_hard.DRIFT_BETAS
    assert "beta" not in {c.name for c in explorers["drift"].controls}  # the β dot taught nothing (issue 39)
    prefix = next(c for c in explorers["resets"].controls if c.name == "prefix")
    for student in [None, *(f"student-{i}" for i in range(20))]:
        s = Q.QUESTIONS["ex-4-2-resets"].instance(student)
        assert prefix.label_of(s["prefix"]) == s["state"], s
    for module, keys in ((section41, ["credit_assignment"]), (section42, ["resets", "goodhart"]),
                         (section43, ["bootstrapping"])):
        for key in keys:
            assert inspect.signature(ALL[key]).parameters["prompt"].default == module._X, key


# -- sections 4.2 to 4.5: answers with a closed form, against that form written here -------------------------------

def _settings(name):
    q = Q.QUESTIONS[name]
    return [q.instance(student) for student in [None, *NAMES]]


def _answer(name, setting):
    return Q.QUESTIONS[name].spec(setting)["answer"]


def test_closed_forms_of_42_to_45_by_hand():
    sigma = lambda z: 1 / (1 + np.exp(-z))  # noqa: E731
    for s in _settings("ex-4-4-closed-form"):  # off the path at step t with probability 1 − (1 − ε)^t
        want = sum(1 - (1 - s["eps"]) ** t for t in range(1, s["T"] + 1))
        assert _answer("ex-4-4-closed-form", s) == [pytest.approx(want, abs=1e-9)]
    for s in _settings("ex-4-3-clip-b"):  # (1 + ε) p reaches 1 at p = 1 / (1 + ε)
        assert _answer("ex-4-3-clip-b", s) == [pytest.approx(1 / (1 + s["eps_high"]), abs=1e-9)]
    for s in _settings("ex-4-5-rloo-a"):  # r_i minus the mean of the others
        r, i = np.array(s["rewards"]), s["i"] - 1
        assert _answer("ex-4-5-rloo-a", s) == [pytest.approx(r[i] - np.delete(r, i).mean(), abs=1e-9)]
    for s in _settings("ex-4-2-bt"):
        score = {"a": s["ra"], "b": s["rb"], "c": s["rc"]}
        pairs = [p.split(" ≻ ") for p in s["comparisons"].split(", ")]
        want = sum(np.log(sigma(score[w] - score[l])) for w, l in pairs)
        assert _answer("ex-4-2-bt", s) == [pytest.approx(want, abs=1e-9)]
    for s in _settings("ex-4-5-lambda-a"):  # V̂(s_4) = 0
        r, v = np.array(s["rewards"]), np.array([*s["values"], 0.0])
        want = [r[0] + v[1] - v[0], r.sum() - v[0], r[3] - v[3]]
        assert _answer("ex-4-5-lambda-a", s) == pytest.approx(want, abs=1e-9)
    pretrained = toy.reference_policy("pretrained", 1.0)
    for s in _settings("ex-4-2-drift"):  # the β → 0 limit is π_ref given r = 1: −log p nats away
        p = brute.value(pretrained, toy.get_reward(s["reward"].replace(" ", "_")), s["prompt"])
        assert _answer("ex-4-2-drift", s) == [pytest.approx(-np.log(p), abs=1e-9)]


def test_prior_a_has_one_answer_on_the_slider_the_drawn_curve_and_between():
    """ex-4-2-prior-a asks which prompt's noise-to-signal ratio is lowest at the colder temperature. For prompts 0
    and 3 (or 1 and 3) the slider's stops say "the same" while the drawn curve dips lower at τ = 0.237 for prompt 3:
    two answers. Every instance now has one: the same read off the slider's stops, the explorer's drawn curve (its
    own output) and the exact ratio between the stops."""
    from toy.page.explorers import easy_hard

    explorer = easy_hard.prior_explorer()
    fine = np.logspace(-1, 1, 201)

    def lowest(prompt):
        out = explorer.evaluate(explorer.state(prompt=prompt))
        stops = [out["nsr"][list(easy_hard.PRIOR_CURVE).index(t)] for t in easy_hard.TEMPERATURES]
        exact = [toy.exploration.gradient_moments(toy.reference_policy("pretrained", t), "sum_to_target", prompt,
                                                  "value").noise_to_signal for t in fine]
        return (easy_hard.TEMPERATURES[int(np.argmin(stops))], easy_hard.PRIOR_CURVE[int(np.argmin(out["nsr"]))],
                fine[int(np.argmin(exact))])

    at = {p: lowest(p) for p in toy.PROMPTS}
    q = Q.QUESTIONS["ex-4-2-prior-a"]
    pairs = set()
    for student in [None, *NAMES, *(f"student-{i}" for i in range(8, 60))]:
        s = q.instance(student)
        pairs.add((s["first"], s["second"]))
        readings = {0 if a < b else 1 if b < a else 2 for a, b in zip(at[s["first"]], at[s["second"]], strict=True)}
        assert len(readings) == 1, (s, at[s["first"]], at[s["second"]])
        assert q.spec(s)["answer"] == [readings.pop()]
        for other in ("ex-4-2-prior-b", "ex-4-2-prior-c"):  # the exercise's questions compare the same two prompts
            assert Q.QUESTIONS[other].instance(student) == s
    assert not pairs & {(0, 3), (3, 0), (1, 3), (3, 1)}
    assert len(pairs) >= 6


def _solution(exercise: str) -> str:
    for path in sorted((ROOT / "chapters").rglob("*.ipynb")):
        for cell in json.loads(path.read_text())["cells"]:
            text = "".join(cell["source"])
            if cell["cell_type"] == "markdown" and text.startswith(f"```{{solution}} {exercise}\n"):
                return text
    raise AssertionError(f"no worked solution for {exercise}")


def test_rubrics_split_their_bundled_points_and_match_their_exercise_and_solution():
    """Every criterion worth 2 or 3 points says how its points split ("(split: 1 for …; 1 for …)", adding up to its
    points). ex-4-3-discount's last point takes any check in the explorer, as the exercise asks ("Check it in the
    explorer"), not one particular reading. ex-4-2-optimum's strict concavity is asked for only where the worked
    solution's Lagrange route needs it, and the solution says so."""
    for exercise, criteria in Q.RUBRICS.items():
        for c in criteria:
            if c.points >= 2:
                split = re.search(r"\(split: ([^()]*(?:\([^()]*\)[^()]*)*)\)$", c.text)
                assert split, (exercise, c.text)
                parts = re.findall(r"(?:^|; )(\d+) for ", split.group(1))
                assert len(parts) >= 2 and sum(map(int, parts)) == c.points, (exercise, c.text)
    last = Q.RUBRICS["ex-4-3-discount"][-1].text
    assert "any reading" in last and "β = 0.03" in last, last
    (concavity,) = [c.text for c in Q.RUBRICS["ex-4-2-optimum"] if "concav" in c.text]
    assert "Lagrange" in concavity and "earns the first point" in concavity
    solution = _solution("ex-4-2-optimum")
    assert "Lagrange" in solution and "strictly concave" in solution and "unique maximum" in solution


@pytest.mark.parametrize("given", [[0.1], [0.1, -0.01], [0.1, float("nan")], [0.1, 0.2, 0.3]])
def test_a_declared_tolerance_that_gives_bad_numbers_is_refused_in_words(given):
    """A question whose tolerance is one per number must give two positive finite numbers for a two-number answer."""
    import dataclasses

    q = dataclasses.replace(next(iter(Q.QUESTIONS.values())), tolerance=lambda setting: given)
    with pytest.raises(ValueError, match=r"the tolerance must give 2 positive numbers, got"):
        q.tolerance_at({}, 2)
    assert dataclasses.replace(q, tolerance=lambda setting: [0.1, 0.2]).tolerance_at({}, 2) == [0.1, 0.2]
