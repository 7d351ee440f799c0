"""Gradescope's autograder: ``course.py gradescope`` writes the zip Gradescope builds its image from, and
``run(root)`` is what its ``run_autograder`` runs on each submission.

The zip holds ``setup.sh`` (installs Python, bubblewrap and util-linux, and the book's requirements into
``/autograder/venv``), ``run_autograder``, the book's code (``toybook/``: ``course/``, ``toy/``, ``chapters/``) and the
course's own files (``toybook/config/``: the course secret, the roster, the assignment), which no student sees.

On each submission, as root: ``/autograder/source`` is made readable by root alone (the secret and the solutions in
it); the student is found on the roster by the SID, else the email, of ``submission_metadata.json`` (else their
Gradescope name is their name), so their instance is the one their edition showed; the notebook in
``submission/`` is graded exercise by exercise as ``course.py grade`` does, each in a sandbox: bubblewrap where it
starts, else (a container without user namespaces) a fresh unprivileged uid with the grader's limits
(``sandbox.isolation``); never as root, never unsandboxed. Only the grader, after every sandbox has ended, writes
``results/results.json``: a test per code exercise and per question (score, max_score, name, output, visibility),
the total, and an ``output`` that says which isolation ran.
"""

from __future__ import annotations

import json
import os
import sys
import time
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SETUP = """#!/usr/bin/env bash
# Gradescope runs this once, as root, when it builds the autograder's image.
set -euo pipefail
apt-get update
apt-get install -y --no-install-recommends python3 python3-venv python3-pip bubblewrap util-linux
python3 -m venv /autograder/venv
/autograder/venv/bin/python -m pip install -r /autograder/source/toybook/requirements.txt
/autograder/venv/bin/python -m pip install --no-deps -e /autograder/source/toybook
"""
RUN = """#!/usr/bin/env bash
# Gradescope runs this, as root, on each submission: it writes /autograder/results/results.json.
cd /autograder/source/toybook
exec "${TOYBOOK_PYTHON:-/autograder/venv/bin/python}" -I -c \\
  'import sys; sys.path.insert(0, "/autograder/source/toybook"); from course import gradescope; gradescope.main()'
"""
PACKED = ("course", "toy", "chapters", "scripts/course.py", "requirements.txt", "pyproject.toml")
VISIBILITY = "after_published"


def write_autograder(out: Path, secret: bytes | None, roster_file: Path | None = None,
                     assignment_file: Path | None = None) -> Path:
    """The autograder zip at ``out`` (see the module's docstring)."""
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_name(f".{out.name}.tmp")
    with zipfile.ZipFile(tmp, "w", zipfile.ZIP_DEFLATED) as z:
        for name, text in (("setup.sh", SETUP), ("run_autograder", RUN)):
            info = zipfile.ZipInfo(name)
            info.external_attr = 0o100755 << 16
            z.writestr(info, text)
        for item in PACKED:
            path = ROOT / item
            files = [path] if path.is_file() else sorted(p for p in path.rglob("*") if p.is_file())
            for f in files:
                rel = f.relative_to(ROOT)
                if "__pycache__" in rel.parts or ".ipynb_checkpoints" in rel.parts or "calibration" in rel.parts:
                    continue
                z.write(f, f"toybook/{rel.as_posix()}")
        if secret is not None:
            z.writestr("toybook/config/course-secret", secret.hex() + "\n")
        if roster_file is not None:
            z.write(roster_file, "toybook/config/roster" + (Path(roster_file).suffix or ".txt"))
        if assignment_file is not None:
            z.write(assignment_file, "toybook/config/assignment.toml")
    tmp.replace(out)
    return out


def _config(root: Path) -> Path:
    return root / "source" / "toybook" / "config"


def student_of(root: Path, config: Path) -> tuple[str, str]:
    """(the student's name on the roster, how they were found) from ``submission_metadata.json``."""
    from toy.exercises.questions import normal_name

    from . import lms

    try:
        users = json.loads((root / "submission_metadata.json").read_text(encoding="utf-8")).get("users") or []
    except (OSError, ValueError):
        users = []
    rosters = sorted(config.glob("roster.*"))
    members = lms.read_roster(rosters[0]).members if rosters else []
    for user in users:
        sid, email = normal_name(str(user.get("sid") or "")), normal_name(str(user.get("email") or "")).lower()
        for m in members:
            if sid and m.sis_id == sid:
                return m.name, f"SID {sid} on the roster"
            if email and normal_name(m.login).lower() == email:
                return m.name, f"email {email} on the roster"
    if users and users[0].get("name"):
        return normal_name(str(users[0]["name"])), "not on the roster: the instance is drawn from the Gradescope name"
    return "student", "no submission_metadata.json: the instance is drawn from the name 'student'"


def _isolation(limits) -> dict:
    """Which sandbox starts here: bubblewrap, else the uid isolation (as root); Refused if neither."""
    from . import sandbox

    try:
        problem = sandbox.requirements()
        if problem:
            raise sandbox.Refused(problem)
        return {"isolation": "bubblewrap", **sandbox.probe(limits)}
    except sandbox.Refused as first:
        if os.geteuid() != 0:
            raise
        os.environ["TOYBOOK_SANDBOX"] = "uid"
        try:
            problem = sandbox.requirements()
            if problem:
                raise sandbox.Refused(problem) from None
            said = sandbox.probe(limits)
        except sandbox.Refused as second:
            os.environ.pop("TOYBOOK_SANDBOX", None)
            raise sandbox.Refused(f"bubblewrap: {first}; another uid: {second}") from None
        return {"isolation": f"another uid, without namespaces (bubblewrap did not start: {str(first)[:200]})",
                **said}


