"""Gradescope's autograder: ``course.py gradescope`` writes the zip Gradescope builds its image from, and
``run(root)`` is what its ``run_autograder`` runs on each submission.

The zip holds ``setup.sh`` (run once, as root with a bare environment: a Python of 3.11 or newer, the image's or
Ubuntu's ``python3.11``; bubblewrap and util-linux; ``requirements-grader.txt`` alone into ``/autograder/venv``, and a
path file for the zip's own ``toy`` and ``course``; on an image it cannot serve, one line naming the base image to
choose), ``run_autograder``, the book's code (``toybook/``: ``course/``, ``toy/``, ``chapters/``) and the course's own
files (``toybook/config/``: the course secret, the roster, the assignment), which no student sees.

On each submission, as root: ``/autograder/source`` is made readable by root alone (the secret and the solutions in
it); the student is found on the roster by the SID, else the email, of ``submission_metadata.json``, so their instance
is the one their edition showed (a submitter on the roster by neither is not graded, and the output says what to
fix: the name a submitter types on Gradescope never chooses an instance); the notebook in
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

from . import private

ROOT = Path(__file__).resolve().parents[1]
SETUP = r"""#!/usr/bin/env bash
# Gradescope runs this once, as root and with a bare environment, when it builds the autograder's image from the
# zip unpacked at /autograder/source. It installs what grading needs, and nothing of the book's toolchain: a Python
# of 3.11 or newer (the image's own if it has one, else Ubuntu's python3.11), bubblewrap and util-linux (setpriv,
# prlimit), and requirements-grader.txt into /autograder/venv. On an image it cannot serve it stops with one line.
set -euo pipefail
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin LANG=C.UTF-8 DEBIAN_FRONTEND=noninteractive
BOOK=/autograder/source/toybook
IMAGE="Ubuntu 22.04 or newer (variant Base)"
stop() { echo "setup.sh: $1" >&2; exit 1; }
usable() { "$1" -c 'import sys, ensurepip; ensurepip.version(); sys.exit(sys.version_info < (3, 11))' 2>/dev/null; }
python_here() {
  local p
  for p in python3.13 python3.12 python3.11 python3; do
    if command -v "$p" >/dev/null && usable "$(command -v "$p")"; then command -v "$p"; return 0; fi
  done
  return 1
}
missing=()
command -v bwrap >/dev/null || missing+=(bubblewrap)
{ command -v setpriv && command -v prlimit; } >/dev/null || missing+=(util-linux)
python_here >/dev/null || missing+=(python3.11 python3.11-venv)
if [ ${#missing[@]} -gt 0 ]; then
  echo "setup.sh: installing ${missing[*]} with apt-get"
  if ! { command -v apt-get >/dev/null && apt-get update -qq >/tmp/toybook-apt.log 2>&1 \
         && apt-get install -y -qq --no-install-recommends "${missing[@]}" >>/tmp/toybook-apt.log 2>&1; }; then
    have=$(python3 --version 2>/dev/null || echo "no python3")
    stop "could not install ${missing[*]} (this image has $have; the grader needs 3.11 or newer; see \
/tmp/toybook-apt.log): choose the base image $IMAGE under Configure Autograder"
  fi
fi
PYTHON=$(python_here) || stop "no Python 3.11 or newer with venv here: choose the base image $IMAGE under \
Configure Autograder"
echo "setup.sh: $("$PYTHON" --version) at $PYTHON"
chmod o+x /autograder  # the uid sandbox's Python is /autograder/venv's: others may pass through, not list
rm -rf /autograder/venv
"$PYTHON" -m venv /autograder/venv
/autograder/venv/bin/python -m pip install -q --no-input -r "$BOOK/requirements-grader.txt"
# toy and course from the zip's own files: a path file, so the only copy stays in /autograder/source, which grading
# makes root's alone (a copy in site-packages would be readable by the sandbox's uid)
site=$(/autograder/venv/bin/python -c 'import site; print(site.getsitepackages()[0])')
echo "$BOOK" > "$site/toybook.pth"
/autograder/venv/bin/python -I -c 'import course.gradescope, toy, IPython, nbformat; print("setup.sh: ready")'
"""
RUN = """#!/usr/bin/env bash
# Gradescope runs this, as root, on each submission: it writes /autograder/results/results.json.
cd /autograder/source/toybook
exec /autograder/venv/bin/python -I -c 'from course import gradescope; gradescope.main()'
"""
REQUIREMENTS = "requirements-grader.txt"
PACKED = ("course", "toy", "chapters", REQUIREMENTS)
VISIBILITY = "after_published"


def write_autograder(out: Path, secret: bytes | None, roster_file: Path | None = None,
                     assignment_file: Path | None = None) -> Path:
    """The autograder zip at ``out`` (see the module's docstring)."""
    out.parent.mkdir(parents=True, exist_ok=True)
    with private.replacing(out) as tmp, zipfile.ZipFile(tmp, "w", zipfile.ZIP_DEFLATED) as z:
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
    return out


def _config(root: Path) -> Path:
    return root / "source" / "toybook" / "config"


def student_of(root: Path, config: Path) -> tuple[str | None, str]:
    """(the student's name on the roster, how they were found) from ``submission_metadata.json``: a submitter's SID,
    else email, on the roster (``roster.find_submitter``); (None, what to fix) if none is, since the name a
    submitter types on Gradescope never chooses the instance."""
    from . import lms
    from . import roster as rosters

    try:
        users = json.loads((root / "submission_metadata.json").read_text(encoding="utf-8")).get("users") or []
    except (OSError, ValueError, AttributeError):
        users = []
    users = [u for u in users if isinstance(u, dict)]
    rosters_here = sorted(config.glob("roster.*"))
    if not rosters_here:
        return None, ("the autograder holds no roster, so no instance can be chosen: your instructor must rebuild it "
                      "with course.py gradescope --roster")
    by_sid, by_login = rosters.identity_keys(lms.read_roster(rosters_here[0]).members)
    for user in users:
        member, how = rosters.find_submitter(user, by_sid, by_login)
        if member is not None:
            return member.name, f"{how} on the roster"
    if not users:
        return None, "Gradescope gave no submitter (submission_metadata.json), so no instance can be chosen"
    said = "; ".join(f"SID {str(u.get('sid') or '')!r}, email {str(u.get('email') or '')!r}" for u in users)
    return None, (f"no submitter of this submission ({said}) is on the course roster by SID or email, so it cannot be "
                  "graded: check your SID and email in Gradescope's account settings against what the course has; "
                  "your instructor adds them to the roster (sis_id, login) and uploads the autograder again")


def _isolation(limits) -> dict:
    """Which sandbox starts here: bubblewrap, else the uid isolation (as root); Refused if neither."""
    from . import sandbox

    try:
        problem = sandbox.requirements()
        if problem:
            raise sandbox.Refused(problem)
        said = sandbox.probe(limits)  # TOYBOOK_SANDBOX=uid set beforehand: the uid isolation ran, and says so
        return {"isolation": "bubblewrap" if sandbox.isolation() == "bwrap" else "another uid, without namespaces "
                "(TOYBOOK_SANDBOX=uid)", **said}
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
        return {"isolation": f"another uid, without namespaces (bubblewrap did not start: {first})",
                **said}


def grade(root: Path = Path("/autograder"), seed: int | None = None) -> dict:
    """Grade ``root/submission`` into ``root/results/results.json``; return what it holds."""
    from toy.exercises import questions

    from . import editions, sandbox
    from . import secret as course_secret
    from .assignment import Assignment, load, points_rule
    from .classroom import grade_submission, verdict
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
    if student is None:
        print(f"not graded: {found}", file=sys.stderr)  # the instructor sees it in the autograder's output too
        return _write(root, {"score": 0, "output": f"Not graded: {found}.", "tests": [],
                             "extra_data": {"student": None, "unmatched": True}})
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
            output = f"{verdict(a['status'], a['message'])}\nYour question: {prompt}"  # not "right: right."
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
    private.write(folder / "results.json", json.dumps(results, indent=2, ensure_ascii=False))
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

