"""The built pages, made valid HTML and accessible whoever wrote the markup, and light: one pass over each page
after the build.

The theme (pydata-sphinx-theme via sphinx-book-theme) and the extensions (myst-nb, sphinx-exercise) write markup
that the Nu Html Checker and axe-core (WCAG 2.1 AA) find fault with. Each fix below is a plain text substitution
on the written page, checked by ``tests/browser/test_web_checks.py``; each fails loudly (a RuntimeError at build
time) if the markup it expects is no longer written, so an upgrade that changes it is noticed, not hidden.

- sphinx-exercise gives every exercise's and solution's body the same id (``exercise-content``,
  ``solution-content``): each gets its own (``exercise-content-2`` ...);
- myst-nb's "Show code cell source" toggle puts ``<p>`` elements inside ``<summary>`` (invalid) and names the
  toggle "Toggle hidden content" while it shows "Show code cell source" (the accessible name should contain the
  visible text): the titles become ``<span>`` (``toy.css`` styles them as myst-nb styled the paragraphs) and the
  name comes from the text;
- the theme's search buttons are named "Search" while they show "Search Ctrl+K": the name comes from the text;
- the theme's toctree toggles are ``<summary>`` elements with no text: each gets a visually hidden name;
- wide display equations scroll sideways but cannot take the keyboard's focus: each gets ``tabindex="0"`` and a
  name (``toy.css`` makes it the element that scrolls, not KaTeX's or MathJax's container inside it);
- the bibliography's entries have the role ``doc-biblioentry``, deprecated in ARIA 1.3 and not allowed in the
  ``list`` that holds them: each is a ``listitem``;
- each notebook page gets its Live code bar under its title as built, not inserted by ``toy-live.js`` after the
  first paint (which moved the whole text down);
- each page with figures gets, under its title, a list of them ("Figures on this page") that jumps to each, so a
  keyboard reader need not tab through the text and the controls before it; each figure gets an id for it;
- each page gets a meta description (its first paragraph, shortened), for search engines;
- Jupyter Book's root redirect page gets a doctype, a title and a link.

And two changes for speed. Sphinx's ``documentation_options.js``, which the theme's inline scripts read as the page
is parsed and so cannot be deferred, is written into each page (``inline_documentation_options``): no script file
holds up the first paint. And (``figure_data_files``) each figure's and explorer's data (on a chapter page, about
three quarters of the HTML's compressed bytes) moves from the page into a file of its own under
``_static/toy-data/``, named by its content's hash, which the page script loads when the figure comes near the
screen. The page's text arrives and shows that much sooner on a slow network. The files are scripts, not JSON, so
that a site opened from the disk (``file://``, where a browser refuses ``fetch``) draws its figures too.

And two for a long page on a slow phone, where laying out the page, not loading it, is what keeps the reader
waiting (4.5: 12,000 elements, four fifths of them typeset math). Each innermost section below the title (an
exercise's or a solution's text included) gets the class ``toy-lazy`` (``lazy_sections``): ``toy.css`` gives it
``content-visibility: auto``, so the browser lays out and paints it only when it nears the screen. The theme's
script that gives each code block, output or table that scrolls a tab stop (pydata-sphinx-theme's
``addTabStopsToScrollableElements``) measures every one of them when the page has loaded, and again 300 ms after
each change to the article (each figure drawn): with lazy sections, that would make the browser lay out every
section it had skipped (1.5 to 2 s on 4.5 with the CPU 4 times slower). ``theme_tab_stops`` rewrites it to measure
each block when the browser has laid it out anyway (a ``ResizeObserver``), with a tab stop until then, so a
keyboard reader never skips a block that scrolls.
"""

from __future__ import annotations

import hashlib
import html
import json
import os
import re
import urllib.parse
from pathlib import Path

DESCRIPTION_CHARS = 155


class MarkupChanged(RuntimeError):
    """The theme or an extension no longer writes the markup a fix expects."""


def _numbered_ids(text: str, name: str) -> str:
    count = 0

    def number(m):
        nonlocal count
        count += 1
        return f'id="{name}-{count}"'

    return re.sub(rf'id="{name}"', number, text)


def _summary_titles(text: str) -> str:
    def fix(m):
        inner = re.sub(r'<p class="(collapsed|expanded) admonition-title">(.*?)</p>',
                       r'<span class="\1 admonition-title">\2</span>', m.group(1), flags=re.S)
        return f"<summary>{inner}</summary>"

    return re.sub(r'<summary aria-label="Toggle hidden content">(.*?)</summary>', fix, text, flags=re.S)


