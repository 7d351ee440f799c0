#!/usr/bin/env bash
# Set up and run every test: lint, the toy package, explorers, notebooks, the book build, and the browser tests
# (Debian's Chromium driven by playwright, against the built site and a headless JupyterLab).
# Arguments go to pytest. Tests run in one process per core (pytest-xdist, `-n $(nproc)`) unless you pass -n.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
# nbgrader in an environment of its own (requirements-nbgrader.txt says why); tests/test_grading.py uses it.
# Installed once, then again only when requirements-nbgrader.txt or the Python changes (a stamp, as in setup.sh).
if [ ! -x .venv-nbgrader/bin/python ]; then
  "${PYTHON:-python3}" -m venv .venv-nbgrader
fi
nbgrader_hash=$({ cat requirements-nbgrader.txt; .venv-nbgrader/bin/python -c 'import sys; print(sys.version)'; } \
  | sha256sum | cut -d' ' -f1)
if [ "$(cat .venv-nbgrader/.toybook-setup 2>/dev/null)" != "$nbgrader_hash" ]; then
  echo "Installing nbgrader into .venv-nbgrader..."
  .venv-nbgrader/bin/python -m pip install -qq -r requirements-nbgrader.txt
  echo "$nbgrader_hash" > .venv-nbgrader/.toybook-setup
fi

# Debian packages the tests need: Chromium for the browser tests, bubblewrap for the course grader's sandbox
source scripts/debian.sh
debian_packages "the tests" chromium=chromium bwrap=bubblewrap || exit 1
.venv/bin/ruff check .
workers=(-n "$(nproc)")
for arg in "$@"; do
  case "$arg" in
    -n|-n*|--numprocesses|--numprocesses=*|no:xdist|--pdb|--trace) workers=() ;;
  esac
done
.venv/bin/python -m pytest "${workers[@]}" "$@"
