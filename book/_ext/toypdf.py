"""The book's PDFs: each chapter page, and each whole chapter, printed from the built site by Chromium.

After the build (``toybook``, once ``toyhtml`` and ``toyfonts`` have finished the pages), the built site is served
on 127.0.0.1 from this process and each page of a chapter in the table of contents (``_toc.yml``: the chapter's
own page, then its sections, in reading order) is opened in Debian's Chromium through playwright. Every figure is
drawn first (``window.toyDrawAll()``, which returns a promise), then the page is printed as the page's own print
stylesheet lays it out (nothing is emulated): A4, with the margins of its `@page` rule (16 mm top and bottom, 14 mm
at the sides; Chromium prefers them to the 15 mm asked for here), the page's title above and "page X of Y" below,
bookmarks from the headings (``outline``) and a tagged (accessible) PDF. Each page is printed once, made
deterministic before it is printed (``PAGE_FACTS_JS``, ``_print_one``): the clock fixed (``Date`` says the build's
date), animations and transitions off (reduced motion, and a stylesheet that stops them), every font the page
declares loaded, every figure drawn, and the layout left to settle until two animation frames see the same one.

**Only what changed is printed again.** A print records what the page loaded (its HTML, stylesheets, scripts,
fonts, figure data: every request Chromium made to the site) and is kept beside the html folder
(``_build/.toybook-printed/``), with a hash of those files' bytes, Chromium's version, this module and the versions
of playwright and pypdf. The next
build reuses the print while that hash is unchanged, so a rebuild after one notebook's edit prints that page alone;
a chapter's PDF is put together again when one of its pages' prints changed, and is otherwise reused too. The build
says one line per PDF as it goes (printed, and in how long, or reused).

Each print is then finished with pypdf:

* links to the local server become relative links from the PDF's place in the site (the PDFs sit beside the
  HTML pages: ``4.2-easy-and-hard.html#x``, ``../../book/bibliography.html#key``); links within the PDF (a
  fragment of the page, or in a chapter's PDF a page of that chapter) go to their place in the PDF;
* the bookmarks are the page's title with its h2 and h3 headings under it, placed where Chromium put each
  heading's section (its named destination; the next page's top when the heading itself is printed there),
  else where Chromium's own bookmark for it is;
* the tagged structure is kept (in a chapter's PDF, each page's as a part of one document), with the ids
  Chromium gives table headers (which count the browser's nodes, so change from run to run) numbered in order;
* the metadata is fixed, so two builds of one commit give the same bytes: the title (the page's), the author
  (``_config.yml``), the dates (``SOURCE_DATE_EPOCH``, else the repository's last commit when the build ran, else a
  constant) and a
  file identifier made from the content.

A chapter's PDF (``<chapter folder>/<its name without the number>.pdf``, e.g.
``chapters/04-the-llm-as-a-policy/the-llm-as-a-policy.pdf``) is its pages' prints one after another, with one
bookmark per page (its title) and that page's bookmarks under it. Each page keeps its own header (the section's
title) and footer ("page 3 of 20" of that section).

Without Chromium (or playwright, or pypdf) no PDF is made: one line says so and what to install, and the build
goes on; the pages then offer no PDF either (``toybook``).

``python book/_ext/toypdf.py _build/html [--out FOLDER] [--fresh]`` makes the PDFs of a built site (into
``FOLDER``, else into the site; ``--fresh``: every page printed, nothing reused) and says how long it took.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import functools
import hashlib
import html
import http.server
import importlib.util
import io
import json
import os
import posixpath
import re
import subprocess
import sys
import threading
import time
import unicodedata
import urllib.parse
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
CHROMIUM = Path(os.environ.get("TOYBOOK_CHROMIUM") or "/usr/bin/chromium")  # Debian's; publish.yml names the
# runner's Chrome
CHROMIUM_FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                  "--disable-background-networking", "--disable-component-update", "--disable-sync"]
INSTALL = "apt-get install chromium"
CHAPTERS = "chapters/"
MARGIN = "15mm"
FALLBACK_EPOCH = 1767225600  # 2026-01-01 00:00 UTC: the dates of a build with no SOURCE_DATE_EPOCH and no git
TIMEOUT_MS = 120_000
CACHE_NAME = ".toybook-printed"  # beside the html folder: _build/.toybook-printed for _build/html
SETTLE_FRAMES = 120  # animation frames, at most, for a page's layout to settle before it is printed
# Nothing moves while a page is printed: no animation, no transition, no smooth scrolling, no caret
STILL_CSS = ("*, *::before, *::after { animation: none !important; transition: none !important; "
             "scroll-behavior: auto !important; caret-color: transparent !important; }")
FALLBACK_SERIFS = ("LiberationSerif", "DejaVuSerif", "TimesNewRoman", "Times-")  # _fallback_fonts
PRINT_TRIES = 3
OUTLINE_LEVELS = 3  # h1 (the page's title), h2, h3

# What the page says about itself once its figures are drawn: its title and its headings (level, text, the id of
# the section each heads). Only the article's headings: not the theme's print-only table of contents.
PAGE_FACTS_JS = """async (SETTLE_FRAMES) => {
  if (typeof window.toyDrawAll === "function") await window.toyDrawAll();
  // every font the page declares, loaded now: a font is fetched only once text laid out needs it, and printing lays
  // out sections the screen skipped (their math's KaTeX fonts), without waiting for what that asks for
  await Promise.all([...document.fonts].map((font) => font.load().catch(() => null)));
  await document.fonts.ready;
  // the layout settled: two frames in a row see the same places and sizes of the page and its figures
  const frame = () => new Promise((done) => requestAnimationFrame(() => done()));
  const layout = () => JSON.stringify([document.documentElement.scrollHeight, document.fonts.status,
    [...document.querySelectorAll(".js-plotly-plot, img, svg.main-svg")].map((el) => {
      const r = el.getBoundingClientRect();
      return [r.top, r.left, r.width, r.height];
    })]);
  let last = null;
  for (let i = 0; i < SETTLE_FRAMES; i++) {
    await frame();
    const now = layout();
    if (now === last) break;
    last = now;
  }
  const text = (el) => {
    const copy = el.cloneNode(true);
    copy.querySelectorAll(".headerlink, .katex-mathml, script, style").forEach((e) => e.remove());
    return copy.textContent.replace(/\\s+/g, " ").trim();
  };
  const article = document.querySelector("article.bd-article") || document.querySelector("main") || document.body;
  const headings = [...article.querySelectorAll("h1, h2, h3")].map((h) => ({
    level: Number(h.tagName[1]), text: text(h),
    id: h.id || (h.parentElement && h.parentElement.tagName === "SECTION" ? h.parentElement.id : ""),
  }));
  const h1 = headings.find((h) => h.level === 1);
  return { title: h1 ? h1.text : document.title, headings };
}"""


# -- which PDFs ----------------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Chapter:
    """A chapter of the table of contents: its pages (docnames, its own page first, in reading order)."""

    pages: tuple[str, ...]

    @property
    def pdf(self) -> str:
        """Where the whole chapter's PDF goes in the site: ``chapters/04-x/x.pdf``."""
        folder = posixpath.dirname(self.pages[0])
        return f"{folder}/{re.sub(r'^[0-9]+[-_. ]*', '', posixpath.basename(folder)) or 'chapter'}.pdf"


