"""The book's Sphinx extension: static explorers, and every script a reader's browser runs served by the book itself.

* Sets TOY_EXPLORER_VIEW=static before any notebook runs, so the kernels that execute the notebooks show each
  explorer's static view (and plotly figures as text/html), never a live widget that would sit dead; and
  TOY_CHECKS="not run", so a code exercise's check shows as not run (run it in JupyterLab, Colab or Live code),
  never as a pass under the unsolved stub a page shows.
* Serves plotly.js (not a CDN, not inlined into every page): npm's partial bundle with the traces the book draws
  (scatter and bar, 1.2 MB instead of 4.7 MB; unpacked into the environment by ``scripts/setup.sh``), else the
  full bundle from the installed plotly package. A page with figures loads, deferred, only the small script that
  draws figures and brings static explorers to life as they come into view; that script loads plotly.js once, when
  the first figure comes near the screen: the text shows first, and a reader who stops above the figures never
  downloads or runs plotly.js.
* Typesets the math at build time: ``sphinxcontrib-katex`` (PyPI) renders each formula with KaTeX under Node.js
  into HTML (what is drawn) and MathML (what screen readers read), so a page runs no math script at all and its
  text never reflows when math arrives; the pages load only KaTeX's stylesheet and the fonts a formula uses (npm's
  ``katex``, unpacked into the environment by ``scripts/setup.sh``). A TeX error fails the build. Without Node.js
  or those files the build falls back to MathJax 3 in the reader's browser, from the installed
  ``sphinx-mathjax-offline`` package instead of a CDN (startup, core, TeX input, CHTML output and its fonts,
  assistive MathML), and says so. Nothing of KaTeX or MathJax is committed to the repository.
* Leaves out the theme's ``fontawesome.js`` (1.5 MB, only for custom SVG icons): the theme's CSS already draws
  every icon it uses from its own FontAwesome web fonts; and Sphinx's search scripts and index on pages other than
  the search page (the theme needs them there only for search-as-you-type, which is off).
* Thebe stays off (it needs a remote Binder kernel): with ``launch_buttons.thebe`` false, sphinx-thebe's page
  scripts and config are removed, so no page carries a dormant script that points at a CDN. Inline scripts that
  Sphinx 7.4 registers twice (its registry stores them as ``None``, the builder as ``""``) are written once.
* Live code (``toy/toy-live.js``, on every notebook page): a button that, when pressed, loads Thebe (npm's
  ``thebe`` bundle, unpacked into the environment by ``scripts/setup.sh`` and copied into the site here; never
  from a CDN, never committed) and connects the page's code cells to a kernel: a Jupyter server (``scripts/live.sh``
  or the one named by ``toy_live_server``), else Binder. Pages never switched to Live code load none of Thebe.
  Without the bundle (no npm when the book was set up) the build still succeeds and the button says why it is off.
* Citations are Markdown links that read the same in JupyterLab and in the book: ``[Sutton and Barto,
  2018](../../book/references.bib#sutton2018rl)`` opens the bibliography file in JupyterLab, and becomes a link to
  the entry on the book's bibliography page here. ``author_year`` is the one place where a link's text comes from.
* The repository (``toysite.repository``: ``repository.url``, else git's ``origin`` on GitHub) is the one place the
  Binder and Colab buttons, Live code's Binder route and the Colab editions take it from; without one there are no
  launch buttons, and a build for publishing (``TOYBOOK_PUBLISH=1``) refuses to start.
* A rebuild executes only what changed: each notebook's execution is recorded in ``_build/.toybook-executed``
  and replayed while the notebook, ``toy`` and the installed packages are unchanged (``toyexec``);
  ``TOYBOOK_REBUILD=1`` executes every notebook.
* Two builds of one commit are the same byte for byte: each starts from an empty output folder (``_fresh_output``),
  nothing random enters the configuration (the temporary folder of vendored files is added once the builder
  exists), figures' ids come from their content.
* A quiet log: the notebooks' kernels talk over Unix sockets (no "TCP without encryption" warnings), and
  myst-parser's and myst-nb's one-line dumps of their whole configuration are dropped.
* PDFs (``toypdf``): once the pages are finished, Chromium prints each chapter page whose print from an earlier
  build (kept in ``_build/.toybook-printed``) no longer matches what the page loads, and each whole chapter is put
  together from its pages' prints; every page's download menu offers them (a chapter page its own PDF and its
  chapter's, any other page every chapter's). Without Chromium the build says so in one line, makes none and
  offers none.
* A warning-free ``-W -n`` build records the hash of its inputs beside its html folder (``toysite.STAMP``), so the
  tests reuse it while it is current.
"""

from __future__ import annotations

import atexit
import importlib.metadata
import json
import logging as stdlib_logging
import os
import re
import shutil
import sys
import tempfile
from pathlib import Path

import plotly
from docutils import nodes
from sphinx.builders.html._assets import _JavaScript
from sphinx.transforms import SphinxTransform
from sphinx.util import logging

from toy.page.explorer import FIGURE_THEME_CSS
from toy.page.prose import QUOTES_ENV

sys.path.insert(0, str(Path(__file__).parent))  # its sibling module, as Sphinx loads this one (local_extensions)
import toyexec
import toyfonts
import toyhtml
import toypdf
import toysite

logger = logging.getLogger(__name__)

