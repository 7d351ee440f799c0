"""Issue 47, part 5: every file the course writes that holds the secret, a key, a name's pseudonym or marks is the
instructor's alone (0600, in folders 0700), whatever the umask. The commands run here under umask 000, as the worst
case; then every file and folder they wrote is walked and its mode checked."""

from __future__ import annotations

import os
import stat
import zipfile
from pathlib import Path

import nbformat
import pytest

from course import cli, editions, private
from course import secret as course_secret
from tests.test_grading import LIMITS, own_uids

NOTEBOOK = "4.1-formal-mapping.ipynb"
ROSTER = "name,login,sis_id\nalice,alice@example.edu,S1\nbob,=cmd|' /C calc'!A0,S2\n"


@pytest.fixture
def no_umask():
    old = os.umask(0)
    try:
        yield
    finally:
        os.umask(old)


def modes(root: Path) -> dict[str, str]:
    """{path under root: its mode} for every file and folder that is not the instructor's alone."""
    loose = {}
    for here, dirs, files in os.walk(root):
        for name in dirs + files:
            path = Path(here) / name
            mode = stat.S_IMODE(path.lstat().st_mode)
            if mode & 0o077:
                loose[str(path.relative_to(root))] = f"{mode:04o}"
    return loose


def test_the_private_writer_ignores_the_umask(tmp_path, no_umask):
    path = private.write(private.folder(tmp_path / "a" / "b") / "x.csv", "secret")
    assert stat.S_IMODE(path.stat().st_mode) == 0o600 and stat.S_IMODE(path.parent.stat().st_mode) == 0o700
    with private.replacing(tmp_path / "z.zip") as tmp, zipfile.ZipFile(tmp, "w") as z:
        z.writestr("k", "v")
    assert stat.S_IMODE((tmp_path / "z.zip").stat().st_mode) == 0o600
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".")]  # no temporary file left


@pytest.mark.slow
def test_what_the_commands_write_is_the_instructors_alone(tmp_path, monkeypatch, no_umask):
    own_uids(monkeypatch)
    home = tmp_path / "course"
    monkeypatch.setenv("TOYBOOK_COURSE_DIR", str(home))
    course_secret.make(home)
    (home / "roster.csv").write_text(ROSTER, encoding="utf-8")
    os.chmod(home, 0o755)  # the course folder itself is the instructor's to set; what is written in it is checked
    assert cli.main(["editions", "--students", "roster.csv"]) == 0
    assert cli.main(["gradescope"]) == 0
    eds = home / "editions"
    cls = tmp_path / "class"
    for student in ("alice", "bob"):
        nb = nbformat.read(eds / "student" / student / NOTEBOOK, as_version=4)
        (cls / student).mkdir(parents=True)
        nbformat.write(nb, cls / student / NOTEBOOK)
    out = tmp_path / "out"
    cli.grade(cls, out, jobs=1, timeout=120, limits=LIMITS, progress=False, anonymous=True,
              secret=course_secret.load(home), roster_file=home / "roster.csv")
    written = {"editions": eds, "out": out}
    assert (home / "gradescope-autograder.zip").exists() and (out / "written-key.csv").exists()
    assert (out / "gradebook.csv").exists() and (out / "canvas.csv").exists()
    assert stat.S_IMODE((home / "gradescope-autograder.zip").stat().st_mode) == 0o600
    for what, root in written.items():
        assert modes(root) == {}, what
    assert {p.name for p in home.iterdir() if stat.S_IMODE(p.stat().st_mode) & 0o077} <= {"roster.csv"}
    assert editions  # the editions module wrote the student editions above (with each student's key)
