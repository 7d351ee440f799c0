"""Issue 41: Gradescope's autograder (course/gradescope.py, ``course.py gradescope``), run here in Gradescope's own
layout: a directory bound at ``/autograder`` by bubblewrap, holding ``source/`` (the zip, unpacked),
``run_autograder``, ``submission/``, ``submission_metadata.json`` and ``results/``, as root, on the honest solution
and on a hostile notebook; once with bubblewrap, once where bubblewrap cannot start (the uid isolation). results.json
is checked against Gradescope's documented fields.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import time
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


def layout(tmp_path: Path, zip_path: Path, notebook, users: list[dict]) -> Path:
    ag = tmp_path / "autograder"
    for d in ("source", "submission", "results"):
        (ag / d).mkdir(parents=True)
    with zipfile.ZipFile(zip_path) as z:
        z.extractall(ag / "source")
    for name in ("run_autograder", "setup.sh"):
        os.chmod(ag / "source" / name, 0o755)
    shutil.copy(ag / "source" / "run_autograder", ag / "run_autograder")
    nbformat.write(notebook, ag / "submission" / CHAPTER.name)
    (ag / "submission_metadata.json").write_text(json.dumps({"id": 7, "users": users}), encoding="utf-8")
    return ag


def run(ag: Path, no_bwrap: bool = False) -> subprocess.CompletedProcess:
    """``/autograder/run_autograder`` in a root file system of its own: the machine's folders read-only, ``ag`` at
    ``/autograder``, a private /tmp; ``no_bwrap``: a ``bwrap`` that cannot start (as where there are no user
    namespaces)."""
    argv = ["bwrap", "--tmpfs", "/"]
    for top in sorted(Path("/").iterdir()):
        if top.name in ("proc", "dev", "tmp", "root", "autograder"):
            continue
        argv += ["--symlink", os.readlink(top), str(top)] if top.is_symlink() else ["--ro-bind", str(top), str(top)]
    if no_bwrap:
        argv += ["--ro-bind", "/bin/false", shutil.which("bwrap")]
    python = Path(os.path.realpath(ROOT / ".venv" / "bin" / "python"))
    argv += ["--perms", "0755", "--tmpfs", "/root"]
    if str(python).startswith("/root/"):  # the venv's Python (pyenv) lives under root's 0700 home
        base = Path(*python.parts[:3])
        argv += ["--ro-bind", str(base), str(base)]
    argv += ["--bind", str(ag), "/autograder", "--tmpfs", "/tmp"]
    if ROOT.is_relative_to("/tmp") or ROOT.is_relative_to("/root"):  # a clone there (CI's may be): its .venv seen
        argv += ["--ro-bind", str(ROOT), str(ROOT)]
    argv += ["--proc", "/proc", "--dev", "/dev", "--cap-add", "ALL",
             "--setenv", "TOYBOOK_PYTHON", str(ROOT / ".venv" / "bin" / "python"), "--",
             "/autograder/run_autograder"]
    return subprocess.run(argv, capture_output=True, text=True, timeout=300)


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


@pytest.mark.parametrize("no_bwrap", [False, True], ids=["bubblewrap", "uid"])
def test_an_honest_submission_gets_its_own_instance_marked(autograder, tmp_path, no_bwrap):
    zip_path, secret = autograder
    name = "Núñez, José"
    ag = layout(tmp_path, zip_path, answered(name, course_secret.student_key(secret, name)),
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


def test_a_hostile_submission_cannot_write_the_results_read_the_secret_or_run_as_root(autograder, tmp_path,
                                                                                    monkeypatch):
    zip_path, secret = autograder
    low, high = own_uids(monkeypatch)  # bwrap passes the environment on: this test's sandboxes use these uids
    nb = answered("Ana", course_secret.student_key(secret, "Ana"))
    for cell in nb.cells:
        if cell.source.startswith("def discounted_return") and "solution" in cell.metadata.get("tags", []):
            body = cell.source.replace("def discounted_return(reward, prompt, response, gamma):",
                                       "def _honest(reward, prompt, response, gamma):")
            cell.source = (HOSTILE + body + "\n\ndef discounted_return(reward, prompt, response, gamma):\n"
                           "    if LEAKED or ROOTED:\n        return 999.0\n"
                           "    return _honest(reward, prompt, response, gamma)\n")
    ag = layout(tmp_path, zip_path, nb, [{"name": "Ana", "sid": "", "email": "ANA@example.edu"}])
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


def test_without_a_sandbox_nothing_runs(tmp_path, monkeypatch):
    from course import sandbox

    def refuse(*args, **kwargs):
        raise sandbox.Refused("no sandbox here")

    monkeypatch.setattr(sandbox, "probe", refuse)
    monkeypatch.setattr(gradescope, "_config", lambda root: tmp_path / "none")
    (tmp_path / "submission").mkdir()
    results = gradescope.grade(tmp_path)
    assert results["score"] == 0 and results["tests"] == [] and "no sandbox could start" in results["output"]
    assert json.loads((tmp_path / "results" / "results.json").read_text()) == results
