"""The book's Sphinx extension: static explorers, and every script a reader's browser runs served by the book itself.

* Sets TOY_EXPLORER_VIEW=static before any notebook runs, so the kernels that execute the notebooks show each
  explorer's static view (and plotly figures as text/html), never a live widget that would sit dead.
* Serves plotly.js from the installed plotly package (not a CDN, not inlined into every page), loaded once per
  page, and the page script that brings static explorers to life.
* Serves MathJax 3 from the installed ``sphinx-mathjax-offline`` package (PyPI) instead of a CDN: only the
  ``tex-chtml`` bundle and the components it can load at run time (TeX extensions, CHTML fonts, menu,
  accessibility) are copied, nothing is committed to the repository.
* Thebe stays off (it needs a remote Binder kernel): with ``launch_buttons.thebe`` false, sphinx-thebe's page
  scripts and config are removed, so no page carries a dormant script that points at a CDN. Inline scripts that
  Sphinx 7.4 registers twice (its registry stores them as ``None``, the builder as ``""``) are written once.
"""

from __future__ import annotations

import atexit
import importlib.metadata
import os
import shutil
import tempfile
from pathlib import Path

import plotly
from docutils import nodes

MATHJAX_DIST = "sphinx-mathjax-offline"
MATHJAX_ENTRY = "tex-chtml.js"
# What tex-chtml.js may load later, relative to the MathJax folder (the other combined bundles are not needed).
MATHJAX_PARTS = ("input/tex", "output/chtml", "ui", "a11y", "sre", "adaptors")


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


def _vendor_static(app, config):
    """Copy plotly.js and MathJax into a temporary static folder for this build (removed when it ends)."""
    folder = Path(tempfile.mkdtemp(prefix="toybook-static-"))
    app._toybook_static = folder
    atexit.register(shutil.rmtree, folder, ignore_errors=True)  # also when a failed build skips build-finished
    shutil.copy(Path(plotly.__file__).parent / "package_data" / "plotly.min.js", folder / "plotly.min.js")
    source, target = _mathjax_source(), folder / "mathjax"
    target.mkdir()
    shutil.copy(source / MATHJAX_ENTRY, target / MATHJAX_ENTRY)
    for part in MATHJAX_PARTS:
        if (source / part).is_dir():
            shutil.copytree(source / part, target / part)
    config.html_static_path = list(config.html_static_path) + [str(folder)]
    config.mathjax_path = f"mathjax/{MATHJAX_ENTRY}"


def _remove_vendored(app, exception):
    folder = getattr(app, "_toybook_static", None)
    if folder is not None:
        shutil.rmtree(folder, ignore_errors=True)


def _thebe_on(app) -> bool:
    return bool(app.config.html_theme_options.get("launch_buttons", {}).get("thebe"))


def _is_thebe(js) -> bool:
    name = os.fspath(js.filename or "")
    return name.endswith("sphinx-thebe.js") or "THEBE_JS_URL" in js.attributes.get("body", "")


def _page_assets(app, pagename, templatename, context, doctree):
    """Write each script once, and leave sphinx-thebe's assets out while Thebe is off (runs after other handlers)."""
    scripts = context.get("script_files")
    if scripts is None:
        return
    seen, kept = set(), []
    for js in scripts:
        key = (os.fspath(js.filename or ""), tuple(sorted(js.attributes.items())))
        if key in seen or (not _thebe_on(app) and _is_thebe(js)):
            continue
        seen.add(key)
        kept.append(js)
    scripts[:] = kept
    if not _thebe_on(app) and context.get("css_files") is not None:
        context["css_files"][:] = [css for css in context["css_files"]
                                   if not os.fspath(css.filename).endswith("sphinx-thebe.css")]


def _drop_thebe_config(app, doctree, docname):
    """Remove the Binder/kernel config that sphinx-thebe appends to every page (runs after sphinx-thebe)."""
    if _thebe_on(app):
        return
    for node in list(doctree.findall(nodes.raw)):
        if "x-thebe-config" in node.astext() or "kernelName =" in node.astext():
            node.parent.remove(node)


def setup(app):
    os.environ["TOY_EXPLORER_VIEW"] = "static"
    app.connect("config-inited", _vendor_static)
    app.connect("build-finished", _remove_vendored)
    app.connect("html-page-context", _page_assets, priority=990)
    app.connect("doctree-resolved", _drop_thebe_config, priority=900)
    app.add_js_file("plotly.min.js", priority=100)
    app.add_js_file("toy/toy-explorer.js", priority=900)
    app.add_css_file("toy/toy.css")
    return {"parallel_read_safe": True, "parallel_write_safe": True}
