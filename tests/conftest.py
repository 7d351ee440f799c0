"""Shared fixtures: the book built once per test session, and a local server for it."""

from __future__ import annotations

import contextlib
import fcntl
import functools
import http.server
import os
import re
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
ARTIFACTS = ROOT / "test-artifacts"
sys.path.insert(0, str(ROOT / "book" / "_ext"))
import toysite  # noqa: E402

SITE = ROOT / "_build" / "html"  # where scripts/book.sh builds: the tests and the reader share one build


def _say(request, text: str) -> None:
    """A line on the terminal while pytest captures output (also from an xdist worker, through its stderr)."""
    capman = request.config.pluginmanager.getplugin("capturemanager")
    with capman.global_and_fixture_disabled() if capman else contextlib.nullcontext():
        sys.stderr.write(f"\n[book] {text}\n")
        sys.stderr.flush()


def build_book(root: Path, out: Path | None, log: Path, say=lambda text: None, timeout: float = 1800) -> Path:
    """``jupyter-book build ROOT -W -n --keep-going`` (into ``out``, else ``ROOT/_build``), its log in ``log`` and
    each notebook's progress through ``say``; returns the html folder, or fails with the log's end."""
    jb = Path(sys.executable).with_name("jupyter-book")
    cmd = [str(jb), "build", str(root), "-W", "-n", "--keep-going", *(["--path-output", str(out)] if out else [])]
    start, lines = time.monotonic(), []
    log.parent.mkdir(parents=True, exist_ok=True)

    def read(stream, f):
        for line in stream:
            f.write(line)
            lines.append(line)
            done = re.search(r"([\w.-]+\.ipynb): Executed notebook in ([\d.]+) seconds", line)
            if done:
                say(f"  executed {done.group(1)} in {float(done.group(2)):.0f} s "
                    f"({time.monotonic() - start:.0f} s so far)")

    # The build runs in a process group of its own. Once it ends, whatever it left behind goes too: a process that
    # still held the output pipe (it happened twice, with KaTeX's render server) kept the tests waiting for the
    # pipe's end, and closing the pipe under the reading thread then blocked as well.
    with log.open("w") as f, subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                                              start_new_session=True) as proc:
        reader = threading.Thread(target=read, args=(proc.stdout, f), daemon=True)
        reader.start()
        try:
            code = proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            code = None
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
        code = proc.wait() if code is None else code
        reader.join(timeout=30)
    text = "".join(lines)
    assert code == 0, f"the book build failed (log in {log}):\n{text[-4000:]}"
    return (out or root) / "_build" / "html"


@contextlib.contextmanager
def busy_loops(n: int = 2):
    """``n`` processes that spin on a core each, as other work on the machine would."""
    procs = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(n)]
    try:
        yield
    finally:
        for proc in procs:
            proc.kill()
            proc.wait()


def pytest_collection_modifyitems(items) -> None:
    """Run the tests in an order that keeps every test process busy (issue 43). The book is built once, by the
    first process that needs it, while the others wait on its lock: so a long test that needs the book (marked
    ``early``) goes first and its process builds the book while the others run the tests that do not need it, slow
    ones first; the tests that need the book come last, slow ones first, so that the run ends on short tests.
    Within each group the order is pytest's."""

    def group(item) -> int:
        needs_book = "built_site" in item.fixturenames
        slow = item.get_closest_marker("slow") is not None
        if needs_book and item.get_closest_marker("early"):
            return 0
        return (3 if needs_book else 1) + (0 if slow else 1)

    items.sort(key=group)


@pytest.fixture(scope="session")
def built_site(request) -> Path:
    """The HTML folder of the book, built with warnings as errors (every notebook executed).

    The build ``scripts/book.sh`` made (``_build/html``) is reused while it is current: its stamp
    (``_build/.toybook-inputs``, written by a warning-free ``-W -n`` build) holds the hash of everything the build
    reads (``toysite.inputs_hash``: chapters, toy, book, _config.yml, _toc.yml, the installed packages), so any
    change to those, a notebook included, means a new build. Otherwise the book is built there once, by whichever
    test process gets there first (the others wait for it), with its progress on the terminal.
    Set TOY_BUILT_SITE to a ``_build/html`` folder to use that one, current or not.
    """
    reuse = os.environ.get("TOY_BUILT_SITE")
    if reuse:
        return Path(reuse)
    SITE.parent.mkdir(exist_ok=True)
    with open(SITE.parent / ".toybook-build.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # one build for all the xdist workers
        if toysite.is_current(SITE):
            return SITE
        _say(request, f"building the book into {SITE} for the tests (about 1.5 min on 2 idle cores; log in "
                      f"{ARTIFACTS / 'book-build.log'}; scripts/book.sh's build is reused when current)...")
        start = time.monotonic()
        build_book(ROOT, None, ARTIFACTS / "book-build.log", say=lambda text: _say(request, text))
        assert toysite.stamp_path(SITE).is_file(), "the build left no stamp of its inputs (book/_ext/toybook.py)"
        _say(request, f"book built in {time.monotonic() - start:.0f} s")
    return SITE


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


@pytest.fixture(scope="session")
def site_url(built_site) -> str:
    """The built book served on 127.0.0.1 at a free port, for the browser tests."""
    handler = functools.partial(_QuietHandler, directory=str(built_site))
    with contextlib.closing(socket.socket()) as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    server = http.server.ThreadingHTTPServer(("127.0.0.1", port), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{port}"
    server.shutdown()
