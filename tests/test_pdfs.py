"""The book's PDFs (``book/_ext/toypdf.py``): each chapter page's and each whole chapter's, printed from the built
site by Chromium when the book is built, offered in every page's download menu.

What each page PDF must hold comes from the built page itself: its title, its headings, its figures (each
figure's axis titles and legend entries, read from the figure's spec, found in the PDF's text), its links (each
one resolving in the PDF or in the built site). The chapter's PDF is its pages' PDFs in reading order. Two runs
give the same bytes; without Chromium there are no PDFs, one line says so, and the pages offer none.
"""

from __future__ import annotations

import contextlib
import html
import io
import json
import os
import posixpath
import re
import shutil
import subprocess
import unicodedata
import urllib.parse
from pathlib import Path
from types import SimpleNamespace

import pytest
import toypdf  # book/_ext: tests/conftest.py puts it on sys.path
import toysite
import yaml

from tests.conftest import busy_loops

ROOT = Path(__file__).resolve().parents[1]
CHAPTERS = toypdf.chapters(ROOT)
PAGES = [doc for chapter in CHAPTERS for doc in chapter.pages]
SPEC_FILE = re.compile(r'\(window\.toyData = window\.toyData \|\| \{\}\)\["\w+"\] = (.*);\n', re.S)
SPEC_TAG = re.compile(r'<script[^>]*class="toy-(plot|explorer)-spec"[^>]*>(.*?)</script>', re.S)


def toc_docs() -> list[str]:
    """Every page of the table of contents, root first."""
    toc = yaml.safe_load((ROOT / "_toc.yml").read_text(encoding="utf-8"))
    found = [toc["root"]]

    def walk(entries):
        for entry in entries or []:
            found.extend([entry["file"]] if "file" in entry else [])
            walk(entry.get("sections"))
            walk(entry.get("chapters"))

    for part in toc.get("parts") or []:
        walk(part.get("chapters"))
    walk(toc.get("chapters"))
    return found


def slug(doc: str) -> str:
    return doc.rsplit("/", 1)[-1]


# -- reading PDFs and pages ----------------------------------------------------------------------------------------
def reader(path: Path):
    from pypdf import PdfReader

    assert path.is_file(), f"{path} was not made"
    return PdfReader(path)


def flat(text: str) -> str:
    """Text as compared here: ligatures and accents decomposed and dropped, no whitespace (the PDF's text
    breaks lines where the page did)."""
    text = unicodedata.normalize("NFKD", text)
    return "".join(c for c in text if not c.isspace() and unicodedata.category(c) not in ("Mn", "Cc"))


def pdf_text(pdf) -> str:
    return flat("".join(page.extract_text() or "" for page in pdf.pages))


def outline(pdf) -> list[tuple[int, str, int]]:
    """The PDF's bookmarks, depth first: (depth, title, page index)."""
    found = []

    def walk(items, depth):
        for item in items:
            if isinstance(item, list):
                walk(item, depth + 1)
            else:
                found.append((depth, str(item.title), pdf.get_destination_page_number(item)))

    walk(pdf.outline, 0)
    return found


def html_text(fragment: str) -> str:
    fragment = re.sub(r'<a class="headerlink".*?</a>', "", fragment, flags=re.S)
    fragment = re.sub(r'<span class="katex-mathml">.*?</math></span>', "", fragment, flags=re.S)
    return " ".join(html.unescape(re.sub(r"<[^>]+>", "", fragment)).split())


def article(page_html: str) -> str:
    start = page_html.index('<article class="bd-article"')
    return page_html[start:page_html.index("</article>", start)]


def headings(page_html: str) -> list[tuple[int, str]]:
    """The page's h1 to h3, (level, text), as the article has them."""
    return [(int(m.group(1)), html_text(m.group(2)))
            for m in re.finditer(r"<h([1-3])[^>]*>(.*?)</h\1>", article(page_html), re.S)]


def figure_specs(site: Path, doc: str) -> list[tuple[str, dict]]:
    """Each figure of the page, in order: ("plot", its plotly figure) or ("explorer", its spec), read from the page
    or the data file it names."""
    page = site / f"{doc}.html"
    found = []
    for m in SPEC_TAG.finditer(page.read_text(encoding="utf-8")):
        src = re.search(r'data-src="([^"]+)"', m.group(0))
        if src:
            spec = json.loads(SPEC_FILE.fullmatch((page.parent / src.group(1)).read_text(encoding="utf-8")).group(1))
        else:
            spec = json.loads(html.unescape(m.group(2)))
        found.append((m.group(1), spec))
    return found


