#!/usr/bin/env bash
# Set up and run every test: lint, the toy package, explorers, notebooks, the book build, and the browser tests
# (Debian's Chromium driven by playwright, against the built site and a headless JupyterLab).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
# nbgrader in an environment of its own (requirements-nbgrader.txt says why); tests/test_grading.py uses it
if [ ! -x .venv-nbgrader/bin/python ]; then
  "${PYTHON:-python3}" -m venv .venv-nbgrader
fi
.venv-nbgrader/bin/python -m pip install --quiet -r requirements-nbgrader.txt
# Debian packages the tests need: Chromium for the browser tests, bubblewrap for the course grader's sandbox
missing=()
command -v chromium >/dev/null 2>&1 || missing+=(chromium)
command -v bwrap >/dev/null 2>&1 || missing+=(bubblewrap)
if [ ${#missing[@]} -gt 0 ]; then
  if [ "$(id -u)" = "0" ] && command -v apt-get >/dev/null 2>&1; then
    echo "Installing Debian's ${missing[*]} for the tests (waits for apt's lock if another program holds it)..."
    apt-get -o DPkg::Lock::Timeout=300 update -qq
    DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=300 install -y \
      "${missing[@]}"
  else
    echo "The tests need ${missing[*]}: run 'sudo apt-get install ${missing[*]}' and try again." >&2
    exit 1
  fi
fi
.venv/bin/ruff check .
.venv/bin/python -m pytest "$@"
