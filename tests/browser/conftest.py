"""Shared helpers for the real-browser tests: Debian's Chromium driven by the Python playwright package.

The pages come from the book's table of contents (``_toc.yml``), so new sections are tested as soon as they are
listed there; explorers are found in each page at run time, and each is matched to the ``toy`` explorer that
built it (``toy.explorers.ALL``, with the arguments its notebook passed) so expected values come from ``toy``.
"""

from __future__ import annotations

import ast
import contextlib
import functools
import inspect
import json
import re
import urllib.parse
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]
ARTIFACTS = ROOT / "test-artifacts"
CHROMIUM = "/usr/bin/chromium"
CHROMIUM_FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                  "--disable-background-networking", "--disable-component-update", "--disable-sync"]
LOCAL_HOSTS = {"127.0.0.1"}
TIMEOUT_MS = 30_000


# -- the book's pages -----------------------------------------------------------------------------------------
def toc_files() -> list[str]:
    """Every document of the table of contents, root first, in reading order (paths without suffix)."""
    toc = yaml.safe_load((ROOT / "_toc.yml").read_text())
    files = [toc["root"]]

    def walk(entries):
        for entry in entries or []:
            if "file" in entry:
                files.append(entry["file"])
            walk(entry.get("sections"))
            walk(entry.get("chapters"))

    for part in toc.get("parts", []):
        walk(part.get("chapters"))
    walk(toc.get("chapters"))
    walk(toc.get("sections"))
    return files


ALL_PAGES = toc_files()
CHAPTER_PAGES = [f for f in ALL_PAGES if f.startswith("chapters/")]
INTRO_AND_CHAPTERS = [ALL_PAGES[0]] + CHAPTER_PAGES


def pytest_generate_tests(metafunc):
    """``book_doc``: every page of the table of contents (intro first); ``chapter_doc``: every chapter page."""
    if "book_doc" in metafunc.fixturenames:
        metafunc.parametrize("book_doc", ALL_PAGES, ids=[slug(d) for d in ALL_PAGES])
    if "chapter_doc" in metafunc.fixturenames:
        metafunc.parametrize("chapter_doc", CHAPTER_PAGES, ids=[slug(d) for d in CHAPTER_PAGES])
    if "chapter_notebook" in metafunc.fixturenames:  # every chapter page that is a notebook, as a path
        notebooks = [f"{d}.ipynb" for d in CHAPTER_PAGES if (ROOT / f"{d}.ipynb").exists()]
        metafunc.parametrize("chapter_notebook", notebooks, ids=[slug(d) for d in notebooks])


@pytest.fixture(scope="session")
def bt():
    """These helpers, for the test modules (a conftest module is not imported by name)."""
    import sys

    return sys.modules[__name__]


def page_url(site_url: str, doc: str) -> str:
    return f"{site_url}/{doc}.html"


def slug(doc: str) -> str:
    return re.sub(r"[^A-Za-z0-9.-]+", "_", doc)


# -- the browser ----------------------------------------------------------------------------------------------
@pytest.fixture(scope="session")
def browser():
    """One headless Chromium for the session (Debian's, never a downloaded one)."""
    if not Path(CHROMIUM).exists():
        pytest.fail(f"{CHROMIUM} is missing: apt-get install -y chromium (the browser tests need Debian's Chromium)")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_FLAGS)
        yield b
        b.close()


@dataclass
class PageLog:
    """What a page did while it loaded: every request, and everything that went wrong."""

    requests: list[str] = field(default_factory=list)
    external: list[str] = field(default_factory=list)
    failed: list[str] = field(default_factory=list)
    bad_status: list[str] = field(default_factory=list)
    page_errors: list[str] = field(default_factory=list)
    console_errors: list[str] = field(default_factory=list)
    console_warnings: list[str] = field(default_factory=list)
    loaded: list[tuple[str, int]] = field(default_factory=list)  # (url, body bytes) of each finished request
    ended: int = 0  # requests finished or failed

    def problems(self) -> list[str]:
        """Everything that counts as a failure of the book's own (see CONTRIBUTING.md: Tested in a real browser)."""
        return ([f"request left 127.0.0.1: {u}" for u in self.external]
                + [f"request failed: {u}" for u in self.failed]
                + [f"HTTP error: {u}" for u in self.bad_status]
                + [f"page error: {e}" for e in self.page_errors]
                + [f"console error: {e}" for e in self.console_errors])


