"""What an exercise may use of toy: its allow-list (issue 29, item 2), in the student's notebook and in the grader's
sandbox.

- **The sandbox's toy holds no answer.** For every exercise, its facade (``course/restricted.py``) is imported in a
  fresh ``python -I`` with the zip on ``sys.path``, as the worker imports it, and the hidden cases of a few seeds are
  decoded there. A probe calls every callable the facade holds (functions and classes of every module, public or
  private, their methods, the decoded policies' methods) with argument combinations drawn from a case's inputs and
  what they give (prompts, prefixes, lengths, small integers), indexes what comes back by what the inputs give
  (``[y]``, ``[len(y)][y]``, ``[prompt]``...), and fails if anything reproduces the reference answer on every hidden
  case. The probe itself is tested: it finds the leak in a facade that allows one capability too many, and (slow) in
  today's deny-list toy (``toy.exact.reach_probs(policy, prompt)[len(y)][y]``).
- **The allow-list takes no mark from an honest answer.** Each book solution passes the notebook check and, run in
  the facade on the sandbox's inputs, returns the reference answers.
- **The notebook check enforces the same list**: "forbidden" for the known leaks (``reach_probs``, the advantages
  from ``toy.exact``'s helpers, GAE with λ = 0 on exact values, a policy's internals, ``toy.value`` in 4.1-value),
  "pass" for honest answers in every argument form (lists, tuples and NumPy arrays of NumPy integers).
- **Readers are told**: each exercise's text names every capability it may use, the instructors' page lists the
  allow-list as the registry has it, and the sandbox's ForbiddenReference carries the notebook's words.
"""

from __future__ import annotations

import concurrent.futures
import inspect
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import nbformat
import numpy as np
import pytest

import toy
from course import protocol, restricted
from tests.conftest import busy_loops
from toy.exercises import EXERCISES, _compare, check, hidden_cases
from toy.exercises.forbidden import ALLOWED, CAPABILITIES

ROOT = Path(__file__).resolve().parents[1]
CHAPTER = ROOT / "chapters" / "04-the-llm-as-a-policy"
SEEDS = (0, 5)
CHECK = re.compile(r"toy\.exercises\.check\(\s*[\"']([^\"']+)[\"']\s*,\s*(\w+)")
DEF = re.compile(r"^def (\w+)\(", re.M)


def book() -> dict[str, dict]:
    """{exercise: {"function", "solution", "stub", "text"}} from the chapter's notebooks: the book's solution cell, the
    stub handed out, and the markdown cell of the ``{exercise}`` directive before the stub."""
    found = {}
    for path in sorted(CHAPTER.glob("*.ipynb")):
        nb = nbformat.read(path, as_version=4)
        solutions, stubs, texts, text = {}, {}, {}, None
        for cell in nb.cells:
            if cell.cell_type == "markdown" and "{exercise}" in cell.source:
                text = cell.source
            if cell.cell_type != "code":
                continue
            tags = cell.metadata.get("tags", [])
            for fn in DEF.findall(cell.source):
                if "exercise" in tags:
                    stubs[fn], texts[fn] = cell.source, text
                elif "solution" in tags:
                    solutions[fn] = cell.source
            for exercise, fn in CHECK.findall(cell.source):
                found[exercise] = {"function": fn, "solution": solutions.get(fn), "stub": stubs.get(fn),
                                   "text": texts.get(fn), "notebook": path.name}
    return found


BOOK = book()


def define(source: str, fn: str):
    namespace = {"np": np, "toy": toy}
    exec(compile(source, f"<{fn}>", "exec"), namespace)
    return namespace[fn]


# -- what runs in the sandbox (the facade's zip on sys.path, numpy, nothing else) ------------------------------------
# These functions are sent as source to a fresh ``python -I``; they import what they use.
def _sb_main():
    import json
    import sys

    sys.path.insert(0, sys.argv[1])
    # as in the sandbox, where the repository is not mounted: the editable install cannot find the real toy there
    sys.meta_path[:] = [f for f in sys.meta_path if "editable" not in repr(f).lower()]
    import resource

    import numpy as np
    import protocol

    import toy

    # a probe's call that asks for an enormous table fails at once instead of filling the machine's memory
    resource.setrlimit(resource.RLIMIT_AS, (512 << 20, resource.getrlimit(resource.RLIMIT_AS)[1]))
    job = json.loads(sys.stdin.read())
    result = {"toy": toy.__file__, "modules": sorted(m for m in sys.modules if m == "toy" or m.startswith("toy."))}

    def case(i):
        return protocol.decode(job["inputs"][i])

    if job.get("solution"):
        namespace = {"np": np, "toy": toy}
        exec(compile(job["solution"], "<solution>", "exec"), namespace)
        fn, replies = namespace[job["function"]], []
        for i in range(len(job["inputs"])):
            try:
                replies.append({"returned": protocol.describe(fn(*case(i)))})
            except BaseException as err:  # noqa: BLE001 - reported to the test
                replies.append({"raised": f"{type(err).__name__}: {err}"})
        result["solution"] = replies
    if job.get("probe"):
        answers = [np.asarray(a, dtype=float) for a in job["answers"]]
        result["probe"] = _sb_probe(case, len(job["inputs"]), answers, job["tolerance"], job.get("modules"))
    print(json.dumps(result))


def _sb_pool(args):
    """The arguments a probe draws from: the case's inputs, then what they give (by type, so that a position means
    the same thing in every case of an exercise)."""
    pool = list(args)
    for a in args:
        if isinstance(a, tuple) and all(isinstance(t, int) for t in a):
            pool += [len(a), list(a)]
        if hasattr(a, "length") and hasattr(a, "n_actions") and not callable(a):
            pool += [a.length, a.n_actions]
    return pool + [0, 1]


