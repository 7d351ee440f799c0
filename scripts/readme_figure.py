"""Screenshot Figure 4.1's explorer from the built book into book/_static/figure-4-1.png (the README's figure).

Run after building the book: .venv/bin/python scripts/readme_figure.py [_build/html]
"""

import functools
import http.server
import sys
import threading
from pathlib import Path

from playwright.sync_api import sync_playwright

ROOT = Path(__file__).resolve().parents[1]
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync"]


class Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


def main(site: Path) -> None:
    handler = functools.partial(Quiet, directory=str(site))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    url = f"http://127.0.0.1:{server.server_address[1]}/chapters/04-the-llm-as-a-policy/4.1-formal-mapping.html"
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path="/usr/bin/chromium", args=FLAGS)
        page = browser.new_page(viewport={"width": 900, "height": 1000}, device_scale_factor=1)
        page.goto(url, wait_until="networkidle")
        page.wait_for_selector(".toy-explorer[data-ready=true]")
        page.locator(".toy-explorer").first.screenshot(path=str(ROOT / "book" / "_static" / "figure-4-1.png"))
        browser.close()
    server.shutdown()


if __name__ == "__main__":
    main(Path(sys.argv[1]) if len(sys.argv) > 1 else ROOT / "_build" / "html")