def _is_local(url: str) -> bool:
    parts = urllib.parse.urlsplit(url)
    return parts.scheme in ("data", "blob", "about", "file") or parts.hostname in LOCAL_HOSTS


def new_page(browser, width: int = 1280, height: int = 900):
    """A page in a fresh context, with its log. Requests to any host but 127.0.0.1 are recorded and aborted."""
    context = browser.new_context(viewport={"width": width, "height": height})
    context.set_default_timeout(TIMEOUT_MS)
    log = PageLog()

    def route(r):
        if _is_local(r.request.url):
            r.continue_()
        else:
            log.external.append(r.request.url)
            r.abort()

    context.route("**/*", route)
    page = context.new_page()
    page.on("request", lambda r: log.requests.append(r.url))
    def failed(r):
        log.ended += 1
        if _is_local(r.url):
            log.failed.append(f"{r.url} ({r.failure})")

    page.on("requestfailed", failed)
    page.on("response", lambda r: log.bad_status.append(f"{r.status} {r.url}") if r.status >= 400 else None)
    page.on("pageerror", lambda e: log.page_errors.append(str(e)))

    def console(m):
        text = f"{m.text} ({m.location.get('url', '')})"
        if m.type == "error":
            log.console_errors.append(text)
        elif m.type == "warning":
            log.console_warnings.append(text)

    page.on("console", console)

    def finished(r):
        log.ended += 1
        try:
            log.loaded.append((r.url, r.sizes()["responseBodySize"]))
        except Exception:  # noqa: BLE001 - a request whose page has closed has no sizes left to read
            pass

    page.on("requestfinished", finished)
    return page, log


def settle(page, every_section: bool = True) -> None:
    """Lay out every section and start every figure and explorer now (the page does each as it comes near the
    screen), then wait until every static explorer is initialised, MathJax has typeset (when the build left the math
    to it) and the web fonts are in. The tests then measure what a reader who scrolls to each part sees: in a section
    the browser has skipped, an SVG text measures as a box of no size. ``every_section=False`` leaves the sections
    as the browser has them (the tests of that)."""
    page.wait_for_function("() => document.readyState === 'complete'")
    if every_section:
        lay_out_every_section(page)
    page.evaluate("async () => { if (window.toyDrawAll) await window.toyDrawAll(); }")
    page.wait_for_function(
        "() => [...document.querySelectorAll('.toy-explorer')].every(e => e.dataset.ready === 'true')")
    page.evaluate("""async () => {
        if (window.MathJax && MathJax.startup && MathJax.startup.promise) await MathJax.startup.promise;
        await document.fonts.ready;
    }""")


def quiet(page, log, ms: int = 500, limit_ms: int = 15_000) -> None:
    """Wait until no request has started or is still open for ``ms`` milliseconds."""
    waited, last = 0, None
    while waited < limit_ms:
        now = (len(log.requests), log.ended)
        if now == last and log.ended >= len(log.requests):
            return
        last = now
        page.wait_for_timeout(ms)
        waited += ms


def scroll_through(page, log) -> None:
    """Scroll the whole page once, so everything loaded on sight (fonts for math further down) is loaded."""
    page.evaluate("""async () => {
        const step = Math.max(200, innerHeight - 100);
        for (let y = 0; y < document.documentElement.scrollHeight; y += step) {
            scrollTo(0, y);
            await new Promise(r => requestAnimationFrame(() => setTimeout(r, 20)));
        }
        scrollTo(0, 0);
        await document.fonts.ready;
    }""")
    quiet(page, log)