def _sb_keys(args):
    """The indices a probe tries on what a call returns: by each token tuple, its length, each integer input."""
    tuples = [a for a in args if isinstance(a, tuple) and all(isinstance(t, int) for t in a)]
    ints = [a for a in args if isinstance(a, int) and not isinstance(a, bool)]
    keys = []
    for s in tuples:
        keys += [(s,), (len(s),), (len(s), s), (len(s) - 1,)]
    for p in ints:
        keys += [(p,)] + [(p, s) for s in tuples] + [(p, len(s), s) for s in tuples]
    return keys


def _sb_index(value, key):
    for part in key:
        value = value[part]
    return value


def _sb_views(out, keys):
    """(path, value) for what a call returned: itself, its items and fields, each indexed by each key."""
    bases = [((), out)]
    if isinstance(out, (tuple, list)) and len(out) <= 32:
        bases += [(("item", j), v) for j, v in enumerate(out)]
    fields = getattr(out, "_fields", None) or (list(vars(out)) if hasattr(out, "__dict__") and not isinstance(
        out, type) and not callable(out) else [])
    for name in fields[:32]:
        try:
            bases.append((("attr", name), getattr(out, name)))
        except Exception:  # noqa: BLE001 - a field that cannot be read is not a view
            continue
    for path, value in bases:
        yield path, value
        for k, key in enumerate(keys):
            try:
                yield path + ("key", k), _sb_index(value, key)
            except Exception:  # noqa: BLE001 - not indexable by this key
                continue


def _sb_view(out, path, keys):
    value, i = out, 0
    while i < len(path):
        kind, arg = path[i], path[i + 1]
        value = value[arg] if kind == "item" else getattr(value, arg) if kind == "attr" else _sb_index(value, keys[arg])
        i += 2
    return value


def _sb_close(value, want, tol) -> bool:
    import numpy as np

    if isinstance(value, (bool, np.bool_, str, bytes)) or callable(value):
        return False
    try:
        got = np.asarray(value, dtype=float)
    except Exception:  # noqa: BLE001 - not numbers
        return False
    return got.shape == want.shape and bool(np.all(np.isfinite(got))) and bool(
        np.allclose(got, want, atol=tol, rtol=tol))


def _sb_caller(stub_error, seconds=0.3):
    """The probe's ``call(fn, args)``: (True, what it returned), (None, None) if ``fn`` raised ``stub_error`` (a
    stub), ("late", None) if it used more than ``seconds`` of the process's CPU time, (False, None) if anything else
    raised.

    CPU time (ITIMER_PROF), not wall time: whether a call is late depends on its work, not on what else the machine
    runs. The alarm can never escape a call: its handler raises only while the call is armed, and the call is
    disarmed inside the ``try`` whose ``except`` catches it, so an alarm that comes as the call returns is "late",
    and one that comes after it is ignored (issue 43: a late alarm killed the whole probe on a busy machine)."""
    import signal

    armed = [False]

    def out_of_time(signum, frame):
        if armed[0]:
            raise TimeoutError

    signal.signal(signal.SIGPROF, out_of_time)

    def call(fn, args):
        try:
            try:
                armed[0] = True
                signal.setitimer(signal.ITIMER_PROF, seconds)
                return True, fn(*args)
            finally:
                armed[0] = False
                signal.setitimer(signal.ITIMER_PROF, 0)
        except stub_error:
            return None, None
        except TimeoutError:
            return "late", None
        except BaseException:  # noqa: BLE001 - a probe's call may fail any way at all
            return False, None

    return call