def drawn_texts(kind: str, spec: dict) -> list[str]:
    """What plotly draws inside a figure, as the spec says before any setting changes it: each visible axis's
    title and each legend entry (lines of a title broken with <br> apart, tags dropped)."""
    figure = spec if kind == "plot" else spec["figure"]
    changed = {path for path, _ in spec.get("layout", [])} if kind == "explorer" else set()
    layout, texts = figure.get("layout", {}), []
    for key, axis in layout.items():
        if re.fullmatch(r"[xy]axis\d*", key) and isinstance(axis, dict) and axis.get("visible", True) is not False:
            title = axis.get("title")
            title = title.get("text") if isinstance(title, dict) else title
            if title and f"{key}.title.text" not in changed:
                texts.append(title)
    if layout.get("showlegend", True) is not False:
        texts += [t["name"] for t in figure.get("data", []) if t.get("name") and t.get("showlegend", True) is not False]
    return [html.unescape(re.sub(r"<[^>]+>", "", line)) for text in texts for line in re.split(r"<br\s*/?>", text)
            if re.sub(r"<[^>]+>", "", line).strip()]


def prose(page_html: str) -> str:
    """The page's text outside its figures' specs, scripts and folded numbers tables (their rows name what the
    figures draw; a closed fold is not printed), flattened."""
    page_html = re.sub(r'<details class="toy-explorer-table[^"]*">.*?</details>', "", page_html, flags=re.S)
    return flat(html_text(re.sub(r"<(script|style)\b.*?</\1>", "", page_html, flags=re.S)))


# -- the built site's PDFs -----------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def site(built_site) -> Path:
    why = toypdf.missing()
    if why:
        pytest.skip(f"this machine makes no PDFs: {why}")
    return built_site


@pytest.mark.slow
@pytest.mark.parametrize("doc", PAGES, ids=[slug(d) for d in PAGES])
def test_each_chapter_page_has_a_pdf_with_its_title_and_headings_as_bookmarks(site, doc):
    pdf = reader(site / toypdf.page_pdf(doc))
    page = (site / f"{doc}.html").read_text(encoding="utf-8")
    found = headings(page)
    title = next(text for level, text in found if level == 1)
    assert len(pdf.pages) >= 1
    assert pdf.metadata.title == title
    assert pdf.metadata.author == yaml.safe_load((ROOT / "_config.yml").read_text())["author"]
    marks = outline(pdf)
    assert marks[0] == (0, title, 0), f"the first bookmark is {marks[0]}, not the title on page 1"
    titles = [t for _, t, _ in marks]
    assert [t for level, t in found if level > 1 and t not in titles] == [], "headings without a bookmark"
    assert all(p is not None and 0 <= p < len(pdf.pages) for _, _, p in marks), marks
    pages = [p for depth, _, p in marks if depth > 0]
    assert pages == sorted(pages), f"bookmarks out of reading order: {marks}"


def page_texts(pdf, title: str) -> list[str]:
    """Each page's text (``flat``), without its header (the page's title) and footer ("page X of Y")."""
    texts = []
    for page in pdf.pages:
        text = re.sub(r"page\d+of\d+", "", flat(page.extract_text() or ""))
        texts.append(text.replace(flat(title), "", 1) if text.endswith(flat(title)) or text.startswith(flat(title))
                     else text)
    return texts


NEARLY_EMPTY = 200  # characters of text (about two lines; a full page holds about 3,000): a page with less (but the
# last) is blank or nearly so. A few lines before a figure too tall to share their page are allowed.
FOOT = 100  # characters after a heading on its page, at least: a heading needs some of its section below it


