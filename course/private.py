"""Files for the instructor alone: everything the course writes that holds the secret, a student's key, a name's
pseudonym, or marks (the autograder zip, the student editions, gradebooks, feedback, the marking key...).

Each is written 0600 in a folder made 0700, whatever the umask: made under a temporary name with those modes from the
start (``os.open`` with mode 0600, then ``fchmod``, since a umask can only take bits away and the test runs with
umask 000), then renamed into place, so a reader sees the old file or the new one, never half of one.
"""

from __future__ import annotations

import contextlib
import os
import secrets
from pathlib import Path

FILE_MODE, FOLDER_MODE = 0o600, 0o700


def folder(path: Path) -> Path:
    """``path`` made (with its missing parents) and set 0700."""
    path = Path(path)
    path.mkdir(parents=True, exist_ok=True)
    os.chmod(path, FOLDER_MODE)
    return path


@contextlib.contextmanager
def replacing(path: Path):
    """A temporary file beside ``path``, empty and 0600, for a library that writes to a name (zipfile, nbformat);
    renamed to ``path`` when the block ends without an exception, removed otherwise."""
    path = Path(path)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.{secrets.token_hex(3)}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, FILE_MODE)
    os.fchmod(fd, FILE_MODE)
    os.close(fd)
    try:
        yield tmp
        os.chmod(tmp, FILE_MODE)  # a library may have made the file anew
        os.replace(tmp, path)
    finally:
        with contextlib.suppress(FileNotFoundError):
            tmp.unlink()


def write(path: Path, data: str | bytes) -> Path:
    """``data`` (text as UTF-8, newlines as given) written whole to ``path``, 0600."""
    with replacing(path) as tmp:
        with open(tmp, "wb") as f:
            f.write(data.encode("utf-8") if isinstance(data, str) else data)
            f.flush()
            os.fsync(f.fileno())
    return Path(path)
