"""The book's Sphinx extension: static explorers, and plotly.js served once from the book's own files.

* Sets TOY_EXPLORER_VIEW=static before any notebook runs, so the kernels that execute the notebooks show each
  explorer's static view (and plotly figures as text/html), never a live widget that would sit dead.
* Serves plotly.js from the installed plotly package (not a CDN, not inlined into every page) and the page
  script that brings static explorers to life.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

import plotly


def _vendor_static(app, config):
    folder = Path(tempfile.mkdtemp(prefix="toybook-static-"))
    shutil.copy(Path(plotly.__file__).parent / "package_data" / "plotly.min.js", folder / "plotly.min.js")
    config.html_static_path = list(config.html_static_path) + [str(folder)]


def setup(app):
    os.environ["TOY_EXPLORER_VIEW"] = "static"
    app.connect("config-inited", _vendor_static)
    app.add_js_file("plotly.min.js", priority=100)
    app.add_js_file("toy/toy-explorer.js", priority=900)
    app.add_css_file("toy/toy.css")
    return {"parallel_read_safe": True, "parallel_write_safe": True}