def open_loaded(browser, url: str, width: int = 1280, height: int = 900, wait_ms: int = 0):
    """Open ``url`` in a new page as it opens: after its load event (and ``wait_ms`` more) and nothing else (no
    scrolling, no figure started, not settled). Returns (page, log); the page is closed if it fails to load."""
    page, log = new_page(browser, width, height)
    try:
        page.goto(url, wait_until="load")
        if wait_ms:
            page.wait_for_timeout(wait_ms)
    except BaseException:
        close(page)
        raise
    return page, log


def open_book_page(browser, url: str, width: int = 1280, height: int = 900, scroll: bool = False,
                   every_section: bool = True):
    """Open a page of the built book and wait until it has settled (every section laid out unless
    ``every_section=False``, explorers ready, math typeset, fonts in)."""
    page, log = new_page(browser, width, height)
    page.goto(url, wait_until="load")
    settle(page, every_section)
    if scroll:
        scroll_through(page, log)
    quiet(page, log)
    return page, log


def lay_out_every_section(page) -> None:
    """Have the browser lay out every section now, as the reader who scrolls to it sees it. The book lets it skip
    sections far from the screen (``.toy-lazy``: ``content-visibility: auto``), and checkers cannot reliably judge
    what it skipped: axe's colour contrast leaves most such text "incomplete" (neither passing nor failing), and an
    SVG text there measures as a box of no size."""
    page.add_style_tag(content=".toy-lazy { content-visibility: visible !important; }")
    page.evaluate("() => new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r)))")


def to_dark(page) -> None:
    """Switch the open page to dark mode with the theme's own button (it cycles light -> auto -> dark), then move
    away from it (to the window's bottom corner, where no control is) with fades off: a tooltip still fading out
    would be measured at half its colour."""
    for _ in range(3):
        if page.evaluate("() => document.documentElement.dataset.theme") == "dark":
            break
        page.locator(".theme-switch-button").first.click()
        page.wait_for_timeout(100)
    assert page.evaluate("() => document.documentElement.dataset.theme") == "dark"
    size = page.viewport_size
    page.mouse.move(size["width"] - 2, size["height"] - 2)
    page.evaluate("() => document.activeElement && document.activeElement.blur()")
    page.add_style_tag(content="*, *::before, *::after { transition: none !important; animation: none !important; }")
    page.wait_for_function("() => !document.querySelector('.tooltip')")
    page.wait_for_timeout(300)


def close(page) -> None:
    page.context.close()


# -- explorers in a page --------------------------------------------------------------------------------------
def explorer_ids(page) -> list[str]:
    return page.evaluate("() => [...document.querySelectorAll('.toy-explorer')].map(e => e.id)")


def explorer_spec(page, eid: str) -> dict:
    return page.evaluate("id => { const s = window.toyExplorers[id].spec; return {...s, data: null}; }", eid)


def read_explorer(page, eid: str, redraws: int = 0) -> dict:
    """The explorer's state, DOM control values, and the data its figure div holds for every bound attribute,
    read once it has completed at least ``redraws`` redraws."""
    return page.evaluate("""async ([id, n]) => {
        const api = window.toyExplorers[id];
        const deadline = performance.now() + 20000;
        while (api.redraws() < n) {
            if (performance.now() > deadline) throw new Error(id + ': ' + api.redraws() + ' redraws, expected ' + n);
            await new Promise(r => setTimeout(r, 2));
        }
        const get = (o, path) => path.split('.').reduce((v, k) => (v == null ? v : v[k]), o);
        const gd = api.figure;
        const controls = {};
        api.spec.controls.forEach(c => {
            const el = document.getElementById(id + '-' + c.name);
            const readout = el.type === 'range' ? el.nextElementSibling.textContent : null;
            controls[c.name] = {value: Number(el.value), readout};
        });
        return {
            state: {...api.state},
            controls,
            redraws: api.redraws(),
            traces: api.spec.traces.map(([i, attr]) => Array.from(get(gd.data[i], attr) || [], Number)),
            // what each layout binding shows: the title as HTML above the plot, any other text in the figure
            layout: api.spec.layout.map(([path]) => path === 'title.text' ? api.text(path) : get(gd.layout, path)),
            titleShown: (document.getElementById(id + '-title') || {}).textContent,
            drawnBars: gd.querySelectorAll('.bars .point path').length,
            // the value axes: the ranges the page script chose and the ones plotly draws
            ranges: api.ranges(),
            drawnRanges: Object.fromEntries(Object.keys(api.spec.axes).map(k => [k, (gd._fullLayout[k] || {}).range])),
        };
    }""", [eid, redraws])


