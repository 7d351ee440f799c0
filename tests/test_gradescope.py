"""Issues 41 and 47: Gradescope's autograder (course/gradescope.py, ``course.py gradescope``), run here in Gradescope's
own layout: a directory bound at ``/autograder`` by bubblewrap over this machine's system (read-only; nothing of this
checkout), holding ``source/`` (the zip, unpacked), ``run_autograder``, ``submission/``, ``submission_metadata.json``
and ``results/``, as root. The zip's own ``setup.sh`` builds it with a bare environment (and stops with one line on
an image whose Python is too old); then ``run_autograder`` grades the honest solution and a hostile notebook, once
with bubblewrap, once where bubblewrap cannot start (the uid isolation). results.json is checked against
Gradescope's documented fields.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import time
import unicodedata
import zipfile
from pathlib import Path

import nbformat
import pytest

from course import cli, gradescope
from course import secret as course_secret
from tests.test_grading import own_uids
from toy.exercises import questions as Q

ROOT = Path(__file__).resolve().parents[1]
CHAPTER = ROOT / "chapters" / "04-the-llm-as-a-policy" / "4.3-classical-vs-llm-rl.ipynb"
WEEK = 'name = "Week 5"\n[points]\nex-4-3-discounted-return = 2\nex-4-3-discount = 16\n'
ROSTER = 'name,login,sis_id\n"Núñez, José",jose@example.edu,S1\nAna,ana@example.edu,S2\n'
HOSTILE = '''import os, subprocess
for target in ("/autograder/results/results.json", "/autograder/results/forged.json"):
    try:
        with open(target, "w") as f:
            f.write('{"score": 999, "tests": []}')
    except OSError:
        pass
try:
    LEAKED = open("/autograder/source/toybook/config/course-secret").read()
except OSError:
    LEAKED = None
try:
    subprocess.Popen(["sleep", "300"])
except OSError:
    pass
ROOTED = os.getuid() == 0 or os.geteuid() == 0
'''
TEST_FIELDS = {"score", "max_score", "name", "output", "visibility"}
VISIBILITIES = {"hidden", "after_due_date", "after_published", "visible"}

pytestmark = pytest.mark.skipif(os.geteuid() != 0 or not shutil.which("bwrap"),
                                reason="Gradescope's layout is bound at /autograder by bubblewrap, as root")


@pytest.fixture(scope="module")
def autograder(tmp_path_factory):
    home = tmp_path_factory.mktemp("course")
    os.environ["TOYBOOK_COURSE_DIR"] = str(home)
    try:
        course_secret.make(home)
        (home / "roster.csv").write_text(ROSTER, encoding="utf-8")
        (home / "week.toml").write_text(WEEK)
        assert cli.main(["gradescope", "--assignment", "week.toml"]) == 0
    finally:
        os.environ.pop("TOYBOOK_COURSE_DIR", None)
    return home / "gradescope-autograder.zip", course_secret.load(home)


def unpacked(tmp_path: Path, zip_path: Path) -> Path:
    """Gradescope's layout before ``setup.sh``: the zip unpacked in ``source/``, ``run_autograder`` beside it."""
    ag = tmp_path / "autograder"
    for d in ("source", "submission", "results"):
        (ag / d).mkdir(parents=True)
    os.chmod(ag, 0o755)
    with zipfile.ZipFile(zip_path) as z:
        z.extractall(ag / "source")
    for name in ("run_autograder", "setup.sh"):
        os.chmod(ag / "source" / name, 0o755)
    shutil.copy(ag / "source" / "run_autograder", ag / "run_autograder")
    return ag


def submit(ag: Path, notebook, users: list[dict]) -> Path:
    """A fresh submission in ``ag`` (the one before it, and its results, removed)."""
    for d in ("submission", "results"):
        shutil.rmtree(ag / d, ignore_errors=True)
        (ag / d).mkdir()
    nbformat.write(notebook, ag / "submission" / CHAPTER.name)
    (ag / "submission_metadata.json").write_text(json.dumps({"id": 7, "users": users}), encoding="utf-8")
    return ag