MATHJAX_DIST = "sphinx-mathjax-offline"
MATHJAX_ENTRY = "startup.js"
MATHJAX_LOAD = ["input/tex", "output/chtml", "a11y/assistive-mml"]
# Files and folders (relative to MathJax's folder) that startup.js loads for MATHJAX_LOAD, on demand for folders:
# TeX extensions that the autoload extension fetches when a page uses their macros, CHTML fonts as glyphs need them.
MATHJAX_FILES = ("startup.js", "core.js", "input/tex.js", "input/tex", "output/chtml.js", "output/chtml",
                 "a11y/assistive-mml.js")
FONTAWESOME_JS = "_static/scripts/fontawesome.js"
SEARCH_SCRIPTS = ("'_static/searchtools.js'", "'_static/language_data.js'", "'searchindex.js'")
PLOTLY_JS = "plotly.min.js"
EXPLORER_JS = "toy/toy-explorer.js"
ANSWERS_JS = "toy/toy-answers.js"
LIVE_JS = "toy/toy-live.js"
THEBE_VERSION = "0.9.3"
THEBE_DIR = Path(sys.prefix) / "share" / "toybook-thebe" / "package"  # filled by scripts/setup.sh (npm pack)
PLOTLY_PARTIAL = Path(sys.prefix) / "share" / "toybook-npm" / "plotly" / "package" / "plotly-basic.min.js"
KATEX_DIR = Path(sys.prefix) / "share" / "toybook-npm" / "katex" / "package"  # its stylesheet and woff2 fonts
DESIGN_JS, DESIGN_CSS = "design-tabs.js", "sphinx-design.min.css"  # sphinx-design: only on pages that use it
SYNC_JS = ("documentation_options.js",)  # 0.4 KB that the theme's inline scripts read as the page is parsed


def _mathjax_source() -> Path:
    try:
        dist = importlib.metadata.distribution(MATHJAX_DIST)
    except importlib.metadata.PackageNotFoundError as err:
        raise RuntimeError(f"the book serves MathJax from the '{MATHJAX_DIST}' package: pip install -r "
                           "requirements.txt") from err
    folder = Path(dist.locate_file(f"{MATHJAX_DIST}/static/mathjax"))
    if not (folder / MATHJAX_ENTRY).is_file():
        raise RuntimeError(f"{folder / MATHJAX_ENTRY} is missing: reinstall {MATHJAX_DIST}")
    return folder


def katex_missing() -> str | None:
    """Why the build cannot typeset with KaTeX (then MathJax runs in the reader's browser), or None when it can:
    Node.js on the PATH, and npm's KaTeX stylesheet and fonts of the version sphinxcontrib-katex renders with."""
    import sphinxcontrib.katex

    if not shutil.which("node"):
        return "Node.js is missing (apt-get install nodejs npm)"
    css = KATEX_DIR / "dist" / "katex.min.css"
    if not css.is_file():
        return f"{css} is missing (bash scripts/setup.sh, with npm installed)"
    version = json.loads((KATEX_DIR / "package.json").read_text()).get("version")
    if version != sphinxcontrib.katex.katex_version:
        return (f"{KATEX_DIR} holds KaTeX {version}, sphinxcontrib-katex renders with "
                f"{sphinxcontrib.katex.katex_version}: rerun scripts/setup.sh")
    return None


def _math_config(app, config):
    """KaTeX at build time (``_vendor_static`` puts its stylesheet and fonts in the site), else MathJax 3 from the
    book's own files, as individual components. Set with the configuration: sphinxcontrib-katex reads its paths
    when the builder starts."""
    if app._toybook_katex:
        import sphinxcontrib.katex

        config.katex_css_path = "katex/katex.min.css"
        config.katex_prerender = True
        sphinxcontrib.katex.KATEX_DEFAULT_OPTIONS["throwOnError"] = True  # a TeX error fails the build
    else:
        config.mathjax_path = f"mathjax/{MATHJAX_ENTRY}"
        config.mathjax3_config = {**(config.mathjax3_config or {}), "loader": {"load": MATHJAX_LOAD}}


def _vendor_static(app):
    """Copy plotly.js, KaTeX's stylesheet and fonts (or MathJax) and toy's figure theme into a temporary static folder
    for this build (removed when it ends), and put the theme's templates without the lines we drop
    (``_theme_overrides``) in front of the theme's.

    Done once the builder exists, not in the configuration: the folder's random name would otherwise enter the
    configuration's hash in ``.buildinfo``, and two builds of one commit would differ."""
    if app.builder.format != "html":
        return
    config = app.config
    folder = Path(tempfile.mkdtemp(prefix="toybook-static-"))
    app._toybook_static = folder
    atexit.register(shutil.rmtree, folder, ignore_errors=True)  # also when a failed build skips build-finished
    shutil.copy(_plotly_source(), folder / PLOTLY_JS)
    shutil.copy(FIGURE_THEME_CSS, folder / "toy-figure-theme.css")  # one stylesheet with the live view's
    if app._toybook_katex:
        shutil.copytree(KATEX_DIR / "dist", folder / "katex")
    else:
        source, target = _mathjax_source(), folder / "mathjax"
        for part in MATHJAX_FILES:
            (target / part).parent.mkdir(parents=True, exist_ok=True)
            if (source / part).is_dir():
                shutil.copytree(source / part, target / part)
            else:
                shutil.copy(source / part, target / part)
    app._toybook_thebe = _vendor_thebe(folder / "thebe")
    config.html_static_path = list(config.html_static_path) + [str(folder)]
    search_as_you_type = bool(config.html_theme_options.get("search_as_you_type", False))
    overrides = str(_theme_overrides(folder, search_as_you_type))
    from sphinx.jinja2glue import SphinxFileSystemLoader

    templates = app.builder.templates  # as if the folder came first in templates_path ("!name" skips it)
    templates.loaders.insert(0, SphinxFileSystemLoader(overrides))
    templates.pathchain.insert(0, overrides)
    templates.templatepathlen += 1