def page_pdf(doc: str) -> str:
    """Where a page's PDF goes in the site: beside its HTML page."""
    return f"{doc}.pdf"


def chapters(root: Path = ROOT) -> list[Chapter]:
    """The chapters of ``root``'s ``_toc.yml``: each entry under ``chapters/`` that is not itself a section of
    one, with the sections under it (at any depth)."""
    import yaml

    toc = yaml.safe_load((Path(root) / "_toc.yml").read_text(encoding="utf-8")) or {}

    def files(entry) -> list[str]:
        found = [entry["file"]] if "file" in entry else []
        for key in ("sections", "chapters"):
            for child in entry.get(key) or []:
                found += files(child)
        return found

    found = []

    def walk(entries):
        for entry in entries or []:
            if entry.get("file", "").startswith(CHAPTERS):
                found.append(Chapter(tuple(files(entry))))
            else:
                walk(entry.get("sections"))
                walk(entry.get("chapters"))

    for part in toc.get("parts") or []:
        walk(part.get("chapters"))
    walk(toc.get("chapters"))
    walk(toc.get("sections"))
    return found


def downloads(pagename: str, books: list[Chapter]) -> list[tuple[str, Chapter | None]]:
    """The PDFs a page offers, as (path in the site, its chapter, or None for the page's own): on a chapter's page,
    that page's PDF and the chapter's; on any other page, every chapter's."""
    for chapter in books:
        if pagename in chapter.pages:
            return [(page_pdf(pagename), None), (chapter.pdf, chapter)]
    return [(chapter.pdf, chapter) for chapter in books]


# -- whether they can be made --------------------------------------------------------------------------------------
def missing() -> str | None:
    """Why no PDF can be made here (what is missing), or None when Chromium, playwright and pypdf are all there."""
    if not (CHROMIUM.is_file() and os.access(CHROMIUM, os.X_OK)):
        return f"{CHROMIUM} is missing ({INSTALL})"
    for module, package in (("playwright", "playwright"), ("pypdf", "pypdf")):
        if importlib.util.find_spec(module) is None:
            return f"the Python package {package} is missing (pip install -r requirements.txt)"
    return None


def printer() -> str:
    """What would print the PDFs, as one line for a build's inputs (``toysite.inputs_hash``): Chromium's version,
    or why nothing can."""
    why = missing()
    if why:
        return f"none: {why}"
    try:
        proc = subprocess.run([str(CHROMIUM), "--version"], capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired) as err:
        return f"{CHROMIUM}: {err}"
    return proc.stdout.strip() or f"{CHROMIUM}: no version"


def left_out(why: str) -> str:
    """The one line a build says when it makes no PDF."""
    return f"toypdf: the book's PDFs were left out: {why}"