def machine(ag: Path, *extra: str) -> list[str]:
    """bwrap options for a root file system of Gradescope's kind: this machine's system folders read-only, ``ag`` at
    ``/autograder``, an empty /root and /tmp; nothing of this checkout (``extra`` comes after, to change it)."""
    argv = ["bwrap", "--tmpfs", "/"]
    for top in sorted(Path("/").iterdir()):
        if top.name in ("proc", "dev", "tmp", "root", "autograder", "work", "home"):
            continue
        argv += ["--symlink", os.readlink(top), str(top)] if top.is_symlink() else ["--ro-bind", str(top), str(top)]
    argv += ["--perms", "0700", "--tmpfs", "/root", "--bind", str(ag), "/autograder", "--tmpfs", "/tmp"]
    return [*argv, "--proc", "/proc", "--dev", "/dev", "--cap-add", "ALL", *extra]


def setup(ag: Path, *extra: str) -> subprocess.CompletedProcess:
    """``/autograder/source/setup.sh`` as Gradescope runs it: as root, with a bare environment; pip's cache is this
    machine's (so the packages are downloaded once)."""
    cache = Path.home() / ".cache" / "pip"
    cache.mkdir(parents=True, exist_ok=True)
    argv = machine(ag, "--bind", str(cache), "/root/.cache/pip", "--chdir", "/autograder/source", *extra,
                   "--clearenv", "--", "/autograder/source/setup.sh")
    return subprocess.run(argv, capture_output=True, text=True, timeout=900)


def run(ag: Path, no_bwrap: bool = False) -> subprocess.CompletedProcess:
    """``/autograder/run_autograder`` in the image ``setup`` built; ``no_bwrap``: a ``bwrap`` that cannot start (as
    where there are no user namespaces)."""
    extra = ["--ro-bind", "/bin/false", shutil.which("bwrap")] if no_bwrap else []
    return subprocess.run(machine(ag, *extra, "--", "/autograder/run_autograder"), capture_output=True, text=True,
                          timeout=300)


@pytest.fixture(scope="module")
def image(autograder, tmp_path_factory):
    """The zip, unpacked at /autograder and built by its own ``setup.sh`` (its time is printed)."""
    zip_path, _ = autograder
    ag = unpacked(tmp_path_factory.mktemp("gradescope"), zip_path)
    start = time.monotonic()
    done = setup(ag)
    print(f"setup.sh took {time.monotonic() - start:.1f} s")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "setup.sh: ready" in done.stdout
    return ag


def _uid(pid: str) -> int:
    try:
        return os.stat(f"/proc/{pid}").st_uid
    except OSError:
        return -1


def _alive(low: int, high: int) -> list[str]:
    """Processes of the uids ``low``..``high`` still running (not zombies) after up to 2 s."""
    for _ in range(20):
        left = []
        for pid in os.listdir("/proc"):
            if pid.isdigit() and _uid(pid) in range(low, high):
                try:
                    state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
                except (OSError, IndexError):
                    continue
                if state != "Z":
                    left.append(pid)
        if not left:
            return []
        time.sleep(0.1)
    return left


def valid(results: dict) -> None:
    """Gradescope's results.json: score, output, tests each with score, max_score, name, output, visibility."""
    assert isinstance(results["score"], (int, float)) and isinstance(results["output"], str)
    assert results["tests"]
    for test in results["tests"]:
        assert TEST_FIELDS <= set(test), test
        assert isinstance(test["score"], (int, float)) and isinstance(test["max_score"], (int, float))
        assert 0 <= test["score"] <= test["max_score"] + 1e-9 and test["visibility"] in VISIBILITIES
    assert abs(results["score"] - sum(t["score"] for t in results["tests"])) < 1e-6


def answered(name: str, key: str | None):
    nb = nbformat.read(CHAPTER, as_version=4)
    for cell in nb.cells:
        if cell.source.startswith('toy.exercises.answer("ex-4-3-discount-a", ...)'):
            q = Q.QUESTIONS["ex-4-3-discount-a"]
            value = Q.as_value(q, q.spec(q.instance(name, key))["answer"])
            cell.source = f"toy.exercises.answer('ex-4-3-discount-a', {value!r})"
    return nb