def _plotly_source() -> Path:
    """The partial bundle when set-up fetched it and it is the plotly.js the plotly package writes figures for."""
    full = Path(plotly.__file__).parent / "package_data" / "plotly.min.js"
    version = re.search(r"plotly\.js v([\d.]+)", full.read_text()[:300])
    if PLOTLY_PARTIAL.is_file() and version and f"v{version.group(1)}" in PLOTLY_PARTIAL.read_text()[:300]:
        return PLOTLY_PARTIAL
    logger.info(f"toybook: serving the full plotly.js ({PLOTLY_PARTIAL} is missing or of another version)")
    return full


def _vendor_thebe(target: Path) -> str | None:
    """Copy Thebe's bundle (``lib/index.js``, its numbered chunks and ``thebe.css``; no source maps) into the site.

    Returns why Live code is off in this build, or None when the bundle is in place."""
    import json

    lib = THEBE_DIR / "lib"
    if not (lib / "index.js").is_file():
        return ("Thebe was not installed when this book was built (npm was missing): "
                "see the README's Live code section")
    version = json.loads((THEBE_DIR / "package.json").read_text()).get("version")
    if version != THEBE_VERSION:
        return f"this build has Thebe {version}, not {THEBE_VERSION}: rerun scripts/setup.sh"
    target.mkdir(parents=True)
    for f in lib.iterdir():
        if f.suffix in (".js", ".css") and f.is_file():
            shutil.copy(f, target / f.name)
    return None


def _live_config(app) -> dict:
    """What the Live code button needs to know: where Thebe is, which servers to try, Binder's repository."""
    theme = app.config.html_theme_options
    launch = theme.get("launch_buttons", {}) or {}
    repo = (theme.get("repository_url") or "").rstrip("/")  # set by _repository, or empty
    binder = None
    if launch.get("binderhub_url") and repo.startswith("https://github.com/"):
        binder = {"url": launch["binderhub_url"].rstrip("/"), "repo": repo.removeprefix("https://github.com/"),
                  "ref": theme.get("repository_branch") or "main"}
    off = getattr(app, "_toybook_thebe", "Live code is not set up in this build")
    return {"thebe": None if off else "_static/thebe/index.js", "off": off, "server": app.config.toy_live_server,
            "binder": binder, "kernel": "python3"}


def _theme_overrides(folder: Path, search_as_you_type: bool) -> Path:
    """Template overrides, made from pydata-sphinx-theme's own templates with lines left out:

    * ``static/webpack-macros.html`` without the ``fontawesome.js`` script (1.5 MB);
    * ``pydata_sphinx_theme/layout.html`` without Sphinx's search scripts and search index (about 0.1 MB, growing
      with the book) on every page: the theme uses them only for search-as-you-type, which is off; the search page
      loads its own.

    Fails loudly if a template no longer has exactly those lines (for example after a theme upgrade).
    """
    import pydata_sphinx_theme

    theme = Path(pydata_sphinx_theme.__file__).parent / "theme" / "pydata_sphinx_theme"
    drops = {"static/webpack-macros.html": (FONTAWESOME_JS,)}
    if not search_as_you_type:
        drops["layout.html"] = SEARCH_SCRIPTS
    override = folder / "templates"
    for name, needles in drops.items():
        lines = (theme / name).read_text().splitlines(keepends=True)
        kept = [line for line in lines if not any(n in line for n in needles)]
        if len(lines) - len(kept) != len(needles):
            raise RuntimeError(f"expected one line for each of {needles} in {theme / name}: update toybook.py")
        target = override / (name if name.startswith("static/") else f"pydata_sphinx_theme/{name}")
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text("".join(kept))
    return override


def _patient_katex_start():
    """sphinxcontrib-katex 0.9.11 connects to its render server as soon as the server's socket file exists, but
    Node.js creates that file a moment before it listens: on a loaded machine the connection was refused, the build
    failed, and the server it had started was left running. Here the connection is retried until the startup
    timeout, and a server that never answers is stopped."""
    import socket
    import subprocess
    import time

    from sphinxcontrib.katex import KaTeXServer

    def start_server_process(cls, rundir, timeout):
        socket_path = rundir / "katex.sock"
        process = subprocess.Popen(cls.build_command(socket=socket_path), stdin=subprocess.PIPE,
                                   stdout=subprocess.PIPE, cwd=rundir)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline and process.poll() is None:
            if socket_path.is_socket():
                sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
                try:
                    sock.settimeout(max(deadline - time.monotonic(), 0.01))
                    sock.connect(str(socket_path))
                    sock.settimeout(None)
                    return process, sock
                except (ConnectionRefusedError, FileNotFoundError, TimeoutError):
                    sock.close()  # the file is there, the server does not listen yet
            time.sleep(0.005)
        process.kill()
        process.wait()
        raise cls.timeout_error(timeout)

    KaTeXServer.start_server_process = classmethod(start_server_process)


def _stop_katex(app, exception):
    """Stop KaTeX's render server (Node.js) as the build ends, not at the interpreter's exit: a server that outlived
    its build once kept the build's output pipe open."""
    if not getattr(app, "_toybook_katex", False):
        return
    import sphinxcontrib.katex

    server = sphinxcontrib.katex.KaTeXServer.katex_server
    if server is not None:
        atexit.unregister(sphinxcontrib.katex.KaTeXServer.terminate)
        sphinxcontrib.katex.KaTeXServer.katex_server = None
        server.terminate()