# -- fixed metadata ------------------------------------------------------------------------------------------------
def source_epoch(root: Path = ROOT) -> int:
    """The time the PDFs carry: ``SOURCE_DATE_EPOCH``, else the last commit of ``root``'s repository, else a
    constant."""
    if os.environ.get("SOURCE_DATE_EPOCH", "").strip().isdigit():
        return int(os.environ["SOURCE_DATE_EPOCH"])
    try:
        proc = subprocess.run(["git", "-C", str(root), "log", "-1", "--format=%ct"], capture_output=True, text=True,
                              timeout=30)
        if proc.returncode == 0 and proc.stdout.strip().isdigit():
            return int(proc.stdout.strip())
    except (OSError, subprocess.TimeoutExpired):
        pass
    return FALLBACK_EPOCH


def pdf_date(epoch: int) -> str:
    """A PDF date string (UTC): ``D:20261203120000+00'00'``."""
    return datetime.fromtimestamp(epoch, tz=UTC).strftime("D:%Y%m%d%H%M%S+00'00'")


def book_author(root: Path = ROOT) -> str:
    import yaml

    return str((yaml.safe_load((Path(root) / "_config.yml").read_text(encoding="utf-8")) or {}).get("author") or "")


# -- printing ------------------------------------------------------------------------------------------------------
@dataclass
class Print:
    """One page as Chromium printed it, with what the page said about itself."""

    doc: str
    title: str
    headings: list[dict]
    pdf: bytes
    base: str = ""  # the address the site was served at when it was printed (its links start with it)
    loads: tuple[str, ...] = ()  # what the page loaded: paths in the site, its own HTML included
    seconds: float = 0.0  # how long printing it took (0 for a print reused from an earlier build)
    key: str = ""  # what the print was made from (``inputs_key``)


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


@contextlib.contextmanager
def serve(site: Path):
    """The built site served on 127.0.0.1 at a free port, from a thread of this process: yields its base URL."""
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0),
                                             functools.partial(_QuietHandler, directory=str(site)))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/"
    finally:
        server.shutdown()
        server.server_close()


def _band(content: str) -> str:
    """A header or footer for Chromium: small, grey, inside the page's side margins."""
    return (f'<div style="font-size:9px;color:#555;width:100%;margin:0 {MARGIN};text-align:center;'
            f'font-family:sans-serif">{content}</div>')


def _loaded_paths(urls, base: str) -> tuple[str, ...]:
    """The paths in the site (no query, no fragment) of the requests made to the site at ``base``."""
    found = set()
    for url in urls:
        target = _site_path(url, base)
        if target is not None:
            found.add(target[0])
    return tuple(sorted(found))


async def _print_one(browser, base: str, doc: str, epoch: int = FALLBACK_EPOCH) -> Print:
    """One page printed once, made still first: the clock fixed at ``epoch``, no animation or transition, its
    figures drawn, its fonts in, its layout settled; then printed as its print stylesheet says. What it loaded is
    recorded."""
    start = time.monotonic()
    page = await browser.new_page(reduced_motion="reduce")
    urls: list[str] = []
    page.on("request", lambda request: urls.append(request.url))
    try:
        page.set_default_timeout(TIMEOUT_MS)
        await page.clock.set_fixed_time(epoch)  # playwright: a number is Unix time in seconds
        await page.goto(urllib.parse.urljoin(base, f"{doc}.html"), wait_until="load")
        await page.add_style_tag(content=STILL_CSS)
        facts = await page.evaluate(PAGE_FACTS_JS, SETTLE_FRAMES)
        data = await page.pdf(format="A4", margin={side: MARGIN for side in ("top", "right", "bottom", "left")},
                              display_header_footer=True, print_background=False, outline=True, tagged=True,
                              header_template=_band(html.escape(facts["title"])),
                              footer_template=_band('page <span class="pageNumber"></span> of '
                                                    '<span class="totalPages"></span>'))
        return Print(doc, facts["title"], facts["headings"], data, base=base, loads=_loaded_paths(urls, base),
                     seconds=time.monotonic() - start)
    except Exception as err:
        raise RuntimeError(f"toypdf: printing {doc}.html failed: {err}") from err
    finally:
        await page.close()


def _fallback_fonts(pdf: bytes, loads=("_static/katex/katex.min.css",)) -> list[str]:
    """The serif fonts the print of a page with KaTeX math embeds (``loads``: what the page loaded; none for a page
    without KaTeX). Nothing on the book's pages asks for a serif: KaTeX's math falls back to Times New Roman
    (Liberation Serif here) when its own font is not in, and under load a whole page's math now and then came out so
    (KaTeX_Main and KaTeX_Math, the two fonts the page preloads), so such a print is made again (``_print_all``) and
    never reused (``load_print``)."""
    from pypdf import PdfReader

    if not pdf.startswith(b"%PDF") or not any("katex" in path for path in loads):
        return []
    names = set()
    for page in PdfReader(io.BytesIO(pdf)).pages:
        for ref in ((page.get("/Resources") or {}).get("/Font") or {}).values():
            names.add(str(ref.get_object().get("/BaseFont", "")).lstrip("/").split("+")[-1])
    return sorted(name for name in names if name.startswith(FALLBACK_SERIFS))


