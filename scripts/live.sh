#!/usr/bin/env bash
# Live code on this computer: serve the built book and a Jupyter server that lets the book's pages run their cells.
#   bash scripts/live.sh            then open the link it prints and press "Live code" on a chapter page.
# The Jupyter server listens on 127.0.0.1 only, accepts requests from the book's origin only (allow_origin), and
# needs a token made afresh for each run; the printed link hands the token to the page (kept for that browser tab).
# Ports: BOOK_PORT (8000) and JUPYTER_PORT (8888, the server the book's config names: toy_live_server);
# BOOK_DIR: the built book to serve (_build/html, built first if missing).
set -euo pipefail
cd "$(dirname "$0")/.."
BOOK_PORT=${BOOK_PORT:-8000}
JUPYTER_PORT=${JUPYTER_PORT:-8888}
BOOK_DIR=${BOOK_DIR:-_build/html}
if [ ! -f "$BOOK_DIR/index.html" ]; then
  bash scripts/book.sh
fi
TOKEN=$(.venv/bin/python -c "import secrets; print(secrets.token_hex(24))")
BOOK="http://127.0.0.1:${BOOK_PORT}"
ROOT_FLAG=()
if [ "$(id -u)" = "0" ]; then ROOT_FLAG=(--allow-root); fi  # containers and CI run as root
.venv/bin/jupyter server "${ROOT_FLAG[@]}" --no-browser --ip=127.0.0.1 --port="$JUPYTER_PORT" --ServerApp.port_retries=0 \
  --IdentityProvider.token="$TOKEN" --ServerApp.allow_origin="$BOOK" --ServerApp.root_dir="$(pwd)/chapters" &
JUPYTER=$!
.venv/bin/python -m http.server --bind 127.0.0.1 "$BOOK_PORT" --directory "$BOOK_DIR" >/dev/null 2>&1 &
HTTP=$!
trap 'kill $JUPYTER $HTTP 2>/dev/null; wait' EXIT INT TERM
.venv/bin/python - "$JUPYTER_PORT" <<'PY'   # wait until the Jupyter server answers (at most a minute)
import sys, time, urllib.request
for _ in range(200):
    try:
        urllib.request.urlopen(f"http://127.0.0.1:{sys.argv[1]}/api", timeout=2)
        break
    except OSError:
        time.sleep(0.3)
else:
    sys.exit("the Jupyter server did not start: see the messages above")
PY
echo
echo "Live code is ready. Open this link (it hands the page the server's token), then press Live code on a chapter page:"
echo "  ${BOOK}/chapters/04-the-llm-as-a-policy/4.1-formal-mapping.html#toy-live-server=http://127.0.0.1:${JUPYTER_PORT}&toy-live-token=${TOKEN}"
echo "Stop with Ctrl+C."
wait
