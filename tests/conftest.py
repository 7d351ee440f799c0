"""Shared fixtures: the book built once per test session, and a local server for it."""

from __future__ import annotations

import contextlib
import functools
import http.server
import os
import socket
import subprocess
import sys
import threading
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
ARTIFACTS = ROOT / "test-artifacts"


@pytest.fixture(scope="session")
def built_site(tmp_path_factory) -> Path:
    """The HTML folder of the book, built with warnings as errors (every notebook executed).

    Set TOY_BUILT_SITE to an existing ``_build/html`` folder to reuse a build while iterating locally.
    """
    reuse = os.environ.get("TOY_BUILT_SITE")
    if reuse:
        return Path(reuse)
    out = tmp_path_factory.mktemp("book")
    jb = Path(sys.executable).with_name("jupyter-book")
    proc = subprocess.run(
        [str(jb), "build", str(ROOT), "--path-output", str(out), "-W", "-n", "--keep-going"],
        capture_output=True, text=True, timeout=1800,
    )
    log = proc.stdout + proc.stderr
    ARTIFACTS.mkdir(exist_ok=True)
    (ARTIFACTS / "book-build.log").write_text(log)
    assert proc.returncode == 0, f"the book build failed (log in {ARTIFACTS / 'book-build.log'}):\n{log[-4000:]}"
    return out / "_build" / "html"


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
