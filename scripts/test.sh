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

# apt-get with patience: DPkg::Lock::Timeout makes it wait for dpkg's own lock, but not for the locks of
# /var/lib/apt/lists (apt-get update) or /var/cache/apt/archives (the download), which fail at once while another
# apt holds them (apt 2.6): so wait for those here, up to 10 minutes.
apt_patiently() {
  local err waited=0 rc
  err=$(mktemp)
  while true; do
    rc=0
    DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=600 "$@" 2>"$err" || rc=$?
    if [ "$rc" != 0 ] && grep -q "Could not get lock" "$err" && [ "$waited" -lt 600 ]; then
      echo "apt-get $1: its lock is $(grep -o 'held by process.*' "$err" | head -1 || echo 'held by another program');" \
        "waiting for it ($waited s so far)..." >&2
      sleep 10
      waited=$((waited + 10))
      continue
    fi
    cat "$err" >&2
    rm -f "$err"
    return "$rc"
  done
}

# Debian packages the tests need: Chromium for the browser tests, bubblewrap for the course grader's sandbox
missing=()
command -v chromium >/dev/null 2>&1 || missing+=(chromium)
command -v bwrap >/dev/null 2>&1 || missing+=(bubblewrap)
if [ ${#missing[@]} -gt 0 ]; then
  if [ "$(id -u)" = "0" ] && command -v apt-get >/dev/null 2>&1; then
    echo "Installing Debian's ${missing[*]} for the tests (a large download; apt lists each package it fetches)..."
    apt_patiently update -qq
    apt_patiently install -y "${missing[@]}"   # not -q: apt lists each package as it downloads it
  else
    echo "The tests need ${missing[*]}: run 'sudo apt-get install ${missing[*]}' and try again." >&2
    exit 1
  fi
fi
.venv/bin/ruff check .
workers=(-n "$(nproc)")
for arg in "$@"; do
  case "$arg" in
    -n|-n*|--numprocesses|--numprocesses=*|no:xdist|--pdb|--trace) workers=() ;;
  esac
done
.venv/bin/python -m pytest "${workers[@]}" "$@"