def test_the_zip_holds_what_gradescope_needs(autograder):
    zip_path, secret = autograder
    with zipfile.ZipFile(zip_path) as z:
        names = set(z.namelist())
        assert {"setup.sh", "run_autograder", "toybook/course/gradescope.py", "toybook/config/course-secret",
                "toybook/config/roster.csv", "toybook/config/assignment.toml", f"toybook/chapters/"
                f"04-the-llm-as-a-policy/{CHAPTER.name}"} <= names
        assert (z.getinfo("run_autograder").external_attr >> 16) & 0o111
        assert z.read("toybook/config/course-secret").decode().strip() == secret.hex()
        assert not any("/tests/" in n or n.startswith("toybook/.venv") for n in names)
        # grading's own requirements, not the book's toolchain (whose ./lab-settings and -e . are not in the zip)
        assert "toybook/requirements-grader.txt" in names and "toybook/requirements.txt" not in names
        assert not any(n.startswith("toybook/lab-settings") for n in names)


def pins(path: Path) -> dict[str, str]:
    lines = (line.split("#")[0].strip() for line in path.read_text().splitlines())
    return dict(line.split("==") for line in lines if "==" in line)


def test_the_graders_requirements_are_few_and_pinned_as_the_book_tests_them():
    grader = pins(ROOT / gradescope.REQUIREMENTS)
    assert set(grader) == {"numpy", "plotly", "ipywidgets", "nbformat", "ipython"}
    book = pins(ROOT / "requirements.txt")
    assert {k: v for k, v in grader.items() if k in book} == {k: book[k] for k in grader if k in book}
    import IPython
    assert grader["ipython"] == IPython.__version__  # not pinned by requirements.txt: the version it resolves to


@pytest.mark.slow
@pytest.mark.parametrize("no_bwrap", [False, True], ids=["bubblewrap", "uid"])
def test_an_honest_submission_gets_its_own_instance_marked(autograder, image, no_bwrap):
    _, secret = autograder
    name = "Núñez, José"
    ag = submit(image, answered(name, course_secret.student_key(secret, name)),
                [{"name": "José Núñez", "sid": "S1", "email": "j@elsewhere"}])
    done = run(ag, no_bwrap)
    assert done.returncode == 0, done.stderr
    results = json.loads((ag / "results" / "results.json").read_text())
    valid(results)
    tests = {t["name"]: t for t in results["tests"]}
    assert tests["4.3-discounted-return (code)"]["score"] == 2
    assert tests["ex-4-3-discount-a (question)"]["score"] == tests["ex-4-3-discount-a (question)"]["max_score"] > 0
    assert "Graded as Núñez, José (SID S1 on the roster)" in results["output"]
    said = "another uid, without namespaces" if no_bwrap else "Sandbox: bubblewrap"
    assert said in results["output"] and "fresh unprivileged uid" in results["output"]


@pytest.mark.slow
def test_a_hostile_submission_cannot_write_the_results_read_the_secret_or_run_as_root(autograder, image,
                                                                                    monkeypatch):
    _, secret = autograder
    low, high = own_uids(monkeypatch)  # bwrap passes the environment on: this test's sandboxes use these uids
    nb = answered("Ana", course_secret.student_key(secret, "Ana"))
    for cell in nb.cells:
        if cell.source.startswith("def discounted_return") and "solution" in cell.metadata.get("tags", []):
            body = cell.source.replace("def discounted_return(reward, prompt, response, gamma):",
                                       "def _honest(reward, prompt, response, gamma):")
            cell.source = (HOSTILE + body + "\n\ndef discounted_return(reward, prompt, response, gamma):\n"
                           "    if LEAKED or ROOTED:\n        return 999.0\n"
                           "    return _honest(reward, prompt, response, gamma)\n")
    ag = submit(image, nb, [{"name": "Ana", "sid": "", "email": "ANA@example.edu"}])
    for no_bwrap in (False, True):
        done = run(ag, no_bwrap)
        assert done.returncode == 0, done.stderr
        results = json.loads((ag / "results" / "results.json").read_text())
        valid(results)
        assert results["score"] != 999 and not (ag / "results" / "forged.json").exists()
        tests = {t["name"]: t for t in results["tests"]}
        # passes only where the sandbox neither ran as root nor could read the course secret
        assert tests["4.3-discounted-return (code)"]["score"] == 2, (no_bwrap, tests)
        assert "Graded as Ana (email ana@example.edu on the roster)" in results["output"]
        assert not _alive(low, high), no_bwrap  # the background process died with its sandbox, both ways
    assert not [p for p in (ag / "source").iterdir() if p.owner() != "root"]


PYTHON_310 = Path("/root/.pyenv/versions/3.10.13/bin/python3.10")