def _remove_vendored(app, exception):
    folder = getattr(app, "_toybook_static", None)
    if folder is not None:
        shutil.rmtree(folder, ignore_errors=True)


def _thebe_on(app) -> bool:
    return bool(app.config.html_theme_options.get("launch_buttons", {}).get("thebe"))


def _is_thebe(js) -> bool:
    name = os.fspath(js.filename or "")
    return name.endswith("sphinx-thebe.js") or "THEBE_JS_URL" in js.attributes.get("body", "")


def _needs_plotly(context) -> bool:
    body = context.get("body", "")
    return "toy-plot-spec" in body or "toy-explorer-spec" in body


def _has_code_cells(context) -> bool:
    return 'class="cell_input' in context.get("body", "")


def _uses_sphinx_design(context) -> bool:
    return re.search(r'class="[^"]*\bsd-', context.get("body", "")) is not None


# The KaTeX fonts of inline math (letters, symbols, a small sum), with the class that asks for each. A font loaded on
# demand arrives after the text it draws has been laid out in a fallback font: on a page dense with inline formulas
# (the key concepts) every line then reflowed, a layout shift of 0.058 (tests/browser/test_layout_shift.py).
MATH_FONTS = (("mathnormal", "KaTeX_Math-Italic"), ("katex-html", "KaTeX_Main-Regular"),
              ("small-op", "KaTeX_Size1-Regular"))


def _preload_math_fonts(context):
    """Preload, in the page's head, the fonts its build-time math uses (KaTeX only: MathJax brings its own)."""
    body, css = context.get("body", ""), context.get("css_files") or []
    if not any(os.fspath(c.filename).split("?")[0].endswith("katex/katex.min.css") for c in css):
        return
    hrefs = [context["pathto"]("_static/katex/fonts/" + font + ".woff2", 1) for cls, font in MATH_FONTS if cls in body]
    if not hrefs:
        return
    # added by a script, and only over http(s): a page opened from the disk (file://) cannot make the CORS request a
    # font preload is, and would log a failed request
    script = ("<script>(function () { if (!/^https?:$/.test(location.protocol)) return; "
              f"for (const href of {json.dumps(hrefs)}) {{ const l = document.createElement('link'); "
              "l.rel = 'preload'; l.as = 'font'; l.type = 'font/woff2'; l.crossOrigin = 'anonymous'; l.href = href; "
              "document.head.appendChild(l); } })();</script>\n")
    context["metatags"] = context.get("metatags", "") + script


def _page_assets(app, pagename, templatename, context, doctree):
    """Per page (after every other handler): plotly.js and the explorer script only where a figure is, sphinx-design's
    files only where its components are; each script once, and deferred (run in order once the page is parsed, so
    none blocks the first paint; inline scripts, which only set options, stay where they are, and the tiny
    ``documentation_options.js`` they read is written into the page after the build, ``toyhtml``); sphinx-thebe's
    assets left out while Thebe is off."""
    _colab_button(app, pagename, context)
    _preload_math_fonts(context)
    scripts = context.get("script_files")
    if scripts is None:
        return
    plotly_here, design_here = _needs_plotly(context), _uses_sphinx_design(context)
    seen, kept = set(), []
    for js in scripts:
        name = os.fspath(js.filename or "")
        key = (name, tuple(sorted(js.attributes.items())))
        if key in seen or (not _thebe_on(app) and _is_thebe(js)):
            continue
        if not plotly_here and name.endswith((PLOTLY_JS, EXPLORER_JS)):
            continue
        if name.endswith(ANSWERS_JS) and "toy-answer-spec" not in context.get("body", ""):
            continue
        if not design_here and name.endswith(DESIGN_JS):
            continue
        if name.endswith(LIVE_JS) and not _has_code_cells(context):
            continue
        seen.add(key)
        if js.filename and "async" not in js.attributes and "defer" not in js.attributes \
                and not name.endswith(SYNC_JS) and pagename != "search":  # the search page runs as it was made
            # no script blocks the first paint: each runs, in order, once parsed (a copy: pages share the object)
            js = _JavaScript(js.filename, priority=js.priority, **{**js.attributes, "defer": "defer"})
        kept.append(js)
    scripts[:] = kept
    dropped = (() if _thebe_on(app) else ("sphinx-thebe.css",)) + (() if design_here else (DESIGN_CSS,))
    if context.get("css_files") is not None:
        context["css_files"][:] = [css for css in context["css_files"]
                                   if not os.fspath(css.filename).split("?")[0].endswith(dropped)]


def _drop_thebe_config(app, doctree, docname):
    """Remove the Binder/kernel config that sphinx-thebe appends to every page (runs after sphinx-thebe)."""
    if _thebe_on(app):
        return
    for node in list(doctree.findall(nodes.raw)):
        if "x-thebe-config" in node.astext() or "kernelName =" in node.astext():
            node.parent.remove(node)


BIB_FILE = "book/references.bib"
BIBLIOGRAPHY_DOC = "book/bibliography"
CITE_LINK = re.compile(r"\]\(((?:\.\./)*)book/references\.bib#([A-Za-z0-9_:-]+)\)")


def bib_entries(path: Path | str | None = None) -> dict:
    """The entries of the book's bibliography file, by key (pybtex entries)."""
    import pybtex.database

    path = Path(path) if path else Path(__file__).resolve().parents[2] / BIB_FILE
    return dict(pybtex.database.parse_file(str(path)).entries)


