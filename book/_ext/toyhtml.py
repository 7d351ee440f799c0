"""The built pages, made valid HTML and accessible whoever wrote the markup: one pass over each page after the build.

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
  name (``toy.css`` makes it the element that scrolls, not MathJax's container inside it);
- the bibliography's entries have the role ``doc-biblioentry``, deprecated in ARIA 1.3 and not allowed in the
  ``list`` that holds them: each is a ``listitem``;
- each page with figures gets, under its title, a list of them ("Figures on this page") that jumps to each, so a
  keyboard reader need not tab through the text and the controls before it; each figure gets an id for it;
- each page gets a meta description (its first paragraph, shortened), for search engines;
- Jupyter Book's root redirect page gets a doctype, a title and a link.
"""

from __future__ import annotations

import html
import re
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
    return re.sub(r'<div class="math notranslate nohighlight"( id="[^"]*")?>',
                  r'<div class="math notranslate nohighlight"\1 tabindex="0" role="group" aria-label="equation">',
                  text)


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
    if not found or "</h1>" not in text:
        return text
    items = "".join(f'<li><a href="#figure-{k}">{html.escape(t)}</a></li>' for k, t in enumerate(found, start=1))
    listing = (f'<details class="toy-figure-list"><summary>Figures on this page ({len(found)})</summary>'
               f"<ol>{items}</ol></details>")
    head, tail = text.split("</h1>", 1)
    return f"{head}</h1>{listing}{tail}"


def tidy_page(text: str) -> str:
    """One built page, fixed (see the module's docstring)."""
    for name in ("exercise-content", "solution-content"):
        text = _numbered_ids(text, name)
    for fix in (_summary_titles, _search_buttons, _toctree_toggles, _display_math, _bibliography_entries,
                _figure_list, _meta_description):
        text = fix(text)
    return text


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
    for path in sorted(outdir.rglob("*.html")):
        if "_static" in path.parts or "_sources" in path.parts:
            continue
        text = path.read_text(encoding="utf-8")
        if path.parent == outdir and path.name == "index.html" and "<title>" not in text:
            target = re.search(r'url=([^"\s]+)"', text)
            fixed = redirect_page(target.group(1) if target else "book/intro.html", title)
        else:
            fixed = tidy_page(text)
        if 'class="bd-article"' in text and "search-button" in text and fixed.count('aria-label="Search"'):
            raise MarkupChanged(f"{path}: the theme's search button markup changed; update book/_ext/toyhtml.py")
        if fixed != text:
            path.write_text(fixed, encoding="utf-8")
            changed += 1
    return changed
