"""The build's steps for pages that open fast (issue 21), on small inputs: figure data moved out of the page, the
choice between typesetting math at build time (KaTeX) and in the browser (MathJax), web fonts cut down to the
glyphs the pages show, sections laid out as they near the screen and the theme's tab stops set without laying out the
whole page. The built pages themselves are checked in tests/test_book.py and tests/browser/."""

from __future__ import annotations

import html
import json
import re
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "book" / "_ext"))
import toybook  # noqa: E402
import toyfonts  # noqa: E402
import toyhtml  # noqa: E402

from toy.page.figures import book_figure_html  # noqa: E402


def _page(tmp_path: Path, body: str, depth: int = 2) -> tuple[Path, Path]:
    outdir = tmp_path / "html"
    page = outdir.joinpath(*["chapter"] * depth, "page.html")
    page.parent.mkdir(parents=True)
    page.write_text(body)
    return outdir, page


def _data(file: Path) -> tuple[str, object]:
    """What a data file defines: its key and its value (the file is JavaScript: one assignment of a JSON value)."""
    m = re.fullmatch(r'\(window\.toyData = window\.toyData \|\| \{\}\)\["(\w+)"\] = (.*);\n', file.read_text(), re.S)
    assert m, file.read_text()[:200]
    return m.group(1), json.loads(m.group(2))


def test_figure_data_moves_to_a_file_named_by_its_content(tmp_path):
    fig = {"data": [{"type": "bar", "x": [0, 1], "y": [0.25, 0.75], "name": "</script> in a name"}],
           "layout": {"title": {"text": "A title"}, "height": 300}}
    html = f"<p>before</p>{book_figure_html(fig)}<p>after</p>"
    outdir, page = _page(tmp_path, html)
    moved = toyhtml.figure_data_files(html, page, outdir)
    files = sorted((outdir / toyhtml.DATA_DIR).glob("*.js"))
    assert len(files) == 1
    key, value = _data(files[0])
    assert files[0].stem == key
    inline = re.search(r'class="toy-plot-spec"[^>]*>(.*?)</script>', html, re.S).group(1)
    assert value == json.loads(inline), "the file holds exactly the data the page held"
    assert value["data"][0]["name"] == "</script> in a name"
    # the page keeps an empty element that names the file relative to itself; the text around is untouched
    assert f'data-src="../../_static/toy-data/{key}.js"></script>' in moved
    assert re.search(r'class="toy-plot-spec"[^>]*></script>', moved)
    assert moved.startswith("<p>before</p>") and moved.endswith("<p>after</p>")
    assert len(moved) < len(html) - len(inline) + 200


def test_the_same_data_on_two_pages_is_one_file_and_other_data_another(tmp_path):
    a = book_figure_html({"data": [{"type": "bar", "y": [1, 2]}], "layout": {}})
    b = book_figure_html({"data": [{"type": "bar", "y": [1, 3]}], "layout": {}})
    outdir, page = _page(tmp_path, a + b)
    top = outdir / "index.html"
    first = toyhtml.figure_data_files(a + b, page, outdir)
    again = toyhtml.figure_data_files(a, top, outdir)
    assert len(list((outdir / toyhtml.DATA_DIR).glob("*.js"))) == 2
    name = re.search(r'data-src="\.\./\.\./(_static/toy-data/\w+\.js)"', first).group(1)
    assert f'data-src="{name}"' in again, "a page at the top names the same file by its own relative path"


def test_a_page_without_figures_is_unchanged(tmp_path):
    html = '<p>no figure</p><script type="application/json">{"other": 1}</script>'
    outdir, page = _page(tmp_path, html)
    assert toyhtml.figure_data_files(html, page, outdir) == html
    assert not (outdir / toyhtml.DATA_DIR).exists()


