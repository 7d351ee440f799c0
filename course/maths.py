"""The maths of the book's worked solutions on the marking pages, typeset as the book typesets it: KaTeX run under
Node.js at the time the page is written (the KaTeX of ``sphinxcontrib-katex``, the package the book's build uses),
with KaTeX's stylesheet and fonts inlined in the page (fonts as ``data:`` URIs), so a page needs no script and
nothing from the network, and opens from the disk. Without Node.js or KaTeX, the maths stays as LaTeX and the page
says why.

Only the book's own text is typeset; what students write stays plain text.
"""

from __future__ import annotations

import base64
import functools
import json
import re
import shutil
import subprocess
import sys
from html import escape
from pathlib import Path

MATH = re.compile(r"\$\$(.+?)\$\$|(?<![\\$])\$(?!\s)(.+?)(?<![\s\\])\$", re.S)
EVAL = re.compile(r"\{eval\}`([^`]*)`")
KATEX_DIST = Path(sys.prefix) / "share" / "toybook-npm" / "katex" / "package" / "dist"
RENDER = """
const katex = require(process.argv[1]);
let input = "";
process.stdin.on("data", c => { input += c; }).on("end", () => {
  const out = JSON.parse(input).map(([tex, display]) => {
    try { return katex.renderToString(tex, {displayMode: display, throwOnError: true}); } catch (e) { return null; }
  });
  process.stdout.write(JSON.stringify(out));
});
"""


def _katex_js() -> Path | None:
    try:
        import sphinxcontrib.katex
    except ImportError:
        return None
    path = Path(sphinxcontrib.katex.__file__).with_name("katex.min.js")
    return path if path.exists() else None


def missing() -> str | None:
    """Why the maths cannot be typeset here, or None."""
    if shutil.which("node") is None:
        return "Node.js is not on the PATH"
    if _katex_js() is None:
        return "sphinxcontrib-katex (KaTeX) is not installed: run scripts/setup.sh"
    if not (KATEX_DIST / "katex.min.css").exists():
        return f"KaTeX's stylesheet is not in {KATEX_DIST}: run scripts/setup.sh"
    return None


def render(formulas: list[tuple[str, bool]]) -> list[str | None]:
    """KaTeX's HTML for each (LaTeX, display mode); None for one KaTeX refuses (and for all, without KaTeX)."""
    if not formulas or missing():
        return [None] * len(formulas)
    try:
        done = subprocess.run(["node", "-e", RENDER, str(_katex_js())], input=json.dumps(formulas), text=True,
                              capture_output=True, timeout=60, check=True)
        out = json.loads(done.stdout)
    except (OSError, subprocess.SubprocessError, ValueError):
        return [None] * len(formulas)
    return out if isinstance(out, list) and len(out) == len(formulas) else [None] * len(formulas)


def typeset(text: str) -> str:
    """``text`` (the book's Markdown) as HTML: its maths typeset by KaTeX, the rest escaped (``{eval}`` roles shown as
    the code the book evaluates)."""
    text = EVAL.sub(lambda m: m.group(1), text)
    parts, formulas = [], []
    at = 0
    for m in MATH.finditer(text):
        parts.append(text[at:m.start()])
        formulas.append((m.group(1) if m.group(1) is not None else m.group(2), m.group(1) is not None))
        parts.append(len(formulas) - 1)
        at = m.end()
    parts.append(text[at:])
    rendered = render(formulas)
    html = []
    for part in parts:
        if isinstance(part, int):
            tex, display = formulas[part]
            html.append(rendered[part] if rendered[part] else escape(("$$%s$$" if display else "$%s$") % tex))
        else:
            html.append(escape(part))
    return "".join(html)


@functools.lru_cache(maxsize=1)
def stylesheet() -> str:
    """KaTeX's stylesheet with its woff2 fonts inlined (the other font formats dropped); "" without KaTeX."""
    css_path = KATEX_DIST / "katex.min.css"
    if missing():
        return ""
    css = css_path.read_text(encoding="utf-8")

    def font(m: re.Match) -> str:
        path = KATEX_DIST / m.group(1)
        data = base64.b64encode(path.read_bytes()).decode("ascii")
        return f'url(data:font/woff2;base64,{data}) format("woff2")'

    css = re.sub(r'url\((fonts/[^)]+\.woff2)\) format\("woff2"\)(,url\([^)]+\) format\("[^"]+"\))*', font, css)
    return css.replace("</", "<\\/")
