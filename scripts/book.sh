#!/usr/bin/env bash
# Set up and build the book: every notebook is executed, warnings are errors. Output: _build/html/index.html
# Skipped when the last build is current (nothing it reads has changed); --check says whether it is, and builds nothing.
# Otherwise a notebook is executed only if it, toy or the installed packages changed since its last execution
# (book/_ext/toyexec.py replays the others' recorded executions); TOYBOOK_REBUILD=1 executes every notebook.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
# Chromium prints the chapter's PDFs (book/_ext/toypdf.py): installed when missing, as root with apt-get. Otherwise
# (or when TOYBOOK_CHROMIUM names another Chromium) nothing here: without it the book builds with no PDFs and says so
# in one line.
if [ -z "${TOYBOOK_CHROMIUM:-}" ] && [ ! -x /usr/bin/chromium ] && [ "$(id -u)" = "0" ] \
   && command -v apt-get >/dev/null; then
  source scripts/debian.sh
  debian_packages "the book's PDFs" chromium=chromium || true
fi
if [ "${TOYBOOK_PUBLISH:-0}" != "0" ]; then  # a build for publishing needs a repository (README: Publish your own copy)
  repository=$(.venv/bin/python book/_ext/toysite.py repository)
  echo "A build for publishing, from $repository"
fi
# Nothing to do when _build/html is a warning-free build of exactly what a build would read now (a hash of the
# chapters, toy, book/, the configuration, the installed packages: book/_ext/toysite.py). --check only says which.
if [ "${TOYBOOK_REBUILD:-0}" = "0" ] && .venv/bin/python book/_ext/toysite.py is-current _build/html; then
  echo "The book in _build/html is current: nothing it reads has changed since it was built, so no notebook was"
  echo "executed (TOYBOOK_REBUILD=1 bash scripts/book.sh builds it anyway)."
  [ "${1:-}" = "--check" ] && exit 0
elif [ "${1:-}" = "--check" ]; then
  echo "The book in _build/html needs a build: something it reads has changed (or it was never built)."
  exit 1
else
  .venv/bin/jupyter-book build . -W -n --keep-going
fi
echo
echo "The book is built. Open $(pwd)/_build/html/index.html, or serve it:"
echo "  .venv/bin/python -m http.server --bind 127.0.0.1 8000 --directory _build/html   # then http://127.0.0.1:8000"
