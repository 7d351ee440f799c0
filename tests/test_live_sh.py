"""``scripts/live.sh`` as a reader runs it (issue 42): it says what it waits for while its Jupyter server starts, and
waits as long as the server is starting; it fails only when the server (or the book's web server) stops, and then
shows that server's own error. A stand-in for ``jupyter`` (``JUPYTER``) plays the slow and the failing server, so no
real server is needed here; tests/browser/test_live_code.py runs the real one."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

SLOW_SERVER = """#!/usr/bin/env bash
# a Jupyter server that takes a while to start, then answers /api
port=$(printf '%s\\n' "$@" | sed -n 's/^--port=//p')
sleep "${SLOW_SECONDS:-3}"
exec python3 -c '
import http.server, sys
class H(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        self.send_response(200); self.end_headers(); self.wfile.write(b"{}")
    def log_message(self, *a): pass
http.server.HTTPServer(("127.0.0.1", int(sys.argv[1])), H).serve_forever()' "$port"
"""

FAILING_SERVER = """#!/usr/bin/env bash
sleep 1
echo "[C 12:00:00.000 ServerApp] ERROR: the port 1234 is already in use." >&2
exit 1
"""


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start(tmp_path: Path, server: str, **env) -> subprocess.Popen:
    fake = tmp_path / "jupyter"
    fake.write_text(server)
    fake.chmod(0o755)
    site = tmp_path / "html"
    site.mkdir()
    (site / "index.html").write_text("<!doctype html><title>book</title>")
    env = {**os.environ, "JUPYTER": str(fake), "BOOK_DIR": str(site), "BOOK_PORT": str(free_port()),
           "JUPYTER_PORT": str(free_port()), "TMPDIR": str(tmp_path), **env}
    return subprocess.Popen(["bash", str(ROOT / "scripts" / "live.sh")], env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True, start_new_session=True)


def read_until(proc: subprocess.Popen, needle: str, seconds: float) -> list[str]:
    lines, deadline = [], time.monotonic() + seconds
    while time.monotonic() < deadline:
        line = proc.stdout.readline()
        if not line and proc.poll() is not None:
            break
        lines.append(line)
        if needle in line:
            break
    return lines


def test_live_sh_says_what_it_waits_for_while_the_server_starts(tmp_path):
    proc = start(tmp_path, SLOW_SERVER, SLOW_SECONDS="12")
    try:
        lines = read_until(proc, "toy-live-token=", 90)
    finally:
        os.killpg(proc.pid, signal.SIGTERM)
        proc.wait(timeout=30)
    text = "".join(lines)
    assert "toy-live-token=" in text, text
    assert "Waiting for the Jupyter server to answer at http://127.0.0.1:" in text, text
    assert "still waiting for the Jupyter server to start (1" in text, text  # after 10 s, it says it still waits
    assert "did not start" not in text and "stopped" not in text, text


def test_live_sh_fails_at_once_with_the_servers_own_error(tmp_path):
    start_time = time.monotonic()
    proc = start(tmp_path, FAILING_SERVER)
    try:
        out, _ = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
    assert proc.returncode != 0
    assert time.monotonic() - start_time < 30
    assert "the Jupyter server (port" in out and "stopped before it answered" in out, out
    assert "ERROR: the port 1234 is already in use." in out, out
    assert "see the messages above" not in out
