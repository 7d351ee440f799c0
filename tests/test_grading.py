"""Grading a class a class cannot fool (``course``): a hostile class, runs that are stopped and resumed, two runs at
once, and the pieces (the plain-data protocol, the code an exercise needs, the toy without forbidden code, copy
detection), plus the nbgrader route checked with nbgrader's own commands.

The sandbox is bubblewrap's: these tests need ``bwrap`` (``scripts/test.sh`` installs Debian's ``bubblewrap``
when run as root, as CI is) and fail, never skip, without it.
"""

from __future__ import annotations

import csv
import hashlib
import json
import os
import re
import secrets
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import nbformat
import numpy as np
import pytest

import toy
from course import classroom, cli, editions, marks, protocol, sandbox, similarity, slicing
from tests import hostile_class as hc
from tests import test_nbgrader_lean as lean
from toy.exercises.questions import QUESTIONS, RUBRICS

ROOT = Path(__file__).resolve().parents[1]
NAME = hc.NOTEBOOK
BOOK = ROOT / "chapters" / "04-the-llm-as-a-policy" / NAME
EXERCISES = hc.EXERCISES
LIMITS = sandbox.Limits(memory_mb=1024, processes=64, disk_mb=64)


def own_uids(monkeypatch) -> tuple[int, int]:
    """A uid range for this test's sandboxes alone (tests run side by side), for it and its subprocesses."""
    low = sandbox.UID_RANGE[0] + secrets.randbelow(10_000) * 100_000
    monkeypatch.setenv("TOYBOOK_SANDBOX_UIDS", f"{low}-{low + 100_000}")
    return low, low + 100_000


def sandbox_processes(uids: tuple[int, int]) -> list[int]:
    """Processes running as one of ``uids`` (a test's sandboxes)."""
    found = []
    for pid in os.listdir("/proc"):
        if pid.isdigit():
            try:
                if uids[0] <= os.stat(f"/proc/{pid}").st_uid < uids[1]:
                    found.append(int(pid))
            except OSError:
                continue
    return found


def cgroups_of(pid: int) -> list[Path]:
    return [p for root in [*sandbox.CGROUP_ROOTS.values(), sandbox.CGROUP_V2] if root.is_dir()
            for p in root.glob(f"{sandbox.PREFIX}-{pid}-*")]


def digest(paths) -> dict:
    return {str(p): hashlib.sha256(p.read_bytes()).hexdigest() for p in paths if p.is_file()}


def read_csv(path: Path) -> list[dict]:
    with path.open() as f:
        return list(csv.DictReader(f))


def statuses(out: Path) -> dict:
    return {(r["student"], r["exercise"]): r["status"] for r in read_csv(out / "grades.csv")}


def messages(out: Path) -> dict:
    return {(r["student"], r["exercise"]): r["message"] for r in read_csv(out / "grades.csv")}


def test_the_machine_can_sandbox():
    """CI and course machines grade in bubblewrap; the test says what is missing rather than skipping."""
    assert sandbox.requirements() is None, sandbox.requirements()