@pytest.mark.skipif(not PYTHON_310.exists(), reason="a Python 3.10 to play the image's python3")
def test_on_an_image_whose_python_is_too_old_setup_stops_with_one_line(autograder, tmp_path):
    """An image like Gradescope's Ubuntu 22.04 whose apt cannot bring python3.11: python3 is 3.10 (first on the
    PATH), no other Python, apt-get fails. setup.sh stops at once with one line naming the base image to choose."""
    zip_path, _ = autograder
    ag = unpacked(tmp_path, zip_path)
    local = tmp_path / "local-bin"
    local.mkdir()
    (local / "python3").write_text(f'#!/bin/sh\nexec {PYTHON_310} "$@"\n')
    os.chmod(local / "python3", 0o755)
    base = PYTHON_310.parents[1]
    hide = [x for p in ("/usr/bin/python3.11", "/usr/bin/python3.12", "/usr/bin/python3.13", "/usr/bin/apt-get")
            if Path(p).exists() for x in ("--ro-bind", "/bin/false", p)]
    done = setup(ag, "--ro-bind", str(local), "/usr/local/bin", "--ro-bind", str(base), str(base), *hide)
    assert done.returncode != 0
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr
    assert lines[0].startswith("setup.sh: could not install python3.11 python3.11-venv")
    assert "Python 3.10" in lines[0] and "choose the base image Ubuntu 22.04 or newer" in lines[0]
    assert not (ag / "venv").exists()


def test_without_a_sandbox_nothing_runs(tmp_path, monkeypatch):
    from course import sandbox

    def refuse(*args, **kwargs):
        raise sandbox.Refused("no sandbox here")

    monkeypatch.setattr(sandbox, "probe", refuse)
    config = tmp_path / "config"
    config.mkdir()
    (config / "roster.csv").write_text(ROSTER, encoding="utf-8")
    monkeypatch.setattr(gradescope, "_config", lambda root: config)
    (tmp_path / "submission").mkdir()
    (tmp_path / "submission_metadata.json").write_text(json.dumps({"users": [{"name": "Ana", "sid": "S2"}]}))
    results = gradescope.grade(tmp_path)
    assert results["score"] == 0 and results["tests"] == [] and "no sandbox could start" in results["output"]
    assert json.loads((tmp_path / "results" / "results.json").read_text()) == results


# -- issue 47, part 3: the instance comes from the roster alone ------------------------------------------------------
def grade_as(tmp_path: Path, monkeypatch, users) -> dict:
    from course import sandbox

    def unreachable(*args, **kwargs):
        raise AssertionError("an unmatched submitter must not reach grading")

    config = tmp_path / "config"
    config.mkdir(exist_ok=True)
    (config / "roster.csv").write_text(ROSTER + "Bob B,bob@example.edu,S3\n", encoding="utf-8")
    monkeypatch.setattr(gradescope, "_config", lambda root: config)
    monkeypatch.setattr(sandbox, "probe", unreachable)
    (tmp_path / "submission").mkdir(exist_ok=True)
    (tmp_path / "submission_metadata.json").write_text(json.dumps({"users": users}), encoding="utf-8")
    return gradescope.grade(tmp_path)


def test_a_submitter_off_the_roster_is_never_graded_under_the_name_they_typed(tmp_path, monkeypatch, capsys):
    """Mallory, who named herself "Bob B" on Gradescope, matches no roster line by SID or email: not graded (not as
    Bob, not as anyone), and the output tells her and the instructor what to fix."""
    results = grade_as(tmp_path, monkeypatch, [{"name": "Bob B", "sid": "M666", "email": "mallory@example.edu"}])
    assert results["score"] == 0 and results["tests"] == []
    assert results["output"].startswith("Not graded: no submitter of this submission")
    assert "'M666'" in results["output"] and "mallory@example.edu" in results["output"]
    assert "Bob" not in results["output"] and results["extra_data"]["student"] is None
    assert "roster" in results["output"] and "uploads the autograder again" in results["output"]
    assert "not graded" in capsys.readouterr().err  # the autograder's own output, which the instructor sees
    assert json.loads((tmp_path / "results" / "results.json").read_text()) == results


def test_no_submitter_and_no_roster_are_not_graded_either(tmp_path, monkeypatch):
    assert "no submitter" in grade_as(tmp_path, monkeypatch, [])["output"]
    monkeypatch.setattr(gradescope, "_config", lambda root: tmp_path / "none")
    assert "holds no roster" in gradescope.grade(tmp_path)["output"]