def author_year(entry) -> tuple[str, str]:
    """(authors, year) as a citation reads them: "Sutton and Barto", "Stiennon et al.", with LaTeX decoded."""
    from pybtex.richtext import Text

    def last(person) -> str:
        return Text.from_latex(" ".join(person.prelast_names + person.last_names)).render_as("text")

    people = entry.persons.get("author") or entry.persons.get("editor") or []
    if not people:
        raise ValueError(f"bibliography entry {entry.key!r} has no author or editor")
    names = [last(p) for p in people]
    if names[-1] == "others":  # "and others" in BibTeX: an author list cut short
        names = [names[0], "", ""]
    authors = names[0] if len(names) == 1 else f"{names[0]} and {names[1]}" if len(names) == 2 else \
        f"{names[0]} et al."
    return authors, entry.fields.get("year", "n.d.")


def cite_text(key: str, narrative: bool, entries: dict) -> str:
    """The Markdown link of one citation: "[Sutton and Barto, 2018](…)" (parenthetical: the caller adds the
    parentheses) or "[Sutton and Barto (2018)](…)" (narrative), without its target."""
    if key not in entries:
        raise KeyError(f"{key!r} is not in {BIB_FILE}")
    authors, year = author_year(entries[key])
    return f"{authors} ({year})" if narrative else f"{authors}, {year}"


def _cite_links_to_bibliography(app, docname, source):
    """A citation links to references.bib (what JupyterLab can open); in the book it points at the bibliography
    page, where each entry's anchor is its key (``bibtex_cite_id``)."""
    source[0] = CITE_LINK.sub(r"](\1book/bibliography.md#\2)", source[0])


class CitationLinks(SphinxTransform):
    """Turn each link to the bibliography page's entry into a plain reference to that entry's anchor (MyST would
    look for a heading of that name)."""

    default_priority = 500

    def apply(self):
        from sphinx import addnodes

        keys = None
        for node in list(self.document.findall(addnodes.pending_xref)):
            if node.get("reftype") != "myst" or node.get("reftarget") != BIBLIOGRAPHY_DOC:
                continue
            key = node.get("reftargetid")
            if not key:
                continue
            keys = keys if keys is not None else bib_entries(Path(self.app.srcdir) / BIB_FILE)
            if key not in keys:
                logger.warning(f"citation of {key!r}: not in {BIB_FILE}", location=node)
                continue
            uri = self.app.builder.get_relative_uri(self.env.docname, BIBLIOGRAPHY_DOC)
            ref = nodes.reference("", "", *node.children, refuri=f"{uri}#{nodes.make_id(key)}",
                                  classes=["toy-cite"], internal=True)
            node.replace_self(ref)


def _run_code_before_each_markdown_cell():
    """With ``execute_notebooks: inline`` myst-nb runs a code cell only when it renders one, so a hidden
    (``remove-cell``) cell would run late, after the prose that quotes its numbers. Run every cell above a Markdown
    cell before rendering it: the order of Run All in JupyterLab, where the same ``{eval}`` roles are evaluated."""
    from myst_nb.core.render import MditRenderMixin

    render = MditRenderMixin.render_nb_cell_markdown
    if getattr(render, "_toybook", False):
        return

    def render_nb_cell_markdown(self, token):
        index = token.meta.get("index")
        client = self.md_options.get("nb_client")
        if index and client is not None:
            client.code_cell_outputs(index - 1)
        return render(self, token)

    render_nb_cell_markdown._toybook = True
    MditRenderMixin.render_nb_cell_markdown = render_nb_cell_markdown


def _notebooks_always_outdated(app, env, added, changed, removed):
    """Re-read (so re-execute) every notebook on every build: its outputs depend on ``toy``, which Sphinx does not
    track, so an unchanged notebook would otherwise keep outputs computed by an older ``toy``."""
    return [doc for doc in env.found_docs if str(env.doc2path(doc)).endswith(".ipynb") and doc not in added | changed]


def sources_as_stored(outdir: Path) -> list[Path]:
    """The notebooks the site offers for download (``_sources/``) as the repository stores them, without outputs
    (``toysite.stored_notebook``): a notebook saved from JupyterLab with its outputs is built from, and offered, as
    the stored one, so the build's output depends only on what its input hash counts. Returns those rewritten."""
    rewritten = []
    for path in sorted((Path(outdir) / "_sources").rglob("*.ipynb")):
        text = path.read_text(encoding="utf-8")
        try:
            stored = toysite.stored_notebook(text)
        except ValueError:
            continue
        if stored != text:
            path.write_text(stored, encoding="utf-8")
            rewritten.append(path)
    return rewritten


def _tidy_pages(app, exception):
    """After the build: every page made valid HTML and accessible (``toyhtml``), then the web fonts cut down to
    the glyphs the finished pages and scripts can show (``toyfonts``), and the notebooks offered for download as
    stored (``sources_as_stored``)."""
    if exception is None and app.builder.format == "html":
        toyhtml.tidy_site(Path(app.outdir), app.config.html_title or app.config.project)
        toyfonts.subset_site(Path(app.outdir))
        sources_as_stored(Path(app.outdir))


def _plan_pdfs(app):
    """Whether this build makes PDFs (Chromium and its Python drivers are there, ``toypdf.missing``), decided
    before any page is written: the pages offer PDFs only if they will exist."""
    app._toybook_pdfs_off = toypdf.missing() if app.builder.format == "html" else "not an html build"
    app._toybook_pdf_chapters = [] if app._toybook_pdfs_off else toypdf.chapters(Path(app.srcdir))