async def _print_all(base: str, docs: list[str], at_once: int, epoch: int, done) -> list[Print]:
    from playwright.async_api import async_playwright

    async with async_playwright() as p:
        browser = await p.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_FLAGS)
        try:
            slots = asyncio.Semaphore(at_once)

            async def one(doc):
                async with slots:
                    for _ in range(PRINT_TRIES):
                        printed = await _print_one(browser, base, doc, epoch)
                        fallen = _fallback_fonts(printed.pdf, printed.loads)
                        if not fallen:
                            break
                    else:
                        raise RuntimeError(f"toypdf: {doc}.html was printed {PRINT_TRIES} times, each time with "
                                           f"its math in a fallback font ({', '.join(fallen)})")
                done(printed)
                return printed

            return list(await asyncio.gather(*(one(doc) for doc in docs)))
        finally:
            await browser.close()


def print_pages(base: str, docs: list[str], at_once: int = 2, epoch: int = FALLBACK_EPOCH,
                done=lambda printed: None) -> list[Print]:
    """Each page (docname) of the site served at ``base``, printed once by Chromium, in the order given;
    ``done(print)`` is called as each is finished."""
    if not docs:
        return []
    coro = _print_all(base, docs, at_once, epoch, done)
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(coro)
    with concurrent.futures.ThreadPoolExecutor(1) as pool:  # a caller's event loop runs here: use a thread's
        return pool.submit(asyncio.run, coro).result()


# -- finishing: links, bookmarks, structure, metadata --------------------------------------------------------------
@dataclass
class _Part:
    """A print read back, as it goes into a PDF: where its pages start there, and where its places are."""

    printed: Print
    reader: object
    start: int = 0
    dests: dict = field(default_factory=dict)  # named destination -> (page index in the print, left, top)
    outline: list = field(default_factory=list)  # (level, title, page index in the print, left, top)


def _page_index(reader, ref) -> int | None:
    """The index of the page an indirect reference points at, or None."""
    numbers = getattr(reader, "_toypdf_pages", None)
    if numbers is None:
        numbers = {page.indirect_reference.idnum: i for i, page in enumerate(reader.pages)}
        reader._toypdf_pages = numbers
    return numbers.get(getattr(ref, "idnum", None))


def _place(reader, dest) -> tuple[int, float, float] | None:
    """(page index, left, top) of an explicit destination ``[page /XYZ left top zoom]`` (a missing or null
    coordinate: the page's left or top), or None when it points at no page of ``reader``."""
    dest = dest.get_object() if hasattr(dest, "get_object") else dest
    if not isinstance(dest, list) or not dest:
        return None
    index = _page_index(reader, dest[0])
    if index is None:
        return None
    left, top = (list(dest[2:4]) + [None, None])[:2]
    return (index, float(left) if isinstance(left, (int, float)) else 0.0,
            float(top) if isinstance(top, (int, float)) else float(reader.pages[index].mediabox.top))


def _named_dests(reader) -> dict:
    """The print's named destinations (Chromium writes one, in the catalog's ``/Dests``, for each element a link
    of the page points at; each section is one, through its heading's "#" link): name -> (page index, left,
    top)."""
    table = reader.trailer["/Root"].get("/Dests")
    found = {}
    for name, dest in (table.get_object().items() if table is not None else []):
        place = _place(reader, dest)
        if place is not None:
            found[str(name).lstrip("/")] = place
    return found


def _number_tree(node) -> list:
    """The (number, value) pairs of a PDF number tree, values as stored (indirect references stay so)."""
    pairs, flat = [], node.get("/Nums", [])
    pairs += [(int(flat[i]), flat[i + 1]) for i in range(0, len(flat) - 1, 2)]
    for kid in node.get("/Kids", []):
        pairs += _number_tree(kid.get_object())
    return pairs


def _chromium_outline(reader) -> list[tuple[str, tuple]]:
    """Chromium's own bookmarks, depth first: (title without spaces, place)."""
    found = []

    def walk(items):
        for item in items:
            if isinstance(item, list):
                walk(item)
                continue
            index = reader.get_destination_page_number(item)
            if index is not None and index >= 0:
                found.append((re.sub(r"\s+", "", str(item.title)), (index, float(item.left or 0),
                                                                      float(item.top or 0))))

    with contextlib.suppress(Exception):  # a print without an outline, or one pypdf cannot read
        walk(reader.outline)
    return found


def _outline(printed: Print, reader, dests: dict) -> list[tuple]:
    """The page's bookmarks, (level, title, page index, left, top): its title at the top of its first page, then
    its h2 and h3 headings, each where its section is in the print (its named destination), else where Chromium's
    bookmark of the same text is, else where the heading before it is."""
    chromium = _chromium_outline(reader)
    top = float(reader.pages[0].mediabox.top)
    entries, last, searched = [(1, printed.title, 0, 0.0, top)], (0, 0.0, top), 0
    listed = [_flat(h["text"]) for h in printed.headings if 1 < h["level"] <= OUTLINE_LEVELS and h["text"]]
    texts = {0: _without_contents(_flat(reader.pages[0].extract_text() or ""), listed)}
    for heading in printed.headings:
        if not 1 < heading["level"] <= OUTLINE_LEVELS or not heading["text"]:
            continue
        place = dests.get(heading["id"])
        key = re.sub(r"\s+", "", heading["text"])
        for i in range(searched, len(chromium) if place is None else 0):
            if chromium[i][0].startswith(key):
                place, searched = chromium[i][1], i + 1
                break
        if place is not None:
            place = _on_its_page(reader, place, heading["text"], texts)
        last = last if place is None else place
        entries.append((heading["level"], heading["text"], *last))
    return entries


