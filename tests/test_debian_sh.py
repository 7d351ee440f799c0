"""``scripts/debian.sh``'s apt-get with patience (issue 42): while another apt holds dpkg's lock, apt-get says
"Waiting for cache lock" once a second; the script says it once, that it waited, and passes on the rest."""

from __future__ import annotations

import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

FAKE_APT = """#!/usr/bin/env bash
for i in $(seq 1 42); do
  echo "E: Waiting for cache lock: Could not get lock /var/lib/dpkg/lock-frontend." \
    "It is held by process 4242 (apt-get)... ${i}s" >&2
done
echo "W: a warning of its own" >&2
exit 0
"""


def test_apt_getting_the_lock_is_said_once_not_once_a_second(tmp_path):
    (tmp_path / "apt-get").write_text(FAKE_APT)
    (tmp_path / "apt-get").chmod(0o755)
    proc = subprocess.run(["bash", "-c", f'PATH="{tmp_path}:$PATH"; source scripts/debian.sh; apt_patiently update'],
                          cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc
    said = proc.stdout + proc.stderr
    assert said.count("Waiting for cache lock") == 0 and said.count("waited for its lock") == 1, said
    assert "apt-get update waited for its lock (Could not get lock /var/lib/dpkg/lock-frontend. It is held by " \
           "process 4242 (apt-get)) before going on." in said, said
    assert "W: a warning of its own" in said
