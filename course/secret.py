"""The course's secret: one per course, made by ``course.py editions``, kept in the course folder (outside the
repository and outside the students' editions).

Each student's instance of the questions is drawn from the student's *key*, ``student_key(secret, name)``, which
the editions write into that student's notebook (``toy.exercises.student("José", "<key>")``) and the grader
computes again from the name the submission is handed in under. Without the secret, no one can compute a
classmate's key, so a classmate's instance cannot be computed with ``toy`` either. The secret also keys the
pseudonyms of anonymous marking (``pseudonym``) and nbgrader's one instance for the class
(``course.nbgrader_release.course_student``, from the secret and the release's hidden seed).
"""

from __future__ import annotations

import hashlib
import hmac
import os
import secrets
from pathlib import Path

from toy.exercises.questions import normal_name

FILE = "course-secret"
KEY_CHARS = 24  # of hex: 96 bits


def path(course: Path) -> Path:
    return Path(course) / FILE


def load(course: Path) -> bytes | None:
    """The secret of the course folder ``course``; None if it has none (yet)."""
    try:
        text = path(course).read_text(encoding="ascii").strip()
    except FileNotFoundError:
        return None
    except (OSError, UnicodeDecodeError) as err:
        raise ValueError(f"the course secret {path(course)} could not be read ({err})") from None
    try:
        secret = bytes.fromhex(text)
    except ValueError:
        raise ValueError(f"the course secret {path(course)} is not hex: restore it from a backup (a new one would "
                         "change every student's instance)") from None
    if len(secret) < 16:
        raise ValueError(f"the course secret {path(course)} is {len(secret)} bytes; it must have at least 16")
    return secret


def make(course: Path) -> bytes:
    """The course's secret, made (32 random bytes, readable by its owner only) if the folder has none."""
    have = load(course)
    if have is not None:
        return have
    Path(course).mkdir(parents=True, exist_ok=True)
    fd = os.open(path(course), os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "w", encoding="ascii") as f:
        f.write(secrets.token_hex(32) + "\n")
    return load(course)


def _mac(secret: bytes, *parts: str) -> str:
    return hmac.new(secret, "\0".join(parts).encode(), hashlib.sha256).hexdigest()


def student_key(secret: bytes | None, name: str) -> str | None:
    """The key ``name``'s instance is drawn from (None without a secret: the instance is then drawn from the name
    alone, as the book's ``toy`` does on its own)."""
    return None if secret is None else _mac(secret, "student", normal_name(name))[:KEY_CHARS]


def pseudonym(secret: bytes, exercise: str, name: str) -> str:
    """A student's name on one exercise's marking page when marking is anonymous: not computable from the roster
    without the secret, and different in each exercise."""
    return "student " + _mac(secret, "pseudonym", exercise, normal_name(name))[:6]
