#!/usr/bin/env bash
# Set up and build the book: every notebook is executed, warnings are errors. Output: _build/html/index.html
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
if [ "${TOYBOOK_PUBLISH:-0}" != "0" ]; then  # a build for publishing needs a repository (README: Publish your own copy)
  repository=$(.venv/bin/python book/_ext/toysite.py repository)
  echo "A build for publishing, from $repository"
fi
.venv/bin/jupyter-book build . -W -n --keep-going
echo
echo "The book is built. Open $(pwd)/_build/html/index.html, or serve it:"
echo "  .venv/bin/python -m http.server --bind 127.0.0.1 8000 --directory _build/html   # then http://127.0.0.1:8000"