@pytest.mark.slow
@pytest.mark.parametrize("doc", PAGES, ids=[slug(d) for d in PAGES])
def test_no_printed_page_is_blank_or_nearly_empty(site, doc):
    """Issue 42: 4.5 printed a blank page (the empty border of a long code cell), 4.3 two nearly empty ones (a
    heading; the fate filter), as a block that avoids breaks but is taller than a page was pushed on."""
    pdf = reader(site / toypdf.page_pdf(doc))
    texts = page_texts(pdf, pdf.metadata.title)
    short = [(i + 1, len(t), t[:60]) for i, t in enumerate(texts[:-1])
             if len(t) < NEARLY_EMPTY and not pdf.pages[i].images]
    assert short == [], f"{doc}: nearly empty pages (page, characters, text): {short}"


@pytest.mark.slow
@pytest.mark.parametrize("doc", PAGES, ids=[slug(d) for d in PAGES])
def test_headings_are_whole_on_the_page_of_their_section_and_bookmarked_there(site, doc):
    """Issue 42: no heading alone at a page's foot ("The easy side", "The table"), none split across two pages,
    and each bookmark on its heading's page (they landed a page early)."""
    pdf = reader(site / toypdf.page_pdf(doc))
    texts = page_texts(pdf, pdf.metadata.title)
    marks = outline(pdf)[1:]
    if texts[0].startswith("Contents"):  # the theme's print-only list of the page's headings: not the headings
        rest = texts[0][len("Contents"):]
        for _depth, title, _index in marks:
            rest = rest[len(flat(title)):] if rest.startswith(flat(title)) else rest
        texts[0] = rest
    problems = []
    for _depth, title, index in marks:
        key = flat(title)
        where = [i for i, t in enumerate(texts) if key in t]
        if not where:
            problems.append(f"{title!r}: not whole on any page (split across two?)")
            continue
        if index not in where:
            problems.append(f"{title!r}: bookmarked on page {index + 1}, printed on page(s) "
                            f"{[i + 1 for i in where]}")
            continue
        text = texts[index]
        after = text[text.index(key) + len(key):]
        if len(after) < FOOT and index < len(texts) - 1:
            problems.append(f"{title!r}: at the foot of page {index + 1} ({len(after)} characters after it)")
    assert problems == [], f"{doc}: {problems}"


@pytest.mark.slow
def test_no_screen_only_toggle_or_filter_is_printed(site):
    """Issue 42: "Show code cell source" (a folded code cell) works on a screen only. 4.3's table of fates once had
    a screen-only filter ("Show fate: ..."); the table is static now (issue 39), and no such words may come back."""
    found = {}
    for path in ALL_PDFS:
        text = pdf_text(reader(site / path))
        found.update({f"{path}: {what}": text.count(flat(what)) for what in ("Show code cell source", "Show fate")
                      if flat(what) in text})
    assert found == {}, found


def _link_problems(site: Path, pdf_path: Path) -> list[str]:
    """Every link annotation of a PDF in the site that does not resolve: an internal one to no page of the PDF,
    a relative one to no file of the site (or no such id in it), an http(s) one malformed or to this machine."""
    pdf = reader(pdf_path)
    problems, names = [], pdf.named_destinations
    page_numbers = {page.indirect_reference.idnum: i for i, page in enumerate(pdf.pages)}
    for number, page in enumerate(pdf.pages):
        for ref in page.get("/Annots") or []:
            annot = ref.get_object()
            if annot.get("/Subtype") != "/Link":
                continue
            action = annot.get("/A")
            if action is None or action.get("/S") == "/GoTo":
                dest = annot.get("/Dest") if action is None else action.get("/D")
                if isinstance(dest, str):
                    dest = names.get(str(dest).lstrip("/")) or names.get(str(dest))
                    target = pdf.get_destination_page_number(dest) if dest is not None else None
                else:
                    target = page_numbers.get(getattr(dest[0], "idnum", None)) if dest else None
                if target is None or not 0 <= target < len(pdf.pages):
                    problems.append(f"page {number + 1}: an internal link to nowhere ({annot.get('/Dest')})")
                continue
            uri = str(action.get("/URI", ""))
            parts = urllib.parse.urlsplit(uri)
            if parts.scheme in ("http", "https"):
                if not parts.netloc or parts.hostname in ("127.0.0.1", "localhost"):
                    problems.append(f"page {number + 1}: {uri}")
                continue
            if parts.scheme or not parts.path:
                problems.append(f"page {number + 1}: neither relative nor http(s): {uri!r}")
                continue
            target = site / posixpath.normpath(posixpath.join(pdf_path.parent.relative_to(site).as_posix(),
                                                              urllib.parse.unquote(parts.path)))
            if not target.is_file():
                problems.append(f"page {number + 1}: {uri} (no {target.relative_to(site)})")
            elif parts.fragment and f'id="{urllib.parse.unquote(parts.fragment)}"' not in target.read_text(
                    encoding="utf-8", errors="replace"):
                problems.append(f"page {number + 1}: {uri} (no such id)")
    return problems