# -- the hostile class -------------------------------------------------------------------------------------------
@pytest.mark.slow
def test_a_hostile_class_gets_what_it_deserves_and_harms_nothing(tmp_path, monkeypatch):
    uids = own_uids(monkeypatch)
    cls, out = tmp_path / "class", tmp_path / "out"
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen()
    server.setblocking(False)
    paths = {"repo": str(ROOT), "class": str(cls), "classmate": str(cls / "honest_a" / NAME), "out": str(out),
             "gradebook": str(out / "gradebook.csv"), "marker": str(tmp_path / "marker"),
             "litter": f"/tmp/toybook-litter-{secrets.token_hex(4)}", "port": server.getsockname()[1]}
    hc.write_class(cls, paths)
    unreadable = hc.malformed(cls, cls / "honest_a" / NAME)
    guarded = [*ROOT.glob("toy/**/*.py"), *ROOT.glob("course/*.py"), *ROOT.glob("chapters/**/*.ipynb"),
               *Path(sys.prefix).glob("lib/python3*/site-packages/*.pth"), cls / "honest_a" / NAME]
    before = digest(guarded)
    start = time.monotonic()
    about = cli.grade(cls, out, jobs=2, timeout=60, cell_timeout=10, case_timeout=5, limits=LIMITS,
                      progress=False)
    seconds = time.monotonic() - start
    gradebook = (out / "gradebook.csv").read_text()
    got, said = statuses(out), messages(out)
    wrong = []

    def expect(student, exercise, allowed, why):
        if got.get((student, exercise)) not in allowed:
            wrong.append(f"{student} {exercise}: {got.get((student, exercise))} ({why}); "
                         f"{said.get((student, exercise), '')[:160]}")

    # honest students keep full marks, whatever their classmates do
    for student in ("honest_a", "honest_b", "copycat", "no_checks"):
        for ex in EXERCISES:
            expect(student, ex, {"pass"}, "an honest answer")
    # attacks that return the right answer only if they failed: a pass proves the attack failed
    for student in ("writer", "reader", "source_reader", "litter", "many_files", "fork_bomb", "daemon", "network"):
        for ex in EXERCISES:
            expect(student, ex, {"pass"}, "the attack should have failed")
    # the killer kills the worker's relay (its parent): it costs only its own exercise
    expect("killer", "4.1-value", {"pass", "error"}, "the attack should have failed")
    for ex in EXERCISES[1:]:
        expect("killer", ex, {"pass"}, "the other exercises are graded as usual")
    # the forbidden reference, however reached, earns nothing
    expect("shortcut", "4.1-value", {"forbidden"}, "toy.value called")
    expect("alias", "4.1-value", {"forbidden"}, "toy.value imported under another name")
    expect("renamed_code", "4.1-value", {"forbidden"}, "toy.value's code under another name")
    expect("recompiled", "4.1-value", {"forbidden"}, "toy.value's source compiled again")
    expect("helper_route", "4.1-value", {"forbidden"}, "toy.values")
    for student in ("thread", "forked", "subprocess"):
        # a timeout too earns nothing: a fresh interpreter importing toy can take more than 5 s on a loaded machine
        expect(student, "4.1-value", {"error", "forbidden", "timeout"}, "toy.value in another thread or process")
    # forged answers, patched grader code, limits, time
    expect("forger", "4.1-value", {"fail"}, "a wrong answer, forged replies around it")
    expect("forger", "4.1-response-probability", {"error"}, "SystemExit")
    # its patches run for every exercise; they cannot make a wrong answer pass, nor a right one fail
    expect("patcher", "4.1-value", {"fail"}, "patched json, numpy and builtins")
    expect("patcher", "4.1-response-probability", {"fail", "error"}, "patched json")
    expect("patcher", "4.1-token-advantages", {"pass"}, "an honest answer beside the patches")
    expect("memory_hog", "4.1-value", {"error", "timeout"}, "more memory than the sandbox has")
    if "attack succeeded" in said[("memory_hog", "4.1-value")]:
        wrong.append("memory_hog: four processes of 300 MB each fitted in a sandbox of 1024 MB")
    expect("spinner", "4.1-value", {"timeout"}, "a loop that ignores SIGXCPU")
    expect("sleeper", "4.1-value", {"timeout"}, "a set-up that never ends")
    expect("sleeper", "4.1-response-probability", {"missing", "timeout"}, "never defined, after a set-up that "
           "never ends")
    expect("flood", "4.1-value", {"fail"}, "an answer too large to send")
    for ex in EXERCISES:
        expect("exits", ex, {"error"}, "os._exit in the set-up, which runs for every exercise")
    expect("whoami", "4.1-value", {"error"}, "reports its user")
    for student in ("forger", "memory_hog", "spinner", "flood", "whoami", "shortcut", "thread"):
        expect(student, "4.1-token-advantages", {"pass"}, "the other exercises are graded as usual")
    assert not wrong, "\n".join(wrong)

    # never root, no capabilities, and nothing of the machine in view
    whoami = said[("whoami", "4.1-value")]
    uid = int(re.search(r"uid=(\d+)", whoami).group(1))
    assert uid != 0 and uids[0] <= uid < uids[1] and "CapEff:\\t0000000000000000" in whoami, whoami
    assert "'etc'" not in whoami and "'root'" in whoami  # only the parent of the Python it runs on
    # unreadable files get their row and their reason
    for student, reason in unreadable.items():
        row = next(r for r in read_csv(out / "grades.csv") if r["student"] == student)
        assert row["status"] == "not graded" and reason in row["message"], (student, row)
    # copies are flagged, not marked down
    flags = read_csv(out / "similarity.csv")
    pairs = {(f["exercise"], f["student"], f["other"]) for f in flags}
    assert ("4.1-value", "copycat", "honest_b") in pairs and ("4.1-value", "honest_b", "copycat") in pairs
    # honest_a's value is the book's own, all natural: no flag can mean anything there (issue 40)
    assert ("4.1-value", "honest_a", "the book's solution") not in pairs
    assert not any(f["student"] == "writer" and f["exercise"] == "4.1-value" for f in flags)
    book = {r["student"]: r for r in read_csv(out / "gradebook.csv")}
    assert book["copycat"]["total"] == "3" and book["copycat"]["flags"].startswith("4.1-value: 1 flag")
    assert ("4.1-response-probability", "copycat", "honest_b") in pairs  # honest_b's, verbatim
    review = next(f["review"] for f in flags if (f["exercise"], f["student"]) == ("4.1-value", "copycat"))
    assert "honest_b" in (out / review).read_text()  # each flag has its side-by-side page
    assert book["honest_a"]["total"] == book["honest_b"]["total"] == "3"

    # nothing outside a submission changed, and nothing of it is left
    time.sleep(4)  # the daemon would have written by now
    assert digest(guarded) == before
    assert (out / "gradebook.csv").read_text() == gradebook
    assert not Path(paths["marker"]).exists() and not Path(paths["litter"]).exists()
    assert not sandbox_processes(uids) and not cgroups_of(os.getpid())
    with pytest.raises(BlockingIOError):
        server.accept()
    about = json.loads((out / "run.json").read_text())
    assert about["finished"] and about["submissions"] == len(hc.hostile(paths)) + len(unreadable)
    # the slowest parts are the time limits: 3 set-ups of 10 s (sleeper) and a case of 5 s (spinner)
    print(f"hostile class: {about['submissions']} submissions in {seconds:.0f} s")
    assert seconds < 240