def _search_buttons(text: str) -> str:
    return re.sub(r'(<button class="[^"]*search-button[^"]*"[^>]*?) aria-label="Search"', r"\1", text)


def _toctree_toggles(text: str) -> str:
    return text.replace('<summary><span class="toctree-toggle" role="presentation">',
                        '<summary><span class="visually-hidden">Show or hide the sections of this chapter</span>'
                        '<span class="toctree-toggle" role="presentation">')


def _display_math(text: str) -> str:
    return re.sub(r'<div class="(math(?: notranslate nohighlight)?)"( id="[^"]*")?>',
                  r'<div class="\1"\2 tabindex="0" role="group" aria-label="equation">', text)


def _bibliography_entries(text: str) -> str:
    return text.replace('role="doc-biblioentry"', 'role="listitem"')


def description(text: str) -> str:
    """The page's first paragraph of prose as plain text, at most DESCRIPTION_CHARS characters (cut at a word)."""
    article = text.split('<article class="bd-article"', 1)[-1]
    for paragraph in re.findall(r"<p>(.*?)</p>", article, flags=re.S):
        plain = html.unescape(re.sub(r"<[^>]+>", "", paragraph))
        plain = re.sub(r"\\\(|\\\)|\$", "", " ".join(plain.split()))
        if len(plain) >= 40:
            if len(plain) > DESCRIPTION_CHARS:
                plain = plain[:DESCRIPTION_CHARS].rsplit(" ", 1)[0].rstrip(",;:") + "…"
            return plain
    return ""


def _meta_description(text: str) -> str:
    if '<meta name="description"' in text:
        return text
    said = description(text)
    if not said:
        return text
    return text.replace("<head>", f'<head>\n    <meta name="description" content="{html.escape(said)}" />', 1)


FIGURE = re.compile(r'<div class="(toy-explorer|toy-figure)"( data-title="([^"]*)"| role="figure"[^>]*)>'
                    r'(?:<div class="toy-figure-title" id="[^"]*">([^<]*)</div>)?')


def _figure_list(text: str) -> str:
    """Number the page's figures (explorers and plain figures with a title) and list them under the page title."""
    found = []

    def mark(m):
        title = m.group(3) if m.group(1) == "toy-explorer" else m.group(4)
        if not title:
            return m.group(0)
        found.append(html.unescape(title).split("\n")[0].strip())
        kind = m.group(1)
        return m.group(0).replace(f'<div class="{kind}"', f'<div id="figure-{len(found)}" class="{kind}"', 1)

    text = FIGURE.sub(mark, text)
    if not found:
        return text
    items = "".join(f'<li><a href="#figure-{k}">{html.escape(t)}</a></li>' for k, t in enumerate(found, start=1))
    listing = (f'<details class="toy-figure-list"><summary>Figures on this page ({len(found)})</summary>'
               f"<ol>{items}</ol></details>")
    return _after_title(text, listing)


def _after_title(text: str, snippet: str) -> str:
    """``snippet`` inserted right after the page's title: the article's first ``<h1>`` (Jupyter Book also writes the
    title into a header shown only in print, earlier in the page)."""
    start = text.find('<article class="bd-article"')
    end = text.find("</h1>", start) if start >= 0 else -1
    if end < 0:
        raise MarkupChanged("no <h1> inside <article class=\"bd-article\">: update book/_ext/toyhtml.py")
    end += len("</h1>")
    return text[:end] + snippet + text[end:]


LIVE_SCRIPT = re.compile(r'<script data-toy-live="([^"]*)"[^>]*src="[^"]*toy/toy-live\.js[^"]*"')


LIVE_DOES = ("Live code turns this page's code cells into editors you can change and run in a Jupyter kernel; "
             "figures and explorers redraw.")
LIVE_LOCAL = "your computer: run bash scripts/live.sh in the book's repository and open the link it prints"
LIVE_BINDER = "Binder (which takes a minute or more to start)"


def _loopback(url: str) -> bool:
    """As ``isLoopback`` in ``toy-live.js``."""
    return urllib.parse.urlsplit(url).hostname in ("127.0.0.1", "localhost", "::1")