ALL_PDFS = [toypdf.page_pdf(doc) for doc in PAGES] + [chapter.pdf for chapter in CHAPTERS]


@pytest.mark.slow
@pytest.mark.parametrize("pdf", ALL_PDFS, ids=[slug(p) for p in ALL_PDFS])
def test_every_link_in_a_pdf_resolves(site, pdf):
    links = sum(len(p.get("/Annots") or []) for p in reader(site / pdf).pages)
    assert links > 0 or pdf.endswith("index.pdf"), f"{pdf} has no links at all: were they dropped?"
    assert _link_problems(site, site / pdf) == []


@pytest.mark.slow
@pytest.mark.parametrize("doc", PAGES, ids=[slug(d) for d in PAGES])
def test_every_figure_of_a_page_is_drawn_in_its_pdf(site, doc):
    """Each figure counts as printed when a text plotly draws inside it (and the page's prose does not say) is in
    the PDF's text: an axis title or a legend entry."""
    text = pdf_text(reader(site / toypdf.page_pdf(doc)))
    page_prose = prose((site / f"{doc}.html").read_text(encoding="utf-8"))
    missing = []
    for n, (kind, spec) in enumerate(figure_specs(site, doc), start=1):
        texts = [t for t in drawn_texts(kind, spec) if flat(t) and flat(t) not in page_prose]
        assert texts, f"figure {n} ({kind}) draws no text of its own to look for"
        if not any(flat(t) in text for t in texts):
            missing.append(f"figure {n} ({kind}): none of {texts}")
    assert missing == [], f"{len(missing)} figures are not in {toypdf.page_pdf(doc)}:\n" + "\n".join(missing)


@pytest.mark.slow
def test_no_pdf_sets_its_math_in_a_fallback_font(site):
    """KaTeX's own fonts in every PDF of the site: its math fell back to Times New Roman (Liberation Serif) on whole
    pages now and then when printed under load (4.3 and 4.5, 2026-12-07)."""
    fallen = {pdf: toypdf._fallback_fonts((site / pdf).read_bytes()) for pdf in ALL_PDFS}
    assert {pdf: fonts for pdf, fonts in fallen.items() if fonts} == {}
    chapter = reader(site / CHAPTERS[0].pdf)
    fonts = {str(font.get_object()["/BaseFont"]).split("+")[-1] for page in chapter.pages
             for font in (page["/Resources"].get("/Font") or {}).values()}
    assert {"KaTeX_Main-Regular", "KaTeX_Math-Italic"} <= fonts, sorted(fonts)


@pytest.mark.slow
@pytest.mark.parametrize("chapter", CHAPTERS, ids=[slug(c.pdf) for c in CHAPTERS])
def test_a_chapters_pdf_is_its_pages_in_reading_order(site, chapter):
    whole = reader(site / chapter.pdf)
    parts = [reader(site / toypdf.page_pdf(doc)) for doc in chapter.pages]
    assert len(whole.pages) == sum(len(p.pages) for p in parts)
    assert whole.metadata.title == parts[0].metadata.title
    expected, start = [], 0
    for part in parts:
        expected += [(depth, title, page + start) for depth, title, page in outline(part)]
        start += len(part.pages)
    assert outline(whole) == expected, "one top-level bookmark per page (its title), its bookmarks under it"
    for number, part in enumerate(parts):  # each page's text where its part begins
        first = sum(len(p.pages) for p in parts[:number])
        assert flat(whole.pages[first].extract_text()) == flat(part.pages[0].extract_text())


def _expected_epoch(epoch: int) -> bool:
    """Whether ``epoch`` is a date the PDFs may carry: SOURCE_DATE_EPOCH, else a commit's, else the constant."""
    if os.environ.get("SOURCE_DATE_EPOCH", "").strip().isdigit():
        return epoch == int(os.environ["SOURCE_DATE_EPOCH"])
    log = subprocess.run(["git", "-C", str(ROOT), "log", "--format=%ct"], capture_output=True, text=True)
    return str(epoch) in log.stdout.split() if log.returncode == 0 else epoch == toypdf.FALLBACK_EPOCH