def _pdf_buttons(app, pagename, templatename, context, doctree):
    """The theme's download menu (made in its own handler, priority 501) offers the PDFs of ``toypdf.downloads``,
    before its "print this page" entry."""
    books = getattr(app, "_toybook_pdf_chapters", None)
    group = next((b for b in context.get("header_buttons") or []
                  if isinstance(b, dict) and b.get("label") == "download-buttons"), None)
    if group is None:
        return
    for button in group.get("buttons", []):  # the theme calls its window.print() entry ".pdf": say what it does
        if button.get("label") == "download-pdf-button":
            button.update(text="Print this page", icon="fas fa-print")
    if not books:
        return
    entries = []
    for path, chapter in toypdf.downloads(pagename, books):
        if chapter is None:
            text, tooltip, label = "This page (PDF)", "Download this page as a PDF", "download-page-pdf-button"
        else:
            title = app.env.titles[chapter.pages[0]].astext() if chapter.pages[0] in app.env.titles else "Chapter"
            here = pagename in chapter.pages
            text = "Whole chapter (PDF)" if here else f"{title} (PDF)"
            tooltip, label = f"Download the chapter {title} as a PDF", "download-chapter-pdf-button"
        entries.append({"type": "link", "url": context["pathto"](path, 1), "text": text, "tooltip": tooltip,
                        "icon": "fas fa-file-pdf", "label": label})
    buttons = group.setdefault("buttons", [])
    at = next((i for i, b in enumerate(buttons) if b.get("label") == "download-pdf-button"), len(buttons))
    buttons[at:at] = entries


def _make_pdfs(app, exception):
    """After a successful html build, once ``_tidy_pages`` has finished the pages and before ``_record_inputs``:
    the chapters' PDFs (``toypdf``), or one line saying why there are none."""
    if exception is not None or app.builder.format != "html":
        return
    if app._toybook_pdfs_off:
        logger.info(toypdf.left_out(app._toybook_pdfs_off))
        return
    toypdf.make_pdfs(Path(app.outdir), Path(app.srcdir), log=logger.info)


def _add_explorer_script(app):
    """The script that draws figures and starts explorers as they come into view; it loads plotly.js (named here
    with its checksum, as Sphinx names the files it links) only then."""
    import hashlib

    plotly_js = Path(app._toybook_static) / PLOTLY_JS
    checksum = hashlib.sha1(plotly_js.read_bytes()).hexdigest()[:8]
    app.add_js_file(EXPLORER_JS, priority=900, loading_method="defer", **{"data-plotly": f"{PLOTLY_JS}?v={checksum}"})


def _add_answers_script(app):
    """The answer boxes' script (toy/exercises/questions.py's page half), on pages with an exercise's questions."""
    app.add_js_file(ANSWERS_JS, priority=900, loading_method="defer")


def _add_live_script(app):
    """The Live code button's script (small; it loads Thebe only when pressed), with its config as data."""
    app.add_js_file(LIVE_JS, priority=950, loading_method="defer", **{"data-toy-live": json.dumps(_live_config(app))})


def _repository(app, config):
    """The repository the launch buttons, Live code's Binder route and the Colab editions point at: one setting,
    ``repository.url`` in ``_config.yml``, else git's ``origin`` on GitHub (``toysite.repository``). Without one, no
    launch buttons; a build for publishing (``TOYBOOK_PUBLISH=1``) stops here and says what to set."""
    from sphinx.errors import ConfigError

    options = config.html_theme_options
    try:
        url = toysite.require_repository(Path(app.srcdir), options.get("repository_url", ""))
    except toysite.NoRepository as err:
        raise ConfigError(str(err)) from None
    options["repository_url"] = url or ""
    if url is None:
        launch = dict(options.get("launch_buttons") or {})
        for key in ("binderhub_url", "jupyterhub_url", "colab_url", "deepnote_url", "jupyterlite_url"):
            launch.pop(key, None)
        options["launch_buttons"] = launch
        logger.info("toybook: no launch buttons (Binder, Colab): no repository is set (README: Publish your own "
                    "copy)")


def _fresh_output(app, config):
    """Every build starts from nothing: no pages, static files or environment of an earlier build. Its notebooks
    are executed afresh anyway, and leftovers make builds of one commit differ (Sphinx adds ``?v=<checksum>`` to
    a stylesheet only when an earlier build left it there: myst-nb and sphinx-exercise copy theirs after the
    pages are written) or publish pages no longer in the book. Runs before Sphinx loads its environment."""
    outdir = Path(app.outdir)
    if (outdir / ".buildinfo").is_file():  # a Sphinx html folder: empty it
        for entry in outdir.iterdir():
            shutil.rmtree(entry) if entry.is_dir() and not entry.is_symlink() else entry.unlink()
    (Path(app.doctreedir) / "environment.pickle").unlink(missing_ok=True)


def _execution_records(app, config):
    """Each notebook's execution is recorded beside the html folder and replayed while its inputs are unchanged
    (``toyexec``): a rebuild executes only the notebooks that could give other outputs."""
    toyexec.install(Path(app.outdir).parent / toyexec.FOLDER_NAME, Path(app.srcdir), QUOTES_ENV)


def _stamp_inputs(app, config):
    """Before the build: a hash of its inputs (``toysite.inputs_hash``), and no stamp of an earlier build left."""
    app._toybook_inputs = toysite.inputs_hash(Path(app.srcdir))
    toysite.stamp_path(Path(app.outdir)).unlink(missing_ok=True)