def live_status(config: dict) -> str:
    """The Live code bar's words, as ``toy-live.js`` writes them for the book's configured kernels (on a page opened
    without a link from ``scripts/live.sh``): what Live code does, then where its kernel comes from, in words a reader
    of the published book can act on. A loopback server (``scripts/live.sh``'s, the default) is never named by its
    address: the reader may run none, and ``scripts/live.sh``'s answers only the book it serves, opened from the link
    it prints (its token, its origin)."""
    if not config.get("thebe"):
        return f"Live code is unavailable in this build: {config.get('off')}."
    server, binder = (config.get("server") or "").rstrip("/"), config.get("binder")
    local = bool(server) and _loopback(server)
    routes = [f"the Jupyter server at {server}"] if server and not local else []
    routes += [LIVE_BINDER] if binder else []
    if not routes and not local:
        return f"{LIVE_DOES} No kernel is configured for this book."
    said = ", else from ".join(routes)
    if local:
        said = f"{said}, or from {LIVE_LOCAL}" if said else LIVE_LOCAL
    return f"{LIVE_DOES} Its kernel comes from {said}."


def _live_bar(text: str) -> str:
    """The Live code bar in the page as built, under the title (``toy-live.js`` wires it up): a bar that the script
    inserted after the first paint moved the whole text down."""
    m = LIVE_SCRIPT.search(text)
    if not m:
        return text
    status = live_status(json.loads(html.unescape(m.group(1))))
    bar = ('<div class="toy-live" role="region" aria-label="Live code">'
           '<button type="button" class="toy-live-button" aria-describedby="toy-live-status">Live code</button>'
           f'<p class="toy-live-status" id="toy-live-status" aria-live="polite">{html.escape(status)}</p></div>')
    return _after_title(text, bar)


def tidy_page(text: str) -> str:
    """One built page, fixed (see the module's docstring)."""
    for name in ("exercise-content", "solution-content"):
        text = _numbered_ids(text, name)
    for fix in (_summary_titles, _search_buttons, _toctree_toggles, _display_math, _bibliography_entries,
                _figure_list, _live_bar, _meta_description, lazy_sections):
        text = fix(text)
    return text


SYNC_SCRIPT = re.compile(r'<script src="(?:\.\./)*_static/documentation_options\.js(?:\?v=[0-9a-f]+)?"></script>')


def inline_documentation_options(text: str, outdir: Path) -> str:
    """Sphinx's ``documentation_options.js`` (0.4 KB), the one script the theme's inline scripts need as the page is
    parsed, written into the page: a script file there would hold up the first paint by a round trip."""
    source = outdir / "_static" / "documentation_options.js"
    if not source.is_file() or not SYNC_SCRIPT.search(text):
        return text
    code = source.read_text(encoding="utf-8").strip().replace("</", "<\\/")
    return SYNC_SCRIPT.sub(lambda m: f"<script>{code}</script>", text, count=1)


DATA_DIR = "_static/toy-data"
SPEC = re.compile(r'<script type="application/json" class="(toy-explorer-spec|toy-plot-spec)"([^>]*)>(.*?)</script>',
                  re.S)


def figure_data_files(text: str, page: Path, outdir: Path) -> str:
    """Move each figure's JSON out of the page into ``DATA_DIR/<hash>.js`` (``window.toyData["<hash>"] = …;``); the
    script element stays, empty, with the file's address relative to the page in ``data-src``."""

    def move(m):
        kind, attributes, payload = m.groups()
        key = hashlib.sha256(payload.encode()).hexdigest()[:20]
        target = outdir / DATA_DIR / f"{key}.js"
        if not target.exists():
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(f'(window.toyData = window.toyData || {{}})["{key}"] = {payload};\n', encoding="utf-8")
        src = Path(os.path.relpath(target, page.parent)).as_posix()
        return f'<script type="application/json" class="{kind}"{attributes} data-src="{src}"></script>'

    return SPEC.sub(move, text)


SECTION_TAG = re.compile(r"<section\b[^>]*>|</section>")


def lazy_sections(text: str) -> str:
    """Add the class ``toy-lazy`` to each section that holds no other section and is itself inside one (so never
    to the page's top section)."""
    open_tags, leaves = [], []
    for m in SECTION_TAG.finditer(text):
        if not m.group().startswith("</"):
            open_tags.append([m, False])  # [its tag, holds a section]
            continue
        if not open_tags:
            raise MarkupChanged(f"a </section> at character {m.start()} closes no <section>")
        tag, holds_section = open_tags.pop()
        if open_tags:
            open_tags[-1][1] = True
            if not holds_section:
                leaves.append(tag)
    for m in reversed(leaves):
        tag = m.group()
        marked = tag.replace('class="', 'class="toy-lazy ', 1) if 'class="' in tag else \
            tag.replace("<section", '<section class="toy-lazy"', 1)
        text = text[:m.start()] + marked + text[m.end():]
    return text


