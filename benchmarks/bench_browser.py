"""Speed of the explorers in a real browser (headless Debian Chromium, driven by playwright). Prints its figures;
asserts nothing.

Targets (issue 11; each timing is printed against its target, with "ok" or "MISSED"):
* static explorer in the built book: redraw after a control change at most 16 ms median and 33 ms at p90 (one
  frame), measured in the page from the DOM event on the control to the last change of the drawn figure (SVG)
  before the redraw ends, when the new picture is complete; the time to the end of the page script's redraw
  (plotly's promise, which resolves a frame later) is printed beside it;
* live explorer in JupyterLab: key press on the temperature slider to changed bars at most 60 ms median, measured
  in the page (from the keydown event's timestamp to the first change of a drawn bar's SVG path), with the
  project's JupyterLab settings. Where that time goes is printed under it, from a Chrome trace of as many more
  presses: the browser's main thread busy (its CPU time split into rendering frames, and scripts with the kernel's
  messages) and idle (waiting for the kernel and the server, or for a CPU core); then the same presses under
  JupyterLab's default windowing, which the project turns off (lab-settings/), and the kernel's Python per step.
Timings depend on the machine and its load: run it on an otherwise idle machine.

Run: .venv/bin/python benchmarks/bench_browser.py     (builds the book into a temporary folder first; set
     TOY_BUILT_SITE=/path/to/_build/html to use an existing build)
     .venv/bin/python benchmarks/bench_browser.py live     (the live explorer in JupyterLab only: no build)
"""

from __future__ import annotations

import bisect
import contextlib
import functools
import http.server
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # the browser helpers live with the browser tests

from tests.browser import conftest as bt  # noqa: E402

PAGE = "chapters/04-the-llm-as-a-policy/4.1-formal-mapping"
NOTEBOOK = ROOT / f"{PAGE}.ipynb"
STATIC_CHANGES = 120
LIVE_PRESSES = 20

STATIC_JS = """async ([id, n]) => {
    // Cycle through the explorer's controls, each to its next option, through the DOM (input/change events).
    // Per change: the time to the last change of the drawn figure (SVG) before the page script's redraw ends (the
    // new picture complete in the page), and to the end of that redraw (plotly's promise).
    const api = window.toyExplorers[id];
    const controls = api.spec.controls.map(c => [c, document.getElementById(id + '-' + c.name)]);
    const layer = api.figure.querySelector('.cartesianlayer');
    const tick = () => new Promise(r => queueMicrotask(r));
    const rows = [];
    for (let k = 0; k < n; k++) {
        const [c, el] = controls[k % controls.length];
        el.value = (Number(el.value) + 1) % c.labels.length;
        const before = api.redraws();
        let drawn = null;
        const obs = new MutationObserver(() => { drawn = performance.now(); });
        obs.observe(layer, {subtree: true, childList: true, attributes: true});
        const t0 = performance.now();
        el.dispatchEvent(new Event(el.tagName === 'SELECT' ? 'change' : 'input', {bubbles: true}));
        for (let i = 0; api.redraws() === before; i++) await (i < 1000 ? tick() : new Promise(r => setTimeout(r, 1)));
        const done = performance.now() - t0;
        obs.disconnect();
        rows.push([c.name, drawn === null ? done : drawn - t0, done]);
        await new Promise(r => requestAnimationFrame(() => setTimeout(r, 0)));  // let the frame paint
    }
    return rows;
}"""

ARM_JS = """label => {
    // Resolve window.__changed with the time from the last keydown to the first change of the drawn bars.
    const e = (LIVE_EXPLORER)(label);
    const paths = () => [...e.gd.querySelectorAll('.bars .point path')].map(p => p.getAttribute('d')).join('|');
    const before = paths();
    window.__changed = new Promise(resolve => {
        const obs = new MutationObserver(() => {
            if (paths() !== before) {
                obs.disconnect();
                performance.mark('toy-bars-changed');  // for the trace
                resolve(performance.now() - window.__keyAt);
            }
        });
        obs.observe(e.gd, {subtree: true, childList: true, attributes: true, attributeFilter: ['d']});
    });
    if (!window.__keyWatch) {
        window.__keyWatch = true;
        document.addEventListener('keydown', ev => { window.__keyAt = ev.timeStamp; }, true);
    }
}""".replace("LIVE_EXPLORER", bt.LIVE_EXPLORER_JS)


STATIC_MEDIAN_MS, STATIC_P90_MS, LIVE_MEDIAN_MS = 16.0, 33.0, 60.0


