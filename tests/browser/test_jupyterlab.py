"""Issue 2's real-browser test: section 4.1 run in JupyterLab, Figure 4.1 live.

JupyterLab is started on 127.0.0.1 (headless, no token) over a temporary folder holding a copy of the 4.1
notebook, with TOY_EXPLORER_VIEW unset so the explorer shows its live ipywidgets + FigureWidget view. Chromium
(driven by playwright) runs every cell, moves the temperature slider (an ipywidgets FloatLogSlider, continuous
from 0.1 to 10) with the keyboard, and the FigureWidget's drawn bars change, to the values toy computes at the new
temperature, which is off the static view's grid.
"""

from __future__ import annotations

import json
import shutil

import numpy as np
import pytest

from .contrast import CONTRAST_JS

pytestmark = pytest.mark.slow

NOTEBOOK = "chapters/04-the-llm-as-a-policy/4.1-formal-mapping.ipynb"
SLIDER = "Temperature τ"


DARK_FIGURE_JS = """label => {
    // The live figure's background as shown, and how many of plotly's SVG layers over the first one have a
    // background of their own (which would hide the traces drawn below them).
    const e = (LIVE_EXPLORER)(label);
    const [first, ...over] = [...e.gd.querySelectorAll('.main-svg')].map(s => getComputedStyle(s).backgroundColor);
    return [first, over.filter(c => c !== 'rgba(0, 0, 0, 0)' && c !== 'transparent').length];
}"""


def explorer_control(name):
    import toy

    return toy.explorers.credit_assignment()._control[name]


def test_figure_4_1_is_live_in_jupyterlab(bt, browser, tmp_path):
    shutil.copy(bt.ROOT / NOTEBOOK, tmp_path / "section.ipynb")
    with bt.jupyterlab(tmp_path, bt.ARTIFACTS / "jupyterlab.log") as url:
        page, log = bt.open_lab_notebook(browser, url, "section.ipynb")
        try:
            bt.wait_live_explorer(page, SLIDER)
            static_views = page.evaluate("() => document.querySelectorAll('.toy-explorer').length")
            start = bt.live_bars(page, SLIDER)
            bt.focus_live_slider(page, SLIDER)
            page.keyboard.press("ArrowRight")
            page.wait_for_function(
                "([label, before]) => { const e = (" + bt.LIVE_EXPLORER_JS + ")(label);"
                " return [...e.gd.querySelectorAll('.bars .point path')].map(p => p.getAttribute('d')).join('|')"
                " !== before; }", arg=[SLIDER, "|".join(start["paths"])], timeout=20_000)
            page.wait_for_timeout(300)  # the batch update draws all four traces; let it finish
            moved = bt.live_bars(page, SLIDER)
            page.keyboard.press("ArrowLeft")
            page.wait_for_function(
                "([label, before]) => { const e = (" + bt.LIVE_EXPLORER_JS + ")(label);"
                " return e.slider.querySelector('.widget-readout').textContent === before; }",
                arg=[SLIDER, start["readout"]], timeout=20_000)
            page.locator(".jp-OutputArea-output .widget-vbox").first.screenshot(
                path=str(bt.ARTIFACTS / "jupyterlab-figure-4-1.png"))
            light = page.evaluate(CONTRAST_JS, ".toy-live-explorer")
            # JupyterLab's dark theme, switched to while the notebook is open, as a reader does in its menu
            page.evaluate("() => window.jupyterapp.commands.execute('apputils:change-theme',"
                          " {theme: 'JupyterLab Dark'})")
            page.wait_for_function("() => document.body.dataset.jpThemeLight === 'false'", timeout=20_000)
            page.wait_for_timeout(500)
            dark = page.evaluate(CONTRAST_JS, ".toy-live-explorer")
            dark_paper, covering = page.evaluate(DARK_FIGURE_JS.replace("LIVE_EXPLORER", bt.LIVE_EXPLORER_JS), SLIDER)
            page.locator(".toy-live-explorer", has=page.locator(".js-plotly-plot .bars")).first.screenshot(
                path=str(bt.ARTIFACTS / "jupyterlab-figure-4-1-dark.png"))
        finally:
            bt.close(page)

    assert static_views == 0, "JupyterLab must show the live widget, not the static view"
    assert not log.page_errors, f"page errors in JupyterLab: {log.page_errors}"
    # Readable in both themes: every control and figure text at WCAG contrast 4.5:1 or more, on a dark figure in
    # the dark theme (not a white card).
    for theme, rows in (("light", light), ("dark", dark)):
        assert sum(r["kind"] == "svg" for r in rows) > 10, (theme, rows)
        low = [r for r in rows if r["ratio"] < 4.5]
        assert not low, f"{theme} theme: texts below 4.5:1: {low}"
    assert covering == 0, "a layer of the live figure hides its traces in the dark theme"
    r, g, b = (int(float(v)) for v in dark_paper[dark_paper.index("(") + 1:].rstrip(")").split(",")[:3])
    assert max(r, g, b) < 80, f"the live figure stays light in the dark theme: {dark_paper}"
    assert len(start["paths"]) == len(moved["paths"]) > 0
    assert moved["paths"] != start["paths"], "the bars did not change"
    step = explorer_control("temperature").step  # one key press moves log10(τ) by one step: off the static grid
    tau = 10.0 ** step
    assert float(start["readout"]) == 1.0 and float(moved["readout"]) == float(f"{tau:.3g}"), (start, moved)
    # The redrawn bars are toy's numbers at the new temperature (Figure 4.1 as the notebook calls it).
    calls = [kwargs for name, kwargs in bt._notebook_calls(NOTEBOOK.removesuffix(".ipynb"))
             if name == "credit_assignment"]
    assert len(calls) == 1, calls
    explorer = bt.build_explorer("credit_assignment", json.dumps(calls[0], sort_keys=True))
    assert not any(np.isclose(tau, t) for t in explorer_control("temperature").values)
    for when, temperature in [(start, 1.0), (moved, tau)]:
        fig = explorer.figure_for(temperature=temperature)
        for k, trace in enumerate(fig.data):
            assert np.max(np.abs(np.asarray(when["y"][k]) - np.asarray(trace.y, dtype=float))) <= 1e-9, (k, when)