def test_math_is_typeset_at_build_time_when_node_and_katex_are_there(monkeypatch, tmp_path):
    """KaTeX when Node.js and npm's KaTeX files (of sphinxcontrib-katex's version) are there; otherwise a reason
    that says what is missing, and the build falls back to MathJax."""
    import sphinxcontrib.katex

    dist = tmp_path / "katex"
    (dist / "dist").mkdir(parents=True)
    (dist / "dist" / "katex.min.css").write_text(".katex{}")
    (dist / "package.json").write_text(json.dumps({"version": sphinxcontrib.katex.katex_version}))
    monkeypatch.setattr(toybook, "KATEX_DIR", dist)
    monkeypatch.setattr(toybook.shutil, "which", lambda name: "/usr/bin/node" if name == "node" else None)
    assert toybook.katex_missing() is None
    (dist / "package.json").write_text(json.dumps({"version": "0.0.1"}))
    assert "0.0.1" in toybook.katex_missing() and "setup.sh" in toybook.katex_missing()
    (dist / "dist" / "katex.min.css").unlink()
    assert "katex.min.css is missing" in toybook.katex_missing()
    monkeypatch.setattr(toybook.shutil, "which", lambda name: None)
    assert "Node.js is missing" in toybook.katex_missing()


def test_this_environment_typesets_with_katex():
    """The set-up (scripts/setup.sh) installed what the build needs to typeset at build time (it needs npm)."""
    assert toybook.katex_missing() is None, toybook.katex_missing()
    assert (toybook.KATEX_DIR / "dist" / "fonts" / "KaTeX_Main-Regular.woff2").is_file()


PAGE = ('<div id="jb-print-docs-body" class="onlyprint"><h1>4.9 A page</h1></div>'
        '<article class="bd-article"><section id="a-page"><h1>4.9 A page<a class="headerlink" href="#a-page">#</a>'
        '</h1><p>Text.</p></section></article>')


def _with_live_script(config: dict) -> str:
    attribute = html.escape(json.dumps(config), quote=True)
    return PAGE + f'<script data-toy-live="{attribute}" defer="defer" src="../_static/toy/toy-live.js?v=1"></script>'


def test_the_live_code_bar_is_built_under_the_title_not_in_the_print_header():
    config = {"thebe": "_static/thebe/index.js", "off": None, "server": "http://127.0.0.1:8888/",
              "binder": {"url": "https://mybinder.org", "repo": "someone/book", "ref": "main"}}
    page = toyhtml.tidy_page(_with_live_script(config))
    print_header, article = page.split('<article class="bd-article">')
    assert "toy-live" not in print_header
    title_end = article.index("</h1>") + len("</h1>")
    assert article[title_end:].startswith('<div class="toy-live" role="region" aria-label="Live code">')
    status = re.search(r'<p class="toy-live-status"[^>]*>(.*?)</p>', article).group(1)
    assert status == html.escape(toyhtml.live_status(config))
    assert status.startswith("Live code turns this page&#x27;s code cells into editors")


def test_the_live_code_status_says_why_live_code_is_off_or_has_no_kernel():
    assert toyhtml.live_status({"thebe": None, "off": "npm was missing"}) == \
        "Live code is unavailable in this build: npm was missing."
    assert toyhtml.live_status({"thebe": "x.js", "server": None, "binder": None}).endswith("No kernel is configured "
                                                                                            "for this book.")
    assert "toy-live" not in toyhtml.tidy_page(PAGE), "no Live code script, no bar"


BINDER = {"url": "https://mybinder.org", "repo": "someone/book", "ref": "main"}
LIVE_CONFIGS = [  # the book's default (scripts/live.sh's server), with and without a repository; a course's server
    {"thebe": "_static/thebe/index.js", "off": None, "server": "http://127.0.0.1:8888", "binder": BINDER},
    {"thebe": "_static/thebe/index.js", "off": None, "server": "http://127.0.0.1:8888/", "binder": None},
    {"thebe": "_static/thebe/index.js", "off": None, "server": "http://localhost:8888", "binder": None},
    {"thebe": "_static/thebe/index.js", "off": None, "server": None, "binder": BINDER},
    {"thebe": "_static/thebe/index.js", "off": None, "server": "https://hub.example.edu/user/me/", "binder": BINDER},
    {"thebe": "_static/thebe/index.js", "off": None, "server": None, "binder": None},
    {"thebe": None, "off": "npm was missing", "server": "http://127.0.0.1:8888", "binder": BINDER},
]