def _epoch(pdf) -> int:
    from datetime import UTC, datetime

    when = datetime.strptime(str(pdf.metadata["/CreationDate"])[2:16], "%Y%m%d%H%M%S").replace(tzinfo=UTC)
    return int(when.timestamp())


@pytest.mark.slow
def test_the_pdfs_carry_fixed_dates_and_an_identifier_of_their_content(site):
    pdfs = [reader(site / path) for path in ALL_PDFS]
    dates = {(str(p.metadata["/CreationDate"]), str(p.metadata["/ModDate"])) for p in pdfs}
    assert len(dates) == 1, f"the PDFs of one build carry different dates: {dates}"
    created, modified = dates.pop()
    assert created == modified == toypdf.pdf_date(_epoch(pdfs[0]))
    assert _expected_epoch(_epoch(pdfs[0])), f"{created} is not SOURCE_DATE_EPOCH's, a commit's or the constant"
    ids = [tuple(x.original_bytes if hasattr(x, "original_bytes") else bytes(x) for x in p.trailer["/ID"])
           for p in pdfs]
    assert all(len(i) == 2 and i[0] == i[1] and len(i[0]) == 16 for i in ids)
    assert len(set(ids)) == len(ids), "two PDFs with one identifier"


@pytest.mark.slow
def test_printing_the_site_again_under_load_gives_the_same_bytes_in_one_print_per_page(site, tmp_path,
                                                                                          monkeypatch):
    """Two pages printed once more, afresh, beside two busy loops (4.3 and 4.5, with the most figures to wait for),
    and every PDF assembled again from them and the build's other prints: the same bytes as the build's PDFs.
    (Both once gave other bytes: their math in a fallback font, which a print is now made again for.)"""
    monkeypatch.setenv("SOURCE_DATE_EPOCH", str(_epoch(reader(site / ALL_PDFS[0]))))  # the build's date
    again = [doc for doc in PAGES if doc.rsplit("/", 1)[-1].startswith(("4.3", "4.5"))]
    assert len(again) == 2, PAGES
    kept, cache = toypdf.cache_dir(site), tmp_path / "cache"
    for doc in PAGES:  # only the other pages' prints: every finished PDF is assembled again
        if doc not in again:
            for path in toypdf._cached(kept, doc):
                (cache / path.relative_to(kept)).parent.mkdir(parents=True, exist_ok=True)
                shutil.copy2(path, cache / path.relative_to(kept))
    lines = []
    with busy_loops(2):
        written = toypdf.make_pdfs(site, ROOT, target=tmp_path / "out", log=lines.append, cache=cache)
    assert sorted(p.relative_to(tmp_path / "out").as_posix() for p in written) == sorted(ALL_PDFS)
    printed = [line.split(": ")[1] for line in lines if ": printed in " in line]
    assert sorted(printed) == sorted(toypdf.page_pdf(doc) for doc in again), lines  # each once, no other page
    differ = [path for path in ALL_PDFS if (tmp_path / "out" / path).read_bytes() != (site / path).read_bytes()]
    assert differ == [], f"printed again under load, these differ from the build's: {differ}"
    assert re.search(r"toypdf: \d+ PDFs .* in [\d.]+ s", lines[-1]), lines


@pytest.mark.slow
def test_every_page_offers_the_pdfs_that_exist(site):
    for doc in toc_docs():
        page = (site / f"{doc}.html").read_text(encoding="utf-8")
        menu = re.search(r'<div class="dropdown dropdown-download-buttons">.*?</ul>', page, re.S)
        assert menu, f"{doc}: no download menu"
        links = re.findall(r'<a href="([^"]+)"[^>]*class="btn btn-sm btn-download-(page|chapter)-pdf-button',
                           menu.group(0))
        kinds = sorted(kind for _, kind in links)
        assert kinds == (["chapter", "page"] if doc in PAGES else ["chapter"] * len(CHAPTERS)), (doc, links)
        for href, _ in links:
            target = (site / doc).parent / urllib.parse.unquote(href)
            assert target.resolve().is_file() and target.suffix == ".pdf", f"{doc}: {href} is no PDF of the site"
        assert "fa-file-pdf" in menu.group(0)