def _record_inputs(app, exception):
    """After a warning-free build with -W -n: the inputs it was built from, so the tests may reuse it."""
    strict = app.keep_going or app.warningiserror
    if exception is None and app.builder.format == "html" and strict and app.config.nitpicky \
            and app._warncount == 0 and getattr(app, "_toybook_inputs", None):
        toysite.stamp_path(Path(app.outdir)).write_text(app._toybook_inputs + "\n")


class _DropConfigDumps(stdlib_logging.Filter):
    """myst-parser and myst-nb each log their whole configuration as one line of about 1,500 characters."""

    def filter(self, record):
        return not (isinstance(record.msg, str) and re.search(r"myst(-nb)? v%s:", record.msg))


def _quiet_logs():
    for name in ("sphinx.myst_parser.sphinx_ext.main", "sphinx.myst_nb.sphinx_ext"):
        log = stdlib_logging.getLogger(name)
        if not any(isinstance(f, _DropConfigDumps) for f in log.filters):
            log.addFilter(_DropConfigDumps())


def _kernels_over_ipc():
    """The notebooks' kernels talk to the build over Unix sockets in a private folder, not TCP: nothing else on
    the machine can reach them, and ipykernel has no "running over TCP without encryption" warning to print."""
    from nbclient import NotebookClient

    create = NotebookClient.create_kernel_manager
    if getattr(create, "_toybook", False):
        return

    def create_kernel_manager(self):
        km = create(self)
        folder = tempfile.mkdtemp(prefix="toybook-kernel-")
        atexit.register(shutil.rmtree, folder, ignore_errors=True)
        km.transport, km.ip = "ipc", os.path.join(folder, "kernel")
        return km

    create_kernel_manager._toybook = True
    NotebookClient.create_kernel_manager = create_kernel_manager


def setup(app):
    os.environ["TOY_EXPLORER_VIEW"] = "static"
    os.environ["TOY_CHECKS"] = "not run"  # a page cannot run a reader's code: its checks say so, never "pass"
    missing = katex_missing()
    app._toybook_katex = missing is None
    if missing:
        logger.info(f"toybook: the math is typeset by MathJax in the reader's browser, not at build time: {missing}")
    else:
        app.setup_extension("sphinxcontrib.katex")  # the only math renderer besides MathJax: Sphinx picks it
        _patient_katex_start()
    _run_code_before_each_markdown_cell()
    _quiet_logs()
    _kernels_over_ipc()
    app.connect("config-inited", _fresh_output, priority=100)
    app.connect("config-inited", _repository)
    app.connect("config-inited", _math_config)
    app.connect("config-inited", _stamp_inputs, priority=900)
    app.connect("config-inited", _execution_records)
    app.connect("builder-inited", _vendor_static, priority=400)
    app.connect("env-get-outdated", _notebooks_always_outdated)
    app.connect("build-finished", _remove_vendored)
    app.connect("build-finished", _stop_katex)
    app.connect("html-page-context", _page_assets, priority=990)
    app.connect("doctree-resolved", _drop_thebe_config, priority=900)
    app.connect("source-read", _cite_links_to_bibliography)
    app.add_transform(CitationLinks)
    app.add_css_file("toy/toy.css")
    app.add_css_file("toy-figure-theme.css")
    app.add_config_value("toy_live_server", "http://127.0.0.1:8888", "html")
    app.add_config_value("toy_colab_branch", "gh-pages", "html")
    app.connect("source-read", _colab_quotes)
    app.connect("build-finished", _write_colab_editions)
    app.connect("build-finished", _tidy_pages)  # priority 500: Sphinx calls a lower priority first
    app.connect("build-finished", _make_pdfs, priority=800)  # the finished pages printed
    app.connect("build-finished", _record_inputs, priority=900)
    app.connect("builder-inited", _plan_pdfs)
    app.connect("html-page-context", _pdf_buttons, priority=600)  # after the theme's download menu (501)
    app.connect("builder-inited", _add_live_script, priority=600)
    app.connect("builder-inited", _add_explorer_script, priority=600)  # after _vendor_static
    app.connect("builder-inited", _add_answers_script, priority=600)
    return {"parallel_read_safe": True, "parallel_write_safe": True}


# -- The Colab edition ---------------------------------------------------------------------------------------------
# Colab renders plain Markdown, not MyST. For it, the build writes each chapter notebook again, as Colab reads it:
# _colab/<page>.ipynb in the built site, its prose with the numbers this build quoted, exercises and admonitions
# (key ideas) as bold headings, solutions and dropdowns folded in HTML <details>, cross-references as their text
# and citations linking to the repository's
# bibliography. The page's Colab button opens that file from the branch the site is published to
# (toy_colab_branch); the code cells are the notebook's own, those that only compute quoted numbers folded
# behind a Colab form.

QUOTED_TITLE = "Numbers the text quotes"
_ROLE = re.compile(r'\{eval\}`toy\.quote\("([A-Za-z_][A-Za-z0-9_]*)"(?:, "([^"\\]*)")?\)`')
_FENCE = re.compile(r"^```\{(exercise|solution|admonition|dropdown)\}([^\n]*)\n(.*?)^```[ \t]*$", re.M | re.S)
_XREF = re.compile(r"\{(?:ref|doc|numref)\}`([^`<]*?)\s*(?:<[^`>]*>)?`")


