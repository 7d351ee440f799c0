"""Lighthouse's scores for every chapter page, as a reader gets them: the built site served compressed (gzip, as any
static host serves it) from 127.0.0.1, Lighthouse from npm driving Debian's Chromium. Prints the scores; asserts
nothing.

Target (issue 21): performance at least 90 on every chapter page with Lighthouse's mobile settings (a slow phone on
a slow network); accessibility, best practices and SEO as high as they go.

Each page is measured three times (``--runs``) and the median run by performance is shown, as Lighthouse's docs
advise for variable runs (this machine's two cores are often busy).

Run: .venv/bin/python benchmarks/bench_lighthouse.py [--site _build/html] [--desktop] [--page 4.1] [--runs 3]
(Lighthouse is installed on first use into .venv/share/toybook-lighthouse with npm; about 200 MB.)
"""

from __future__ import annotations

import argparse
import gzip
import http.server
import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
from functools import partial
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # the table of contents is read as the browser tests read it
from tests.browser.conftest import CHAPTER_PAGES  # noqa: E402

LIGHTHOUSE = "lighthouse@13.5.0"
HOME = Path(sys.prefix) / "share" / "toybook-lighthouse"
COMPRESSED = (".html", ".js", ".css", ".json", ".svg", ".txt", ".ipynb")
CATEGORIES = ("performance", "accessibility", "best-practices", "seo")


class Handler(http.server.SimpleHTTPRequestHandler):
    """Static files, compressed when the browser accepts gzip, cacheable for a day, over kept-alive HTTP/1.1 connections
    (as static hosts serve them; HTTP/1.0 made Lighthouse's simulation open a connection per stylesheet)."""

    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def end_headers(self):
        self.send_header("Cache-Control", "public, max-age=86400")
        super().end_headers()

    def send_head(self):
        path = Path(self.translate_path(self.path))
        if path.is_dir():
            path = path / "index.html"
        if path.suffix not in COMPRESSED or "gzip" not in self.headers.get("Accept-Encoding", "") or not path.is_file():
            return super().send_head()
        body = gzip.compress(path.read_bytes(), 6)
        self.send_response(200)
        self.send_header("Content-Type", self.guess_type(str(path)))
        self.send_header("Content-Encoding", "gzip")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        return _Body(body)


class _Body:
    def __init__(self, data: bytes):
        self.data = data

    def read(self, *args):
        data, self.data = self.data, b""
        return data

    def close(self):
        pass


def lighthouse() -> Path:
    binary = HOME / "node_modules" / ".bin" / "lighthouse"
    if not binary.exists():
        if not shutil.which("npm"):
            sys.exit("Lighthouse comes from npm, which is missing: apt-get install nodejs npm")
        print(f"installing {LIGHTHOUSE} into {HOME} (once)...", flush=True)
        HOME.mkdir(parents=True, exist_ok=True)
        subprocess.run(["npm", "install", "--silent", "--no-audit", "--no-fund", "--prefix", str(HOME), LIGHTHOUSE],
                       check=True)
    return binary


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--site", type=Path, default=Path(os.environ.get("TOY_BUILT_SITE", ROOT / "_build" / "html")))
    parser.add_argument("--desktop", action="store_true", help="Lighthouse's desktop settings instead of mobile")
    parser.add_argument("--page", action="append", help="only the chapter pages whose path contains this (repeatable)")
    parser.add_argument("--reports", type=Path, help="keep each page's median Lighthouse report (JSON) in this folder")
    parser.add_argument("--runs", type=int, default=3, help="Lighthouse runs per page; the median is shown (default 3)")
    args = parser.parse_args()
    if not (args.site / "index.html").exists():
        sys.exit(f"no built site in {args.site}: bash scripts/book.sh")
    if not Path("/usr/bin/chromium").exists():
        sys.exit("Lighthouse drives Debian's Chromium, which is missing: apt-get install chromium")
    binary = lighthouse()
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), partial(Handler, directory=str(args.site)))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    base = f"http://127.0.0.1:{server.server_address[1]}"
    env = {**os.environ, "CHROME_PATH": "/usr/bin/chromium"}
    # PaintHolding stays on, as in a default Chromium (issue 31), although on a busy machine it can hold a loaded
    # page's first paint for a second or two.
    flags = ("--headless=new --no-sandbox --disable-gpu --no-first-run --disable-background-networking "
             "--disable-component-update --disable-sync")
    load = os.getloadavg()[0]
    print(f"Lighthouse {LIGHTHOUSE.split('@')[1]}, {'desktop' if args.desktop else 'mobile'} settings, site served "
          f"compressed; load average {load:.2f} before the runs")
    with tempfile.TemporaryDirectory() as tmp:
        pages = [doc for doc in CHAPTER_PAGES if not args.page or any(part in doc for part in args.page)]
        for doc in pages:
            runs = []
            for k in range(args.runs):
                report = Path(tmp) / f"report-{k}.json"
                cmd = [str(binary), f"{base}/{doc}.html", "--quiet", "--output=json", f"--output-path={report}",
                       f"--only-categories={','.join(CATEGORIES)}", f"--chrome-flags={flags}"]
                if args.desktop:
                    cmd.append("--preset=desktop")
                subprocess.run(cmd, env=env, check=True, timeout=600)
                runs.append(json.loads(report.read_text()))
            runs.sort(key=lambda data: data["categories"]["performance"]["score"] or 0)
            data = runs[len(runs) // 2]  # the median run by performance, as Lighthouse's docs advise
            if args.reports:
                args.reports.mkdir(parents=True, exist_ok=True)
                (args.reports / f"{doc.replace('/', '_')}.json").write_text(json.dumps(data))
            scores = {c: round(100 * (data["categories"][c]["score"] or 0)) for c in CATEGORIES}
            audits = data["audits"]
            perf = scores["performance"]
            every = "/".join(str(round(100 * (r["categories"]["performance"]["score"] or 0))) for r in runs)
            print(f"{doc:<48} performance {perf:>3} (runs {every}) [target >= 90: {'ok' if perf >= 90 else 'MISSED'}]"
                  f"  accessibility {scores['accessibility']:>3}  best practices {scores['best-practices']:>3}  "
                  f"SEO {scores['seo']:>3}  (FCP {audits['first-contentful-paint']['displayValue']}, "
                  f"LCP {audits['largest-contentful-paint']['displayValue']}, "
                  f"TBT {audits['total-blocking-time']['displayValue']}, "
                  f"CLS {audits['cumulative-layout-shift']['displayValue']}, "
                  f"weight {audits['total-byte-weight']['displayValue']})", flush=True)
    server.shutdown()


if __name__ == "__main__":
    main()