@pytest.mark.slow
def test_an_honest_class_gets_full_marks_and_other_routes_and_forgeries_nothing(tmp_path, monkeypatch):
    """The grader runs what the student ran: every honest style of tests/hostile_class.py (each of which passes its
    own notebook's checks, tests/test_honest_class.py) gets 3 of 3 and no copy flag; every route through a part of
    toy an exercise does not allow earns nothing; a student forging replies loses at most the exercise the forgery
    sits in (the other two are answered honestly)."""
    own_uids(monkeypatch)
    cls, out = tmp_path / "class", tmp_path / "out"
    hc.write_students(cls, {**hc.HONEST, **hc.ALTERNATE_ROUTES, **hc.MALFORMED_REPLIES})
    start = time.monotonic()
    cli.grade(cls, out, jobs=2, timeout=120, limits=LIMITS, progress=False)
    seconds = time.monotonic() - start
    got, said = statuses(out), messages(out)
    wrong = []
    for student in hc.HONEST:
        wrong += [f"{student} {ex}: {got.get((student, ex))}: {said.get((student, ex), '')[:200]}"
                  for ex in EXERCISES if got.get((student, ex)) != "pass"]
    for student in hc.ALTERNATE_ROUTES:
        wrong += [f"{student} {ex} passed through a route the exercise does not allow"
                  for ex in EXERCISES if got.get((student, ex)) == "pass"]
    for student, attacked in hc.MALFORMED_EXERCISE.items():
        for ex in EXERCISES:
            if ex != attacked and got.get((student, ex)) != "pass":
                wrong.append(f"{student} {ex} (not attacked): {got.get((student, ex))}: {said.get((student, ex))}")
    assert not wrong, "\n".join(wrong)
    flagged = {f["student"] for f in read_csv(out / "similarity.csv")}
    assert not flagged & set(hc.HONEST), f"honest students flagged as copies: {sorted(flagged & set(hc.HONEST))}"
    n = len(hc.HONEST) + len(hc.ALTERNATE_ROUTES) + len(hc.MALFORMED_REPLIES)
    print(f"honest class: {n} submissions graded in {seconds:.0f} s")


# -- runs that stop, resume, regrade, run side by side -----------------------------------------------------------
def small_class(folder: Path, n: int, slow: str | None = None) -> None:
    """``n`` honest students, and optionally one whose set-up takes 12 s."""
    for i in range(n):
        nb = nbformat.v4.new_notebook()
        nb.cells = [nbformat.v4.new_code_cell(s) for s in hc.honest(hc.OWN_VALUE)]
        (folder / f"s{i:02d}").mkdir(parents=True)
        nbformat.write(nb, folder / f"s{i:02d}" / NAME)
    if slow:
        nb = nbformat.v4.new_notebook()
        nb.cells = [nbformat.v4.new_code_cell(s) for s in
                    [hc.IMPORTS, "SLOW = time.sleep(12) or 1", "def value_of_prefix(policy, reward, prompt, "
                     "prefix):\n    return SLOW", hc.check("4.1-value", "value_of_prefix")]]
        (folder / slow).mkdir(parents=True)
        nbformat.write(nb, folder / slow / NAME)


def course_cmd(*args: str) -> list[str]:
    return [sys.executable, str(ROOT / "scripts" / "course.py"), *args]