def summary(times, median_target: float | None = None, p90_target: float | None = None) -> str:
    times = sorted(times)
    p90 = times[min(len(times) - 1, int(0.9 * len(times)))]
    median = statistics.median(times)
    out = f"median {median:6.1f} ms   p90 {p90:6.1f} ms   max {times[-1]:6.1f} ms   (n = {len(times)})"
    if median_target is not None:
        out += f"   target median <= {median_target:g} ms: {'ok' if median <= median_target else 'MISSED'}"
    if p90_target is not None:
        out += f", p90 <= {p90_target:g} ms: {'ok' if p90 <= p90_target else 'MISSED'}"
    return out


@contextlib.contextmanager
def built_site():
    reuse = os.environ.get("TOY_BUILT_SITE")
    if reuse:
        yield Path(reuse)
        return
    out = Path(tempfile.mkdtemp(prefix="bench-browser-"))
    try:
        print("building the book (set TOY_BUILT_SITE to reuse a build)...", flush=True)
        subprocess.run([str(Path(sys.executable).with_name("jupyter-book")), "build", str(ROOT), "--path-output",
                        str(out)], check=True, capture_output=True)
        yield out / "_build" / "html"
    finally:
        shutil.rmtree(out, ignore_errors=True)


@contextlib.contextmanager
def serve(folder: Path):
    handler = functools.partial(bt_quiet_handler(), directory=str(folder))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()


def bt_quiet_handler():
    class Quiet(http.server.SimpleHTTPRequestHandler):
        def log_message(self, *args):
            pass

    return Quiet


