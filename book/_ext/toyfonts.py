"""The built site's web fonts cut down to the glyphs its pages can show: one pass after the build.

In Lighthouse's simulation of a slow phone on a slow network, every font a page requests before its first paint
counts against that paint. The theme's icon font (Font Awesome's solid face) is 156 KB (1 KB = 1,000 bytes) for
the 20-odd icons the theme shows, and KaTeX's fonts hold every glyph KaTeX can typeset. The 4.1 page painted first
at 3.2 s with the whole fonts and at 2.4 s with them cut (issue 21; CONTRIBUTING.md, "What Lighthouse measured").

What each font keeps:

- **Font Awesome** (``fa-solid-900``, ``fa-regular-400``, ``fa-brands-400``; the ``.woff2`` and the ``.ttf``):
  the glyph of every icon class (``fa-bars``, ...) named anywhere in the site's pages or scripts (the theme's
  scripts add some icons after loading; scripts no page loads count too), and every glyph a stylesheet draws by
  itself (a ``content`` outside the icon classes, such as the theme's "on this page" arrow, or a custom property).
  A name that merely looks like an icon class keeps a glyph too many, never one too few.
- **KaTeX** (``KaTeX_*.woff2``): every character in the text of any page, and printable ASCII. KaTeX writes each
  symbol of a formula it typesets at build time as that character in the page's text, in a span whose class picks
  the font (what it draws as SVG needs no font).

``fontTools`` does the cutting. It rewrites no timestamp, so a font cut twice is the same bytes and two builds of
one commit stay byte-identical. ``tests/test_page_speed.py`` checks the cutting on small inputs;
``tests/test_book.py`` checks that the built site's fonts keep every glyph its pages show.
"""

from __future__ import annotations

import html
import re
from pathlib import Path

from fontTools import subset

ICON_FONTS = "fa-*"
KATEX_FONTS = "KaTeX_*"
FONT_SUFFIXES = (".woff2", ".woff", ".ttf")

_RULE = re.compile(r"([^{}]+)\{([^{}]*)\}")
_ICON_PSEUDO = re.compile(r"\.(fa-[a-z0-9-]+)::?(?:before|after)")
# what a declaration may draw: any content, or a custom property that holds just one string (an icon's glyph, read
# by a content elsewhere; not a font shorthand that names the font's family)
_DRAWN = re.compile(r"(?:^|;)\s*(?:content\s*:([^;]*)"
                    r"""|--[\w-]+\s*:\s*("(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*')\s*(?=;|$))""")
_STRING = re.compile(r'"((?:[^"\\]|\\.)*)"' + r"|'((?:[^'\\]|\\.)*)'")
_CSS_ESCAPE = re.compile(r"\\(?:([0-9a-fA-F]{1,6})[ \t\n]?|(.))", re.S)
_ICON_NAME = re.compile(r"\bfa-[a-z0-9-]+")


def _unescape(m: re.Match) -> str:
    if m.group(2) is not None:
        return m.group(2)
    point = int(m.group(1), 16)
    return chr(point) if 0 < point <= 0x10FFFF and not 0xD800 <= point <= 0xDFFF else "\ufffd"  # as CSS reads it


def css_string_points(value: str) -> set[int]:
    """The code points of the strings in a CSS value, escapes decoded: ``"\\f107"``, ``"\\30 "`` (a digit),
    ``"\\+"`` and ``"A"`` are all glyphs a rule can draw."""
    points = set()
    for double, single in _STRING.findall(value):
        text = _CSS_ESCAPE.sub(_unescape, double or single)
        points |= {ord(c) for c in text}
    return points


def icon_glyphs(stylesheets: list[str]) -> tuple[dict[str, set[int]], set[int]]:
    """Read Font Awesome's CSS: ``({icon class: code points}, code points drawn outside the icon classes)``.

    A rule whose selectors are all ``.fa-NAME::before`` (or ``::after``) maps each NAME to what it draws; what any
    other rule draws (its ``content``, a custom property's string) is drawn whatever the page."""
    by_class: dict[str, set[int]] = {}
    always: set[int] = set()
    for css in stylesheets:
        css = re.sub(r"/\*.*?\*/", "", css, flags=re.S)
        for match in _RULE.finditer(css):
            selectors = [s.strip() for s in match.group(1).split(",")]
            points = set().union(*(css_string_points(a or b) for a, b in _DRAWN.findall(match.group(2))))
            if not points:
                continue
            names = [_ICON_PSEUDO.fullmatch(s) for s in selectors]
            if all(names):
                for name in names:
                    by_class.setdefault(name.group(1), set()).update(points)
            else:
                always |= points
    return by_class, always


def icon_names(texts: list[str]) -> set[str]:
    """Every ``fa-...`` name written in ``texts`` (pages and scripts)."""
    return {name for text in texts for name in _ICON_NAME.findall(text)}


def page_text(page: str) -> set[str]:
    """The characters of a page's text (tags dropped, entities decoded): a superset of its formulas' symbols."""
    return set(html.unescape(re.sub(r"<[^>]*>", " ", page)))


def subset_font(path: Path, unicodes: set[int]) -> tuple[int, int]:
    """Cut the font at ``path`` (woff2, woff or ttf) in place to the glyphs of ``unicodes`` (and what its layout
    features reach from them); return its sizes in bytes, before and after."""
    before = path.stat().st_size
    flavor = {".woff2": "woff2", ".woff": "woff"}.get(path.suffix)
    options = subset.Options(flavor=flavor, layout_features=["*"], notdef_outline=True, name_IDs=["*"],
                             name_languages=["*"], name_legacy=True, legacy_kern=True)
    font = subset.load_font(str(path), options)
    cutter = subset.Subsetter(options)
    cutter.populate(unicodes=sorted(unicodes))
    cutter.subset(font)
    subset.save_font(font, str(path), options)
    font.close()
    return before, path.stat().st_size


def subset_site(outdir: Path) -> dict[str, tuple[int, int]]:
    """Cut every icon font and KaTeX font under ``outdir/_static`` to what the site can show; return
    ``{font path relative to outdir: (bytes before, bytes after)}``."""
    static = outdir / "_static"
    pages = [p.read_text(encoding="utf-8", errors="replace") for p in sorted(outdir.rglob("*.html"))
             if "_sources" not in p.parts]
    scripts = [p.read_text(encoding="utf-8", errors="replace") for p in sorted(static.rglob("*.js"))]
    stylesheets = [p.read_text(encoding="utf-8", errors="replace") for p in sorted(static.rglob("*.css"))]
    fonts = sorted(p for p in static.rglob("*") if p.suffix in FONT_SUFFIXES)
    sizes = {}

    icons = [p for p in fonts if p.match(ICON_FONTS)]
    if icons:
        by_class, always = icon_glyphs(stylesheets)
        used = set(always)
        for name in icon_names(pages + scripts):
            used |= by_class.get(name, set())
        for font in icons:
            sizes[str(font.relative_to(outdir))] = subset_font(font, used)

    katex = [p for p in fonts if p.match(KATEX_FONTS)]
    if katex:
        characters = {chr(c) for c in range(0x20, 0x7F)}
        for page in pages:
            characters |= page_text(page)
        unicodes = {ord(c) for c in characters}
        for font in katex:
            sizes[str(font.relative_to(outdir))] = subset_font(font, unicodes)
    return sizes