DRAWN_AS_NEW_JS = """async id => {
    // The figure as the page script's redraws left it, against the same data and layout drawn afresh by
    // Plotly.newPlot: the numbers in every trace's drawn SVG (paths, point positions), to 0.01 px.
    const gd = window.toyExplorers[id].figure;
    const fresh = document.createElement('div');
    fresh.style.cssText = `position: absolute; left: -10000px; top: 0; width: ${gd.getBoundingClientRect().width}px`;
    document.body.appendChild(fresh);
    try {
        await Plotly.newPlot(fresh, JSON.parse(JSON.stringify(gd.data)), JSON.parse(JSON.stringify(gd.layout)));
        const drawn = g => [...g.querySelectorAll('.cartesianlayer .trace path, .cartesianlayer .trace .point')]
            .map(p => (p.getAttribute('d') || '') + ' ' + (p.getAttribute('transform') || ''))
            .join(' ').match(/-?\\d+(\\.\\d+)?(e-?\\d+)?/g) || [];
        const [a, b] = [drawn(gd), drawn(fresh)].map(x => x.map(Number));
        const worst = a.length === b.length ? Math.max(0, ...a.map((v, i) => Math.abs(v - b[i]))) : Infinity;
        return {numbers: a.length, fresh: b.length, worst};
    } finally {
        Plotly.purge(fresh);
        fresh.remove();
    }
}"""


def drawn_as_new(page, eid: str) -> dict:
    """How far the drawn traces are from a fresh drawing of the same figure (see ``DRAWN_AS_NEW_JS``)."""
    return page.evaluate(DRAWN_AS_NEW_JS, eid)


def unwrap(text: str) -> str:
    """A figure text as the figure gave it: the page breaks long titles into lines on narrow screens."""
    return text.replace("<br>", " ") if isinstance(text, str) else text


# -- which toy explorer a page shows -------------------------------------------------------------------------
def _notebook_calls(doc: str) -> list[tuple[str, dict]]:
    """(factory name, keyword arguments) of each ``toy.explorers`` factory call in the notebook's code cells whose
    arguments are literals, or names bound to literals earlier in the notebook."""
    from toy.page.explorers import ALL

    path = ROOT / f"{doc}.ipynb"
    if not path.exists():
        return []
    env: dict = {}
    calls = []
    for cell in json.loads(path.read_text())["cells"]:
        if cell["cell_type"] != "code":
            continue
        try:
            tree = ast.parse("".join(cell["source"]))
        except SyntaxError:  # IPython magics
            continue
        for node in ast.walk(tree):
            if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
                try:
                    env[node.targets[0].id] = ast.literal_eval(node.value)
                except ValueError:
                    pass
            if not isinstance(node, ast.Call):
                continue
            func = node.func
            name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", None)
            if name not in ALL:
                continue

            def value(n):
                if isinstance(n, ast.Name) and n.id in env:
                    return env[n.id]
                return ast.literal_eval(n)

            try:
                bound = inspect.signature(ALL[name]).bind(*[value(a) for a in node.args],
                                                          **{k.arg: value(k.value) for k in node.keywords})
            except (ValueError, TypeError):
                continue
            calls.append((name, dict(bound.arguments)))
    return calls


@functools.cache
def build_explorer(name: str, kwargs_json: str):
    from toy.page.explorers import ALL

    return ALL[name](**json.loads(kwargs_json))


def _bound_values(explorer, fig) -> tuple[list[np.ndarray], list[str]]:
    traces = [np.asarray(fig.data[i][attr], dtype=float) for i, attr, _ in explorer.traces]
    layout = [fig.layout[path] for path in explorer.layout]
    return traces, layout