def _flat(text: str) -> str:
    """Text as compared with a print's: ligatures decomposed, no accents, no whitespace."""
    text = unicodedata.normalize("NFKD", text)
    return "".join(c for c in text if not c.isspace() and unicodedata.category(c) not in ("Mn", "Cc"))


def _without_contents(text: str, headings: list[str]) -> str:
    """A page's flat text without the theme's print-only "Contents" list of the page's ``headings`` (flat), which
    would count as the headings printed there."""
    at = text.find("Contents")
    if at < 0 or not headings or not text.startswith(headings[0], at + len("Contents")):
        return text
    rest = text[at + len("Contents"):]
    for heading in headings:
        rest = rest[len(heading):] if rest.startswith(heading) else rest
    return text[:at] + rest


def _on_its_page(reader, place: tuple, heading: str, texts: dict) -> tuple:
    """``place`` (page index, left, top), or the top of the next page when the heading is printed there: a
    section's place is its top, which stays at the foot of a page when only its margin fits there and its heading
    goes on to the next page (the bookmark landed a page early)."""
    def text(i):
        if i not in texts:
            texts[i] = _flat(reader.pages[i].extract_text() or "")
        return texts[i]

    index, key = place[0], _flat(heading)
    if key and key not in text(index) and index + 1 < len(reader.pages) and key in text(index + 1):
        return index + 1, 0.0, float(reader.pages[index + 1].mediabox.top)
    return place


def _read(printed: Print) -> _Part:
    from pypdf import PdfReader

    reader = PdfReader(io.BytesIO(printed.pdf))
    dests = _named_dests(reader)
    return _Part(printed, reader, dests=dests, outline=_outline(printed, reader, dests))


def _site_path(url: str, base: str) -> tuple[str, str] | None:
    """(path in the site, fragment) of a link to the local server, or None for any other link."""
    if not url.startswith(base):
        return None
    parts = urllib.parse.urlsplit(url)
    path = urllib.parse.unquote(parts.path).lstrip("/")
    if path == "" or path.endswith("/"):
        path += "index.html"
    return path, parts.fragment


def _relative(path: str, fragment: str, pdf: str) -> str:
    """The link to ``path#fragment`` (paths in the site) from the PDF at ``pdf``."""
    rel = posixpath.relpath(path, posixpath.dirname(pdf) or ".")
    return urllib.parse.quote(rel, safe="/._-~") + (f"#{fragment}" if fragment else "")


def _goto(writer, part: _Part, name: str | None):
    """An explicit destination in ``writer``: the named place of ``part`` (its first page's top if ``name`` is
    None or unknown)."""
    from pypdf.generic import ArrayObject, FloatObject, NameObject, NullObject

    index, left, top = part.dests.get(name) if name in part.dests else \
        (0, 0.0, float(part.reader.pages[0].mediabox.top))
    page = writer.pages[part.start + index].indirect_reference
    return ArrayObject([page, NameObject("/XYZ"), FloatObject(left), FloatObject(top), NullObject()])


def _relink(writer, parts: list[_Part], base: str, pdf: str) -> None:
    """Every link of the PDF at ``pdf`` (path in the site): to a place of one of its parts, a link within it;
    to the local server, a relative link; any other, unchanged."""
    from pypdf.generic import DictionaryObject, NameObject, TextStringObject

    by_html = {f"{part.printed.doc}.html": part for part in parts}
    for part in parts:
        for i in range(len(part.reader.pages)):
            page = writer.pages[part.start + i]
            for annot_ref in page.get("/Annots", []) or []:
                annot = annot_ref.get_object()
                if annot.get("/Subtype") != "/Link":
                    continue
                if "/Dest" in annot and isinstance(annot["/Dest"].get_object(), str):  # named: this page's place
                    annot[NameObject("/Dest")] = _goto(writer, part, str(annot["/Dest"]).lstrip("/"))
                    continue
                action = annot.get("/A")
                uri = action.get_object().get("/URI") if action is not None else None
                target = _site_path(str(uri), part.printed.base or base) if uri is not None else None
                if target is None:
                    continue
                path, fragment = target
                if path in by_html:
                    annot[NameObject("/Dest")] = _goto(writer, by_html[path], fragment or None)
                    del annot["/A"]
                else:
                    annot[NameObject("/A")] = DictionaryObject({
                        NameObject("/S"): NameObject("/URI"),
                        NameObject("/URI"): TextStringObject(_relative(path, fragment, pdf))})


def _copy_pages(writer, parts: list[_Part]) -> None:
    for part in parts:
        part.start = len(writer.pages)
        for page in part.reader.pages:
            writer.add_page(page)


