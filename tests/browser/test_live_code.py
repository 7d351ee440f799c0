"""Issue 14's real-browser tests: the Live code button of a chapter page, with and without a Jupyter server.

A Jupyter server is started by the test on 127.0.0.1 as ``scripts/live.sh`` starts it: a fresh token, requests
allowed from the book's origin only (``allow_origin``), its settings and runtime files in a temporary folder. The
page is opened with the link ``scripts/live.sh`` prints (``#toy-live-server=...&toy-live-token=...``). Until the
button is pressed nothing of Thebe is loaded; pressed, Thebe is loaded from the book's own files, every code cell
becomes an editor with a run button, and edited cells run on the kernel with their outputs replaced in place.
Every request stays on 127.0.0.1 and the page logs no error.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import secrets
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

import numpy as np
import pytest
import toysite  # book/_ext: tests/conftest.py puts it on sys.path

pytestmark = pytest.mark.slow

DOC = "chapters/04-the-llm-as-a-policy/4.1-formal-mapping"
TEMPERATURES_CELL = "temperatures = [0.1, 1.0, 10.0]"
EDITED = [0.5, 2.0]
EXPLORER_CELL = "toy.explorers.credit_assignment(prompt=x)"
THEBE_LOADED_JS = """() => ({
    thebe: typeof window.thebe !== 'undefined',
    files: performance.getEntriesByType('resource').map(e => e.name).filter(u => /\\/thebe\\//.test(u)),
    cells: document.querySelectorAll('.thebe-cell').length,
})"""

# every text the Live code status line shows, with whether it was aria-busy then (set up before the page's scripts)
STATUS_RECORDER_JS = """(() => {
    window.toyStatusLog = [];
    const record = (el) => {
        const text = el.textContent, busy = el.getAttribute('aria-busy') === 'true';
        const last = window.toyStatusLog[window.toyStatusLog.length - 1];
        if (!last || last.text !== text || last.busy !== busy) window.toyStatusLog.push({text, busy});
    };
    new MutationObserver(() => {
        const el = document.querySelector('.toy-live-status');
        if (el) record(el);
    }).observe(document, {childList: true, subtree: true, characterData: true, attributes: true,
                          attributeFilter: ['aria-busy']});
})();"""


def page_busy_after(shown: list[dict]) -> bool:
    return bool(shown) and shown[-1]["busy"]


BOOK_REPOSITORY = toysite.repository(Path(__file__).resolve().parents[2])[0]  # the build's, or None


@contextlib.contextmanager
def jupyter_server(root: Path, origin: str, log_path: Path, timeout: float = 90.0):
    """A Jupyter server as scripts/live.sh starts one: yields (url, token); always stopped, with its kernels."""
    from tests.browser.conftest import free_port, jupyter_env, running_server

    port, token = free_port(), secrets.token_hex(16)
    cmd = [str(Path(sys.executable).with_name("jupyter-server")), "--no-browser", "--allow-root", "--ip=127.0.0.1",
           f"--port={port}", "--ServerApp.port_retries=0", f"--IdentityProvider.token={token}",
           f"--ServerApp.allow_origin={origin}", f"--ServerApp.root_dir={root}"]
    url = f"http://127.0.0.1:{port}"
    with running_server(cmd, root, jupyter_env(root / ".server-state"), log_path, f"{url}/api",
                        "the Jupyter server", timeout):
        yield url, token


def cell_index(page, needle: str) -> int:
    """The index of the Thebe cell whose editor holds ``needle``."""
    index = page.evaluate("""needle => [...document.querySelectorAll('.thebe-cell')]
        .findIndex(c => c.querySelector('.thebe-input').textContent.includes(needle))""", needle)
    assert index >= 0, f"no Live code cell holds {needle!r}"
    return index


def test_live_code_edits_and_reruns_cells_on_a_local_server(bt, browser, site_url, tmp_path):
    import toy
    from toy.page.explorers import TEMPERATURES

    with jupyter_server(tmp_path, site_url, bt.ARTIFACTS / "live-code-server.log") as (server, token):
        page, log = bt.new_page(browser, 1280, 1000)
        try:
            page.add_init_script(STATUS_RECORDER_JS)
            page.goto(f"{bt.page_url(site_url, DOC)}#toy-live-server={server}&toy-live-token={token}")
            bt.settle(page)
            bt.quiet(page, log)
            before = page.evaluate(THEBE_LOADED_JS)
            label = page.locator(".toy-live-status").text_content()
            assert "#toy-live-token" not in page.url, "the token must leave the address bar"

            page.click(".toy-live-button")
            page.wait_for_function("() => /Running the page's/.test("
                                   "document.querySelector('.toy-live-status').textContent)", timeout=180_000)

            # While the page's first run-through is going, edit the temperatures cell with the keyboard and run it:
            # the run waits in a queue (run at once, it would cancel the run-through's request for that cell).
            k = cell_index(page, TEMPERATURES_CELL)
            cell = page.locator(".thebe-cell").nth(k)
            cell.locator(".thebe-input .CodeMirror").click()  # CodeMirror 5 (Thebe 0.9): type into the editor
            page.keyboard.press("Control+a")
            page.keyboard.insert_text(_temperature_cell().replace("[0.1, 1.0, 10.0]", json.dumps(EDITED)))
            edited = cell.locator(".thebe-input").text_content()
            during = page.evaluate("""k => {  // one task: the run-through cannot end between the check and the click
                const live = document.documentElement.dataset.toyLive === 'live';
                document.querySelectorAll('.thebe-cell')[k].querySelector('.thebe-run-button').click();
                return {live, queued: document.querySelectorAll('.thebe-cell')[k].dataset.toyQueued || null,
                        status: document.querySelector('.toy-live-status').textContent};
            }""", k)
            page.wait_for_function("() => document.documentElement.dataset.toyLive === 'live'", timeout=180_000)
            shown = page.evaluate("() => window.toyStatusLog")
            sessions = json.loads(urllib.request.urlopen(urllib.request.Request(
                f"{server}/api/sessions", headers={"Authorization": f"token {token}"}), timeout=10).read())
            after = page.evaluate(THEBE_LOADED_JS)
            status = page.locator(".toy-live-status").text_content()
            # its figure shows the new temperatures once the queued run has run
            page.wait_for_function("""([k, names]) => {
                const out = document.querySelectorAll('[data-output]')[k];
                const gd = out && out.querySelector('.js-plotly-plot');
                return gd && gd.data && JSON.stringify(gd.data.map(t => t.name)) === JSON.stringify(names);
            }""", arg=[k, [f"τ = {t:g}" for t in EDITED]], timeout=60_000)
            drawn = page.evaluate("""k => document.querySelectorAll('[data-output]')[k].querySelector('.js-plotly-plot')
                .data.map(t => Array.from(t.y, Number))""", k)
            # the editor grows with a line the reader adds, and a long line wraps instead of scrolling out of view
            measure = """k => { const cm = document.querySelectorAll('.thebe-cell')[k].querySelector('.CodeMirror');
                const scroll = cm.querySelector('.CodeMirror-scroll');
                return {height: cm.getBoundingClientRect().height, wide: scroll.scrollWidth - scroll.clientWidth,
                        wrap: cm.CodeMirror && cm.CodeMirror.getOption('lineWrapping'), cls: cm.className}; }"""
            editor_before = page.evaluate(measure, k)
            cell.locator(".thebe-input .CodeMirror").click()
            page.keyboard.press("Control+End")
            page.keyboard.insert_text("\n# a comment long enough to run past the editor's width:" + " and more" * 40)
            page.wait_for_timeout(200)
            editor_after = page.evaluate(measure, k)
            buttons = page.evaluate("""() => [...document.querySelectorAll('.thebe-cell .thebe-run-button')]
                .map(b => [b.textContent, b.getAttribute('aria-label')])""")

            # Re-run the Figure 4.1 explorer cell and move its temperature with the keyboard.
            e = cell_index(page, EXPLORER_CELL)
            page.locator(".thebe-cell").nth(e).locator(".thebe-run-button").click()
            page.wait_for_function("""k => { const out = document.querySelectorAll('[data-output]')[k];
                const ex = out && out.querySelector('.toy-explorer[data-ready="true"]');
                return ex && ex.id.startsWith('toy-explorer-later-'); }""", arg=e, timeout=60_000)
            eid = page.evaluate(
                "k => document.querySelectorAll('[data-output]')[k].querySelector('.toy-explorer').id", e)
            note = page.evaluate("id => document.getElementById(id).previousElementSibling.textContent", eid)
            spec = bt.explorer_spec(page, eid)
            initial = bt.read_explorer(page, eid, 1)
            page.focus(f"#{eid}-temperature")
            page.keyboard.press("ArrowRight")
            moved = bt.read_explorer(page, eid, initial["redraws"] + 1)
            page.screenshot(path=str(bt.ARTIFACTS / "live-code-4-1.png"), full_page=False)
            text = page.evaluate("() => document.body.innerText")
        finally:
            bt.close(page)

    assert before == {"thebe": False, "files": [], "cells": 0}, f"Thebe loaded before the button was pressed: {before}"
    assert server in label, f"the button must say which kernel it will use: {label!r}"
    # Binder comes last, for the book's repository; with none set (toysite.repository), there is no Binder route
    assert ("Binder" in label) == bool(BOOK_REPOSITORY), label
    assert after["thebe"] and after["cells"] > 10 and all("/_static/thebe/" in u for u in after["files"]), after
    assert server in status, status
    # the status line shows the book's progress, never the kernel's events, and is announced once per run-through
    # (its words before the button is pressed, as built and with the link's server, say what Live code does: they
    # name a kernel, none of its events)
    texts = [t["text"] for t in shown]
    idle = "Live code turns this page's code cells into editors"
    assert label in texts and label.startswith(idle), label
    assert not [t for t in texts if not t.startswith(idle) and ("status changed" in t or "kernel" in t.lower())], texts
    assert any(re.search(r"Running the page's \d+ code cells .*: \d+ of \d+ done", t) for t in texts), texts
    announced = [t for t in shown if not t["busy"]]  # a live region is not read out while aria-busy is true
    assert len(announced) <= 4, announced  # the label as built, and how the run-through ended
    assert not page_busy_after(shown), "the status line was left aria-busy after the run-through"
    # this page has a kernel of its own, under its notebook's path (every page once shared the path "/")
    assert [s_["path"].replace("-", "/").endswith("4.1/formal/mapping.ipynb") for s_ in sessions] == [True], sessions
    assert f"temperatures = {EDITED}" in edited, edited
    assert editor_after["height"] > editor_before["height"] + 20, (editor_before, editor_after)
    assert editor_after["wide"] <= 1, f"a long line scrolls the editor sideways: {editor_after}"
    assert buttons and all(text == "Run cell" and re.fullmatch(r"Run code cell \d+ of \d+", label)
                           for text, label in buttons), buttons[:3]
    assert not during["live"], "the first run-through had ended before the edited cell was run; nothing was queued"
    assert during["queued"] == "true" and "1 cell(s) you ran will run next" in during["status"], during
    for bad in ("Canceled future", "refresh the page", "Failed to execute"):
        assert bad not in text, f"a cell run during the first run-through says {bad!r}"
    assert log.problems() == [], "\n".join(log.problems())

    expected = [toy.reference_policy(temperature=t).next_token_probs(2, (1, 2)) for t in EDITED]
    assert len(drawn) == len(EDITED)
    for got, want in zip(drawn, expected, strict=True):
        assert np.max(np.abs(np.asarray(got) - want)) <= 1e-9

    assert "Live code" in note and "JupyterLab" in note, note
    match = bt.match_explorer(DOC, spec, initial)
    default = TEMPERATURES.index(1.0)
    assert moved["state"]["temperature"] == initial["state"]["temperature"] + 1 == default + 1
    traces, _ = bt.expected(match.explorer, moved["state"])
    assert bt.close_enough(traces, moved["traces"]), "the re-run explorer does not show toy's values after the move"
    assert not bt.close_enough(traces, initial["traces"]), "moving the temperature changed nothing"


DOC_4_2 = "chapters/04-the-llm-as-a-policy/4.2-easy-and-hard"
OWN_NAMES = {DOC: "pi_eos", DOC_4_2: "goodhart_ex"}  # a name only that page's cells define
PROBE_CELLS = {DOC: 'toy.exercises.check("4.1-token-advantages"', DOC_4_2: 'toy.exercises.check("4.2-kl-optimum"'}
PROBE = """print("probe", repr(globals().get("owner")), sorted(n for n in {names!r} if n in globals()))
owner = {doc!r}"""
RUN_PROBE_JS = """async ([k, code]) => {
    // Put `code` in the k-th cell's editor, run it, and return its output once it has printed.
    const cell = document.querySelectorAll('.thebe-cell')[k];
    const out = document.querySelectorAll('[data-output]')[k];
    cell.querySelector('.CodeMirror').CodeMirror.setValue(code);
    cell.querySelector('.thebe-run-button').click();
    const start = performance.now();
    while (!/probe .*\\]/.test(out.textContent)) {
        if (performance.now() - start > 60000) throw new Error('the probe printed nothing: ' + out.textContent);
        await new Promise(r => setTimeout(r, 20));
    }
    return out.textContent.match(/probe .*\\]/)[0];
}"""
KERNEL_EXPLORER_JS = """async () => {
    // The first explorer a cell showed on this page (the kernel's page view), started (it starts near the screen).
    const el = document.querySelector('[data-output] .toy-explorer');
    el.scrollIntoView({block: 'center'});
    const start = performance.now();
    while (el.dataset.ready !== 'true') {
        if (performance.now() - start > 30000) throw new Error('the explorer did not start');
        await new Promise(r => setTimeout(r, 20));
    }
    return window.toyExplorers[el.id].spec.kernel ? el.id : null;
}"""
EXTREMES_JS = """async id => {  // every control of the explorer to its last option
    const api = window.toyExplorers[id];
    const last = Object.fromEntries(api.spec.controls.map(c => [c.name, c.labels.length - 1]));
    const before = api.redraws();
    await api.set(last);
    return {before, last};
}"""


def test_two_pages_in_live_code_each_have_a_kernel_with_their_own_names(bt, browser, site_url, tmp_path):
    """Pages 4.1 and 4.2 in two tabs, Live code started on both at once: after both pages' run-throughs, each
    tab's kernel holds the names its own page's cells define and not the other's, a name one tab sets is not seen
    by the other, the server holds two sessions (one kernel each) under the two notebooks' paths, and each page's
    explorer gets the settings it asks for from its own kernel (every control at its last option)."""
    docs = [DOC, DOC_4_2]
    names = tuple(OWN_NAMES[d] for d in docs)
    with jupyter_server(tmp_path, site_url, bt.ARTIFACTS / "live-code-two-pages-server.log") as (server, token):
        first, log = bt.new_page(browser, 1280, 1000)
        second = first.context.new_page()  # a second tab of the same browser window
        second.on("pageerror", lambda e: log.page_errors.append(str(e)))
        second.on("console", lambda m: log.console_errors.append(m.text) if m.type == "error" else None)
        pages = dict(zip(docs, (first, second), strict=True))
        try:
            for doc, page in pages.items():
                page.goto(f"{bt.page_url(site_url, doc)}#toy-live-server={server}&toy-live-token={token}")
                page.wait_for_selector(".toy-live-button")
            for page in pages.values():  # both run-throughs at once
                page.click(".toy-live-button")
            for page in pages.values():
                page.wait_for_function("() => document.documentElement.dataset.toyLive === 'live'",
                                       timeout=240_000)
            sessions = json.loads(urllib.request.urlopen(urllib.request.Request(
                f"{server}/api/sessions", headers={"Authorization": f"token {token}"}), timeout=10).read())
            probe = {doc: cell_index(page, PROBE_CELLS[doc]) for doc, page in pages.items()}
            said = []  # 4.1 sets its owner, then 4.2 looks and sets its own, then 4.1 looks again
            for doc in (DOC, DOC_4_2, DOC):
                said.append(pages[doc].evaluate(RUN_PROBE_JS, [probe[doc], PROBE.format(names=names, doc=doc)]))
            moved = {}
            for doc, page in pages.items():  # the first explorer a cell showed (the kernel's page view)
                eid = page.evaluate(KERNEL_EXPLORER_JS)
                assert eid, f"{doc}: the first explorer a cell showed is not the kernel's page view"
                initial = bt.read_explorer(page, eid, 1)
                got = page.evaluate(EXTREMES_JS, eid)
                moved[doc] = {**got, "initial": initial, "spec": bt.explorer_spec(page, eid),
                              "read": bt.read_explorer(page, eid, got["before"] + 1),
                              "status": page.evaluate("id => document.getElementById(id).dataset.kernel || null", eid)}
        finally:
            bt.close(first)

    assert said == [f"probe None ['{OWN_NAMES[DOC]}']", f"probe None ['{OWN_NAMES[DOC_4_2]}']",
                    f"probe '{DOC}' ['{OWN_NAMES[DOC]}']"], said
    paths = sorted(s_["path"] for s_ in sessions)
    assert len(paths) == 2 and paths[0].endswith("4.1-formal-mapping.ipynb") \
        and paths[1].endswith("4.2-easy-and-hard.ipynb"), sessions
    assert len({s_["kernel"]["id"] for s_ in sessions}) == 2, sessions
    for doc, got in moved.items():
        assert got["status"] is None, f"{doc}: the explorer says {got['status']!r}"
        assert got["read"]["state"] == got["last"], (doc, got["read"]["state"])
        match = bt.match_explorer(doc, got["spec"], got["initial"])
        traces, _ = bt.expected(match.explorer, got["last"])
        assert bt.close_enough(traces, got["read"]["traces"]), f"{doc}: the figure at the extremes is not toy's"
    assert log.problems() == [], "\n".join(log.problems())


FAKE_KERNEL_JS = """() => {
    // A kernel as toy-explorer.js sees it (window.toyLiveKernel): its comm answers from the test process
    // (window.toyTestAnswer, toy.page.explorer.page_answer), and it can die.
    const handlers = [];
    const fake = {
        dead: false, asked: 0,
        statusChanged: {connect: fn => handlers.push(fn)},
        createComm(target) {
            if (fake.dead) throw new Error('Kernel is dead');
            const comm = {
                isDisposed: false, onMsg: null, onClose: null,
                open: () => ({done: Promise.resolve()}),
                send(data) {
                    if (fake.dead) throw new Error('Kernel is dead');
                    fake.asked += data.states.length;
                    window.toyTestAnswer(target, data).then(reply => comm.onMsg({content: {data: reply}}));
                    return {done: Promise.resolve()};
                },
                close() { comm.isDisposed = true; return {done: Promise.resolve()}; },
            };
            return comm;
        },
        die() { fake.dead = true; handlers.forEach(fn => fn(fake, 'dead')); },
    };
    window.toyTestKernel = fake;
    window.toyLiveKernel = () => fake;
}"""
SHOW_JS = """async html => {
    // Show an explorer as a Live code cell's output does, at the top of the article; its id once it is ready.
    const out = document.createElement('div');
    out.setAttribute('data-output', '');
    out.innerHTML = html;
    document.querySelector('main article').prepend(out);
    scrollTo(0, 0);
    const el = out.querySelector('.toy-explorer');
    const start = performance.now();
    while (el.dataset.ready !== 'true') {
        if (performance.now() - start > 20000) throw new Error('the explorer did not start');
        await new Promise(r => setTimeout(r, 10));
    }
    return el.id;
}"""
FAILED_JS = """async ([id, indices]) => {
    // Set a setting; the explorer's state once it has failed (or drawn), within 5 s.
    const api = window.toyExplorers[id], el = document.getElementById(id);
    const before = api.redraws();
    delete el.dataset.kernel;  // so that only a failure of this setting sets it again
    api.set(indices);
    const start = performance.now();
    while (el.dataset.kernel !== 'failed' && api.redraws() === before && performance.now() - start < 5000) {
        await new Promise(r => setTimeout(r, 10));
    }
    return {kernel: el.dataset.kernel || null, redrew: api.redraws() > before, ms: performance.now() - start,
            status: el.querySelector('.toy-explorer-status').textContent, known: api.known()};
}"""


def test_a_page_view_computes_each_setting_once_and_says_when_its_kernel_cannot(bt, browser, site_url):
    """Figure 4.1's page view (what a Live code cell shows) on the built page, its kernel played by the test
    process: shown at once with only its default setting, it gets every other setting it shows from the kernel
    (every control at its last option: toy's numbers), each once; when the kernel dies, a new setting says why
    within a second instead of waiting, a setting it has still redraws, and with no kernel at all it says so."""
    import toy
    from toy.page import explorer as E

    ex = toy.explorers.credit_assignment(prompt=2)
    E._PAGE_VIEWS["browser-test"] = ex
    page, log = bt.new_page(browser, 1280, 1000)
    try:
        page.expose_function("toyTestAnswer", lambda target, data: E.page_answer(
            "browser-test" if target == E.COMM_TARGET else None, data))
        page.goto(bt.page_url(site_url, DOC))
        page.wait_for_function("() => document.readyState === 'complete'")
        page.evaluate(FAKE_KERNEL_JS)
        view = ex._html(ex.page_payload("browser-test"))  # what the kernel sends (page_html, under this key)
        eid = page.evaluate(SHOW_JS, view)
        initial = bt.read_explorer(page, eid, 1)
        spec = bt.explorer_spec(page, eid)
        last = {c.name: len(c.values) - 1 for c in ex.static_controls}
        page.evaluate("([id, s]) => window.toyExplorers[id].set(s)", [eid, last])
        extremes = bt.read_explorer(page, eid, initial["redraws"] + 1)
        page.wait_for_timeout(300)  # the neighbours it asks for after each redraw
        asked = page.evaluate("() => window.toyTestKernel.asked")
        default = {c.name: c.default for c in ex.static_controls}
        page.evaluate("([id, s]) => window.toyExplorers[id].set(s)", [eid, default])
        back = bt.read_explorer(page, eid, extremes["redraws"] + 1)
        page.wait_for_timeout(300)
        asked_again = page.evaluate("() => window.toyTestKernel.asked")
        page.evaluate("() => window.toyTestKernel.die()")
        dead = page.evaluate(FAILED_JS, [eid, {**last, "temperature": 0}])
        known = page.evaluate(FAILED_JS, [eid, last])
        page.evaluate("() => { window.toyLiveKernel = undefined; }")
        none = page.evaluate(FAILED_JS, [page.evaluate(SHOW_JS, view), {**last, "preset": 0}])
    finally:
        bt.close(page)
        E._PAGE_VIEWS.pop("browser-test", None)

    assert spec["kernel"] == {"target": E.COMM_TARGET, "key": "browser-test"}
    traces, _ = bt.expected(ex, last)
    assert extremes["state"] == last and bt.close_enough(traces, extremes["traces"]), "not toy's figure at the ends"
    traces, _ = bt.expected(ex, default)
    assert bt.close_enough(traces, back["traces"]) and bt.close_enough(traces, initial["traces"])
    assert 0 < asked and asked_again == asked, "a setting the page has must not be asked for again"
    assert dead["kernel"] == "failed" and not dead["redrew"] and dead["ms"] < 1000, dead
    assert "could not be computed" in dead["status"] and "dead" in dead["status"], dead
    assert known["redrew"] and known["kernel"] is None and known["status"] == "", known
    assert none["kernel"] == "failed" and "no kernel is connected" in none["status"], none
    assert log.problems() == [], "\n".join(log.problems())


OUTPUT_FAR_DOWN_JS = """html => {
    // An explorer as a Live code cell's output shows it, at the foot of the article (screens below the top, where the
    // page stays): its element.
    const out = document.createElement('div');
    out.setAttribute('data-output', '');
    out.innerHTML = html;
    document.querySelector('main article').append(out);
    scrollTo(0, 0);
    return out.querySelector('.toy-explorer').id = 'far-' + document.querySelectorAll('[data-output]').length;
}"""


def test_a_cell_the_reader_runs_in_live_code_starts_its_explorer_at_once(bt, browser, site_url):
    """Issue 42: a re-run explorer cell's new explorer waited for IntersectionObserver (a rendering frame or more,
    29 to 44 ms median and up to 220 ms in bench_live_code.py) before its script started. Once Live code is live
    (its first run-through over), an explorer put into a cell's output starts at once, wherever it is; during the
    run-through, and on the page as built, explorers start as they come near the screen, as before."""
    from toy.page.explorers import ALL

    view = ALL["staleness"]().static_html()  # a small grid: quick to compute
    page, log = bt.new_page(browser, 1280, 1000)
    try:
        page.goto(bt.page_url(site_url, DOC))
        page.wait_for_function("() => document.readyState === 'complete'")
        far = page.evaluate("() => document.querySelector('main article').getBoundingClientRect().height")
        lazy = page.evaluate(OUTPUT_FAR_DOWN_JS, view)  # not live: as the run-through shows a cell's output
        page.evaluate("() => { document.documentElement.dataset.toyLive = 'live'; }")
        ran = page.evaluate(OUTPUT_FAR_DOWN_JS, view)  # live: a cell the reader ran
        page.wait_for_function("id => document.getElementById(id).dataset.ready === 'true'", arg=ran, timeout=20_000)
        page.wait_for_timeout(500)
        started = page.evaluate("ids => ids.map(id => document.getElementById(id).dataset.started || null)",
                                [lazy, ran])
        scrolled = page.evaluate("() => scrollY")
    finally:
        bt.close(page)
    assert far > 3000 and scrolled == 0, (far, scrolled)  # both far below the screen, never scrolled to
    assert started == [None, "true"], started
    assert log.problems() == [], "\n".join(log.problems())


def _temperature_cell() -> str:
    nb = json.loads((Path(__file__).resolve().parents[2] / f"{DOC}.ipynb").read_text())
    for cell in nb["cells"]:
        source = "".join(cell["source"])
        if cell["cell_type"] == "code" and TEMPERATURES_CELL in source:
            return source
    raise AssertionError(f"{DOC}: no code cell holds {TEMPERATURES_CELL!r}")



def test_live_code_without_a_server_says_so_within_10_s(bt, browser, site_url):
    """No Jupyter server answers (a closed port; the book's configured one is not running) and Binder is out of
    reach (the test aborts every request that leaves 127.0.0.1): a clear message within 10 s, the page unchanged."""
    closed = f"http://127.0.0.1:{bt.free_port()}"
    page, log = bt.new_page(browser, 1280, 900)
    try:
        page.goto(f"{bt.page_url(site_url, DOC)}#toy-live-server={closed}&toy-live-token=nothing")
        bt.settle(page)
        bt.quiet(page, log)
        start = time.monotonic()
        page.click(".toy-live-button")
        page.wait_for_function("() => document.querySelector('.toy-live').dataset.state === 'error'", timeout=10_000)
        elapsed = time.monotonic() - start
        message = page.locator(".toy-live-status").text_content()
        enabled = page.locator(".toy-live-button").is_enabled()
        eid = bt.explorer_ids(page)[0]
        initial = bt.read_explorer(page, eid, 1)
        control = initial["state"]
        name = next(iter(control))
        page.focus(f"#{eid}-{name}")
        page.keyboard.press("End")
        moved = bt.read_explorer(page, eid, initial["redraws"] + 1)
        loaded = page.evaluate(THEBE_LOADED_JS)
        readable = page.evaluate("""() => {
            const shown = el => el && el.getBoundingClientRect().height > 0
                && getComputedStyle(el).visibility !== 'hidden';
            const status = document.querySelector('.toy-live-status');
            return shown(document.querySelector('article section > h1')) && shown(status)
                && status.closest('section') !== null && document.querySelectorAll('article p').length > 10;
        }""")
        page.evaluate("() => scrollTo(0, 0)")
        page.screenshot(path=str(bt.ARTIFACTS / "live-code-no-server.png"))
        bt.save_artifact("live-code-no-server.txt", message)
    finally:
        bt.close(page)

    assert elapsed <= 10, f"the message took {elapsed:.1f} s"
    assert "could not start" in message and closed in message and "scripts/live.sh" in message, message
    assert ("Binder" in message) == bool(BOOK_REPOSITORY), message
    assert enabled and readable
    assert loaded["files"] == [] and not loaded["thebe"], "Thebe must not load when no kernel answered"
    assert moved["redraws"] > initial["redraws"], "the page's explorers must keep working"
    # What failed is exactly the asking: the closed server, the book's configured server, Binder's health check.
    probes = [u for u in log.requests if u.endswith("/api/status") or u.endswith("/health")]
    assert all(u.startswith("http://127.0.0.1:") for u in log.failed if "/api/status" in u), log.failed
    assert [u for u in log.external if not u.endswith("/health")] == [], log.external
    assert all(any(p in f for p in probes) for f in log.failed), log.failed
    assert log.page_errors == [], log.page_errors
    assert all("ERR_CONNECTION_REFUSED" in e or "/health" in e or "net::" in e for e in log.console_errors), \
        log.console_errors


def test_a_tab_without_the_token_says_the_server_wants_the_link_live_sh_printed(bt, browser, site_url, tmp_path):
    """A second tab, opened at the page's plain address while scripts/live.sh runs: the server is there but refuses
    a request without its token (with no CORS header, so the page sees no answer). The page says the server is
    running and wants the link scripts/live.sh printed, not that it did not answer."""
    with jupyter_server(tmp_path, site_url, bt.ARTIFACTS / "live-code-no-token.log") as (server, _token):
        page, log = bt.new_page(browser, 1280, 900)
        try:
            page.goto(f"{bt.page_url(site_url, DOC)}#toy-live-server={server}")  # the server, not its token
            bt.settle(page)
            bt.quiet(page, log)
            page.click(".toy-live-button")
            page.wait_for_function("() => document.querySelector('.toy-live').dataset.state === 'error'",
                                   timeout=15_000)
            message = page.locator(".toy-live-status").text_content()
            loaded = page.evaluate(THEBE_LOADED_JS)
        finally:
            bt.close(page)
    assert f"{server}: it is running but wants its token: open the link that scripts/live.sh printed" in message, \
        message
    assert loaded["files"] == [] and not loaded["thebe"]


def test_live_sh_serves_the_book_and_a_server_for_its_origin_only(bt, built_site):
    """The documented command itself: it prints a link with a fresh token; its Jupyter server answers the book's
    origin (CORS) with that token, refuses requests without it, and names no other origin."""
    book_port, jupyter_port = bt.free_port(), bt.free_port()
    env = {**os.environ, "BOOK_DIR": str(built_site), "BOOK_PORT": str(book_port), "JUPYTER_PORT": str(jupyter_port),
           "JUPYTER_RUNTIME_DIR": str(built_site.parent / ".live-sh-runtime")}
    proc = subprocess.Popen(["bash", str(bt.ROOT / "scripts" / "live.sh")], env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True, start_new_session=True)
    lines = []
    try:
        deadline = time.monotonic() + 90
        while not any("toy-live-token=" in line for line in lines):
            assert time.monotonic() < deadline and proc.poll() is None, "".join(lines)
            lines.append(proc.stdout.readline())
        link = next(line.strip() for line in lines if "toy-live-token=" in line)
        token = link.split("toy-live-token=")[1]
        book, server = f"http://127.0.0.1:{book_port}", f"http://127.0.0.1:{jupyter_port}"

        def get(url, headers):
            request = urllib.request.Request(url, headers=headers)
            try:
                with urllib.request.urlopen(request, timeout=5) as r:
                    return r.status, r.headers.get("Access-Control-Allow-Origin")
            except urllib.error.HTTPError as err:
                return err.code, err.headers.get("Access-Control-Allow-Origin")

        for _ in range(100):  # the server may still be starting
            try:
                urllib.request.urlopen(f"{server}/api", timeout=2)
                break
            except OSError:
                time.sleep(0.3)
        with_token = get(f"{server}/api/status", {"Origin": book, "Authorization": f"token {token}"})
        without = get(f"{server}/api/status", {"Origin": book})
        page = get(link.split("#")[0], {})
    finally:
        os.killpg(proc.pid, signal.SIGTERM)
        proc.wait(timeout=30)

    assert link.startswith(f"{book}/chapters/") and f"toy-live-server={server}" in link, link
    assert len(token) >= 32
    assert with_token == (200, book), with_token
    assert without[0] in (401, 403), without
    assert page[0] == 200


def test_a_build_without_thebe_says_live_code_is_unavailable(bt, browser, site_url, tmp_path, monkeypatch):
    """A book built where npm was missing (its script's config says why Thebe is off, as toybook writes it): the
    button says so before and after it is pressed, and nothing is asked of any server."""
    import sys

    sys.path.insert(0, str(bt.ROOT / "book" / "_ext"))
    import toybook

    monkeypatch.setattr(toybook, "THEBE_DIR", tmp_path / "no-thebe")  # what the build writes without the bundle
    why = toybook._vendor_thebe(tmp_path / "site" / "thebe")
    page, log = bt.new_page(browser, 1280, 900)

    def without_thebe(route):
        html = route.fetch().text()
        on = '&quot;thebe&quot;: &quot;_static/thebe/index.js&quot;, &quot;off&quot;: null'
        assert on in html
        off = f'&quot;thebe&quot;: null, &quot;off&quot;: &quot;{why.replace(chr(39), "&#x27;")}&quot;'
        route.fulfill(body=html.replace(on, off), content_type="text/html")

    page.route(f"**/{DOC}.html", without_thebe)
    try:
        page.goto(bt.page_url(site_url, DOC))
        bt.settle(page)
        before = page.locator(".toy-live-status").text_content()
        page.click(".toy-live-button")
        page.wait_for_function("() => document.querySelector('.toy-live').dataset.state === 'error'", timeout=5_000)
        after = page.locator(".toy-live-status").text_content()
        bt.quiet(page, log)
    finally:
        bt.close(page)
    assert before.startswith("Live code is unavailable in this build") and "npm" in before, before
    assert after.startswith("Live code is unavailable in this build"), after
    assert not [u for u in log.requests if "/api/" in u or "/thebe/" in u or "/health" in u], log.requests
    assert log.problems() == [], log.problems()