def expected(explorer, indices: dict) -> tuple[list[np.ndarray], list[str]]:
    """What toy computes at a control state given by option indices: the bound trace data and layout texts."""
    values = {c.name: c.values[indices[c.name]] for c in explorer.static_controls}
    return _bound_values(explorer, explorer.figure_for(**values))


@dataclass
class Match:
    name: str
    kwargs: dict
    explorer: object


def match_explorer(doc: str, spec: dict, initial: dict) -> Match:
    """The toy explorer a page's static explorer was built from: same title, controls, bindings and templates,
    and the same figure at its default state. Fails if no candidate matches."""
    from toy.page.explorers import ALL

    candidates = _notebook_calls(doc) + [(name, {}) for name in ALL]
    tried = []
    for name, kwargs in candidates:
        explorer = build_explorer(name, json.dumps(kwargs, sort_keys=True))
        structure = (
            explorer.title == spec["title"]
            and [[c.name, c.label, c.kind, list(c.labels), c.default] for c in explorer.static_controls]
            == [[c["name"], c["label"], c["kind"], c["labels"], c["default"]] for c in spec["controls"]]
            and [[i, a, list(n)] for i, a, n in explorer.traces] == spec["traces"]
            and [[p, t] for p, t in explorer.layout.items()] == spec["layout"]
        )
        tried.append(f"{name}({kwargs})")
        if not structure:
            continue
        traces, layout = expected(explorer, {c.name: c.default for c in explorer.static_controls})
        if close_enough(traces, initial["traces"]) and layout == [unwrap(t) for t in initial["layout"]]:
            return Match(name, kwargs, explorer)
    pytest.fail(f"{doc}: no explorer in toy.explorers.ALL reproduces the page's explorer {spec['title']!r} "
                f"(tried {', '.join(tried)}); register its factory in ALL and call it with literal arguments")


def close_enough(expected_traces, page_traces, tol: float = 1e-9) -> bool:
    if len(expected_traces) != len(page_traces):
        return False
    for e, p in zip(expected_traces, page_traces, strict=True):
        p = np.asarray(p, dtype=float)
        if e.shape != p.shape or not np.all(np.abs(e - p) <= tol):
            return False
    return True


def save_artifact(name: str, text: str) -> Path:
    ARTIFACTS.mkdir(exist_ok=True)
    path = ARTIFACTS / name
    path.write_text(text)
    return path


# -- JupyterLab, live ----------------------------------------------------------------------------------------
def free_port() -> int:
    import socket

    with contextlib.closing(socket.socket()) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def jupyter_env(state: Path) -> dict:
    """The environment of a Jupyter server under test: its config, runtime, data and IPython folders under
    ``state`` (nothing in the repository or the home folder changes), TOY_EXPLORER_VIEW unset so explorers show
    their live widget view."""
    import os

    env = {k: v for k, v in os.environ.items() if k != "TOY_EXPLORER_VIEW"}
    env.update(JUPYTER_CONFIG_DIR=str(state / "config"), JUPYTER_RUNTIME_DIR=str(state / "runtime"),
               IPYTHONDIR=str(state / "ipython"), JUPYTER_DATA_DIR=str(state / "data"), JUPYTER_PLATFORM_DIRS="1")
    return env