def _copy_structure(writer, parts: list[_Part]) -> None:
    """The tagged structure of every part, as one: each part's structure tree under the new root, its parent
    tree's keys (and its pages' and links' references to them) shifted past the parts before it."""
    from pypdf.generic import ArrayObject, BooleanObject, DictionaryObject, NameObject, NumberObject

    roots = [part.reader.trailer["/Root"].get("/StructTreeRoot") for part in parts]
    if any(root is None for root in roots):  # one part without structure: none at all
        return
    tree_root = DictionaryObject({NameObject("/Type"): NameObject("/StructTreeRoot")})
    root_ref = writer._add_object(tree_root)
    kids, nums, offset, given = ArrayObject(), ArrayObject(), 0, 0
    for part, root in zip(parts, roots, strict=True):
        ids = {}  # a part's table cells name their headers by ids of that part
        root = root.get_object()
        for kid in root.get("/K") if isinstance(root.get("/K"), list) else [root.get("/K")]:
            if kid is None:
                continue
            copy = kid.clone(writer, ignore_fields=(1, "/P"))  # its parent is the new root, not the old one
            copy.get_object()[NameObject("/P")] = root_ref
            kids.append(copy if hasattr(copy, "idnum") else copy.indirect_reference)
            given = _renumber_ids(copy.get_object(), ids, given)
        for number, value in _number_tree(root["/ParentTree"].get_object()) if "/ParentTree" in root else []:
            nums += [NumberObject(number + offset), value.clone(writer)]
        for i, original in enumerate(part.reader.pages):  # pypdf's add_page leaves out a page's /StructParents
            page = writer.pages[part.start + i]
            if "/StructParents" in original:
                page[NameObject("/StructParents")] = NumberObject(original["/StructParents"] + offset)
            for annot_ref in (page.get("/Annots", []) or []) if offset else []:
                annot = annot_ref.get_object()
                if "/StructParent" in annot:
                    annot[NameObject("/StructParent")] = NumberObject(annot["/StructParent"] + offset)
        offset += int(root.get("/ParentTreeNextKey", 0))
    if len(kids) == 1:
        tree_root[NameObject("/K")] = kids
    else:  # one document, each part's document a part of it
        document = DictionaryObject({NameObject("/Type"): NameObject("/StructElem"),
                                     NameObject("/S"): NameObject("/Document"), NameObject("/P"): root_ref})
        document_ref = writer._add_object(document)
        for kid in kids:
            elem = kid.get_object()
            elem[NameObject("/P")] = document_ref
            if elem.get("/S") == "/Document":
                elem[NameObject("/S")] = NameObject("/Part")
        document[NameObject("/K")] = kids
        tree_root[NameObject("/K")] = ArrayObject([document_ref])
    tree_root[NameObject("/ParentTree")] = writer._add_object(DictionaryObject({NameObject("/Nums"): nums}))
    tree_root[NameObject("/ParentTreeNextKey")] = NumberObject(offset)
    writer._root_object[NameObject("/StructTreeRoot")] = root_ref
    writer._root_object[NameObject("/MarkInfo")] = DictionaryObject({NameObject("/Marked"): BooleanObject(True)})


def _struct_elems(top) -> list:
    """The structure elements under ``top`` (itself first), depth first in the order of their ``/K``."""
    found, stack = [], [top]
    while stack:
        elem = stack.pop()
        if not hasattr(elem, "get") or "/S" not in elem:
            continue
        found.append(elem)
        kids = elem.get("/K")
        stack.extend(reversed([k.get_object() for k in (kids if isinstance(kids, list) else [kids])
                               if k is not None and hasattr(k, "get_object")]))
    return found


def _attributes(elem) -> list:
    owned = elem.get("/A")
    return [a.get_object() for a in (owned if isinstance(owned, list) else [owned]) if a is not None]


def _id_key(value) -> bytes:
    if isinstance(value, bytes):
        return bytes(value)
    return value.original_bytes if hasattr(value, "original_bytes") else str(value).encode()


def _renumber_ids(top, ids: dict, given: int) -> int:
    """The ids Chromium gives table header cells (``/ID``, which the cells under them name in ``/Headers``) count
    the browser's nodes, and so differ from one run to the next: each becomes ``h<n>``, numbered on from
    ``given`` in the order the cells come (``ids``: old id -> new, for the part the cells are in). Returns the
    number of ids given so far."""
    from pypdf.generic import ArrayObject, ByteStringObject, NameObject

    elems = _struct_elems(top)
    for elem in elems:
        if "/ID" in elem:
            given += 1
            ids[_id_key(elem["/ID"])] = elem[NameObject("/ID")] = ByteStringObject(f"h{given}".encode())
    for elem in elems:
        for attributes in _attributes(elem):
            if "/Headers" in attributes:
                attributes[NameObject("/Headers")] = ArrayObject(ids.get(_id_key(h), h)
                                                                 for h in attributes["/Headers"])
    return given


def _add_outline(writer, parts: list[_Part]) -> None:
    """The bookmarks: each part's title at the top level, its headings under it (an h3 under the h2 before it)."""
    from pypdf.generic import Fit

    for part in parts:
        parents = {}
        for level, title, index, left, top in part.outline:
            parent = next((parents[k] for k in range(level - 1, 0, -1) if k in parents), None)
            parents = {k: v for k, v in parents.items() if k < level}
            parents[level] = writer.add_outline_item(title=title, page_number=part.start + index, parent=parent,
                                                     fit=Fit.xyz(left, top, None))


