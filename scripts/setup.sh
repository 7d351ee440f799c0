#!/usr/bin/env bash
# Create .venv (if needed) and install everything from requirements.txt, including the toy package (editable).
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON=${PYTHON:-python3}
if [ ! -x .venv/bin/python ]; then
  "$PYTHON" -m venv .venv
fi
.venv/bin/python -m pip install --quiet --upgrade pip
.venv/bin/python -m pip install --quiet -r requirements.txt
# Live code (Thebe) is served from the book's own files: npm's thebe package (its built bundle only, no dependencies),
# unpacked into .venv (never committed). Without npm the book still builds; its Live code button then says so.
THEBE=thebe@0.9.3
THEBE_DIR=.venv/share/toybook-thebe
if [ ! -f "$THEBE_DIR/package/lib/index.js" ]; then
  if command -v npm >/dev/null 2>&1; then
    mkdir -p "$THEBE_DIR"
    tarball=$(cd "$THEBE_DIR" && npm pack --silent "$THEBE")
    tar -xzf "$THEBE_DIR/$tarball" -C "$THEBE_DIR" package/package.json package/lib && rm "$THEBE_DIR/$tarball"
  else
    echo "Note: npm is missing, so the book's Live code button will be off (apt-get install nodejs npm, then rerun)." >&2
  fi
fi
