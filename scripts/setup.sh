#!/usr/bin/env bash
# Create .venv (if needed) and install everything from requirements.txt, including the toy package (editable).
# Skipped in a second when nothing it installs has changed: .venv/.toybook-setup holds a hash of what it installed
# from (requirements.txt, pyproject.toml, lab-settings/, this script with its npm versions, the venv's Python).
# TOYBOOK_SETUP=force reinstalls anyway.
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON=${PYTHON:-python3}
# (without .venv, as in a worktree of this clone that has none, the filter passes the notebook through unchanged)
STRIP_FILTER="if [ -x .venv/bin/python ]; then .venv/bin/python book/_ext/toysite.py strip-outputs; else cat; fi"
# The chapters' notebooks are stored without outputs (.gitattributes): git's clean filter, in this clone's config,
# takes out what JupyterLab saves with them (outputs, execution counts), so running a notebook is no change to commit.
if git rev-parse --is-inside-work-tree >/dev/null 2>&1 \
   && [ "$(git config --get filter.toybook-strip-outputs.clean || true)" != "$STRIP_FILTER" ]; then
  git config filter.toybook-strip-outputs.clean "$STRIP_FILTER"
fi
STAMP=.venv/.toybook-setup
if [ ! -x .venv/bin/python ]; then
  echo "Creating .venv with $("$PYTHON" --version 2>&1)..."
  "$PYTHON" -m venv .venv
fi

setup_hash() {  # what the installed environment depends on; npm's presence too (without it, npm files are skipped)
  {
    cat requirements.txt pyproject.toml scripts/setup.sh
    find lab-settings -type f ! -path '*/build/*' ! -path '*.egg-info*' | LC_ALL=C sort | xargs cat
    .venv/bin/python -c 'import sys; print(sys.version)'
    command -v npm >/dev/null 2>&1 && echo "npm: yes" || echo "npm: no"
  } | sha256sum | cut -d' ' -f1
}

wanted=$(setup_hash)
if [ "${TOYBOOK_SETUP:-}" != "force" ] && [ -f "$STAMP" ] && [ "$(cat "$STAMP")" = "$wanted" ]; then
  echo "Set-up: .venv is current (nothing in requirements.txt, pyproject.toml or lab-settings/ changed)."
  exit 0
fi
rm -f "$STAMP"
echo "Installing the Python packages into .venv (a minute or two the first time)..."
# -qq: pip's errors only (no notes about this machine's package indexes, no setuptools banners for the editable toy)
.venv/bin/python -m pip install -qq --upgrade pip
.venv/bin/python -m pip install -qq -r requirements.txt
# Files from npm, each one package without dependencies, unpacked into .venv (never committed): Thebe for Live code,
# plotly's partial bundle (the traces the book draws, a quarter of plotly.min.js), KaTeX's stylesheet and fonts (the
# build typesets the math with KaTeX under Node.js), and the checkers the tests run on the built pages (axe-core, the
# Nu Html Checker). Without npm the book still builds (with the full plotly.js from the Python package, MathJax
# typesetting in the reader's browser, and its Live code button saying it is off); the tests that need the checkers
# say what is missing.
NPM_DIR=.venv/share/toybook-npm
npm_unpack() {  # npm_unpack PACKAGE@VERSION FOLDER FILE-THAT-SHOWS-IT-IS-THERE [PATHS IN THE TARBALL...]
  local spec=$1 folder=$2 marker=$3
  shift 3
  [ -f "$folder/$marker" ] && grep -q "\"version\": \"${spec##*@}\"" "$folder/package/package.json" 2>/dev/null \
    && return 0
  if ! command -v npm >/dev/null 2>&1; then
    echo "Note: npm is missing, so $spec is not installed (apt-get install nodejs npm, then rerun)." >&2
    return 0
  fi
  echo "Fetching $spec from npm..."
  rm -rf "$folder" && mkdir -p "$folder"
  local tarball
  tarball=$(cd "$folder" && npm pack --silent "$spec")
  tar -xzf "$folder/$tarball" -C "$folder" "$@" && rm "$folder/$tarball"
}
npm_unpack thebe@0.9.3 .venv/share/toybook-thebe package/lib/index.js package/package.json package/lib
npm_unpack plotly.js-basic-dist-min@4.1.1 "$NPM_DIR/plotly" package/plotly-basic.min.js package/package.json \
  package/plotly-basic.min.js
npm_unpack katex@0.16.22 "$NPM_DIR/katex" package/dist/katex.min.css package/package.json package/dist/katex.min.css \
  --wildcards 'package/dist/fonts/*.woff2'
npm_unpack axe-core@4.14.1 "$NPM_DIR/axe-core" package/axe.min.js package/package.json package/axe.min.js
npm_unpack vnu-jar@26.9.27 "$NPM_DIR/vnu-jar" package/build/dist/vnu.jar package/package.json package/build/dist/vnu.jar
echo "$wanted" > "$STAMP"
echo "Set-up done (.venv is current; the next run skips this)."