# -- one print per page, and only the pages that changed ------------------------------------------------------------
def _fake_site(tmp_path: Path) -> tuple[Path, Path]:
    """A root with the book's _toc.yml and _config.yml, and a site whose chapter pages each load a stylesheet
    of their own and one shared script."""
    root, site = tmp_path / "root", tmp_path / "_build" / "html"
    root.mkdir()
    for name in ("_toc.yml", "_config.yml"):
        (root / name).write_text((ROOT / name).read_text(encoding="utf-8"), encoding="utf-8")
    (site / "_static").mkdir(parents=True)
    (site / "_static" / "shared.js").write_text("shared")
    for doc in PAGES:
        (site / f"{doc}.html").parent.mkdir(parents=True, exist_ok=True)
        (site / f"{doc}.html").write_text(f"<!doctype html><title>{doc}</title>")
        (site / f"{doc}.css").write_text("p {}")
    (site / "_static" / "not-loaded.js").write_text("x")
    return root, site


def _fake_printer(monkeypatch, printed: list[str]):
    """Chromium replaced: each page "loads" its HTML, its stylesheet and the shared script, and its print is
    its HTML's bytes; assembling a PDF is joining its prints."""
    def print_pages(base, docs, at_once=2, epoch=0, done=lambda p: None):
        out = []
        for doc in docs:
            printed.append(doc)
            site = Path(base)
            p = toypdf.Print(doc, f"title of {doc}", [], (site / f"{doc}.html").read_bytes(), base=base,
                             loads=(f"{doc}.html", f"{doc}.css", "_static/shared.js"), seconds=0.5)
            done(p)
            out.append(p)
        return out

    @contextlib.contextmanager
    def serve(site):
        yield str(site)

    monkeypatch.setattr(toypdf, "missing", lambda: None)
    monkeypatch.setattr(toypdf, "printer", lambda: "Chromium 1.0")
    monkeypatch.setattr(toypdf, "serve", serve)
    monkeypatch.setattr(toypdf, "print_pages", print_pages)
    monkeypatch.setattr(toypdf, "assemble", lambda prints, base, pdf, title, author, epoch: b"|".join(
        p.pdf for p in prints) + f" {pdf} {epoch}".encode())
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "1767225600")


def test_a_rebuild_prints_only_the_pages_whose_html_or_what_they_load_changed(tmp_path, monkeypatch):
    root, site = _fake_site(tmp_path)
    printed, lines = [], []
    _fake_printer(monkeypatch, printed)
    written = toypdf.make_pdfs(site, root, log=lines.append)
    assert printed == PAGES  # a first build prints every page, once
    assert sorted(p.relative_to(site).as_posix() for p in written) == sorted(ALL_PDFS)
    assert [line for line in lines if ": printed in " in line] == \
        [f"toypdf: {toypdf.page_pdf(doc)}: printed in 0.5 s (0.00 MB)" for doc in PAGES], lines
    first = {p: (site / p).read_bytes() for p in ALL_PDFS}

    def rebuild() -> list[str]:
        printed.clear()
        lines.clear()
        toypdf.make_pdfs(site, root, log=lines.append)
        return list(printed)

    assert rebuild() == [] and {p: (site / p).read_bytes() for p in ALL_PDFS} == first
    assert all("unchanged, kept from an earlier build" in line for line in lines if line.endswith("MB)")), lines
    (site / "_static" / "not-loaded.js").write_text("changed")  # a file no page loaded
    assert rebuild() == []
    edited = PAGES[2]
    (site / f"{edited}.html").write_text("<!doctype html><title>edited</title>")  # one page's HTML
    assert rebuild() == [edited]
    made = [line.split(": ")[1] for line in lines if line.endswith("MB)") and "unchanged" not in line]
    assert made == [toypdf.page_pdf(edited), CHAPTERS[0].pdf], lines  # that page's PDF and its chapter's
    assert (site / CHAPTERS[0].pdf).read_bytes() != first[CHAPTERS[0].pdf]
    (site / f"{PAGES[3]}.css").write_text("p { color: red }")  # what one page loads
    assert rebuild() == [PAGES[3]]
    (site / "_static" / "shared.js").write_text("shared, changed")  # what every page loads
    assert rebuild() == PAGES
    monkeypatch.setattr(toypdf, "printer", lambda: "Chromium 2.0")  # another Chromium
    assert rebuild() == PAGES
    toypdf.cache_dir(site).joinpath(f"{PAGES[0]}.print.pdf").write_bytes(b"cut short")  # a damaged record
    assert rebuild() == [PAGES[0]]
    printed.clear()
    toypdf.make_pdfs(site, root, log=lines.append, fresh=True)
    assert printed == PAGES