def colab_markdown(text: str, quotes: list, repository: str, branch: str) -> str:
    """One Markdown cell for Colab: ``quotes`` ([name, spec, text] in the order the build evaluated them) consumed
    in place of the ``{eval}`` roles; exercise and solution blocks, cross-references and citation links made
    plain Markdown."""

    def quote(m):
        name, spec = m.group(1), m.group(2) or ""
        if not quotes:
            raise ValueError(f"no quoted value left for toy.quote({name!r}, {spec!r})")
        got_name, got_spec, shown = quotes.pop(0)
        if (got_name, got_spec) != (name, spec):
            raise ValueError(f"the build quoted toy.quote({got_name!r}, {got_spec!r}) where the notebook has "
                             f"toy.quote({name!r}, {spec!r})")
        return shown

    def block(m):
        kind, body = m.group(1), m.group(3)
        body = re.sub(r"^:[\w-]+:[^\n]*\n", "", body, flags=re.M).strip()
        title = m.group(2).strip()
        if kind == "exercise":
            return f"**Exercise.** {body}"
        if kind == "admonition":  # a box: its title as a bold heading, then its text
            return f"**{title}**\n\n{body}"
        if kind == "dropdown":  # a folded box stays folded
            return f"<details><summary><b>{title}</b></summary>\n\n{body}\n\n</details>"
        return f"<details><summary><b>Solution</b></summary>\n\n{body}\n\n</details>"

    text = _ROLE.sub(quote, text)
    text = _FENCE.sub(block, text)
    text = _XREF.sub(lambda m: m.group(1).strip(), text)
    if not repository:  # no repository to link to: the citation's text
        return re.sub(r"\[([^\]]*)\]\((?:\.\./)+book/references\.bib(#[\w:-]+)?\)", r"\1", text)
    return re.sub(r"\]\((?:\.\./)+book/references\.bib(#[\w:-]+)?\)",
                  lambda m: f"]({repository}/blob/{branch}/book/references.bib)", text)


_INSTALL_FROM = re.compile(r"git\+https://github\.com/[\w.-]+/[\w.-]+")


def colab_install(source: str, repository: str) -> str:
    """The Colab set-up cell installs ``toy`` from the repository the book is published from."""
    return _INSTALL_FROM.sub(f"git+{repository}", source) if repository else source


def colab_notebook(nb: dict, quotes: list, repository: str, branch: str) -> dict:
    """The notebook as Colab reads it (see ``colab_markdown``); every quote is used exactly once."""
    quotes = [list(q) for q in quotes]
    out = json.loads(json.dumps(nb))
    for cell in out["cells"]:
        if cell["cell_type"] == "markdown":
            cell["source"] = colab_markdown("".join(cell["source"]), quotes, repository, branch)
        tags = cell.get("metadata", {}).get("tags", [])
        folded = "Solution" if "solution" in tags else "Install toy on Colab" if "colab-setup" in tags else None
        if folded is None and cell["cell_type"] == "code" and ("remove-cell" in tags or "remove-input" in tags) \
                and "answer" not in tags and "toy.glue(" in "".join(cell["source"]):
            folded = QUOTED_TITLE  # a cell that computes the numbers the prose quotes, out of the reader's way
        if "colab-setup" in tags:
            cell["source"] = colab_install("".join(cell["source"]), repository)
        if cell["cell_type"] == "code" and folded:  # Colab shows a form: the title, the code folded
            cell["source"] = f"#@title {folded}\n" + "".join(cell["source"])
            cell["metadata"]["cellView"] = "form"
    if quotes:
        raise ValueError(f"{len(quotes)} quoted values the notebook does not show, first {quotes[0]}")
    return out


def _colab_quotes(app, docname, source):
    """Before a notebook is read (and executed): the file its kernel appends every quote to."""
    if not str(app.env.doc2path(docname)).endswith(".ipynb"):
        return
    folder = Path(getattr(app, "_toybook_quotes", None) or tempfile.mkdtemp(prefix="toybook-quotes-"))
    app._toybook_quotes = folder
    path = folder / (docname.replace("/", "__") + ".jsonl")
    path.write_text("")  # every notebook gets an edition, one that quotes nothing too
    os.environ[QUOTES_ENV] = str(path)


def _write_colab_editions(app, exception):
    """After the build: each executed notebook's Colab edition, as ``_colab/<page>.ipynb`` in the site."""
    folder = getattr(app, "_toybook_quotes", None)
    os.environ.pop(QUOTES_ENV, None)
    if exception is not None or folder is None or app.builder.format != "html":
        return
    options = app.config.html_theme_options
    repository, branch = options.get("repository_url", ""), options.get("repository_branch", "main")
    for path in sorted(Path(folder).glob("*.jsonl")):
        docname = path.stem.replace("__", "/")
        nb = json.loads(Path(app.env.doc2path(docname)).read_text(encoding="utf-8"))
        quotes = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
        target = Path(app.outdir) / "_colab" / f"{docname}.ipynb"
        target.parent.mkdir(parents=True, exist_ok=True)
        edition = colab_notebook(nb, quotes, repository, branch)
        target.write_text(json.dumps(edition, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    shutil.rmtree(folder, ignore_errors=True)


def _colab_button(app, pagename, context):
    """The page's Colab button opens the page's Colab edition, from the branch the built site is published to."""
    for group in context.get("header_buttons") or []:
        for button in group.get("buttons", []) if isinstance(group, dict) else []:
            if button.get("text") == "Colab" and "/blob/" in button.get("url", ""):
                head = button["url"].split("/blob/")[0]
                button["url"] = f"{head}/blob/{app.config.toy_colab_branch}/_colab/{pagename}.ipynb"