def bench_static(browser, site_url: str) -> None:
    page, log = bt.open_book_page(browser, bt.page_url(site_url, PAGE))
    try:
        print(f"machine load average (1 min): {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
        for eid in bt.explorer_ids(page):
            title = page.evaluate("id => window.toyExplorers[id].spec.title", eid)
            rows = page.evaluate(STATIC_JS, [eid, STATIC_CHANGES])[len(bt.explorer_spec(page, eid)["controls"]):]
            print(f"static explorer, {title[:60]!r} (headless Chromium, in the page):")
            print(f"  control change -> figure redrawn:   "
                  f"{summary([r[1] for r in rows], STATIC_MEDIAN_MS, STATIC_P90_MS)}")
            print(f"  control change -> redraw finished:  {summary([r[2] for r in rows])}   (plotly's promise)")
            temperature = [r[1] for r in rows if r[0] == "temperature"]
            if temperature:
                print(f"  temperature slider alone:           {summary(temperature)}")
    finally:
        bt.close(page)
    if log.problems():
        print("  page problems:", log.problems())


TRACE_CATEGORIES = ["devtools.timeline", "disabled-by-default-devtools.timeline", "blink.user_timing"]
FRAME_EVENTS = {"UpdateLayoutTree", "Layout", "PrePaint", "Paint", "Layerize", "Commit"}
DEFAULT_WINDOWING = {"@jupyterlab/notebook-extension:tracker": {"windowingMode": "contentVisibility"}}


def live_presses(browser, settings: dict | None = None) -> tuple[list[float], dict[str, list[float]]]:
    """Figure 4.1 live in JupyterLab (user ``settings``, none by default): the key press -> bars changed times of
    LIVE_PRESSES presses, and the main thread's split of as many more, traced (``main_thread_split``)."""
    label = "Temperature τ"

    def presses(page) -> list[float]:
        times = []
        for k in range(LIVE_PRESSES):
            page.evaluate(ARM_JS, label)
            page.keyboard.press("ArrowRight" if k % 2 == 0 else "ArrowLeft")
            times.append(page.evaluate("window.__changed"))
            page.wait_for_timeout(150)  # let the batch update and the kernel settle before the next press
        return times

    with tempfile.TemporaryDirectory(prefix="bench-lab-") as tmp:
        shutil.copy(NOTEBOOK, Path(tmp) / "section.ipynb")
        with bt.jupyterlab(Path(tmp), Path(tmp) / "lab.log", settings=settings) as url:
            page, _ = bt.open_lab_notebook(browser, url, "section.ipynb")
            try:
                bt.wait_live_explorer(page, label)
                page.wait_for_timeout(1000)  # the rest of the notebook finishes running
                bt.focus_live_slider(page, label)
                times = presses(page)
                browser.start_tracing(page=page, categories=TRACE_CATEGORIES)  # slows the page a little: apart
                try:
                    presses(page)
                finally:
                    trace = json.loads(browser.stop_tracing())
            finally:
                bt.close(page)
    return times, main_thread_split(trace)


def main_thread_split(trace: dict) -> dict[str, list[float]]:
    """Per traced press, from the keydown event to the bars' change: how long the page's main thread was busy and
    idle, and its CPU time in rendering frames (style, layout, paint, compositing) and in the rest (scripts: the
    slider, JupyterLab, the widgets and plotly.js handling the kernel's messages), in ms."""
    events = trace["traceEvents"] if isinstance(trace, dict) else trace
    threads: dict = {}
    for e in events:
        if e.get("name") == "FunctionCall":
            key = (e.get("pid"), e.get("tid"))
            threads[key] = threads.get(key, 0) + 1
    main = max(threads, key=threads.get)
    timed = sorted((e for e in events if (e.get("pid"), e.get("tid")) == main and e.get("ph") == "X" and "dur" in e),
                   key=lambda e: e["ts"])
    starts = [e["ts"] for e in timed]
    keydowns = [e["ts"] for e in timed
                if e["name"] == "EventDispatch" and e.get("args", {}).get("data", {}).get("type") == "keydown"]
    changed = sorted(e["ts"] for e in events if e.get("name") == "toy-bars-changed")
    split: dict[str, list[float]] = {"busy": [], "idle": [], "frames": [], "scripts": []}
    for down in keydowns:
        end = next((t for t in changed if t > down), None)
        if end is None or end - down > 2e6:
            continue
        busy = frames = scripts = 0.0
        for task in timed:
            if task["name"] != "RunTask" or task["ts"] + task["dur"] <= down or task["ts"] >= end:
                continue
            part = (min(task["ts"] + task["dur"], end) - max(task["ts"], down)) / task["dur"] if task["dur"] else 0
            i, inside = bisect.bisect_left(starts, task["ts"]), set()
            while i < len(timed) and timed[i]["ts"] < task["ts"] + task["dur"]:
                inside.add(timed[i]["name"])
                i += 1
            busy += part * task["dur"] / 1000
            cpu = part * task.get("tdur", task["dur"]) / 1000
            if inside & FRAME_EVENTS:
                frames += cpu
            else:
                scripts += cpu
        split["busy"].append(busy)
        split["idle"].append((end - down) / 1000 - busy)
        split["frames"].append(frames)
        split["scripts"].append(scripts)
    return split


def kernel_redraws(steps: int = 300) -> list[float]:
    """The kernel's part of a step of the live temperature slider, in this process: the CPU time of setting the
    slider to a new value (the widget's handler runs toy's computation and updates the FigureWidget; no frontend
    is attached, so no message is sent), in ms."""
    import numpy as np

    from toy.page.explorers import credit_assignment

    slider = credit_assignment().live().controls["temperature"]
    times = []
    for t in 10 ** np.random.default_rng(0).uniform(-1, 1, steps):  # new values: none cached
        t0 = time.thread_time()
        slider.value = float(t)
        times.append((time.thread_time() - t0) * 1000)
    return times


def bench_live(browser) -> None:
    print(f"machine load average (1 min): {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
    times, split = live_presses(browser)
    print("live explorer in JupyterLab, Figure 4.1, the project's settings (headless Chromium, in the page):")
    print(f"  temperature key press -> bars changed: {summary(times, LIVE_MEDIAN_MS)}")
    print_split(split)
    times, split = live_presses(browser, DEFAULT_WINDOWING)
    print("  the same under JupyterLab's default windowing (contentVisibility, which the project turns off: "
          "jupyterlab-myst renders a cell's cross-references only with every cell attached):")
    print(f"  temperature key press -> bars changed: {summary(times)}")
    print_split(split)
    print(f"  kernel side, Python per slider step (toy and the widgets, CPU, no frontend): {summary(kernel_redraws())}")


def print_split(split: dict[str, list[float]]) -> None:
    if not split["busy"]:
        print("    (the trace holds no complete press)")
        return
    print(f"    main thread busy:                    {summary(split['busy'])}")
    print(f"      CPU in rendering frames:           {summary(split['frames'])}   (style, layout, paint, compositing)")
    print(f"      CPU in scripts:                    {summary(split['scripts'])}   "
          "(slider, JupyterLab, widgets, plotly.js)")
    print(f"    main thread idle:                    {summary(split['idle'])}   "
          "(waiting for the kernel and server, or a CPU core)")


def main() -> None:
    from playwright.sync_api import sync_playwright

    if sys.argv[1:] == ["live"]:
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=bt.CHROMIUM, args=bt.CHROMIUM_FLAGS)
            try:
                bench_live(browser)
            finally:
                browser.close()
        return
    with built_site() as site, serve(site) as site_url, sync_playwright() as p:
        browser = p.chromium.launch(executable_path=bt.CHROMIUM, args=bt.CHROMIUM_FLAGS)
        try:
            bench_static(browser, site_url)
            bench_live(browser)
        finally:
            browser.close()


if __name__ == "__main__":
    main()