def test_the_build_says_a_line_per_pdf_as_it_goes(tmp_path, monkeypatch):
    root, site = _fake_site(tmp_path)
    _fake_printer(monkeypatch, [])
    lines = []
    toypdf.make_pdfs(site, root, log=lines.append)
    assert lines[0] == f"toypdf: printing {len(PAGES)} of {len(PAGES)} chapter pages with Chromium"
    assert sum(line.endswith("MB)") for line in lines) == len(ALL_PDFS)
    assert re.search(rf"toypdf: {len(ALL_PDFS)} PDFs \({len(PAGES)} of {len(PAGES)} pages printed", lines[-1])


STILL_PAGE = """<!doctype html><html><head><meta charset="utf-8"><title>still</title>
<style>@keyframes spin { to { transform: rotate(360deg); } } #moving { animation: spin 1s infinite;
  transition: color 5s; }</style></head>
<body><main><h1 id="t">A page</h1><div id="moving">moving</div></main>
<script>
window.toyDrawAll = () => new Promise((done) => setTimeout(() => {
  const el = document.getElementById("moving"), style = getComputedStyle(el);
  const h2 = document.createElement("h2");
  h2.textContent = `drawn: animation ${style.animationName}; transition ${style.transitionProperty}; reduce ` +
    `${matchMedia("(prefers-reduced-motion: reduce)").matches}; now ${Date.now()}; fonts ${document.fonts.status}`;
  document.querySelector("main").append(h2);
  done();
}, 300));
</script></body></html>"""


def test_printing_waits_for_the_figures_with_the_clock_fixed_and_nothing_moving(tmp_path):
    """A real print by Chromium of a page whose figures take 300 ms to draw: the heading they add is in the print
    (printing waited for them), and what it says was seen as they drew: no animation or transition (STILL_CSS),
    reduced motion, the clock at the epoch given, the fonts loaded."""
    (tmp_path / "still.html").write_text(STILL_PAGE, encoding="utf-8")
    epoch = 1_700_000_000
    printed = toypdf.print_pages(tmp_path.as_uri() + "/", ["still"], epoch=epoch)
    assert [p.doc for p in printed] == ["still"] and printed[0].pdf.startswith(b"%PDF")
    said = [h["text"] for h in printed[0].headings if h["text"].startswith("drawn:")]
    assert said == [f"drawn: animation none; transition none; reduce true; now {epoch * 1000}; fonts loaded"], \
        printed[0].headings
    assert not hasattr(toypdf, "agreed"), "one print per page: no printing until two prints agree"


# -- without Chromium ----------------------------------------------------------------------------------------------
def test_without_chromium_no_pdf_is_made_and_one_line_says_so(tmp_path, monkeypatch):
    site = tmp_path / "html"
    for doc in PAGES:
        (site / f"{doc}.html").parent.mkdir(parents=True, exist_ok=True)
        (site / f"{doc}.html").write_text("<!doctype html><title>a page</title><h1>A page</h1>")
    monkeypatch.setattr(toypdf, "CHROMIUM", tmp_path / "no-chromium")
    lines = []
    assert toypdf.make_pdfs(site, ROOT, log=lines.append) == []
    assert len(lines) == 1 and "left out" in lines[0] and "apt-get install chromium" in lines[0], lines
    assert list(site.rglob("*.pdf")) == []


def test_a_build_without_chromium_is_not_current_once_chromium_is_there(tmp_path, monkeypatch):
    with_chromium = toysite.inputs_hash()
    monkeypatch.setattr(toypdf, "CHROMIUM", tmp_path / "no-chromium")
    assert toysite.inputs_hash() != with_chromium