@pytest.mark.slow
@pytest.mark.parametrize("how", [signal.SIGKILL, signal.SIGINT])
def test_a_stopped_run_leaves_nothing_and_resumes(tmp_path, monkeypatch, how):
    uids = own_uids(monkeypatch)
    cls, out = tmp_path / "class", tmp_path / "out"
    small_class(cls, 3, slow="zz_slow")
    # Ctrl-C as at a terminal: the grader starts with SIGINT's default (a suite run in the background of a
    # script, `cmd &`, hands SIGINT down ignored, and the grader would rightly run on).
    proc = subprocess.Popen(course_cmd("grade", str(cls), "--out", str(out), "--jobs", "1", "--no-progress"),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    deadline = time.monotonic() + 120
    while len(list((out / "results").glob("*.json"))) < 3 and time.monotonic() < deadline:
        time.sleep(0.2)
    time.sleep(1)  # the slow one is running now
    assert len(list((out / "results").glob("*.json"))) == 3 and sandbox_processes(uids)
    proc.send_signal(how)
    stdout, stderr = proc.communicate(timeout=60)
    time.sleep(0.5)
    assert not sandbox_processes(uids)  # the sandbox died with its grader
    if how == signal.SIGINT:
        assert proc.returncode == 130 and "--resume" in stderr
        assert not cgroups_of(proc.pid)
        about = json.loads((out / "run.json").read_text())
        assert not about["finished"] and "--resume" in about["interrupted"]
        assert {r["student"] for r in read_csv(out / "gradebook.csv")} == {"s00", "s01", "s02"}
    kept = {p.name: p.stat().st_mtime for p in (out / "results").glob("*.json")}
    done = subprocess.run(course_cmd("grade", str(cls), "--out", str(out), "--resume", "--no-progress"),
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert not cgroups_of(proc.pid)  # a killed grader's cgroups are swept by the next run
    assert {p.name: p.stat().st_mtime for p in (out / "results").glob("*.json") if p.name in kept} == kept
    book = {r["student"]: r["total"] for r in read_csv(out / "gradebook.csv")}
    assert book == {"s00": "3", "s01": "3", "s02": "3", "zz_slow": "0"}
    assert "1 graded now" in done.stdout


@pytest.mark.slow
def test_two_runs_at_once_and_one_student_regraded(tmp_path):
    cls = tmp_path / "class"
    small_class(cls, 2, slow="zz_slow")
    runs = [subprocess.Popen(course_cmd("grade", str(cls), "--out", str(tmp_path / f"out{k}"), "--no-progress",
                                        "--jobs", "1"), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
            for k in range(2)]
    deadline = time.monotonic() + 60
    while not (tmp_path / "out0" / "run.json").exists() and time.monotonic() < deadline:
        time.sleep(0.1)
    same = subprocess.run(course_cmd("grade", str(cls), "--out", str(tmp_path / "out0")), capture_output=True,
                          text=True, timeout=120)
    assert same.returncode == 2 and "another grading run is writing" in same.stderr
    for run in runs:
        _, err = run.communicate(timeout=300)
        assert run.returncode == 0, err
    for k in range(2):
        assert [r["total"] for r in read_csv(tmp_path / f"out{k}" / "gradebook.csv")] == ["3", "3", "0"]
    # s01 fixes nothing but breaks their first answer: regrade them only, with the run's seed
    out = tmp_path / "out0"
    nb = nbformat.read(cls / "s01" / NAME, as_version=4)
    nb.cells[1].source = "def value_of_prefix(policy, reward, prompt, prefix):\n    return 0.0"
    nbformat.write(nb, cls / "s01" / NAME)
    kept = next((out / "results").glob(f"s00--{NAME}--*.json"))
    before = kept.read_text()
    seed = json.loads((out / "run.json").read_text())["seed"]
    again = subprocess.run(course_cmd("grade", str(cls), "--out", str(out), "--student", "s01", "--no-progress"),
                           capture_output=True, text=True, timeout=120)
    assert again.returncode == 0, again.stderr
    assert kept.read_text() == before
    assert json.loads((out / "run.json").read_text())["seed"] == seed
    assert {r["student"]: r["total"] for r in read_csv(out / "gradebook.csv")} == {"s00": "3", "s01": "2",
                                                                                     "zz_slow": "0"}
    unknown = subprocess.run(course_cmd("grade", str(cls), "--out", str(out), "--student", "nobody"),
                             capture_output=True, text=True, timeout=60)
    assert unknown.returncode == 2 and "no submission from nobody" in unknown.stderr


def test_without_bubblewrap_the_grader_refuses_and_says_what_to_install(tmp_path):
    (tmp_path / "class").mkdir()
    env = {**os.environ, "PATH": str(tmp_path)}  # no bwrap, setpriv or prlimit on it
    proc = subprocess.run(course_cmd("grade", str(tmp_path / "class"), "--out", str(tmp_path / "out")), env=env,
                          capture_output=True, text=True, timeout=300)  # a busy machine starts Python slowly
    assert proc.returncode == 2 and "refused" in proc.stderr and "apt-get install bubblewrap" in proc.stderr
    assert not (tmp_path / "out").exists()


def test_a_python_under_tmp_is_bound_over_the_private_tmp(monkeypatch):
    """The sandbox's own /tmp is mounted before the Python it runs on is bound, so a clone (and its .venv) under
    /tmp stays visible inside (CI's clean clone may live there)."""
    monkeypatch.setattr(sandbox, "python_roots", lambda: [Path("/tmp/clone/.venv"), Path("/opt/python")])
    argv = sandbox.command(sandbox.Limits(), 3, 12345678)
    tmpfs = argv.index("/tmp", argv.index("--tmpfs"))
    venv = argv.index("/tmp/clone/.venv")
    assert argv[tmpfs - 1] == "--tmpfs" and tmpfs < venv and argv[venv - 1] == "--ro-bind"
    assert ["--dir", "/tmp"] not in [argv[k:k + 2] for k in range(len(argv))]  # /tmp keeps its 1777


def test_outputs_default_outside_the_repository(tmp_path, monkeypatch):
    monkeypatch.setenv("TOYBOOK_COURSE_DIR", str(tmp_path / "course"))
    assert cli.home() == tmp_path / "course"
    monkeypatch.delenv("TOYBOOK_COURSE_DIR")
    assert cli.home() == Path.home() / "toybook-course" and ROOT not in cli.home().parents
    proc = subprocess.run(course_cmd("editions"), env={**os.environ, "TOYBOOK_COURSE_DIR": str(tmp_path / "c")},
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0 and len(list((tmp_path / "c" / "editions" / "student").glob("*.ipynb"))) == 5
    assert not (ROOT / "editions").exists()


# -- every exercise of the book, through the sandbox --------------------------------------------------------------
@pytest.mark.slow
def test_every_book_exercise_passes_with_its_solution_and_not_with_its_stub(tmp_path):
    eds, cls = tmp_path / "editions", tmp_path / "class"
    editions.write_editions(eds)
    for edition in ("instructor", "student"):
        (cls / edition).mkdir(parents=True)
        for path in (eds / edition).glob("*.ipynb"):
            (cls / edition / path.name).write_bytes(path.read_bytes())
    cli.grade(cls, tmp_path / "out", jobs=2, progress=False)
    rows = read_csv(tmp_path / "out" / "grades.csv")
    book = editions.book()
    asked = [r for r in rows if r["exercise"] in QUESTIONS]  # the questions: answered at the book's setting in the
    rows = [r for r in rows if r["cases_total"] != ""]  # instructor edition, so marked for its own instance
    assert len(rows) == 2 * sum(len(nb.exercises) for nb in book.values())
    assert len(asked) == 2 * len(QUESTIONS)
    assert {r["status"] for r in asked if r["student"] == "student"} == {"not answered"}
    assert {r["status"] for r in asked if r["student"] == "instructor"} <= {"right", "wrong"}
    for row in rows:
        want = "pass" if row["student"] == "instructor" else "not implemented"
        assert row["status"] == want, row
        assert float(row["seconds"]) < 10, row  # the code an answer needs, not the chapter's figures


# -- the pieces -------------------------------------------------------------------------------------------------
def test_hidden_inputs_cross_as_plain_data_and_rebuild_exactly():
    """Every exercise's hidden inputs survive encode -> JSON -> decode: policies give the same probabilities."""
    from toy.exercises import EXERCISES as ALL

    for name in ALL:
        for case in marks.hidden_cases(name, 3):
            back = protocol.decode(json.loads(json.dumps(protocol.encode(case.args))))
            assert len(back) == len(case.args)
            for a, b in zip(case.args, back, strict=True):
                if hasattr(a, "prefix_probs"):
                    assert type(a) is type(b) and a.length == b.length and a.eos == b.eos
                    for t in range(a.length):
                        np.testing.assert_array_equal(a.prefix_probs(2, t), b.prefix_probs(2, t))
                elif isinstance(a, np.ndarray):
                    assert a.dtype == b.dtype
                    np.testing.assert_array_equal(a, b)
                else:
                    assert a is b or a == b, (name, a, b)
    with pytest.raises(TypeError, match="no plain-data form"):
        protocol.encode(object())


@pytest.mark.parametrize("line", [
    b"[" * 100_000, b"not json", b"[1, 2]", b'"text"', b"x" * (protocol.MAX_LINE + 1),
    b'{"id": 1, "kind": "returned", "value": {"number": ' + b"9" * 400 + b"}}",  # OverflowError in float()
    b'{"id": 1, "kind": "returned", "value": {"number": 1e400}}', b'{"id": 1, "value": {"number": NaN}}',
    b'{"id": 1, "value": {"number": -Infinity}}', b'{"id": ' + b"1" * 5000 + b"}"])
def test_a_malformed_reply_is_refused_in_words(line):
    with pytest.raises(protocol.BadReply):
        protocol.parse(line)


@pytest.mark.parametrize("answer", [
    None, [], {"number": True}, {"number": "1"}, {"array": [[1, 2], [3]], "shape": [2, 2]},
    {"array": [1, 2], "shape": [3]}, {"array": None, "shape": [2]}, {"array": [1], "shape": "x"},
    {"array": ["a"], "shape": [1]}, {"nothing": 1}, {"number": "1e5"}, {"number": 10**400},
    {"array": [1, "nan", "x"], "shape": [3]}, {"array": [[1, 2]], "shape": [1, 2]}, {"number": 1, "type": 5}])
def test_a_malformed_answer_is_refused(answer):
    with pytest.raises(protocol.BadReply):
        protocol.read_answer(answer)


def test_answers_are_read_as_numbers_arrays_or_words():
    assert protocol.read_answer({"number": 2}) == 2.0
    arr = protocol.read_answer({"array": [1, 2], "shape": [1, 2], "type": "ndarray"})
    assert isinstance(arr, np.ndarray) and arr.shape == (1, 2)
    # non-finite numbers travel as text, both ways, and come back as floats
    sent = json.loads(protocol.dumps(protocol.describe(np.array([np.nan, np.inf, -1.5]))))
    back = protocol.read_answer(sent)
    assert np.isnan(back[0]) and back[1] == np.inf and back[2] == -1.5
    assert np.isnan(protocol.read_answer(protocol.parse(protocol.dumps(protocol.describe(float("nan"))))))
    other = protocol.read_answer({"other": "str\x00\n", "repr": "=cmd|' /C calc'!A0\x1b[31m" + "y" * 500})
    assert type(other).__name__ == "str  " and len(repr(other)) == 200 and "\x1b" not in repr(other)
    assert protocol.describe(np.float32(0.5)) == {"number": 0.5, "type": "float32"}
    assert protocol.describe(True)["other"] == "bool"
    assert protocol.describe(list(range(protocol.MAX_ARRAY + 1)))["array"] is None


def test_the_grader_runs_every_cell_the_student_wrote_and_only_the_book_cells_they_need():
    book = ["import numpy as np\nimport toy\nimport plotly",
            "TABLE = {}\nfor k in range(3):\n    TABLE[k] = k * k",
            "fig = toy.figures.distribution_bars({}, [], 'slow')\nfig.show()\nprint('hello')",
            "def answer(policy, x):\n    raise NotImplementedError",
            "toy.exercises.check('e', answer)",
            "LATER = 1"]
    known = frozenset(slicing.normal(c) for c in book)
    cells = [book[0], book[1], book[2],
             "HELPERS = []\ndef configure():\n    global SCALE\n    SCALE = 2\nconfigure()\nprint('ran')",
             "%%time\ndef answer(policy, x):  \n    return HELPERS[0](TABLE[x]) * SCALE\n",
             "HELPERS.append(np.sqrt)\n",
             "broken (",
             book[4] + "\n", book[5]]
    run, mine, problems = slicing.cells_to_run(cells, "e", "answer", known)
    assert mine == [4, 5, 6, 7]  # everything the student wrote, whatever it is, whole
    assert [c for c, _ in run] == [1, 2, 4, 5, 6, 7]  # book cells 3 (a figure) and 8 (the check) are skipped
    assert dict(run)[1] == "import numpy as np"  # of the book's cells, the statements that are needed
    assert dict(run)[2] == book[1] and dict(run)[4] == cells[3] and dict(run)[5] == cells[4]
    assert problems == []  # a cell the student wrote is run as it is, and the worker says what it raised
    # the last check of the exercise bounds the cells: a later cell is not run
    again = cells + ["def answer(policy, x):\n    return 0", "toy.exercises.check('e', answer)"]
    run, mine, _ = slicing.cells_to_run(again, "e", "answer", known)
    assert mine == [4, 5, 6, 7, 10] and [c for c, _ in run][-2:] == [7, 10]
    # a student who changed nothing: the stub is what runs
    run, mine, _ = slicing.cells_to_run(book, "e", "answer", known)
    assert mine == [] and run == [(4, book[3])]
    # names read only inside a magic's code still bring in the book's cells that define them
    run, _, _ = slicing.cells_to_run([book[1], "%time X = TABLE[1]", "def answer(p, x):\n    return X"], "e",
                                     "answer", known)
    assert [c for c, _ in run] == [1, 2, 3]
    star, _, _ = slicing.cells_to_run(["from math import *", "def f():\n    return pi"], "e", "f",
                                      frozenset({"from math import *"}))
    assert [s for _, s in star] == ["from math import *", "def f():\n    return pi"]


def test_copies_are_flagged_renamed_or_not_and_common_code_is_not():
    codes = {"a": hc.OWN_VALUE, "b": hc.COPIED_VALUE, "c": hc.VALUE, "d": hc.MEMO_VALUE}
    flags = similarity.flag_copies(codes, reference=hc.VALUE, handed_out="def value_of_prefix(policy, reward, "
                                   "prompt, prefix):\n    raise NotImplementedError")
    assert any(f[:2] == ("a", "b") and f[2] >= 0.7 for f in flags)
    # c wrote the book's own 4.1 value, which is all natural (nothing of it is distinctive): not flagged (issue 40)
    assert not any(f[0] == "c" for f in flags)
    assert not any({"d"} & {s, o} for s, o, _ in flags)
    # six students with the same short answer: the obvious way, not a copy between them
    same = {f"s{i}": hc.OWN_PROBABILITY for i in range(6)}
    assert similarity.flag_copies(same) == []
    assert similarity.fingerprint("(" * 10_000) == frozenset()


def test_csv_cells_cannot_run_in_a_spreadsheet():
    text = classroom._csv(["a"], [["=HYPERLINK(\"x\")"], ["+A1"], ["ok\nline"]])
    assert "'=HYPERLINK" in text and "'+A1" in text and "ok line" in text  # (a plain number like +1 stays a number)


def test_progress_bar_counts_and_time_left():
    import io

    bar = classroom.Progress(4, stream=io.StringIO())
    assert bar.line(0, 2).endswith("0/4 graded, 2 running, time left: estimating")
    bar.start -= 30  # 30 s for one of four: about 90 s left
    assert re.search(r"1/4 graded, 2 running, about 1m (29|30|31)s left", bar.line(1, 2))
    assert bar.line(4, 0).endswith("done")


def test_fresh_seeds_give_fresh_cases_and_the_sandbox_gets_inputs_only():
    a = marks.AnswerKey(1, {"4.1-value": "value_of_prefix"})
    b = marks.AnswerKey(2, {"4.1-value": "value_of_prefix"})
    assert [c.description for c in a.cases["4.1-value"]] != [c.description for c in b.cases["4.1-value"]]
    # what a sandbox is sent for a case is that case's inputs and nothing else: no seed, no answer
    assert a.inputs["4.1-value"] == [protocol.encode_case("4.1-value", case.args) for case in a.cases["4.1-value"]]


# -- nbgrader ----------------------------------------------------------------------------------------------------
NBGRADER = Path(os.environ.get("TOY_NBGRADER_BIN", ROOT / ".venv-nbgrader" / "bin"))


def solutions() -> dict[str, str]:
    """{function name: the book's solution cell} for the 4.1 exercises."""
    nb = nbformat.read(BOOK, as_version=4)
    return {re.match(r"def (\w+)", c.source).group(1): c.source for c in nb.cells
            if "solution" in c.metadata.get("tags", []) and c.source.startswith("def ")}


def printed_commands(stdout: str) -> list[str]:
    """The commands ``course.py nbgrader`` tells the instructor to run, as printed."""
    lines = stdout.split(cli.COMMANDS_HEADING, 1)[1].splitlines()
    return [line.strip() for line in lines if line.startswith("  ") and not line.strip().startswith("#")]


@pytest.mark.slow
def test_nbgrader_route_as_printed_gives_the_solutions_full_marks(tmp_path):
    """``course.py nbgrader --out DIR``, then exactly the commands it prints, in a shell with nothing set up (no
    venv on PATH, no kernel registered, a fresh HOME): generate_assignment; autograde a class of two, the
    instructor's own solutions to every exercise of every notebook (full marks) and one notebook with two
    exercises solved and one answered by a forbidden reference; export."""
    assert (NBGRADER / "nbgrader").exists(), (
        f"nbgrader is not installed in {NBGRADER}: bash scripts/test.sh installs requirements-nbgrader.txt there")
    assignment = "the-llm-as-a-policy"
    course_dir = tmp_path / "course"
    made = subprocess.run(course_cmd("nbgrader", "--out", str(course_dir)), check=True, capture_output=True,
                          text=True, timeout=120)
    generate, autograde, export = printed_commands(made.stdout)
    (tmp_path / "home").mkdir()
    clean = {"HOME": str(tmp_path / "home"), "PATH": "/usr/bin:/bin", "LANG": "C.UTF-8"}

    def run(command: str):
        proc = subprocess.run(["bash", "-c", command], env=clean, capture_output=True, text=True, timeout=900)
        assert proc.returncode == 0, command + "\n" + proc.stdout[-2000:] + proc.stderr[-3000:]
        return proc

    run(generate)
    release = nbformat.read(course_dir / "release" / assignment / NAME, as_version=4)
    meta = [c.metadata.get("nbgrader", {}) for c in release.cells]
    code = [m for m in meta if m.get("grade_id", "").startswith(("solution-", "test-4"))]
    assert sum(m.get("solution", False) for m in code) == 3 and sum(m.get("grade", False) for m in code) == 3
    text = "\n".join(c.source for c in release.cells)
    assert "### BEGIN SOLUTION" not in text and "HIDDEN TESTS" not in text and "raise NotImplementedError()" in text
    assert all(line not in text for line in solutions()["value_of_prefix"].splitlines()[2:])

    full = auto = auto_41 = 0  # every point; the autograded ones (code checks, questions); those of 4.1's questions
    for path in sorted((course_dir / "source" / assignment).glob("*.ipynb")):
        source = nbformat.read(path, as_version=4)
        answers = {c.metadata["nbgrader"]["grade_id"]: "\n".join(line for line in c.source.splitlines()
                                                                 if "### " not in line)
                   for c in source.cells if c.metadata.get("nbgrader", {}).get("solution")}
        graded = [c.metadata["nbgrader"] for c in source.cells if c.metadata.get("nbgrader", {}).get("grade")]
        full += sum(m["points"] for m in graded)
        auto += sum(m["points"] for m in graded if m["grade_id"].startswith("test-"))
        if path.name == NAME:
            auto_41 = sum(m["points"] for m in graded if m["grade_id"].startswith("test-ex-"))
        submit(course_dir, assignment, path.name, "instructor", answers)
        if path.name == NAME:
            submit(course_dir, assignment, NAME, "shortcut", {
                **answers, "solution-value_of_prefix": "def value_of_prefix(policy, reward, prompt, prefix):\n"
                                                       "    return toy.value(policy, reward, prompt, prefix)"})
            # a student whose Jupyter saved the live explorers' widget state (megabytes of plotly.js) with it
            saved = course_dir / "submitted" / "saved" / assignment / NAME
            saved.parent.mkdir(parents=True)
            nbformat.write(lean.saved_with_widgets(nbformat.read(
                course_dir / "submitted" / "instructor" / assignment / NAME, as_version=4)), saved)
            assert saved.stat().st_size > lean.MAX_BYTES
    # the written answers are marked by hand, and the practice questions not at all
    assert auto == 12 + sum(q.points for q in QUESTIONS.values() if not q.practice)
    graded_run = run(autograde)
    # nbgrader's only checksum warnings are for the code checks' test cells, whose hidden tests it puts back (issue
    # 40: explained in the printed commands, not a student's change)
    changed = re.findall(r"Attribute 'checksum' for cell (\S+) has changed", graded_run.stdout + graded_run.stderr)
    assert changed and all(re.fullmatch(r"test-4-\d-[\w-]+", c) for c in changed), changed
    assert "checksum has changed" in made.stdout
    run(export)
    with (course_dir / "grades.csv").open() as f:
        scores = {r["student_id"]: (float(r["raw_score"]), float(r["max_score"])) for r in csv.DictReader(f)}
    assert scores == {"instructor": (auto, full), "shortcut": (2.0 + auto_41, full), "saved": (3.0 + auto_41, full)}
    # nbgrader stays lean: every autograded notebook at most 2 MB, with no widget state and no widget views
    autograded = sorted((course_dir / "autograded").glob(f"*/{assignment}/*.ipynb"))
    sizes = {f"{p.parent.parent.name}/{p.name}": p.stat().st_size for p in autograded}
    print("autograded notebooks (MB):", {k: round(v / 1e6, 2) for k, v in sizes.items()})
    assert len(autograded) == 7 and all(size <= lean.MAX_BYTES for size in sizes.values()), sizes
    for path in autograded:
        nb = json.loads(path.read_text())
        assert not lean.widget_traces(nb), (path, lean.widget_traces(nb))
        assert any(c.get("metadata", {}).get("nbgrader", {}).get("grade") for c in nb["cells"])  # nbgrader's marks
    graded = nbformat.read(course_dir / "autograded" / "shortcut" / assignment / NAME, as_version=4)
    errors = [o.get("evalue", "") for c in graded.cells for o in c.get("outputs", [])
              if o.get("output_type") == "error"]
    assert len(errors) == 1 and "this exercise asks for V(s) by backward induction, without toy.value" in errors[0]


def submit(course_dir: Path, assignment: str, name: str, student: str, replace: dict[str, str]) -> None:
    """A student's copy of the released notebook ``name``, its solution cells replaced by ``replace[grade_id]``."""
    nb = nbformat.read(course_dir / "release" / assignment / name, as_version=4)
    for cell in nb.cells:
        grade_id = cell.metadata.get("nbgrader", {}).get("grade_id")
        if grade_id in replace:
            cell.source = replace[grade_id]
    folder = course_dir / "submitted" / student / assignment
    folder.mkdir(parents=True, exist_ok=True)
    nbformat.write(nb, folder / name)


def test_nbgrader_source_has_a_solution_region_and_a_test_cell_per_exercise():
    from course.nbgrader_release import course_student, source_notebook

    for path in editions.book_notebooks():
        book = nbformat.read(path, as_version=4)
        src = source_notebook(book, hidden_seed=7)
        meta = [c.metadata.get("nbgrader") for c in src.cells]
        ids = [m["grade_id"] if m else "" for m in meta]
        code_ids = [i.startswith(("solution-", "test-4")) for i in ids]  # the code exercises' cells
        solutions_ = [c for c, m, k in zip(src.cells, meta, code_ids, strict=True) if k and m["solution"]]
        tests = [c for c, m, k in zip(src.cells, meta, code_ids, strict=True) if k and m["grade"]]
        checked = marks.exercises_checked(book)
        # each question: a solution cell with the course instance's answer, then a locked test cell worth its points
        asked = [q for q in QUESTIONS.values() if f'toy.exercises.answer("{q.name}", ...)' in
                 "\n".join(c.source for c in book.cells)]
        for q in (q for q in asked if q.practice):  # checked in the notebook, never graded
            assert f"answer-{q.name}" not in ids and f"test-{q.name}" not in ids
        course_instance = bool(asked)
        asked = [q for q in asked if not q.practice]
        for q in asked:
            at = ids.index(f"answer-{q.name}")
            assert meta[at]["solution"] and "### BEGIN SOLUTION" in src.cells[at].source
            assert ids[at + 1] == f"test-{q.name}" and meta[at + 1]["locked"] and meta[at + 1]["points"] == q.points
            value = src.cells[at].source.split("\n")[1].split(" = ", 1)[1]
            assert toy.exercises.questions.check_answer(q.name, eval(value), course_student(7)).right
        assert ("course-instance" in ids) == course_instance
        assert "123456789" not in course_student(123456789)  # the release shows the name, not the hidden seed
        written = [c.metadata["toy_written"] for c in book.cells if c.metadata.get("toy_written")]
        for exercise in written:
            m = meta[ids.index(f"written-{exercise}")]
            assert m["grade"] and m["solution"] and m["points"] == sum(c.points for c in RUBRICS[exercise])
        assert len(solutions_) == len(tests) == len(checked), path.name
        for cell, (exercise, function) in zip(tests, checked, strict=True):
            assert cell.metadata["nbgrader"]["locked"] and cell.metadata["nbgrader"]["points"] == 1
            assert f'check("{exercise}", {function})' in cell.source and "assert result.passed" in cell.source
            assert f'check("{exercise}", {function}, seed=7)' in cell.source.split("### BEGIN HIDDEN TESTS")[1]
        for cell in solutions_:
            lines = cell.source.splitlines()
            assert lines[0].startswith("def ") and "### BEGIN SOLUTION" in cell.source and lines[-1].strip() == (
                "### END SOLUTION")
        assert not any("solution" in c.metadata.get("tags", []) for c in src.cells)
        assert not any("exercise" in c.metadata.get("tags", []) and c.cell_type == "code" for c in src.cells)


def _grade_cells(cells: list[str], exercise: str = "4.1-value", function: str = "value_of_prefix"):
    key = marks.AnswerKey(5, {exercise: function})
    settings = marks.Settings(setup_seconds=60, case_seconds=10, limits=LIMITS)
    return marks.grade_exercise(cells, exercise, function, key, settings)


def test_the_students_process_cannot_reach_the_grader_pipe():
    """The student's code runs in the relay's child: the relay's descriptors (its pipe to the grader) cannot be
    opened through /proc, nor can it be traced; a forged reply written to every descriptor the child can reach
    is dropped; the honest answer beside the attempts passes."""
    attempt = '''import ctypes, glob, json, os
def _reach():
    done, line = [], (json.dumps({"id": 1, "kind": "returned", "value": {"number": 0.5}}) + "\\n").encode()
    parent = os.getppid()
    for path in glob.glob(f"/proc/{parent}/fd/*") + [f"/proc/{parent}/fd/{k}" for k in range(64)]:
        try:
            with open(path, "wb", buffering=0) as f:
                f.write(line)
            done.append(path)
        except OSError:
            pass
    for fd in range(3, 64):
        try:
            os.write(fd, line)
        except OSError:
            pass
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.ptrace(16, parent, 0, 0) == 0:  # PTRACE_ATTACH
        done.append("ptrace")
    return done
'''
    cells = ["import numpy as np\nimport toy", hc.MEMO_VALUE, attempt,
             "def value_of_prefix(policy, reward, prompt, prefix):\n    done = _reach()\n    if done:\n"
             "        raise RuntimeError('reached the grader: ' + repr(done)[:200])\n"
             "    return _memo_value(policy, reward, prompt, prefix)"]
    graded = _grade_cells(cells)
    assert graded.result.status == "pass", graded.result.message


@pytest.mark.parametrize("forged", [
    '{"id": 1, "kind": "returned", "value": {"number": ' + "9" * 400 + '}}',
    '{"id": 0, "ready": true, "problems": 5}', '{"id": 1, "kind": "returned", "value": {"number": NaN}}',
    '{"id": 1, "kind": "returned", "value": {"array": [1], "shape": [7]}}', "not json at all",
    '{"kind": "returned", "value": {"number": 0.25}}'])
def test_a_reply_the_students_code_forges_costs_at_most_its_own_exercise(forged):
    """Lines written blind into the child's own reply pipe (malformed, or claiming the grader's request number):
    the relay drops them, as they do not carry its token for the request; the honest answer passes."""
    cells = ["import gc, io, os\nimport numpy as np\nimport toy", hc.MEMO_VALUE,
             f"FORGED = {forged!r}\n"
             "def value_of_prefix(policy, reward, prompt, prefix):\n"
             "    for obj in gc.get_objects():\n"
             "        if isinstance(obj, (io.BufferedWriter, io.FileIO)) and not obj.closed:\n"
             "            try:\n"
             "                obj.write((FORGED + '\\n').encode()); obj.flush()\n"
             "            except Exception:\n"
             "                pass\n"
             "    return _memo_value(policy, reward, prompt, prefix)"]
    graded = _grade_cells(cells)
    assert graded.result.status == "pass", graded.result.message