THEME_SCRIPT = "_static/scripts/pydata-sphinx-theme.js"
# pydata-sphinx-theme 0.17's addTabStopsToScrollableElements, as its minified script writes it
THEME_TAB_STOPS = re.compile(
    r'function (\w+)\(\)\{const (\w+)=\(\)=>\{document\.querySelectorAll\(\[("pre"[^\]]*)\]\.join\(", "\)\)'
    r'\.forEach\(\w+=>\{\w+\.tabIndex=\w+\.scrollWidth>\w+\.clientWidth\|\|\w+\.scrollHeight>\w+\.clientHeight\?0:-1\}\)\},'
    r'\w+=\w+\(\2,300\);window\.addEventListener\("resize",\w+\),new MutationObserver\(\w+\)'
    r'\.observe\(document\.getElementById\("main-content"\),\{subtree:!0,childList:!0\}\),\2\(\)\}')
TAB_STOPS_AS_LAID_OUT = """function NAME(){
  // toybook (book/_ext/toyhtml.py, theme_tab_stops): each block gets its tab stop when the browser has laid it out
  // anyway, not by measuring every block of the page at once
  const selector = [SELECTORS].join(", ");
  const measure = e => { e.tabIndex = e.scrollWidth > e.clientWidth || e.scrollHeight > e.clientHeight ? 0 : -1; };
  const sizes = new ResizeObserver(entries => entries.forEach(entry => measure(entry.target)));
  const seen = new WeakSet();
  const watch = () => document.querySelectorAll(selector).forEach(e => {
    if (!seen.has(e)) { seen.add(e); e.tabIndex = 0; sizes.observe(e); }
  });
  let changed = new Set(), timer = null;
  new MutationObserver(records => {
    records.forEach(r => {
      const block = r.target.closest && r.target.closest(selector);
      if (block) changed.add(block);
    });
    clearTimeout(timer);
    timer = setTimeout(() => { watch(); changed.forEach(e => e.isConnected && measure(e)); changed = new Set(); }, 300);
  }).observe(document.getElementById("main-content"), {subtree: true, childList: true});
  watch();
}"""


def theme_tab_stops(js: str) -> str:
    """The theme's script with its tab stops for scrollable blocks set as each block is laid out (see the module's
    docstring): a block is a tab stop (``tabIndex`` 0) until the browser has laid it out, then one only if it scrolls
    (-1 if not), as the theme decides; a block whose content changes is measured again, as the theme did."""
    m = THEME_TAB_STOPS.search(js)
    if not m:
        raise MarkupChanged(f"{THEME_SCRIPT}: the theme's addTabStopsToScrollableElements changed; update "
                            "book/_ext/toyhtml.py (theme_tab_stops)")
    code = TAB_STOPS_AS_LAID_OUT.replace("NAME", m.group(1)).replace("SELECTORS", m.group(3))
    # the theme's source map no longer matches the script
    return re.sub(r"\n//# sourceMappingURL=\S+\s*$", "\n", js[:m.start()] + code + js[m.end():])


def redirect_page(target: str, title: str) -> str:
    """The site's root page: a valid HTML document that sends the reader to ``target``."""
    target, title = html.escape(target), html.escape(title)
    return (f'<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8" />\n<title>{title}</title>\n'
            f'<meta name="description" content="{title}: an interactive book." />\n'
            f'<meta http-equiv="Refresh" content="0; url={target}" />\n</head>\n'
            f'<body><p><a href="{target}">{title}</a></p></body>\n</html>\n')


def tidy_site(outdir: Path, title: str) -> int:
    """Fix every page of the built site; return how many changed. MarkupChanged if a chapter page no longer has
    the markup the fixes expect."""
    changed = 0
    theme_script = outdir / THEME_SCRIPT
    if theme_script.is_file() and "toybook" not in (js := theme_script.read_text(encoding="utf-8")):
        theme_script.write_text(theme_tab_stops(js), encoding="utf-8")
    for path in sorted(outdir.rglob("*.html")):
        if "_static" in path.parts or "_sources" in path.parts:
            continue
        text = path.read_text(encoding="utf-8")
        if path.parent == outdir and path.name == "index.html" and "<title>" not in text:
            target = re.search(r'url=([^"\s]+)"', text)
            fixed = redirect_page(target.group(1) if target else "book/intro.html", title)
        else:
            fixed = inline_documentation_options(figure_data_files(tidy_page(text), path, outdir), outdir)
        if 'class="bd-article"' in text and "search-button" in text and fixed.count('aria-label="Search"'):
            raise MarkupChanged(f"{path}: the theme's search button markup changed; update book/_ext/toyhtml.py")
        if fixed != text:
            path.write_text(fixed, encoding="utf-8")
            changed += 1
    return changed
