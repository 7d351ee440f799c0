"""The built site's web fonts cut down to the glyphs its pages can show: one pass after the build.

A phone on a slow network fetches a page's fonts while it waits for the first paint, and they share its bandwidth
with the stylesheets that paint needs. The theme's icon font (Font Awesome's solid face) alone is 156 KB for the
20-odd icons the theme shows; KaTeX's fonts hold every glyph TeX knows. Lighthouse measured the first paint of the
4.1 page on its simulated phone at 3.2 s with the whole icon font, 2.5 s with it cut down (issue 21).

What each font keeps:

- **Font Awesome** (``fa-solid-900``, ``fa-regular-400``, ``fa-brands-400``; the ``.woff2`` and the ``.ttf``):
  the glyph of every icon class (``fa-bars``, ...) named anywhere in the site's pages or scripts (the theme's
  scripts add some icons after loading), and every glyph a stylesheet draws by itself (a ``content: "\\f107"``
  outside the icon classes, such as the theme's "on this page" arrow). A name that merely looks like an icon
  class keeps one glyph too many, never one too few.
- **KaTeX** (``KaTeX_*.woff2``): every character in the text of any page, and printable ASCII. KaTeX writes each
  symbol of a typeset formula as that character in the page's text, in a span whose class picks the font.

``fontTools`` does the cutting. Subsetting is deterministic (no timestamp is rewritten), so two builds of one
commit stay byte-identical; ``tests/test_page_speed.py`` checks that no glyph a page uses is cut.
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
_ESCAPE = re.compile(r"\\([0-9a-fA-F]{4,6})")
_ICON_NAME = re.compile(r"\bfa-[a-z0-9-]+")


def icon_glyphs(stylesheets: list[str]) -> tuple[dict[str, set[int]], set[int]]:
    """Read Font Awesome's CSS: ``({icon class: code points}, code points drawn outside the icon classes)``.

    A rule whose selectors are all ``.fa-NAME::before`` (or ``::after``) maps each NAME to the escapes it draws;
    every escape in any other rule or declaration (``content``, a custom property) is drawn whatever the page."""
    by_class: dict[str, set[int]] = {}
    always: set[int] = set()
    for css in stylesheets:
        css = re.sub(r"/\*.*?\*/", "", css, flags=re.S)
        for match in _RULE.finditer(css):
            selectors = [s.strip() for s in match.group(1).split(",")]
            points = {int(code, 16) for code in _ESCAPE.findall(match.group(2))}
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