def grade(root: Path = Path("/autograder"), seed: int | None = None) -> dict:
    """Grade ``root/submission`` into ``root/results/results.json``; return what it holds."""
    from toy.exercises import questions

    from . import editions, sandbox
    from . import secret as course_secret
    from .assignment import Assignment, load, points_rule
    from .classroom import grade_submission
    from .marks import AnswerKey, Settings

    start = time.monotonic()
    source = root / "source"
    if os.geteuid() == 0 and source.exists():
        os.chmod(source, 0o700)  # the secret, the roster and the solutions: root's alone
    config = _config(root)
    secret = course_secret.load(config) if (config / course_secret.FILE).exists() else None
    book = editions.book()
    assignment = (load(config / "assignment.toml", {label: parts for nb in book.values()
                                                    for label, parts in nb.parts.items()})
                  if (config / "assignment.toml").exists() else Assignment())
    student, found = student_of(root, config)
    limits = sandbox.Limits(memory_mb=1024, processes=64, disk_mb=64, cpu_seconds=300)
    settings = Settings(setup_seconds=120, case_seconds=10, limits=limits)
    lines = [f"Graded as {student} ({found})."]
    tests: list[dict] = []
    try:
        enforced = _isolation(limits)
    except sandbox.Refused as err:
        return _write(root, {"score": 0, "output": f"Not graded: no sandbox could start here ({err}). Student code "
                             "never runs unsandboxed; ask your instructor.", "tests": []})
    lines.append(f"Sandbox: {enforced['isolation']}; user: {enforced['user']}; limits: {enforced['limits']}.")
    seed = seed if seed is not None else int.from_bytes(os.urandom(4), "big") % 2**31
    keys = {name: AnswerKey(seed, dict(nb.exercises)) for name, nb in book.items()}
    notebooks = sorted((root / "submission").rglob("*.ipynb"))
    notebooks = [p for p in notebooks if ".ipynb_checkpoints" not in p.parts]
    if not notebooks:
        lines.append("No notebook (.ipynb) was submitted.")
    rule = points_rule(book, assignment)
    worth = rule.worth
    graded_notebooks = set()
    for path in notebooks:
        record = grade_submission(student, path, book, keys, settings, 600, secret, assignment)
        name = record.get("notebook")
        if record.get("problem"):
            lines.append(f"{path.name}: {record['problem']}")
        if name is None or name in graded_notebooks:
            if name:
                lines.append(f"{path.name}: a second copy of {name}, not graded")
            continue
        graded_notebooks.add(name)
        for r in record["exercises"]:
            part = r["exercise"]
            points = worth.get(part, 0)
            mark = rule.mark(part, int(r["status"] == "pass"))
            output = f"{r['status']}: {r['message']} ({r['cases_passed']} of {r['cases_total']} hidden cases)"
            output += "".join(f"\n- {p}" for p in r.get("problems", [])[:3])
            tests.append({"name": f"{part} (code)", "score": round(mark, 4), "max_score": round(points, 4),
                          "output": output, "visibility": VISIBILITY})
        for a in record.get("answers", []):
            q = questions.QUESTIONS.get(a["question"])
            if q is None or not rule.picks(q.name, q.exercise):
                continue
            prompt = q.spec(q.instance(student, course_secret.student_key(secret, student)))["prompt"]
            output = f"{a['status']}: {a['message']}\nYour question: {prompt}"
            if q.practice:
                output += "\n(practice: checked, never graded)"
            points = 0 if q.practice else worth.get(q.name, 0)
            mark = rule.mark(q.name, a["mark"]) if points else 0
            tests.append({"name": f"{q.name} (question)", "score": round(mark, 4), "max_score": round(points, 4),
                          "output": output, "visibility": VISIBILITY})
    written = sorted({label for nb in book.values() for label in nb.written if assignment.picks(label)})
    if written:
        lines.append("Written answers (" + ", ".join(written) + ") are marked by hand, not here.")
    lines.append(f"Graded in {time.monotonic() - start:.1f} s.")
    total = round(sum(t["score"] for t in tests), 4)
    return _write(root, {"score": total, "output": "\n".join(lines), "tests": tests,
                         "extra_data": {"student": student, "seed": seed, "isolation": enforced["isolation"]}})


def _write(root: Path, results: dict) -> dict:
    """results.json, written whole by the grader (root) after every sandbox has ended."""
    folder = root / "results"
    folder.mkdir(parents=True, exist_ok=True)
    tmp = folder / f".results.{os.getpid()}.tmp"
    tmp.write_text(json.dumps(results, indent=2, ensure_ascii=False), encoding="utf-8")
    os.replace(tmp, folder / "results.json")
    return results


def main() -> None:
    try:
        grade(Path(os.environ.get("TOYBOOK_AUTOGRADER_ROOT", "/autograder")))
    except Exception as err:  # noqa: BLE001 - Gradescope shows the output; the student gets a line, not a trace
        _write(Path(os.environ.get("TOYBOOK_AUTOGRADER_ROOT", "/autograder")),
               {"score": 0, "output": f"The autograder failed ({type(err).__name__}: {err}); ask your instructor.",
                "tests": []})
        print(f"autograder failed: {err!r}", file=sys.stderr)
        raise SystemExit(1) from None

