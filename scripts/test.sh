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
if ! command -v chromium >/dev/null 2>&1; then
  if [ "$(id -u)" = "0" ] && command -v apt-get >/dev/null 2>&1; then
    echo "Installing Debian's chromium for the browser tests..."
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null
  else
    echo "The browser tests need Chromium at /usr/bin/chromium: run 'sudo apt-get install chromium' and try again." >&2
    exit 1
  fi
fi
.venv/bin/ruff check .
.venv/bin/python -m pytest "$@"