def _sb_probe(case, n, answers, tol, modules=None):
    """Call every callable the sandbox holds (``toy`` and the private modules beside it) on arguments drawn from one
    case; whatever reproduces its answer is tried again, the same way, on every other case. Returns the leaks (those
    that reproduce every case) and counts."""
    import importlib
    import inspect
    import itertools
    import sys
    import types
    import zipfile

    import numpy as np

    try:
        from toybook_forbidden import POLICY_ATTRIBUTES, ForbiddenReference
    except ImportError:
        from toybook_forbidden import ForbiddenReference
        POLICY_ATTRIBUTES = {}
    for name in zipfile.ZipFile(sys.argv[1]).namelist():  # every module the sandbox holds, imported or not
        if name.endswith(".py") and name.startswith(("toy/", "toybook_")):
            module = name[:-3].replace("/", ".").removesuffix(".__init__")
            if modules is None or any(module == m or module.startswith(m + ".") for m in modules):
                importlib.import_module(module)

    call = _sb_caller(ForbiddenReference)

    def ours(name):
        if modules is not None:
            return any(name == m or name.startswith(m + ".") for m in modules)
        return name == "toy" or name.startswith(("toy.", "toybook_"))

    getters, seen = {}, set()
    for module_name in sorted(m for m in list(sys.modules) if ours(m)):
        for name, v in list(vars(sys.modules[module_name]).items()):
            if name.startswith("__") or isinstance(v, types.ModuleType) or not callable(v) or id(v) in seen:
                continue
            if not ours(getattr(v, "__module__", None) or ""):
                continue
            seen.add(id(v))
            getters[f"{module_name}.{name}"] = lambda args, v=v: v
            if isinstance(v, type):
                for attr, member in vars(v).items():
                    member = getattr(member, "__func__", member)
                    member = getattr(member, "fget", member)
                    if (attr.startswith("__") and attr.endswith("__")) or not callable(member) or id(member) in seen:
                        continue
                    seen.add(id(member))
                    getters[f"{module_name}.{name}.{attr}"] = lambda args, m=member: m

    def ordinary(answer):  # the share of its numbers that are round (multiples of 0.05): easy to hit by chance
        flat = answer.ravel()
        return float(np.mean(np.abs(flat * 20 - np.round(flat * 20)) < 1e-6)) if flat.size else 1.0

    # screen on the case whose answer is the least ordinary: fewest round numbers, then most distinct ones
    first = min(range(n), key=lambda i: (ordinary(answers[i]), -len(set(answers[i].ravel().tolist()))))
    args0 = case(first)
    for i, a in enumerate(args0):
        if callable(a) and not isinstance(a, type):
            getters[f"input {i}"] = lambda args, i=i: args[i]
        if isinstance(a, (int, float, str, tuple, list, np.ndarray, types.FunctionType, type(None))):
            continue
        names = {n for n in dir(a) if not n.startswith("__")} | set(POLICY_ATTRIBUTES.get(type(a).__name__, {}))
        for name in sorted(names):
            try:
                v = getattr(a, name)
            except Exception:  # noqa: BLE001 - an attribute that cannot be read
                continue
            if callable(v):
                getters[f"input {i}.{name}"] = lambda args, i=i, name=name: getattr(args[i], name)

    def arities(fn):
        try:
            params = list(inspect.signature(fn).parameters.values())
        except (TypeError, ValueError):
            return range(0, 4)
        positional = [p for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
        required = sum(p.default is p.empty for p in positional)
        most = 4 if any(p.kind == p.VAR_POSITIONAL for p in params) else len(positional)
        return range(required, min(most, 5) + 1)

    matches, stubs, calls, slow = [], 0, 0, []
    for label, get in getters.items():
        args = case(first)
        pool, keys = _sb_pool(args), _sb_keys(args)
        fn = get(args)
        if call(fn, tuple(args))[0] is None and call(fn, ())[0] is None:
            stubs += 1  # raises ForbiddenReference whatever it is given: a stub
            continue
        budget, late = 1000, False
        for r in arities(fn):
            for combo in itertools.permutations(range(len(pool)), r):
                if budget <= 0 or late:  # out of time once: the rest would be too (a size it enumerates)
                    break
                budget -= 1
                calls += 1
                ok, out = call(fn, tuple(pool[j] for j in combo))
                late = ok == "late"
                if ok is True and out is not None:
                    for path, value in _sb_views(out, keys):
                        if _sb_close(value, answers[first], tol):
                            matches.append((label, combo, path))
                            break
            args = case(first)  # fresh inputs: a call may have changed them
            pool = _sb_pool(args)
        if late:
            slow.append(label)
    leaks = []
    for label, combo, path in matches:
        for k in (k for k in range(n) if k != first):
            args = case(k)
            pool, keys = _sb_pool(args), _sb_keys(args)
            ok, out = call(getters[label](args), tuple(pool[j] for j in combo))
            try:
                if not (ok is True and _sb_close(_sb_view(out, path, keys), answers[k], tol)):
                    break
            except Exception:  # noqa: BLE001 - this view does not exist on this case
                break
        else:
            leaks.append(f"{label} on pool positions {list(combo)}, view {list(path)}")
    return {"leaks": leaks, "callables": len(getters), "stubs": stubs, "calls": calls, "matched_first": len(matches),
            "slow": slow}


SANDBOX_SCRIPT = "\n\n".join(inspect.getsource(f) for f in (
    _sb_main, _sb_pool, _sb_keys, _sb_index, _sb_views, _sb_view, _sb_close, _sb_caller, _sb_probe,
)) + "\n\n_sb_main()\n"


def run_in_sandbox(files: dict[str, str], job: dict, tmp: Path, name: str) -> dict:
    """Run the sandbox script on ``job`` with the zip of ``files`` on sys.path (no bubblewrap: the facade is what is
    tested, not the isolation)."""
    path = tmp / f"{name}.zip"
    path.write_bytes(restricted.zip_files(files))
    done = subprocess.run([sys.executable, "-I", "-c", SANDBOX_SCRIPT, str(path)], input=json.dumps(job),
                          capture_output=True, text=True, timeout=600, cwd=tmp)
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


def cases_of(exercise: str, seeds=SEEDS) -> list:
    return [case for seed in seeds for case in hidden_cases(exercise, seed)]


def job_for(exercise: str, cases, inputs, probe=True, solution=True, modules=None) -> dict:
    ex = EXERCISES[exercise]
    answers = [np.asarray(ex.reference(*c.args), dtype=float).tolist() for c in cases]
    return {"inputs": inputs, "answers": answers, "tolerance": ex.tolerance, "probe": probe, "modules": modules,
            "solution": BOOK[exercise]["solution"] if solution else None, "function": BOOK[exercise]["function"]}


@pytest.fixture(scope="module")
def facade_runs(tmp_path_factory) -> dict[str, dict]:
    """Every exercise's facade, probed and running the book's solution on the hidden cases of SEEDS (in parallel)."""
    tmp = tmp_path_factory.mktemp("facades")

    def one(exercise):
        cases = cases_of(exercise)
        job = job_for(exercise, cases, [protocol.encode_case(exercise, c.args) for c in cases])
        return run_in_sandbox(restricted.sandbox_files(exercise), job, tmp, exercise)

    with concurrent.futures.ThreadPoolExecutor(max_workers=max(2, os.cpu_count() or 2)) as pool:
        return dict(zip(EXERCISES, pool.map(one, EXERCISES), strict=True))


# -- the sandbox's toy ---------------------------------------------------------------------------------------------
@pytest.mark.parametrize("exercise", list(EXERCISES))
def test_no_callable_of_the_sandboxes_toy_reproduces_an_answer(facade_runs, exercise):
    run = facade_runs[exercise]
    assert ".zip/toy/__init__.py" in run["toy"], run["toy"]  # the facade, not the installed toy
    assert "toy.exercises" not in run["modules"]
    probe = run["probe"]
    assert not probe["leaks"], f"{exercise}: the sandbox's toy answers it: {probe['leaks']}"
    assert probe["callables"] > 400 and probe["stubs"] > 300 and probe["calls"] > 1000, probe  # it did look


@pytest.mark.parametrize("exercise", list(EXERCISES))
def test_the_book_solution_gets_the_reference_answers_in_the_sandbox(facade_runs, exercise):
    ex, cases = EXERCISES[exercise], cases_of(exercise)
    replies = facade_runs[exercise]["solution"]
    assert len(replies) == len(cases)
    for case, reply in zip(cases, replies, strict=True):
        assert "returned" in reply, (exercise, case.description, reply)
        got = protocol.read_answer(json.loads(json.dumps(reply["returned"])))
        assert _compare(ex, got, ex.reference(*case.args)) is None, (exercise, case.description)


@pytest.mark.parametrize("exercise", list(EXERCISES))
def test_the_book_solution_passes_the_notebook_check(exercise):
    fn = define(BOOK[exercise]["solution"], BOOK[exercise]["function"])
    for seed in SEEDS:
        result = check(exercise, fn, seed=seed)
        assert result.passed, result


def test_the_probe_finds_a_facade_that_allows_too_much(tmp_path):
    """The probe is not blind: a facade whose policies answer π(y | x) outright (4.1-response-probability with
    response_probs), or whose toy.value is V itself (4.1-value), is caught, and so is the stub's name in the message
    of a call to a part that is not there."""
    found = {}
    for exercise, extra, leak in [("4.1-response-probability", "policy.response_probs", "input 0.response_probs"),
                                  ("4.1-value", "toy.value", "toy.value")]:
        capabilities = (*ALLOWED[exercise].capabilities, extra)
        cases = cases_of(exercise, seeds=(0,))
        inputs = [protocol.encode_inputs(c.args, capabilities) for c in cases]
        run = run_in_sandbox(restricted.sandbox_files(exercise, capabilities), job_for(exercise, cases, inputs,
                             solution=False), tmp_path, exercise)
        found[exercise] = run["probe"]["leaks"]
        labels = {line.split(" on ")[0] for line in found[exercise]}
        assert leak in labels, (exercise, found[exercise])


def test_a_stub_says_what_the_notebook_says(tmp_path):
    """In the sandbox, every other name of toy, however reached, raises ForbiddenReference with the name the notebook's
    check reports: the grader's message is the notebook's."""
    script = r"""
import sys
sys.path.insert(0, sys.argv[1])
sys.meta_path[:] = [f for f in sys.meta_path if "editable" not in repr(f).lower()]
import json, types
import toy, protocol
from toybook_forbidden import ForbiddenReference
said = {}
def attempt(label, fn):
    try:
        fn()
        said[label] = "ran"
    except ForbiddenReference as err:
        said[label] = err.args[0]
    except Exception as err:
        said[label] = type(err).__name__
from toy.exact import value as v
import toy.page
policy = protocol.decode(json.loads(sys.stdin.read()))
attempt("toy.value", lambda: toy.value(policy, toy.REWARDS["sum_to_target"], 0, ()))
attempt("alias", lambda: v(policy, toy.REWARDS["sum_to_target"], 0, ()))
attempt("reach_probs", lambda: toy.exact.reach_probs(policy, 0))
attempt("HabitPolicy", lambda: toy.HabitPolicy({}))
attempt("Policy.prob", lambda: toy.Policy.prob(policy, 0, (1, 2)))
attempt("policy.prob", lambda: policy.prob(0, (1, 2)))
attempt("policy._prefix_probs", lambda: policy._prefix_probs(0, 1))
attempt("policy.table", lambda: policy.table)
attempt("page", lambda: toy.page.figures.credit_bars(2))
attempt("recompiled", lambda: types.FunctionType(toy.exact.values.__code__, {}, "mine")(policy, None, 0))
attempt("next_token_probs", lambda: policy.next_token_probs(0, [1]))
attempt("reward", lambda: toy.rewards.sum_to_target(0, (1, 4)))
said["isinstance"] = [isinstance(policy, toy.Policy), isinstance(policy, toy.HabitPolicy),
                      isinstance(policy, toy.TabularPolicy), issubclass(type(policy), toy.policy.Policy)]
toy.exercises = types.ModuleType("toy.exercises")
sys.modules["toy.exercises"] = toy.exercises
import toy.exercises
said["constants"] = [toy.EOS, toy.estimators.GRPO_EPS, toy.PROMPTS, sorted(toy.PRESETS)]
print(json.dumps(said))
"""
    path = tmp_path / "facade.zip"
    path.write_bytes(restricted.restricted_toy("4.1-value"))
    policy = hidden_cases("4.1-value", 0)[0].args[0]
    sent = protocol.encode_case("4.1-value", (policy,))["tuple"][0]
    done = subprocess.run([sys.executable, "-I", "-c", script, str(path)], input=json.dumps(sent),
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    said = json.loads(done.stdout)
    assert said["toy.value"] == said["alias"] == "toy.value" and said["recompiled"] == "toy.values", said
    assert said["reach_probs"] == "toy.exact.reach_probs" and said["HabitPolicy"] == "toy.policy.HabitPolicy"
    assert said["Policy.prob"] == said["policy.prob"] == "toy.policy.Policy.prob"
    assert said["policy._prefix_probs"] == "toy.policy.HabitPolicy._prefix_probs"
    assert said["policy.table"] == "AttributeError" and said["page"] == "toy.page.figures.credit_bars"
    assert said["next_token_probs"] == said["reward"] == "ran"
    assert said["isinstance"] == [True, True, False, True]
    assert said["constants"] == [toy.EOS, toy.estimators.GRPO_EPS, list(toy.PROMPTS), sorted(toy.PRESETS)]
    # the notebook names them the same way
    r = check("4.1-value", lambda policy, reward, prompt, prefix: toy.exact.reach_probs(policy, prompt) and 0.0)
    assert r.status == "forbidden" and "without toy.exact.reach_probs" in r.message
    r = check("4.1-value", lambda policy, reward, prompt, prefix: policy._prefix_probs(prompt, 0) and 0.0)
    assert r.status == "forbidden" and "without toy.policy.HabitPolicy._prefix_probs" in r.message


def test_the_sandboxes_toy_has_toys_modules_names_and_constants(tmp_path):
    """The facade mirrors toy module by module (but toy.exercises, which the worker adds): the same names, each
    constant equal to toy's, everything else callable (a stub, or what the exercise may use)."""
    script = r"""
import sys
sys.path.insert(0, sys.argv[1])
sys.meta_path[:] = [f for f in sys.meta_path if "editable" not in repr(f).lower()]
import importlib, json, types, zipfile
import toy
out = {}
for name in zipfile.ZipFile(sys.argv[1]).namelist():
    if name.startswith("toy/") and name.endswith(".py"):
        module = importlib.import_module(name[:-3].replace("/", ".").removesuffix(".__init__"))
        out[module.__name__] = {k: repr(v) if not callable(v) and not isinstance(v, types.ModuleType) else "callable"
                                for k, v in vars(module).items() if not (k.startswith("__") and k != "__all__")}
print(json.dumps(out))
"""
    path = tmp_path / "facade.zip"
    path.write_bytes(restricted.restricted_toy("4.2-first-success"))
    done = subprocess.run([sys.executable, "-I", "-c", script, str(path)], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    facade = json.loads(done.stdout)
    import importlib
    import types

    real = {m: importlib.import_module(m) for m in restricted._module_names()}
    assert set(facade) == set(real)
    for name, module in real.items():
        names = {k for k in vars(module) if not (k.startswith("__") and k != "__all__")} - {"exercises"}
        assert set(facade[name]) == names, (name, names ^ set(facade[name]))
        for k in names:
            v = vars(module)[k]
            if facade[name][k] != "callable":  # a constant: toy's, or (a cache) as toy's source writes it
                shown = re.sub(r" at 0x[0-9a-f]+", "", facade[name][k])
                assert shown == re.sub(r" at 0x[0-9a-f]+", "", repr(v)) or shown == "{}" and k.startswith("_"), (
                    name, k)
            elif not (callable(v) or isinstance(v, types.ModuleType)):  # a stub: only for what is not plain data
                with pytest.raises(restricted._NotPlain):
                    restricted._literal(v, {})


# -- the notebook's check ------------------------------------------------------------------------------------------
def reach_probs_answer(policy, prompt, response):
    return toy.exact.reach_probs(policy, prompt)[len(response)][tuple(response)]


def helpers_answer(policy, reward, prompt, response):
    table = toy.exact._advantages_from_values(toy.exact.values(policy, reward, prompt))
    return table[tuple(response)]


def gae_answer(policy, reward, prompt, response):
    tables = toy.gae.exact_value_tables(policy, reward, prompt)
    rewards = toy.reward_table(reward, prompt, policy.length, policy.n_actions)
    return toy.gae.gae_table(tables, rewards, 0.0)[tuple(response)]


@pytest.mark.parametrize("exercise, fn, called", [
    ("4.1-response-probability", reach_probs_answer, "toy.exact.reach_probs"),
    ("4.1-token-advantages", helpers_answer, "toy.exact.values"),
    ("4.1-token-advantages", gae_answer, "toy.gae.exact_value_tables"),
    ("4.1-value", lambda policy, reward, prompt, prefix: toy.value(policy, reward, prompt, prefix), "toy.value"),
    ("4.1-response-probability", lambda policy, prompt, y: policy.prob(prompt, y), "toy.Policy.prob"),
    ("4.1-response-probability", lambda policy, prompt, y: policy.response_probs(prompt)[tuple(y)],
     "toy.Policy.response_probs"),
    ("4.1-response-probability", lambda policy, prompt, y: float(np.prod(
        [policy.prefix_probs(prompt, t)[tuple(y[:t + 1])] for t in range(len(y))])), "toy.policy.Policy.prefix_probs"),
    ("4.1-response-probability", lambda policy, prompt, y: float(np.prod(
        [policy._prefix_probs(prompt, t)[tuple(y[:t + 1])] for t in range(len(y))])),
     "toy.policy.HabitPolicy._prefix_probs"),
    ("4.3-weight-variance", lambda current, old, prompt: toy.offpolicy.weight_variance(current, old, prompt).sequence,
     "toy.offpolicy.weight_variance"),
    ("4.5-gae", lambda rewards, values, lam: toy.gae.gae(rewards, values, lam), "toy.gae.gae"),
    ("4.4-bc-cost", lambda eps, horizon: toy.imitation.behaviour_cloning_cost(eps, horizon),
     "toy.imitation.behaviour_cloning_cost"),
])
def test_the_notebook_check_says_forbidden_for_a_leak(exercise, fn, called):
    result = check(exercise, fn, n_cases=3)
    assert result.status == "forbidden", result
    assert f"without {called} (case 1 called it)" in result.message, result.message
    assert EXERCISES[exercise].allowed.rule in result.message


def test_a_forbidden_call_is_forbidden_whatever_follows():
    """In the sandbox the forbidden call raises at once; in the notebook it is reported even if the function then
    raised, caught the call's result, or said it is not implemented."""
    def then_raises(policy, reward, prompt, prefix):
        toy.value(policy, reward, prompt, prefix)
        raise NotImplementedError

    def catches(policy, reward, prompt, prefix):
        try:
            toy.values(policy, reward, prompt)
        except Exception:  # noqa: BLE001
            pass
        return 0.0

    for fn, called in ((then_raises, "toy.value"), (catches, "toy.values")):
        result = check("4.1-value", fn, n_cases=2)
        assert result.status == "forbidden" and f"without {called}" in result.message, result


def test_a_call_that_a_cache_answers_is_seen_too():
    """toy code behind functools.lru_cache runs no code when the cache answers; the check sees it all the same (in the
    sandbox it is a stub like any other)."""
    toy.estimators._compositions(3, 2)  # in the cache before the check starts

    def cost(eps, horizon):
        toy.estimators._compositions(3, 2)
        return sum(1.0 - (1.0 - eps) ** t for t in range(1, horizon + 1))

    result = check("4.4-bc-cost", cost, n_cases=2)
    assert result.status == "forbidden" and "without toy.estimators._compositions" in result.message, result


def value_with_numpy_prefixes(policy, reward, prompt, prefix):
    prefix = np.asarray(prefix, dtype=np.int64)
    if len(prefix) == policy.length:
        return reward(prompt, np.array(prefix))
    probs = policy.next_token_probs(np.int64(prompt), prefix)
    return sum(probs[a] * value_with_numpy_prefixes(policy, reward, prompt, np.append(prefix, np.int64(a)))
               for a in range(policy.n_actions))


def value_with_list_prefixes(policy, reward, prompt, prefix):
    prefix = list(prefix)
    if len(prefix) == policy.length:
        return reward(prompt, list(prefix))
    probs = policy.next_token_probs(prompt, list(prefix))
    return float(np.dot(probs, [value_with_list_prefixes(policy, reward, prompt, prefix + [a])
                                for a in range(policy.n_actions)]))


def probability_with_numpy(policy, prompt, response):
    response = np.asarray(response)
    p = 1.0
    for t in range(len(response)):
        p *= policy.next_token_probs(prompt, response[:t])[response[t]]
    return p


def advantages_with_own_values(policy, reward, prompt, response):
    values = [value_with_list_prefixes(policy, reward, prompt, list(response[:t])) for t in range(len(response) + 1)]
    return np.diff(values)


def first_success_with_rewards(policy, reward, prompt, n):
    probs = policy.response_probs(prompt)
    p = sum(probs[y] for y in np.ndindex(probs.shape) if reward(prompt, np.array(y)[:list(y).index(toy.EOS)]
                                                                if toy.EOS in y else np.array(y)) > 0)
    return 1.0 - (1.0 - p) ** n


def discounted_with_numpy(reward, prompt, response, gamma):
    response = np.asarray(response)
    ends = np.flatnonzero(response == toy.EOS)
    digits = response[: ends[0]] if len(ends) else response
    return gamma ** (len(digits) + bool(len(ends)) - 1) * reward(np.int64(prompt), digits)


def critic_free_with_constants(method, rewards, greedy_reward):
    r = np.asarray(rewards, dtype=float)
    if method == "rloo":
        return r - (r.sum() - r) / (len(r) - 1)
    if method == "grpo":
        return (r - r.mean()) / (r.std(ddof=1) + toy.estimators.GRPO_EPS)
    return r - greedy_reward


def reads_policy_attributes(policy, reward, prompt, prefix):
    assert repr(policy) and str(policy) and policy.name and policy.temperature > 0 and policy.eos in (True, False)
    assert isinstance(policy, toy.Policy) and isinstance(policy, toy.HabitPolicy)
    assert f"{policy}" == repr(policy) and policy.n_actions == toy.VOCAB_SIZE + int(policy.eos)
    return value_with_list_prefixes(policy, reward, prompt, prefix)


@pytest.mark.parametrize("exercise, fn", [
    ("4.1-value", value_with_numpy_prefixes),
    ("4.1-value", value_with_list_prefixes),
    ("4.1-value", reads_policy_attributes),
    ("4.1-response-probability", probability_with_numpy),
    ("4.1-token-advantages", advantages_with_own_values),
    ("4.2-first-success", first_success_with_rewards),
    ("4.3-discounted-return", discounted_with_numpy),
    ("4.5-critic-free-advantages", critic_free_with_constants),
])
def test_an_honest_answer_in_any_argument_form_passes(exercise, fn):
    result = check(exercise, fn)
    assert result.passed, result


HONEST = [("4.1-value", "value_with_numpy_prefixes"), ("4.1-value", "value_with_list_prefixes"),
          ("4.1-value", "reads_policy_attributes"), ("4.1-response-probability", "probability_with_numpy"),
          ("4.1-token-advantages", "advantages_with_own_values"),
          ("4.2-first-success", "first_success_with_rewards"), ("4.3-discounted-return", "discounted_with_numpy"),
          ("4.5-critic-free-advantages", "critic_free_with_constants")]
SANDBOX_HEAD = r"""
import sys
sys.path.insert(0, sys.argv[1])
sys.meta_path[:] = [f for f in sys.meta_path if "editable" not in repr(f).lower()]
import json
import numpy as np
import toy, protocol
job = json.loads(sys.stdin.read())
"""


def in_sandbox(exercise: str, script: str, job: dict, tmp: Path) -> dict:
    path = tmp / f"{exercise}.zip"
    if not path.exists():
        path.write_bytes(restricted.restricted_toy(exercise))
    done = subprocess.run([sys.executable, "-I", "-c", SANDBOX_HEAD + script, str(path)], input=json.dumps(job),
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    return json.loads(done.stdout)


@pytest.mark.parametrize("exercise", sorted({e for e, _ in HONEST}))
def test_an_honest_answer_in_any_argument_form_passes_in_the_sandbox(tmp_path, exercise):
    """The sandbox's policies take the argument forms the real ones take: tuples, lists, NumPy arrays and integers."""
    script = r"""
namespace = {"np": np, "toy": toy}
exec(job["source"], namespace)
print(json.dumps({fn: [protocol.describe(namespace[fn](*protocol.decode(inputs))) for inputs in job["inputs"]]
                  for fn in job["functions"]}))
"""
    source = "\n\n".join(inspect.getsource(globals()[fn]) for _, fn in HONEST)
    ex, cases = EXERCISES[exercise], hidden_cases(exercise, 0)
    functions = [fn for e, fn in HONEST if e == exercise]
    inputs = [protocol.encode_case(exercise, c.args) for c in cases]
    answers = in_sandbox(exercise, script, {"source": source, "functions": functions, "inputs": inputs}, tmp_path)
    for function in functions:
        for case, answer in zip(cases, answers[function], strict=True):
            got = protocol.read_answer(answer)
            assert _compare(ex, got, ex.reference(*case.args)) is None, (function, case.description)


WRONG_CALLS = {"prompt": "policy.next_token_probs(7, ())",
               "long prefix": "policy.next_token_probs(0, (1,) * policy.length)",
               "token": "policy.next_token_probs(0, np.array([9]))", "list": "policy.next_token_probs(0, [[1]])",
               "value prefix": "toy.value(policy, reward, 0, [1] * (policy.length + 1))",
               "value reward": "toy.value(policy, 'nope', 0, ())", "value prompt": "toy.value(policy, reward, 9, ())",
               "value policy": "toy.value('policy', reward, 0, ())"}


def test_wrong_arguments_get_the_same_errors_in_the_sandbox(tmp_path):
    script = r"""
policy, reward = protocol.decode(job["inputs"])[:2]
said = {}
for label, call in job["calls"].items():
    try:
        eval(call)
        said[label] = "no error"
    except Exception as err:
        said[label] = f"{type(err).__name__}: {err}"
print(json.dumps(said))
"""
    case = hidden_cases("4.1-token-advantages", 0)[0]
    said = in_sandbox("4.1-token-advantages", script, {"calls": WRONG_CALLS, "inputs": protocol.encode_case(
        "4.1-token-advantages", case.args)}, tmp_path)
    policy, reward = case.args[:2]
    for label, call in WRONG_CALLS.items():
        with pytest.raises(ValueError) as err:
            eval(call, {"np": np, "toy": toy, "policy": policy, "reward": reward})
        assert said[label] == f"ValueError: {err.value}", (label, said[label])


def test_the_check_gives_the_student_a_policy_without_its_internals():
    """As in the sandbox, the policy a student's function is given has the attributes every exercise may read and
    not the real policy's tables: a function that reads them fails in the notebook as it would in the grader."""
    result = check("4.1-response-probability", lambda policy, prompt, y: float(policy.table.sum()), n_cases=1)
    assert result.status == "error" and "has no attribute 'table'" in result.message, result


# -- words for readers ---------------------------------------------------------------------------------------------
CAPABILITY_WORDS = {"policy.next_token_probs": "next_token_probs", "policy.response_probs": "response_probs",
                    "reward": "reward(prompt,", "toy.value": "toy.value", "toy.reward_table": "toy.reward_table"}


@pytest.mark.parametrize("exercise", list(EXERCISES))
def test_each_exercise_text_names_what_it_may_use(exercise):
    text = BOOK[exercise]["text"]
    assert text, f"{exercise}: no {{exercise}} text before its stub"
    missing = [c for c in ALLOWED[exercise].capabilities if CAPABILITY_WORDS[c] not in text]
    assert not missing, f"{exercise}: its text does not name {missing}"
    if not ALLOWED[exercise].capabilities:
        assert "no function of `toy`" in text, f"{exercise}: its text should say it uses no function of toy"


def test_every_exercise_declares_an_allow_list_and_uses_the_vocabulary():
    assert set(ALLOWED) == set(EXERCISES)
    assert {c for a in ALLOWED.values() for c in a.capabilities} <= set(CAPABILITIES)
    assert set(CAPABILITY_WORDS) == set(CAPABILITIES)


def allow_list_row(name: str) -> str:
    """The instructors' page's row for exercise ``name``, from the registry."""
    ex = EXERCISES[name]
    uses = ", ".join(f"`{c}`" for c in ex.allowed.capabilities) or "nothing"
    return f"| `{name}` | {uses} | {', '.join(f'`{r}`' for r in ex.forbidden.references)} |"


def test_the_instructors_page_lists_the_allow_list():
    """book/instructors.md's table is the registry's (write a row as ``allow_list_row`` does)."""
    page = (ROOT / "book" / "instructors.md").read_text().splitlines()
    for name in EXERCISES:
        row = next((line for line in page if line.startswith(f"| `{name}` |")), "")
        assert row == allow_list_row(name), f"book/instructors.md should read\n{allow_list_row(name)}"


def test_the_sandbox_holds_no_real_toy_source():
    """Nothing of toy's own source is in the zip but the pure modules behind the allowed functions that take no
    policy (vocab, checks, rewards, and policy's prompt and EOS helpers)."""
    files = restricted.sandbox_files("4.1-token-advantages")
    real = {p.relative_to(ROOT / "toy").as_posix(): p.read_text() for p in (ROOT / "toy").rglob("*.py")}
    for name, source in files.items():
        if name.startswith("toy/"):
            assert "def " not in source or "ForbiddenReference" in source, name
            assert source != real.get(name[4:]), name
    pure = {n for n in files if n.startswith("toybook_pure/")}
    assert pure == {"toybook_pure/__init__.py", "toybook_pure/vocab.py", "toybook_pure/checks.py",
                    "toybook_pure/rewards.py", "toybook_pure/policy.py"}
    assert "class HabitPolicy" not in files["toybook_pure/policy.py"]
    assert "reward_table" not in files["toy/exact.py"].split("from toy.rewards import")[0]


# -- today's deny-list toy leaks (the reason for the allow-list) ----------------------------------------------------
def denylist_files(exercise: str) -> dict[str, str]:
    """The sandbox as it was: all of toy, with the bodies of the exercise's forbid references stripped."""
    from toy.exercises.forbidden import code_keys

    by_file = {}
    for (filename, qualname), reference in code_keys(EXERCISES[exercise].forbidden.references).items():
        by_file.setdefault(str(Path(filename).resolve()), {})[qualname] = reference
    files = {"toybook_forbidden.py": restricted.runtime_source(),
             "protocol.py": (ROOT / "course" / "protocol.py").read_text()}
    for path in sorted((ROOT / "toy").rglob("*.py")):
        if "__pycache__" in path.parts:
            continue
        source, targets = path.read_text(), by_file.get(str(path.resolve()))
        files["toy/" + path.relative_to(ROOT / "toy").as_posix()] = (
            restricted.strip_source(source, targets) if targets else source)
    return files


@pytest.mark.slow
def test_the_probe_finds_the_leaks_of_the_old_deny_list(tmp_path):
    """Today's sandbox (toy with the forbidden bodies stripped) answers 4.1-response-probability through
    toy.exact.reach_probs(policy, prompt)[len(y)][y]: the probe finds it."""
    exercise = "4.1-response-probability"
    cases = cases_of(exercise, seeds=(0,))
    job = job_for(exercise, cases, [protocol.encode(c.args) for c in cases], solution=False,
                  modules=["toy.exact", "toy.policy"])
    run = run_in_sandbox(denylist_files(exercise), job, tmp_path, "denylist")
    assert any(line.startswith("toy.exact.reach_probs ") for line in run["probe"]["leaks"]), run["probe"]


def test_a_bad_allow_declaration_says_what_is_wrong():
    from toy.exercises import registry

    with pytest.raises(ValueError, match="no exercise 'nope'"):
        registry.allow("nope", "anything", "reward")
    with pytest.raises(ValueError, match="policy.everything"):
        registry.allow("4.1-value", "too much", "policy.everything")
    with pytest.raises(ValueError, match="in words"):
        registry.allow("4.1-value", " ", "reward")
    assert registry.allowed_for("4.1-value").capabilities == ("policy.next_token_probs", "reward")


# -- the probe's clock (issue 43) ----------------------------------------------------------------------------------
def test_a_late_alarm_never_escapes_the_probes_call():
    """The probe's alarm can come at any moment of a call's end: as the function returns, inside the disarming, or
    after the call has returned. Each moment is forced here (the alarm's signal raised at the k-th profiler event
    from the function's return on): the call says "late" or what it returned, and no TimeoutError escapes. Before
    issue 43 an alarm in the disarming escaped and killed the whole probe (24 errors on a busy machine)."""
    import signal

    old = signal.getsignal(signal.SIGPROF)
    call = _sb_caller(LookupError)

    def answer():
        return 42

    outcomes = []
    try:
        for k in range(1, 10):
            seen = [0]

            def hook(frame, event, arg, seen=seen, k=k):
                if seen[0] or (event == "return" and frame.f_code is answer.__code__):
                    seen[0] += 1
                    if seen[0] == k:
                        signal.raise_signal(signal.SIGPROF)

            sys.setprofile(hook)
            try:
                outcomes.append(call(answer, ())[0])
            finally:
                sys.setprofile(None)
        assert call(answer, ()) == (True, 42)  # and the next call is not hit by a stale alarm
    finally:
        signal.signal(signal.SIGPROF, old)
    assert outcomes[0] == "late" and set(outcomes) <= {True, "late"}, outcomes


def test_a_call_is_late_by_its_own_work_not_the_machines_load():
    """"Late" is 0.3 s of the process's own CPU time: a call that sleeps (no work) is not late, one that computes
    past its budget is, and a quick one is on time however busy the machine is."""
    import signal
    import time

    old = signal.getsignal(signal.SIGPROF)
    call = _sb_caller(LookupError, seconds=0.05)

    def spin():
        end = time.process_time() + 0.5
        while time.process_time() < end:
            pass
        return 1

    try:
        assert call(time.sleep, (0.2,))[0] is True
        assert call(spin, ())[0] == "late"
        assert call(sum, (range(1000),)) == (True, 499500)
    finally:
        signal.signal(signal.SIGPROF, old)


@pytest.mark.slow
def test_the_probe_gives_the_same_verdict_beside_two_busy_loops(tmp_path):
    """The probe of one facade run alone and beside two busy loops (the machine's 2 cores taken): it finishes, finds
    no leak, looks as far, and finds the same callables late."""
    exercise = "4.1-response-probability"
    cases = cases_of(exercise, seeds=(0,))
    job = job_for(exercise, cases, [protocol.encode_case(exercise, c.args) for c in cases], solution=False)
    files = restricted.sandbox_files(exercise)
    alone = run_in_sandbox(files, job, tmp_path, "alone")["probe"]
    with busy_loops(2):
        loaded = run_in_sandbox(files, job, tmp_path, "loaded")["probe"]
    assert not alone["leaks"] and not loaded["leaks"], (alone["leaks"], loaded["leaks"])
    assert loaded["calls"] == alone["calls"] and loaded["slow"] == alone["slow"], (alone, loaded)