@contextlib.contextmanager
def running_server(cmd: list[str], root: Path, env: dict, log_path: Path, probe: str, what: str, timeout: float):
    """Start ``cmd`` in ``root`` (output to ``log_path``), wait until ``probe`` answers 200, yield; the server is
    always stopped at the end, with all its kernels (its own process group)."""
    import os
    import signal
    import subprocess
    import time
    import urllib.request

    log_path.parent.mkdir(parents=True, exist_ok=True)
    with open(log_path, "w") as log:
        proc = subprocess.Popen(cmd, cwd=root, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
        try:
            deadline = time.monotonic() + timeout
            while True:
                if proc.poll() is not None:
                    raise RuntimeError(f"{what} exited with {proc.returncode}:\n{log_path.read_text()[-3000:]}")
                try:
                    with urllib.request.urlopen(probe, timeout=2) as r:
                        if r.status == 200:
                            break
                except OSError:
                    pass
                if time.monotonic() > deadline:
                    raise RuntimeError(f"{what} did not answer in {timeout} s:\n{log_path.read_text()[-3000:]}")
                time.sleep(0.3)
            yield
        finally:
            if proc.poll() is None:
                os.killpg(proc.pid, signal.SIGTERM)
                try:
                    proc.wait(timeout=15)
                except subprocess.TimeoutExpired:
                    os.killpg(proc.pid, signal.SIGKILL)
                    proc.wait(timeout=15)


@contextlib.contextmanager
def jupyterlab(root: Path, log_path: Path, timeout: float = 90.0, settings: dict | None = None):
    """JupyterLab, headless on 127.0.0.1 with no token, serving ``root``; yields its URL.

    Its settings, workspaces, runtime files and IPython profile live under ``root`` (see ``jupyter_env``), and the
    server with all its kernels is always stopped at the end. ``settings`` ({plugin id: settings}) are the user's
    settings; by default there are none.
    """
    import sys

    state = root / ".lab-state"
    env = jupyter_env(state)
    # No user settings: the tests see the defaults a reader gets, the project's own among them (lab-settings/,
    # installed by requirements.txt): no news popup, and every cell attached and rendered at once (windowing off),
    # so a test can read every Markdown cell's rendered text.
    for plugin, values in (settings or {}).items():
        package, name = plugin.split(":")
        path = state / "settings" / package / f"{name}.jupyterlab-settings"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(values))
    port = free_port()
    cmd = [str(Path(sys.executable).with_name("jupyter-lab")), "--no-browser", "--allow-root", "--ip=127.0.0.1",
           f"--port={port}", "--ServerApp.port_retries=0", "--ServerApp.token=", "--ServerApp.password=",
           "--ServerApp.disable_check_xsrf=False", f"--ServerApp.root_dir={root}",
           "--LabApp.expose_app_in_browser=True", f"--LabApp.user_settings_dir={state / 'settings'}",
           f"--LabApp.workspaces_dir={state / 'workspaces'}", "--LabApp.news_url=",
           "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate"]
    url = f"http://127.0.0.1:{port}"
    with running_server(cmd, root, env, log_path, f"{url}/api/status", "JupyterLab", timeout):
        yield url


LIVE_EXPLORER_JS = """label => {
    // The live explorer whose slider is labelled `label`: its slider, readout, handle and FigureWidget div.
    const slider = [...document.querySelectorAll('.jp-OutputArea-output .widget-slider')]
        .find(s => (s.querySelector('.widget-label') || {}).textContent === label);
    if (!slider) return null;
    let box = slider.parentElement;
    while (box && !box.querySelector('.js-plotly-plot')) box = box.parentElement;
    return box ? {slider, box, gd: box.querySelector('.js-plotly-plot')} : null;
}"""


def open_lab_notebook(browser, url: str, name: str, width: int = 1280, height: int = 1000):
    """Open a notebook in JupyterLab, wait for an idle kernel, run all cells."""
    page, log = new_page(browser, width, height)
    page.set_default_timeout(120_000)
    page.goto(f"{url}/lab/tree/{name}", wait_until="load")
    page.wait_for_function("""() => {
        const w = window.jupyterapp && window.jupyterapp.shell.currentWidget;
        const k = w && w.sessionContext && w.sessionContext.session && w.sessionContext.session.kernel;
        return w && w.content && w.content.widgets && w.content.widgets.length > 0 && k && k.status === 'idle';
    }""", timeout=120_000)
    page.evaluate("() => window.jupyterapp.commands.execute('notebook:run-all-cells')")
    return page, log


def wait_live_explorer(page, label: str) -> None:
    page.wait_for_function(f"""() => {{
        const e = ({LIVE_EXPLORER_JS})({json.dumps(label)});
        return e && e.gd.querySelectorAll('.bars .point path').length > 0;
    }}""", timeout=120_000)


