"""The README's command for JupyterLab, exactly as printed (issue 42): ``.venv/bin/jupyter lab chapters/`` starts,
also as root (containers and CI run as root), with no flag to add: the project's settings package
(``lab-settings/jupyter_server_config.json``, installed into the environment's ``etc/jupyter``) allows
it."""

from __future__ import annotations

import os
import re
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_the_readmes_jupyterlab_command_starts_as_it_is_printed(tmp_path):
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    command = re.search(r"^(\.venv/bin/jupyter lab chapters/)\s*$", readme, re.M)
    assert command, "the README no longer prints `.venv/bin/jupyter lab chapters/`"
    assert (Path(sys.prefix) / "etc" / "jupyter" / "jupyter_server_config.json").is_file()
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    env = {**os.environ, "JUPYTER_CONFIG_DIR": str(tmp_path / "config"), "JUPYTER_RUNTIME_DIR": str(tmp_path / "rt"),
           "JUPYTER_DATA_DIR": str(tmp_path / "data"), "BROWSER": "true"}
    # the printed command; the port given so that it cannot meet another server's, no browser to open here
    cmd = [*command.group(1).split(), "--no-browser", f"--port={port}", "--ServerApp.port_retries=0"]
    proc = subprocess.Popen(cmd, cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                            start_new_session=True)
    answered = False
    try:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and proc.poll() is None and not answered:
            try:
                urllib.request.urlopen(f"http://127.0.0.1:{port}/api", timeout=2)
                answered = True
            except OSError:
                time.sleep(0.5)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGTERM)
        out, _ = proc.communicate(timeout=60)
    assert answered, f"`{command.group(1)}` did not start (as uid {os.getuid()}):\n{out[-3000:]}"
    assert "--allow-root" not in out
