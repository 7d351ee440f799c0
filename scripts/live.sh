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
JUPYTER=${JUPYTER:-.venv/bin/jupyter}  # (the tests name a stand-in)
LOGS=$(mktemp -d "${TMPDIR:-/tmp}/toy-live.XXXXXX")
ROOT_FLAG=()
if [ "$(id -u)" = "0" ]; then ROOT_FLAG=(--allow-root); fi  # containers and CI run as root
echo "Starting a Jupyter server at http://127.0.0.1:${JUPYTER_PORT} and the book at ${BOOK} (their messages go to $LOGS)."
"$JUPYTER" server "${ROOT_FLAG[@]}" --no-browser --ip=127.0.0.1 --port="$JUPYTER_PORT" --ServerApp.port_retries=0 \
  --IdentityProvider.token="$TOKEN" --ServerApp.allow_origin="$BOOK" --ServerApp.root_dir="$(pwd)/chapters" \
  >"$LOGS/jupyter.log" 2>&1 &
JUPYTER_PID=$!
.venv/bin/python -m http.server --bind 127.0.0.1 "$BOOK_PORT" --directory "$BOOK_DIR" >"$LOGS/book.log" 2>&1 &
HTTP=$!
trap 'kill $JUPYTER_PID $HTTP 2>/dev/null; wait' EXIT INT TERM
# Wait while the server starts (a loaded machine can take a minute or two), saying what for; stop only when one of
# the two stops, with its own messages, or after 10 minutes without an answer.
.venv/bin/python - "$JUPYTER_PORT" "$JUPYTER_PID" "$BOOK_PORT" "$HTTP" "$LOGS" <<'PY'
import os, sys, time, urllib.error, urllib.request

port, pid, book_port, book_pid, logs = sys.argv[1:]
LIMIT, SAY_EVERY = 600, 10


def alive(pid):
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except FileNotFoundError:
        return False
    except OSError:  # no /proc: whether the process exists
        try:
            os.kill(int(pid), 0)
            return True
        except OSError:
            return False


def answers(url):
    try:
        urllib.request.urlopen(url, timeout=2)
        return True
    except urllib.error.HTTPError:
        return True  # it answered (with an error status: still a server)
    except OSError:
        return False


def stopped(what, log):
    with open(log, errors="replace") as f:
        tail = f.read().strip().splitlines()[-15:]
    sys.exit(f"live.sh: {what} stopped before it answered. Its messages ({log}):\n  " +
             ("\n  ".join(tail) if tail else "(none)"))


start, said = time.monotonic(), 0
print(f"Waiting for the Jupyter server to answer at http://127.0.0.1:{port}/api ...", flush=True)
while True:
    if not alive(pid):
        stopped(f"the Jupyter server (port {port})", f"{logs}/jupyter.log")
    if not alive(book_pid):
        stopped(f"the book's web server (port {book_port})", f"{logs}/book.log")
    if answers(f"http://127.0.0.1:{port}/api") and answers(f"http://127.0.0.1:{book_port}/"):
        break
    waited = time.monotonic() - start
    if waited > LIMIT:
        sys.exit(f"live.sh: the Jupyter server did not answer at http://127.0.0.1:{port}/api within {LIMIT} s, "
                 f"though it is still running; its messages are in {logs}/jupyter.log")
    if waited - said >= SAY_EVERY:
        said = waited
        print(f"  still waiting for the Jupyter server to start ({waited:.0f} s so far; a busy machine can take "
              "a minute or two)...", flush=True)
    time.sleep(0.3)
PY
echo
echo "Live code is ready. Open this link (it hands the page the server's token), then press Live code on a chapter page:"
echo "  ${BOOK}/chapters/04-the-llm-as-a-policy/4.1-formal-mapping.html#toy-live-server=http://127.0.0.1:${JUPYTER_PORT}&toy-live-token=${TOKEN}"
echo "A tab opened without this link has no token: the server refuses it, and the page says so."
echo "Stop with Ctrl+C."
wait