def _metadata(writer, title: str, author: str, epoch: int, first_root) -> None:
    from pypdf.generic import BooleanObject, DictionaryObject, NameObject, TextStringObject

    info = {"/Title": title, "/Author": author, "/CreationDate": pdf_date(epoch), "/ModDate": pdf_date(epoch),
            "/Creator": "The book's toypdf (book/_ext/toypdf.py), printed by Chromium", "/Producer": "pypdf"}
    writer.add_metadata({k: v for k, v in info.items() if v})
    root = writer._root_object
    if "/Lang" in first_root:
        root[NameObject("/Lang")] = TextStringObject(str(first_root["/Lang"]))
    root[NameObject("/ViewerPreferences")] = DictionaryObject({NameObject("/DisplayDocTitle"): BooleanObject(True)})
    root[NameObject("/PageMode")] = NameObject("/UseOutlines")


def _with_id(data: bytes) -> bytes:
    """The PDF with a file identifier made from its content (pypdf writes none unless asked, and then a random
    one): both halves the hash of the bytes, put in the trailer, which no offset points past."""
    digest = hashlib.sha256(data).hexdigest()[:32]
    at = data.rfind(b"trailer")
    opening = data.find(b"<<", at)
    if at < 0 or opening < 0:
        raise RuntimeError("toypdf: the PDF pypdf wrote has no trailer to put an identifier in")
    return data[:opening + 2] + f"\n/ID [<{digest}> <{digest}>]".encode() + data[opening + 2:]


def assemble(prints: list[Print], base: str, pdf: str, title: str, author: str, epoch: int) -> bytes:
    """One PDF (for the site path ``pdf``) of one or more prints one after another: links, bookmarks, tagged
    structure and fixed metadata as the module's docstring says. Its bytes depend only on its inputs."""
    from pypdf import PdfWriter
    from pypdf.generic import DictionaryObject, NameObject

    parts = [_read(p) for p in prints]
    writer = PdfWriter()
    _copy_pages(writer, parts)
    _copy_structure(writer, parts)
    _relink(writer, parts, base, pdf)
    if len(parts) == 1:  # a page's PDF keeps the names of its places: 4.1-formal-mapping.pdf#exercises
        writer._root_object[NameObject("/Dests")] = writer._add_object(DictionaryObject({
            NameObject(f"/{name}"): _goto(writer, parts[0], name) for name in sorted(parts[0].dests)}))
    _add_outline(writer, parts)
    _metadata(writer, title, author, epoch, parts[0].reader.trailer["/Root"])
    out = io.BytesIO()
    writer.write(out)
    return _with_id(out.getvalue())


# -- what a print is made of, and the prints kept from earlier builds -----------------------------------------------
@functools.cache
def _module_digest() -> str:
    """This module and the packages that print and finish a PDF (their versions)."""
    import importlib.metadata

    versions = []
    for name in ("playwright", "pypdf"):
        try:
            versions.append(f"{name}=={importlib.metadata.version(name)}")
        except importlib.metadata.PackageNotFoundError:
            versions.append(f"{name} missing")
    return hashlib.sha256(Path(__file__).read_bytes() + "\n".join(versions).encode()).hexdigest()


def inputs_key(site: Path, loads, chromium: str) -> str:
    """A hash of what a print is made of: the bytes of every file the page loaded (``loads``, paths in the site
    ``site``; a missing file counts as missing), the Chromium that prints and this module (how it prints)."""
    h = hashlib.sha256(f"{_module_digest()}\0{chromium}\0".encode())
    for path in sorted(set(loads)):
        f = Path(site) / path
        h.update(f"{path}\0".encode())
        h.update(hashlib.sha256(f.read_bytes()).digest() if f.is_file() else b"-")
    return h.hexdigest()


def cache_dir(site: Path) -> Path:
    """Where a site's prints are kept between builds: beside its html folder (every build starts that afresh)."""
    return Path(site).resolve().parent / CACHE_NAME


def _cached(folder: Path, doc: str) -> tuple[Path, Path]:
    return folder / f"{doc}.json", folder / f"{doc}.print.pdf"


def load_print(folder: Path, site: Path, doc: str, chromium: str) -> Print | None:
    """The print of ``doc`` kept in ``folder``, if what it was made of is unchanged in ``site``; else None."""
    facts_path, pdf_path = _cached(folder, doc)
    try:
        facts = json.loads(facts_path.read_text(encoding="utf-8"))
        data = pdf_path.read_bytes()
    except (OSError, ValueError):
        return None
    if not isinstance(facts, dict) or facts.get("doc") != doc or not facts.get("loads") \
            or hashlib.sha256(data).hexdigest() != facts.get("sha256"):
        return None
    if _fallback_fonts(data, facts["loads"]):
        return None
    key = inputs_key(site, facts["loads"], chromium)
    if key != facts.get("key"):
        return None
    return Print(doc, facts["title"], facts["headings"], data, base=facts["base"], loads=tuple(facts["loads"]),
                 key=key)


