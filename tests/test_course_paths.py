"""Students' work stays out of the repository: the instructors' examples grade a folder outside it, and the
repository's ``.gitignore`` ignores class folders and grading output should they land in it anyway."""

from __future__ import annotations

import os
import re
import shlex
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
README, INSTRUCTORS = ROOT / "README.md", ROOT / "book" / "instructors.md"
FLAGS = {"--resume", "--no-progress", "-h", "--help"}  # the options of `course.py grade` that take no value


def git_ignores(path: str) -> bool:
    """Whether git ignores ``path`` (relative to the repository), whether or not it exists."""
    proc = subprocess.run(["git", "-C", str(ROOT), "check-ignore", "-q", "--no-index", path], capture_output=True,
                          text=True)
    assert proc.returncode in (0, 1), proc.stderr
    return proc.returncode == 0


def shell_lines(markdown: str) -> list[str]:
    """The lines of the fenced bash blocks of ``markdown``."""
    return [line for block in re.findall(r"```bash\n(.*?)```", markdown, re.S) for line in block.splitlines()]


def folders_read(line: str) -> list[str]:
    """The folders a line of an example reads or writes: a ``cd``'s folder, the class folder of
    ``course.py grade``, and any ``--out``."""
    words = shlex.split(line, comments=True)
    found = [words[i + 1] for i, word in enumerate(words[:-1]) if word in ("cd", "--out")]
    found += [word.split("=", 1)[1] for word in words if word.startswith("--out=")]
    if any(word.endswith("course.py") for word in words) and "grade" in words:
        after = iter(words[words.index("grade") + 1:])
        for word in after:
            if not word.startswith("-"):
                found.append(word)  # the class folder
            elif word not in FLAGS and "=" not in word:
                next(after, None)  # an option's value
    return found


def outside_the_repository(folder: str) -> bool:
    """A relative folder resolves against the shell's folder, which in the examples is the repository."""
    if not folder.startswith(("~", "/", "$")):
        return False
    path = Path(os.path.expanduser(os.path.expandvars(folder))).resolve()
    return not path.is_relative_to(ROOT)


@pytest.mark.skipif(not (ROOT / ".git").exists(), reason="not a git checkout")
def test_gitignore_keeps_submissions_and_grades_out_of_commits():
    for path in ["submissions/x/4.1-formal-mapping.ipynb", "submissions/x.ipynb", "grades/submissions/gradebook.csv",
                 "grades/submissions/feedback/x.md", "nbgrader-course/submitted/x/a/4.1-formal-mapping.ipynb",
                 "autograded/x/the-llm-as-a-policy/4.2-easy-and-hard.ipynb", "gradebook.db", "grades.csv",
                 "4.1-formal-mapping.ipynb", "class-2025/alice/4.3-classical-vs-llm-rl.ipynb"]:
        assert git_ignores(path), f".gitignore does not ignore {path}"
    for path in ["chapters/04-the-llm-as-a-policy/4.1-formal-mapping.ipynb",
                 "chapters/04-the-llm-as-a-policy/4.6-a-new-section.ipynb", "course/cli.py", "tests/test_grading.py"]:
        assert not git_ignores(path), f".gitignore ignores {path}, a file of the book"
    tracked = subprocess.run(["git", "-C", str(ROOT), "ls-files", "-ci", "--exclude-standard"], capture_output=True,
                             text=True, check=True).stdout.split()
    assert not tracked, f"tracked files that .gitignore would ignore: {tracked}"


@pytest.mark.parametrize("page", [README, INSTRUCTORS], ids=["README", "instructors"])
def test_grading_examples_read_and_write_outside_the_repository(page):
    lines = shell_lines(page.read_text())
    grading = [line for line in lines if "course.py" in line or "nbgrader " in line]
    assert any("course.py grade" in line for line in grading), f"{page.name} has no grading example"
    for line in grading:
        for folder in folders_read(line):
            assert outside_the_repository(folder), (
                f"{page.name}: {line.strip()!r} reads or writes {folder}, inside the repository: students' work is one "
                "`git add .` away from a commit; use ~/toybook-course/...")