def test_the_download_menu_offers_a_chapter_page_its_pdf_and_its_chapters_and_other_pages_the_chapters():
    import toybook

    def context(pagename):
        return {"header_buttons": [{"type": "group", "label": "download-buttons", "buttons": [
            {"type": "javascript", "label": "download-pdf-button", "text": ".pdf"}]}],
            "pathto": lambda path, resource: posixpath.relpath(path, posixpath.dirname(pagename) or ".")}

    titles = {doc: SimpleNamespace(astext=lambda doc=doc: f"title of {doc}") for doc in PAGES}
    app = SimpleNamespace(_toybook_pdf_chapters=CHAPTERS, env=SimpleNamespace(titles=titles))
    page, other = PAGES[1], "book/intro"
    for pagename in (page, other):
        made = context(pagename)
        toybook._pdf_buttons(app, pagename, "page.html", made, None)
        buttons = made["header_buttons"][0]["buttons"]
        assert buttons[-1]["label"] == "download-pdf-button", "the theme's print entry stays, last"
        assert buttons[-1]["text"] == "Print this page", "the print entry says what it does (not '.pdf')"
        offered = [posixpath.normpath(posixpath.join(posixpath.dirname(pagename), b["url"])) for b in buttons[:-1]]
        wanted = [toypdf.page_pdf(page), CHAPTERS[0].pdf] if pagename == page else [c.pdf for c in CHAPTERS]
        assert offered == wanted
        assert all(b["icon"] == "fas fa-file-pdf" for b in buttons[:-1])
    app._toybook_pdf_chapters = []  # no Chromium when the build started: nothing offered
    made = context(page)
    toybook._pdf_buttons(app, page, "page.html", made, None)
    assert [b["label"] for b in made["header_buttons"][0]["buttons"]] == ["download-pdf-button"]


# -- a print whose math fell back to a system serif is made again ---------------------------------------------------
KATEX = "_static/katex/katex.min.css"


def _pdf_with_font(name: str) -> bytes:
    from pypdf import PdfWriter
    from pypdf.generic import DictionaryObject, NameObject

    writer = PdfWriter()
    page = writer.add_blank_page(100, 100)
    font = DictionaryObject({NameObject("/Type"): NameObject("/Font"), NameObject("/BaseFont"): NameObject(name)})
    page[NameObject("/Resources")] = DictionaryObject(
        {NameObject("/Font"): DictionaryObject({NameObject("/F1"): writer._add_object(font)})})
    out = io.BytesIO()
    writer.write(out)
    return out.getvalue()


@pytest.mark.parametrize("fonts, tries", [(["/AAAAAA+KaTeX_Main-Regular"], 1),
                                          (["/BBBBBB+LiberationSerif", "/CCCCCC+KaTeX_Main-Regular"], 2),
                                          (["/DDDDDD+LiberationSerif-Italic"] * 3, None)])
def test_a_print_with_its_math_in_a_fallback_font_is_printed_again(monkeypatch, fonts, tries):
    """Up to PRINT_TRIES prints of a page, until one embeds no serif fallback; then an error naming the fonts."""
    serif = _pdf_with_font("/EEEEEE+LiberationSerif")
    assert toypdf._fallback_fonts(serif, (KATEX,)) == ["LiberationSerif"]
    assert toypdf._fallback_fonts(serif, ("page.html",)) == []  # a page without math may well print in a serif
    assert toypdf._fallback_fonts(b"<!doctype html>", (KATEX,)) == []
    made = []

    async def print_one(browser, base, doc, epoch):
        made.append(doc)
        return toypdf.Print(doc, doc, [], _pdf_with_font(fonts[len(made) - 1]), loads=(KATEX,))

    monkeypatch.setattr(toypdf, "_print_one", print_one)
    if tries is None:
        with pytest.raises(RuntimeError, match=r"printed 3 times, each time with its math in a fallback font "
                                               r"\(LiberationSerif-Italic\)"):
            toypdf.print_pages("http://127.0.0.1:1/", ["page"])
        assert made == ["page"] * toypdf.PRINT_TRIES
        return
    (printed,) = toypdf.print_pages("http://127.0.0.1:1/", ["page"])
    assert len(made) == tries and toypdf._fallback_fonts(printed.pdf) == []