def live_bars(page, label: str) -> dict:
    """The live explorer's drawn bars (SVG path of each), its figure data (trace y) and the slider's readout."""
    return page.evaluate(f"""() => {{
        const e = ({LIVE_EXPLORER_JS})({json.dumps(label)});
        return {{
            paths: [...e.gd.querySelectorAll('.bars .point path')].map(p => p.getAttribute('d')),
            y: e.gd.data.map(t => Array.from(t.y || [], Number)),
            readout: (e.slider.querySelector('.widget-readout') || {{}}).textContent,
        }};
    }}""")


def focus_live_slider(page, label: str) -> None:
    page.evaluate(f"""() => ({LIVE_EXPLORER_JS})({json.dumps(label)}).slider.querySelector('.noUi-handle').focus()""")


# -- one visit per page, shared by the read-only checks ---------------------------------------------------------
PAGE_REPORT_JS = """() => {
    const figures = [...document.querySelectorAll('.js-plotly-plot')].map(gd => ({
        traces: gd._fullData.filter(t => t.visible === true).length,
        drawn: gd.querySelectorAll('.main-svg g.trace, .main-svg g.hm, .main-svg g.table').length,
        barTraces: gd._fullData.filter(t => t.visible === true && t.type === 'bar').length,
        bars: gd.querySelectorAll('.bars .point path').length,
    }));
    const math = [...document.querySelectorAll('span.math, div.math')];
    return {
        figures,
        explorers: document.querySelectorAll('.toy-explorer').length,
        ready: document.querySelectorAll('.toy-explorer[data-ready="true"]').length,
        brokenExplorers: [...document.querySelectorAll('.toy-explorer-figure')]
            .filter(d => /could not start|did not load/.test(d.textContent)).length,
        math: math.length,
        // typeset at build time by KaTeX (.katex), or in the browser by MathJax when the build had no Node.js
        typeset: math.filter(m => m.querySelector('.katex, mjx-container')).length,
        mathErrors: document.querySelectorAll('.katex-error, mjx-merror').length,
        title: document.querySelector('main h1') ? document.querySelector('main h1').textContent : '',
        download: [...document.querySelectorAll('a.btn-download-source-button')].map(a => a.href),
        launch: [...document.querySelectorAll('.dropdown-launch-buttons a')].map(a => a.href),
        // Thebe LOADED: its files, its global, its cells or sphinx-thebe's (CDN) button and config. The Live code
        // button's own script may name where Thebe is; it loads it only when pressed.
        thebe: performance.getEntriesByType('resource').filter(e => /thebe/i.test(e.name)).length
            + (typeof window.thebe !== 'undefined' ? 1 : 0) + document.querySelectorAll('.thebe-cell').length
            + document.querySelectorAll('.thebe-launch-button, script[type="text/x-thebe-config"]').length
            + [...document.scripts].filter(s => /thebe/i.test(s.src + s.textContent)).length,
        liveButton: document.querySelectorAll('.toy-live-button').length,
    };
}"""


@pytest.fixture(scope="session")
def visit(browser, site_url):
    """visit(doc, *scripts) -> (log, report, [result of each script]): the page opened once at 1280 px, scrolled
    through and read; later calls for the same page evaluate their scripts in that same, still open page."""
    cache: dict = {}

    def run(doc: str, *scripts: str):
        if doc not in cache:
            page, log = open_book_page(browser, page_url(site_url, doc), scroll=True)
            report = page.evaluate(PAGE_REPORT_JS)
            report["loaded"] = list(log.loaded)  # what the page itself loaded, before the test fetches its source
            if report["download"]:
                report["source"] = page.evaluate(
                    "async url => { const r = await fetch(url); return [r.status, await r.text()]; }",
                    report["download"][0])
            save_artifact(f"console-warnings-{slug(doc)}.txt", "\n".join(log.console_warnings))
            cache[doc] = (page, log, report)
        page, log, report = cache[doc]
        return log, report, [page.evaluate(s) for s in scripts]

    yield run
    for page, _, _ in cache.values():
        close(page)