# toy-live.js run under Node with just enough of a page for it to write its status line: a bar as built, this
# config in its data-toy-live, and the address's fragment (a link from scripts/live.sh gives a server)
LIVE_HARNESS = """
const fs = require("fs"), vm = require("vm");
const code = fs.readFileSync(process.argv[2], "utf8");
const shown = [];
for (const [config, hash] of JSON.parse(fs.readFileSync(0, "utf8"))) {
  const store = {};
  const status = {textContent: "(as built)", setAttribute() {}, removeAttribute() {}, append() {}};
  const bar = {dataset: {}, querySelector: (s) => (s === ".toy-live-button" ? {addEventListener() {}} : status)};
  const document = {currentScript: {dataset: {toyLive: JSON.stringify(config)}}, documentElement: {dataset: {}},
    readyState: "complete", querySelector: (s) => (s === ".toy-live" ? bar : null), addEventListener() {}};
  vm.runInNewContext(code, {document, URL, URLSearchParams, JSON, console,
    sessionStorage: {getItem: (k) => store[k] ?? null, setItem: (k, v) => { store[k] = v; }},
    location: {hash, pathname: "/page.html", search: "", href: "http://127.0.0.1:8000/page.html"},
    history: {replaceState() {}}});
  shown.push(status.textContent);
}
console.log(JSON.stringify(shown));
"""