def save_print(folder: Path, printed: Print) -> None:
    facts_path, pdf_path = _cached(folder, printed.doc)
    facts_path.parent.mkdir(parents=True, exist_ok=True)
    pdf_path.write_bytes(printed.pdf)
    facts = {"doc": printed.doc, "key": printed.key, "title": printed.title, "headings": printed.headings,
             "base": printed.base, "loads": list(printed.loads), "sha256": hashlib.sha256(printed.pdf).hexdigest()}
    facts_path.write_text(json.dumps(facts, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")


def _assembled(folder: Path, path: str, prints: list[Print], title: str, author: str, epoch: int) -> tuple:
    """(where a finished PDF is kept, the key it is kept under): what ``assemble`` makes it of."""
    key = hashlib.sha256(json.dumps([_module_digest(), path, title, author, epoch,
                                     [p.key for p in prints]]).encode()).hexdigest()
    return folder / "_finished" / path, key


# -- the whole pass ------------------------------------------------------------------------------------------------
def make_pdfs(outdir: Path, root: Path = ROOT, target: Path | None = None, log=print, fresh: bool = False,
              cache: Path | None = None) -> list[Path]:
    """Print every chapter page of the built site ``outdir`` whose print is not kept from an earlier build
    (``cache``, default beside ``outdir``; ``fresh``: none is) and write its PDF and each chapter's (into
    ``target``, default ``outdir``, at the same paths); returns the PDFs written. One line through ``log`` per
    PDF as it is made. Without Chromium (``missing``): one line through ``log``, and no PDF."""
    why = missing()
    if why:
        log(left_out(why))
        return []
    start = time.monotonic()
    outdir, target = Path(outdir), Path(target or outdir)
    folder = Path(cache) if cache is not None else cache_dir(outdir)
    books = [c for c in chapters(root) if all((outdir / f"{doc}.html").is_file() for doc in c.pages)]
    docs = [doc for chapter in books for doc in chapter.pages]
    author, epoch, chromium = book_author(root), source_epoch(root), printer()
    printed = {} if fresh else {doc: p for doc in docs if (p := load_print(folder, outdir, doc, chromium))}
    missing_docs = [doc for doc in docs if doc not in printed]
    written = []

    def write(path: str, prints: list[Print], title: str, what: str):
        kept, key = _assembled(folder, path, prints, title, author, epoch)
        key_file, data = kept.with_name(kept.name + ".key"), None
        with contextlib.suppress(OSError, ValueError):
            recorded_key, digest = key_file.read_text().split()
            if not fresh and recorded_key == key:
                data = kept.read_bytes()
                if hashlib.sha256(data).hexdigest() == digest:
                    what = "unchanged, kept from an earlier build"
                else:
                    data = None
        if data is None:
            data = assemble(prints, "", path, title, author, epoch)
            kept.parent.mkdir(parents=True, exist_ok=True)
            kept.write_bytes(data)
            key_file.write_text(f"{key}\n{hashlib.sha256(data).hexdigest()}\n")
        (target / path).parent.mkdir(parents=True, exist_ok=True)
        (target / path).write_bytes(data)
        written.append(target / path)
        log(f"toypdf: {path}: {what} ({len(data) / 1e6:.2f} MB)")

    def page_done(p: Print):
        p.key = inputs_key(outdir, p.loads, chromium)
        save_print(folder, p)
        write(page_pdf(p.doc), [p], p.title, f"printed in {p.seconds:.1f} s")

    if missing_docs:
        log(f"toypdf: printing {len(missing_docs)} of {len(docs)} chapter pages with Chromium"
            + (f" (the other {len(docs) - len(missing_docs)} are unchanged since they were printed)"
               if len(missing_docs) < len(docs) else ""))
    printing = time.monotonic()
    with serve(outdir) as base:
        for p in print_pages(base, missing_docs, epoch=epoch, done=page_done):
            printed[p.doc] = p
    printing = time.monotonic() - printing
    for doc in docs:
        if doc not in missing_docs:
            p = printed[doc]
            write(page_pdf(doc), [p], p.title, "its print unchanged, put together again")
    for chapter in books:
        pages = [printed[doc] for doc in chapter.pages]
        write(chapter.pdf, pages, pages[0].title, f"the chapter's {len(pages)} pages put together")
    log(f"toypdf: {len(written)} PDFs ({len(missing_docs)} of {len(docs)} pages printed, {len(books)} "
        f"chapter{'s' * (len(books) != 1)}) in {time.monotonic() - start:.1f} s ({printing:.1f} s of it printing)")
    # (printing: Chromium started, the pages printed, and each one's PDF put together as it came)
    return written


def main(argv: list[str]) -> int:
    import argparse

    parser = argparse.ArgumentParser(description="Print a built site's chapter pages to PDF.")
    parser.add_argument("site", type=Path, help="the built site (e.g. _build/html)")
    parser.add_argument("--out", type=Path, help="where to write the PDFs (default: into the site)")
    parser.add_argument("--fresh", action="store_true", help="print every page (reuse no print of a build before)")
    args = parser.parse_args(argv)
    for path in make_pdfs(args.site, ROOT, args.out, fresh=args.fresh):
        print(f"  {path} ({path.stat().st_size / 1e6:.2f} MB)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