def test_the_autograder_zip_needs_a_roster(tmp_path, monkeypatch):
    monkeypatch.setenv("TOYBOOK_COURSE_DIR", str(tmp_path))
    course_secret.make(tmp_path)
    with pytest.raises(SystemExit):
        cli.main(["gradescope"])
    assert not (tmp_path / "gradescope-autograder.zip").exists()


def test_gradescope_and_the_export_match_a_submitter_by_one_rule(tmp_path):
    """SID first (in NFC, as the roster's), then email in any case; the autograder (gradescope.student_of) and the
    export's intake (lms) both ask course.roster.find_submitter, so they agree on every submitter."""
    from course import lms
    from course import roster as rosters

    nfd = unicodedata.normalize("NFD", "Ñ1")
    roster = f"name,login,sis_id\nAna,ana@example.edu,{nfd}\nBo,bo@example.edu,B2\n"
    (tmp_path / "roster.csv").write_text(roster, encoding="utf-8")
    members = lms.read_roster(tmp_path / "roster.csv").members
    by_sid, by_login = rosters.identity_keys(members)
    cases = [({"sid": "Ñ1"}, "Ana"), ({"sid": nfd, "email": "bo@example.edu"}, "Ana"),
             ({"sid": "nobody", "email": "BO@Example.EDU"}, "Bo"), ({"name": "Ana"}, None), ({"sid": " "}, None)]
    for person, name in cases:
        member, _ = rosters.find_submitter(person, by_sid, by_login)
        assert (member.name if member else None) == name, person
        (tmp_path / "submission_metadata.json").write_text(json.dumps({"users": [person]}), encoding="utf-8")
        assert gradescope.student_of(tmp_path, tmp_path)[0] == name, person
        found = lms._match("submission_1/x.ipynb", "gradescope", {}, by_sid, by_login, {"1": [person]})
        assert ([m.name for m in found[0]] or [None]) == [name], (person, found)


# -- issue 47, part 4: a Python the sandbox's uid can run, or one clear line before grading anything -----------------
def test_the_uid_route_says_so_when_the_graders_python_lies_in_a_private_folder(tmp_path, monkeypatch):
    """A Python under a 0700 folder (pyenv under root's home): the uid isolation's requirements name the folder in
    one line; a Python every user can reach passes."""
    from course import sandbox

    private = tmp_path / "home"
    (private / "venv" / "bin").mkdir(parents=True)
    python = private / "venv" / "bin" / "python"
    shutil.copy("/bin/true", python)
    os.chmod(tmp_path, 0o755)
    monkeypatch.setenv("TOYBOOK_SANDBOX", "uid")
    for attr, value in (("executable", str(python)), ("prefix", str(private / "venv")), ("base_prefix", "/usr")):
        monkeypatch.setattr(sandbox.sys, attr, value)
    monkeypatch.setattr(sandbox, "_ancestors", lambda p: [q for q in reversed(p.parents) if q.is_relative_to(tmp_path)])
    os.chmod(private, 0o700)
    said = sandbox.requirements()
    assert said and "\n" not in said and f"lies under {private} (mode 0700)" in said and str(python) in said
    os.chmod(private, 0o755)
    assert sandbox.requirements() is None
    os.chmod(python, 0o700)
    assert "(mode 0700)" in sandbox.requirements()


@pytest.mark.slow
def test_on_gradescope_a_python_out_of_the_sandboxs_reach_is_said_whole_before_grading(autograder, image):
    """The real autograder where bubblewrap cannot start and /autograder (which holds the venv) is private: not graded,
    with both reasons whole, and no code exercise run."""
    _, secret = autograder
    ag = submit(image, answered("Ana", course_secret.student_key(secret, "Ana")), [{"sid": "S2"}])
    os.chmod(ag, 0o700)
    try:
        done = run(ag, no_bwrap=True)
    finally:
        os.chmod(ag, 0o755)
    results = json.loads((ag / "results" / "results.json").read_text())
    assert done.returncode == 0 and results["tests"] == [] and results["score"] == 0
    output = results["output"]
    assert output.startswith("Not graded: no sandbox could start here (bubblewrap: a test sandbox did not start")
    assert "another uid: the sandbox's uid cannot run the grader's Python /autograder/venv/bin/python: it lies " \
           "under /autograder (mode 0700)" in output and "…" not in output
    assert output.rstrip().endswith("ask your instructor.")