def _live_script_says(cases: list[tuple[dict, str]], tmp_path: Path) -> list[str]:
    import shutil
    import subprocess

    node = shutil.which("node")
    assert node, "node (from the set-up's nodejs) runs toy-live.js"
    harness = tmp_path / "harness.js"
    harness.write_text(LIVE_HARNESS)
    done = subprocess.run([node, str(harness), str(ROOT / "book" / "_static" / "toy" / "toy-live.js")],
                          input=json.dumps(cases), capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def test_the_live_code_status_says_what_it_does_and_how_to_start_it_never_a_loopback_address(tmp_path):
    """Issue 31: the published book said "the Jupyter server at http://127.0.0.1:8888" to every reader, who may run
    none. The status says what Live code does and where its kernel comes from in words a reader can act on; the page
    script writes the same words as the build (so nothing changes on screen when it runs), and names a server by its
    address only when the reader's link from scripts/live.sh gave it."""
    said = _live_script_says([(c, "") for c in LIVE_CONFIGS], tmp_path)
    for config, text in zip(LIVE_CONFIGS, said, strict=True):
        assert text == toyhtml.live_status(config), config
        assert text.count(". ") <= 1 and text.endswith("."), f"two sentences at most: {text}"
        assert not re.search(r"127\.0\.0\.1|localhost|:8888", text), text
        if config["thebe"]:
            assert text.startswith("Live code turns this page's code cells into editors you can change and run"), text
            assert "figures and explorers redraw" in text, text
            if config["server"] and re.search("127.0.0.1|localhost", config["server"]):
                assert "from your computer: run bash scripts/live.sh" in text, text
            if config["server"] and "hub.example.edu" in config["server"]:
                assert "https://hub.example.edu/user/me" in text, text
            assert ("Binder" in text) == bool(config["binder"]), text
            if config["binder"]:
                assert "a minute or more to start" in text, text

    link = "#toy-live-server=http://127.0.0.1:9999&toy-live-token=abc"
    linked = _live_script_says([(LIVE_CONFIGS[0], link), (LIVE_CONFIGS[1], link)], tmp_path)
    assert linked[0].endswith("Its kernel comes from the Jupyter server at http://127.0.0.1:9999 (from your link), "
                              "else from Binder (which takes a minute or more to start)."), linked[0]
    assert linked[1].endswith("Its kernel comes from the Jupyter server at http://127.0.0.1:9999 (from your link)."), \
        linked[1]
    assert "abc" not in "".join(linked), "the token is never shown"


def test_the_figure_list_is_under_the_title_not_in_the_print_header():
    fig = book_figure_html({"data": [{"type": "bar", "y": [1, 2]}], "layout": {"title": {"text": "Bars"}}})
    page = toyhtml.tidy_page(PAGE.replace("<p>Text.</p>", f"<p>Text.</p>{fig}"))
    print_header, article = page.split('<article class="bd-article">')
    assert "toy-figure-list" not in print_header
    title_end = article.index("</h1>") + len("</h1>")
    assert article[title_end:].startswith('<details class="toy-figure-list"><summary>Figures on this page (1)')
    with pytest.raises(toyhtml.MarkupChanged):
        toyhtml.tidy_page(f"<main><h1>No article</h1>{fig}</main>")


def _theme_font(name: str) -> Path:
    import pydata_sphinx_theme

    found = sorted(Path(pydata_sphinx_theme.__file__).parent.rglob(name))
    assert found, f"the theme no longer ships {name}"
    return found[0]


def _cmap(path: Path) -> set[int]:
    from fontTools.ttLib import TTFont

    with TTFont(str(path)) as font:
        return set(font.getBestCmap())


def test_icon_glyphs_come_from_icon_classes_and_from_rules_that_draw_by_themselves():
    css = """/* .fa-comment:before{content:"\\f999"} */
    .fa-bars:before,.fa-navicon::before{content:"\\f0c9"}
    .fa-moon:before{content:"\\f186"}
    .fa-plus:before{content:"\\+"}.fa-0:before{content:"\\30 "}.fa-a:before{content:"A"}
    @media print{.fa-bars:before{content:"\\f0c9"}}
    .bd-sidebar-secondary .onthispage:after{content:"\\f107";font:var(--fa-font-solid)}
    :root{--pst-icon-admonition-note:"\\f05a";--pst-icon-bell:"\uf0f3";
          --fa-font-solid:normal 900 1em/1 "Font Awesome 6 Free"}
    .plain{color:red}"""
    by_class, always = toyfonts.icon_glyphs([css])
    assert by_class == {"fa-bars": {0xF0C9}, "fa-navicon": {0xF0C9}, "fa-moon": {0xF186}, "fa-plus": {ord("+")},
                        "fa-0": {ord("0")}, "fa-a": {ord("A")}}, "escapes of every length, and plain characters"
    assert always == {0xF107, 0xF05A, 0xF0F3}, "a glyph a stylesheet draws itself is kept whatever the page"
    assert toyfonts.icon_names(['<i class="fa-solid fa-bars"></i>', 'el.classList.add("fa-moon")']) == {
        "fa-solid", "fa-bars", "fa-moon"}


def test_a_cut_icon_font_keeps_the_glyphs_asked_for_and_drops_the_rest(tmp_path):
    font = tmp_path / "fa-solid-900.woff2"
    font.write_bytes(_theme_font("fa-solid-900.woff2").read_bytes())
    whole = _cmap(font)
    keep = {0xF002, 0xF0C9, 0xF186}  # magnifying glass, bars, moon
    assert keep <= whole and len(whole) > 1000
    before, after = toyfonts.subset_font(font, keep)
    assert _cmap(font) == keep
    assert after < before / 20, (before, after)
    again = tmp_path / "again.woff2"
    again.write_bytes(_theme_font("fa-solid-900.woff2").read_bytes())
    toyfonts.subset_font(again, keep)
    assert again.read_bytes() == font.read_bytes(), "two cuts of one font differ: builds would not be byte-identical"


def test_a_site_keeps_every_icon_its_pages_and_scripts_name_and_every_character_of_its_text(tmp_path):
    site = tmp_path / "html"
    fonts = site / "_static" / "vendor" / "webfonts"
    fonts.mkdir(parents=True)
    (fonts / "fa-solid-900.woff2").write_bytes(_theme_font("fa-solid-900.woff2").read_bytes())
    (site / "_static" / "theme.css").write_text(
        '.fa-bars:before{content:"\\f0c9"}.fa-moon:before{content:"\\f186"}.fa-sun:before{content:"\\f185"}'
        '.fa-xmark:before{content:"\\f00d"}.x:after{content:"\\f107"}')
    (site / "_static" / "theme.js").write_text('button.innerHTML = "<i class=\'fa-solid fa-sun\'></i>";')
    (site / "page.html").write_text('<i class="fa-solid fa-bars"></i><p>&pi; &ge; 0</p>')
    katex = toybook.KATEX_DIR / "dist" / "fonts" / "KaTeX_Main-Regular.woff2"
    if katex.exists():  # without npm the math is MathJax's, and there is no KaTeX font to cut
        (site / "_static" / "katex").mkdir()
        (site / "_static" / "katex" / "KaTeX_Main-Regular.woff2").write_bytes(katex.read_bytes())
    sizes = toyfonts.subset_site(site)
    assert _cmap(fonts / "fa-solid-900.woff2") == {0xF0C9, 0xF185, 0xF107}, "bars (page), sun (script), the arrow"
    if katex.exists():
        kept = _cmap(site / "_static" / "katex" / "KaTeX_Main-Regular.woff2")
        assert {ord("π"), ord("≥")} & _cmap(katex) <= kept and set(range(0x20, 0x7F)) & _cmap(katex) <= kept
        assert ord("∞") in _cmap(katex) and ord("∞") not in kept, "a symbol no page shows is cut"
    assert all(after < before for before, after in sizes.values()), sizes


def test_documentation_options_are_written_into_the_page(tmp_path):
    outdir, page = _page(tmp_path, '<head><script src="../../_static/documentation_options.js?v=9eb32ce0"></script>'
                                   "<script>DOCUMENTATION_OPTIONS.pagename = 'p';</script></head>")
    (outdir / "_static").mkdir()
    options = outdir / "_static" / "documentation_options.js"
    options.write_text("const DOCUMENTATION_OPTIONS = {\n  VERSION: '',\n};\n")
    text = toyhtml.inline_documentation_options(page.read_text(), outdir)
    assert text == ("<head><script>const DOCUMENTATION_OPTIONS = {\n  VERSION: '',\n};</script>"
                    "<script>DOCUMENTATION_OPTIONS.pagename = 'p';</script></head>"), text
    assert toyhtml.inline_documentation_options(text, outdir) == text, "a page without the script is left alone"


def test_innermost_sections_below_the_title_are_marked_lazy():
    text = ('<section id="top"><h1>T</h1><section id="a"><h2>A</h2><section class="x" id="a1"><h3>A1</h3></section>'
            '<section id="a2"></section></section><section id="b"><h2>B</h2></section></section>')
    marked = toyhtml.lazy_sections(text)
    lazy = re.findall(r'<section class="toy-lazy[^"]*" id="(\w+)"', marked)
    assert lazy == ["a1", "a2", "b"], marked
    assert '<section class="toy-lazy x" id="a1">' in marked, "a section's own classes are kept"
    assert marked.replace("toy-lazy ", "").replace(' class="toy-lazy"', "") == text, "nothing else changes"
    assert toyhtml.lazy_sections("<section><h1>Only the title</h1></section>").count("toy-lazy") == 0
    with pytest.raises(toyhtml.MarkupChanged, match="closes no <section>"):
        toyhtml.lazy_sections("<p></p></section>")


def _installed_theme_script() -> str:
    import pydata_sphinx_theme

    folder = Path(pydata_sphinx_theme.__file__).parent / "theme" / "pydata_sphinx_theme" / "static" / "scripts"
    return (folder / "pydata-sphinx-theme.js").read_text(encoding="utf-8")


def test_the_theme_measures_scrollable_blocks_as_they_are_laid_out_not_all_at_load(tmp_path):
    """The installed theme's tab-stop script is found and rewritten (an upgrade that changes it stops the build), the
    result is valid JavaScript that keeps the theme's list of blocks, and the sweep over every block is gone."""
    import shutil
    import subprocess

    theme = _installed_theme_script()
    sweep = ".forEach(e=>{e.tabIndex=e.scrollWidth>e.clientWidth"
    assert sweep in theme
    js = toyhtml.theme_tab_stops(theme)
    assert sweep not in js and "new ResizeObserver(" in js and "sourceMappingURL" not in js
    assert '["pre",".nboutput > .output_area",".cell_output > .output",".jp-RenderedHTMLCommon",' in js
    assert js.count("toybook") == 1 and len(js) < len(theme) + 1500
    script = tmp_path / "theme.js"
    script.write_text(js)
    node = shutil.which("node")
    assert node, "node (from the set-up's nodejs) checks the rewritten script"
    check = subprocess.run([node, "--check", str(script)], capture_output=True, text=True)
    assert check.returncode == 0, check.stderr
    with pytest.raises(toyhtml.MarkupChanged, match="addTabStopsToScrollableElements"):
        toyhtml.theme_tab_stops(theme.replace("scrollWidth>e.clientWidth", "scrollWidth>=e.clientWidth"))


def test_the_site_gets_the_rewritten_theme_script_once(tmp_path):
    outdir, _ = _page(tmp_path, PAGE)
    script = outdir / toyhtml.THEME_SCRIPT
    script.parent.mkdir(parents=True)
    script.write_text(_installed_theme_script())
    toyhtml.tidy_site(outdir, "Book")
    once = script.read_text()
    toyhtml.tidy_site(outdir, "Book")
    assert once == script.read_text() == toyhtml.theme_tab_stops(_installed_theme_script())


FAKE_KATEX_SERVER = """
import socket, sys, time
server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
server.bind(sys.argv[1])  # the socket file exists from here on
time.sleep(float(sys.argv[2]))  # ... but nothing listens yet (Node.js: a moment; here as long as asked)
server.listen(1)
conn, _ = server.accept()
time.sleep(60)
"""


@pytest.fixture
def katex_servers(monkeypatch):
    """Every KaTeX server process a test starts (with sphinxcontrib-katex's own start, which leaves its server running
    when it fails), stopped when the test ends."""
    import sphinxcontrib.katex

    started = []

    class Recorded(sphinxcontrib.katex.Popen):
        def __init__(self, *args, **kwargs):
            super().__init__(*args, **kwargs)
            started.append(self)

    monkeypatch.setattr(sphinxcontrib.katex, "Popen", Recorded)
    yield started
    for process in started:
        process.kill()
        process.wait()


def _fake_katex(monkeypatch, delay: float):
    from sphinxcontrib.katex import KaTeXServer

    monkeypatch.setattr(KaTeXServer, "build_command",
                        classmethod(lambda cls, socket=None, port=None: [sys.executable, "-c", FAKE_KATEX_SERVER,
                                                                        str(socket), str(delay)]))
    monkeypatch.setattr(KaTeXServer, "start_server_process", KaTeXServer.__dict__["start_server_process"])
    return KaTeXServer


def test_katex_render_server_is_waited_for_until_it_listens(monkeypatch, tmp_path, katex_servers):
    """sphinxcontrib-katex connects as soon as the socket file exists; a server that listens a moment later is
    refused (a CI build failed so and left the server running). The build's start retries until it listens."""
    katex = _fake_katex(monkeypatch, delay=0.5)
    (tmp_path / "plain").mkdir()
    with pytest.raises(ConnectionRefusedError):
        katex.start_server_process(tmp_path / "plain", 5)
    assert len(katex_servers) == 1 and katex_servers[0].poll() is None, "the failed start left its server running"
    toybook._patient_katex_start()
    (tmp_path / "patient").mkdir()
    process, sock = katex.start_server_process(tmp_path / "patient", 5)
    try:
        assert process.poll() is None and sock.getpeername() == str(tmp_path / "patient" / "katex.sock")
    finally:
        sock.close()
        process.kill()
        process.wait()


def test_katex_render_server_that_never_listens_is_stopped(monkeypatch, tmp_path):
    import subprocess

    katex = _fake_katex(monkeypatch, delay=60)
    toybook._patient_katex_start()
    started = []
    real_popen = subprocess.Popen
    monkeypatch.setattr(subprocess, "Popen", lambda *a, **k: started.append(real_popen(*a, **k)) or started[-1])
    with pytest.raises(Exception, match="KaTeX"):
        katex.start_server_process(tmp_path, 1.0)
    assert len(started) == 1 and started[0].poll() is not None, "the server that never answered is left running"
