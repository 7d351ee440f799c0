"""Live code's explorer cell: how long a reader waits for Figure 4.1's explorer after re-running its cell, and where
that time goes.

Prints, asserting nothing, each figure with the machine's load average (``os.getloadavg``, as ``uptime`` shows it):

* **in the kernel** (Python only, no browser): a fresh kernel's start, ``import toy``, and the time to build and
  display Figure 4.1's explorer (``toy.explorers.credit_assignment(prompt=2)``) in the view Live code sets (read
  from the built site's ``toy-live.js`` prelude) and in JupyterLab's live ipywidgets view, for reference: the first
  display, and the same call displayed again (as a re-run cell does);
* **in the page** (headless Chromium), quiet and then beside ``--busy N`` busy loops (default 2;
  ``tests/conftest.py``'s ``busy_loops``): the built page 4.1 with a Jupyter server started as ``scripts/live.sh``
  starts one, and Live code pressed: its first press split into its steps (probing the server, loading Thebe and
  plotly.js, the kernel's start and connection with the prelude, every cell run once), from the status line's
  texts. Then the explorer cell re-run ``RERUNS`` times, each timed in the page from the click on its run button to
  the new explorer ready (its figure drawn: the page script sets ``data-ready`` after its first redraw), and split
  into ``RERUN_PARTS``: the page's side from every kernel message's send and arrival times (``anyMessage`` of
  Thebe's kernel connection) and the new explorer's moments in the page; the kernel's side from the messages'
  header dates and from timing wrappers the benchmark puts into the kernel (``KERNEL_PROBE``) around building the
  explorer, ``Explorer.evaluate`` (toy's arithmetic) and ``Explorer.page_html``. After each re-run its temperature
  is moved with the keyboard, timed from the key press to the redraw done: one step (a neighbour of the setting
  shown, there already), then to the far end of the slider (a round trip to the kernel, split in the same way).

Target (issue 33): a re-run shows its figure within 3 s. Timings depend on the machine and its load.

Run: .venv/bin/python benchmarks/bench_live_code.py [--busy N]    (builds the book into a temporary folder first;
     set TOY_BUILT_SITE=/path/to/_build/html to use an existing build, e.g. scripts/book.sh's _build/html)
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import secrets
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # the browser helpers live with the browser tests

from bench_browser import built_site, serve  # noqa: E402  (this folder is on sys.path when run as a script)

from tests.browser import conftest as bt  # noqa: E402

DOC = "chapters/04-the-llm-as-a-policy/4.1-formal-mapping"
EXPLORER_CELL = "toy.explorers.credit_assignment(prompt=x)"
RERUNS = 5
TARGET_S = 3.0

KERNEL_CODE = """
import time
t0 = time.perf_counter()
import toy
t1 = time.perf_counter()
from IPython.display import display
display(toy.explorers.credit_assignment(prompt=2))
t2 = time.perf_counter()
display(toy.explorers.credit_assignment(prompt=2))
t3 = time.perf_counter()
print(f"{t1 - t0:.3f} {t2 - t1:.3f} {t3 - t2:.3f}")
"""

# Set up once the page is live: every message to and from the kernel (anyMessage: direction, type, the sender's
# header date, the time the page sent or received it) and the moments a new explorer enters the page, is started by
# the page script and is drawn, all on one clock (milliseconds since 1970, as the kernel's header dates).
INSTRUMENT_JS = """() => {
    const now = () => performance.timeOrigin + performance.now();
    window.toyBench = {messages: [], explorers: new Map()};
    window.toyLiveKernel().anyMessage.connect((_k, a) => {
        const m = a.msg, c = m.content || {};
        const html = (c.data || {})['text/html'] || '';
        window.toyBench.messages.push({t: now(), dir: a.direction, type: m.header.msg_type,
            date: Date.parse(m.header.date), id: m.header.msg_id, parent: (m.parent_header || {}).msg_id,
            state: c.execution_state, explorer: html.includes('toy-explorer'), bytes: JSON.stringify(c).length});
    });
    const mark = (el, what) => {
        const e = window.toyBench.explorers.get(el) || {};
        if (!(what in e)) e[what] = now();
        window.toyBench.explorers.set(el, e);
    };
    new MutationObserver((records) => records.forEach((r) => {
        if (r.type === 'attributes') { mark(r.target, r.attributeName); return; }
        r.addedNodes.forEach((n) => {
            if (n.nodeType !== 1) return;
            const found = n.matches('.toy-explorer') ? [n] : [...n.querySelectorAll('.toy-explorer')];
            found.forEach((el) => mark(el, 'dom'));
        });
    })).observe(document.body, {childList: true, subtree: true, attributes: true,
                                attributeFilter: ['data-started', 'data-ready']});
}"""

RERUN_JS = """async k => {
    // Click the k-th cell's run button; the time until a new explorer in its output is ready (figure drawn), and
    // what happened meanwhile (the messages and the explorer's moments recorded by INSTRUMENT_JS).
    const now = () => performance.timeOrigin + performance.now();
    const out = document.querySelectorAll('[data-output]')[k];
    const cell = document.querySelectorAll('.thebe-cell')[k];
    cell.scrollIntoView({block: 'start'});
    const old = out.querySelector('.toy-explorer');
    window.toyBench.messages.length = 0;
    const t0 = now();
    cell.querySelector('.thebe-run-button').click();
    for (;;) {
        const ex = out.querySelector('.toy-explorer[data-ready="true"]');
        if (ex && ex !== old) {
            // drawn when data-ready was set (INSTRUMENT_JS's record), not when this loop saw it
            const t1 = (window.toyBench.explorers.get(ex) || {})['data-ready'] || now();
            // the kernel's reply to the cell may come after the figure is drawn: wait for it (not timed)
            const replied = () => window.toyBench.messages.some((m) => m.type === 'execute_reply');
            while (!replied() && now() - t1 < 60000) await new Promise(r => setTimeout(r, 5));
            return {t0, t1, id: ex.id, moments: window.toyBench.explorers.get(ex) || {},
                    messages: window.toyBench.messages.slice()};
        }
        if (now() - t0 > 180000) throw new Error('no explorer after 180 s');
        await new Promise(r => setTimeout(r, 5));
    }
}"""

# The kernel's side of a re-run, recorded by wrappers around what the explorer cell calls (benchmark only: a few
# microseconds each): building the explorer (its plotly figure), toy's arithmetic for the setting shown
# (Explorer.evaluate), and the page view's HTML (the payload: the arithmetic, the figure as JSON). Time.time() in ms.
KERNEL_PROBE = """
import time as _bench_time, functools as _bench_functools
import toy as _bench_toy
from toy.page import explorer as _bench_explorer
_BENCH = []
def _bench_wrap(owner, name, label):
    inner = getattr(owner, name)
    if getattr(inner, "_bench", False):
        return
    @_bench_functools.wraps(inner)
    def timed(*args, **kwargs):
        t0 = _bench_time.time() * 1000
        try:
            return inner(*args, **kwargs)
        finally:
            _BENCH.append((label, t0, _bench_time.time() * 1000))
    timed._bench = True
    setattr(owner, name, timed)
_bench_wrap(_bench_toy.explorers, "credit_assignment", "build")
_bench_wrap(_bench_explorer.Explorer, "evaluate", "arithmetic")
_bench_wrap(_bench_explorer.Explorer, "page_html", "html")
"""
KERNEL_READ = "import json as _bench_json; print(_bench_json.dumps(_BENCH)); _BENCH.clear()"

READ_JS = """async code => {
    const lines = [];
    const future = window.toyLiveKernel().requestExecute({code, silent: false, store_history: false});
    future.onIOPub = (m) => { if (m.header.msg_type === 'stream') lines.push(m.content.text); };
    await future.done;
    return lines.join('');
}"""

def live_code_prelude(site: Path) -> str:
    """The code Live code runs in the kernel before any cell (the built site's toy-live.js): the string literals of
    ``const PRELUDE = '...' + '...';`` joined (the prelude is written over several lines since bc6fc7a)."""
    js = (site / "_static" / "toy" / "toy-live.js").read_text()
    found = re.search(r"const PRELUDE =((?:\s*'(?:[^'\\\n]|\\.)*'\s*\+?)+)\s*;", js)
    if not found:
        raise RuntimeError(f"no `const PRELUDE = '...';` in {site / '_static' / 'toy' / 'toy-live.js'}")
    parts = re.findall(r"'((?:[^'\\\n]|\\.)*)'", found.group(1))
    return "".join(part.encode().decode("unicode_escape") for part in parts)


def kernel_times(prelude: str) -> tuple[float, list[float]]:
    """The kernel's start (until it answers), and (import toy, first display, second display) in seconds, in a fresh
    kernel after ``prelude``."""
    from jupyter_client.manager import start_new_kernel

    with tempfile.TemporaryDirectory(prefix="bench-kernel-") as tmp:
        env = bt.jupyter_env(Path(tmp))
        t0 = time.perf_counter()
        km, kc = start_new_kernel(kernel_name="python3", env=env, cwd=tmp)
        started = time.perf_counter() - t0
        try:
            lines = []

            def out(msg):
                if msg["header"]["msg_type"] == "stream":
                    lines.append(msg["content"]["text"])
                elif msg["header"]["msg_type"] == "error":
                    lines.append("\n".join(msg["content"]["traceback"]))

            kc.execute_interactive(prelude + KERNEL_CODE, timeout=600, output_hook=out)
            text = "".join(lines).strip()
            try:
                return started, [float(x) for x in text.splitlines()[-1].split()]
            except (ValueError, IndexError):
                raise RuntimeError(f"the kernel said:\n{text}") from None
        finally:
            kc.stop_channels()
            km.shutdown_kernel(now=True)


@contextlib.contextmanager
def jupyter_server(root: Path, origin: str):
    """A Jupyter server as scripts/live.sh starts one (a fresh token, the book's origin only): yields (url, token)."""
    port, token = bt.free_port(), secrets.token_hex(16)
    cmd = [str(Path(sys.executable).with_name("jupyter-server")), "--no-browser", "--allow-root", "--ip=127.0.0.1",
           f"--port={port}", "--ServerApp.port_retries=0", f"--IdentityProvider.token={token}",
           f"--ServerApp.allow_origin={origin}", f"--ServerApp.root_dir={root}"]
    url = f"http://127.0.0.1:{port}"
    with bt.running_server(cmd, root, bt.jupyter_env(root / ".server-state"), root / "server.log", f"{url}/api",
                           "the Jupyter server", 90):
        yield url, token


FOCUS_JS = """id => {
    document.getElementById(id + '-temperature').focus();
    window.toyBench.messages.length = 0;
    return [window.toyExplorers[id].redraws(), performance.timeOrigin + performance.now()];
}"""

WAIT_JS = """async ([id, n]) => {
    const api = window.toyExplorers[id];
    const start = performance.now();
    while (api.redraws() < n) {
        if (performance.now() - start > 60000) throw new Error('no redraw after 60 s');
        await new Promise(r => setTimeout(r, 1));
    }
    return [performance.timeOrigin + performance.now(), window.toyBench.messages.slice()];
}"""

# The Live code status line's texts as they change, with the time of each (the first press's steps)
STATUS_JS = """() => {
    window.toyStatus = [];
    const el = document.querySelector('.toy-live-status');
    const record = () => window.toyStatus.push([performance.timeOrigin + performance.now(), el.textContent]);
    new MutationObserver(record).observe(el, {childList: true, subtree: true, characterData: true});
}"""
FIRST_STEPS = (("probe the server", "Asking"), ("load Thebe and plotly.js", "Loading Live code"),
               ("kernel start, connect, prelude", "Connecting"), ("run every cell once", "Running the page"),
               ("", "Live code on"))

# The parts of a re-run (click -> new figure drawn), in order; each is the time between two moments
RERUN_PARTS = (
    ("click -> request sent", "page: Thebe takes the click, clears the output, sends execute_request"),
    ("request -> kernel starts the cell", "server and ZeroMQ, and the kernel taking it (status busy)"),
    ("kernel: build the explorer", "toy.explorers.credit_assignment: its plotly figure, controls"),
    ("kernel: toy's arithmetic", "Explorer.evaluate for the setting shown"),
    ("kernel: page view's payload", "page_html less the arithmetic: figure as JSON, payload, HTML"),
    ("kernel: rest of the cell", "IPython: compile, display formatters, anything not above"),
    ("output -> page", "display_data from the kernel to the page (its size beside)"),
    ("page: output -> explorer in page", "Thebe renders the output into the cell"),
    ("page: explorer in page -> started", "toy-explorer.js notices it (MutationObserver, IntersectionObserver)"),
    ("page: started -> figure drawn", "spec read, data decoded, plotly's first draw"),
)


def rerun_parts(got: dict, kernel: list) -> tuple[dict[str, float], int]:
    """A re-run's parts (ms, RERUN_PARTS's keys) from the page's record and the kernel's (label, t0, t1) list; and
    the size of the explorer's output message (bytes of its JSON content)."""
    msgs = got["messages"]
    req = next(m for m in msgs if m["dir"] == "send" and m["type"] == "execute_request")
    mine = [m for m in msgs if m["dir"] == "recv" and m["parent"] == req["id"]]
    busy = next(m for m in mine if m["state"] == "busy")
    out = next(m for m in mine if m["explorer"])
    reply = next(m for m in mine if m["type"] == "execute_reply")
    # the kernel's records of this cell (the page's requests for neighbouring settings come after its reply)
    within = [(label, a, b) for label, a, b in kernel if busy["date"] - 1 <= a and b <= reply["date"] + 1]
    total = {label: sum(b - a for lab, a, b in within if lab == label) for label in ("build", "arithmetic", "html")}
    # ipykernel dates a result's message when it starts formatting it (page_html runs after): sent at the later
    sent = max([out["date"]] + [b for label, _a, b in within if label == "html"])
    moments = got["moments"]
    dom = moments.get("dom", out["t"])
    started = moments.get("data-started", dom)
    parts = {
        "click -> request sent": req["t"] - got["t0"],
        "request -> kernel starts the cell": busy["date"] - req["t"],
        "kernel: build the explorer": total["build"],
        "kernel: toy's arithmetic": total["arithmetic"],
        "kernel: page view's payload": total["html"] - total["arithmetic"],
        "kernel: rest of the cell": sent - busy["date"] - total["build"] - total["html"],
        "output -> page": out["t"] - sent,
        "page: output -> explorer in page": dom - out["t"],
        "page: explorer in page -> started": started - dom,
        "page: started -> figure drawn": got["t1"] - started,
    }
    return parts, out["bytes"]


def move_parts(t0: float, t1: float, msgs: list) -> dict[str, float] | None:
    """A control move that asked the kernel: key -> request sent -> kernel answered -> answer in the page -> drawn
    (ms); None when the move needed no kernel (its setting was there already)."""
    ask = next((m for m in msgs if m["dir"] == "send" and m["type"] == "comm_msg"), None)
    if ask is None:
        return None
    answer = next((m for m in msgs if m["dir"] == "recv" and m["type"] == "comm_msg" and m["t"] > ask["t"]), None)
    if answer is None:
        return None
    return {"key -> request sent": ask["t"] - t0, "request -> kernel's answer sent": answer["date"] - ask["t"],
            "answer -> page": answer["t"] - answer["date"], "answer in page -> redraw done": t1 - answer["t"]}


def load() -> str:
    one, five, fifteen = os.getloadavg()
    return f"load {one:.1f} {five:.1f} {fifteen:.1f}"


def bench_page(browser, site_url: str) -> dict:
    """One Live code session on page 4.1: its first press's steps, then RERUNS re-runs of the explorer cell (each
    split into RERUN_PARTS) with a step and a jump of the temperature after each. The load beside each figure."""
    res = {"first": {}, "reruns": [], "parts": [], "bytes": [], "steps": [], "jumps": [], "jump_parts": [],
           "loads": []}
    with tempfile.TemporaryDirectory(prefix="bench-live-code-") as tmp, \
            jupyter_server(Path(tmp), site_url) as (server, token):
        page, log = bt.new_page(browser, 1280, 1000)
        try:
            page.goto(f"{bt.page_url(site_url, DOC)}#toy-live-server={server}&toy-live-token={token}")
            bt.settle(page)
            page.evaluate(STATUS_JS)
            start = time.time() * 1000
            res["first_load"] = load()
            page.click(".toy-live-button")
            page.wait_for_function("() => document.documentElement.dataset.toyLive === 'live'", timeout=600_000)
            status = page.evaluate("() => window.toyStatus")
            seen = [(label, next((t for t, text in status if text.startswith(prefix)), None))
                    for label, prefix in FIRST_STEPS]
            res["first"]["total"] = page.evaluate("() => performance.timeOrigin + performance.now()") - start
            for (label, t), (_next, t_next) in zip(seen, seen[1:], strict=False):
                if label and t is not None and t_next is not None:
                    res["first"][label] = t_next - t
            k = page.evaluate("""needle => [...document.querySelectorAll('.thebe-cell')]
                .findIndex(c => c.querySelector('.thebe-input').textContent.includes(needle))""", EXPLORER_CELL)
            assert k >= 0, f"no Live code cell holds {EXPLORER_CELL!r}"
            page.evaluate(INSTRUMENT_JS)
            page.evaluate(READ_JS, KERNEL_PROBE)
            for n in range(RERUNS):
                page.evaluate(READ_JS, KERNEL_READ)  # empties the kernel's record
                res["loads"].append(os.getloadavg()[0])
                got = page.evaluate(RERUN_JS, k)
                res["reruns"].append((got["t1"] - got["t0"]) / 1000)
                page.wait_for_timeout(300)
                kernel = json.loads(page.evaluate(READ_JS, KERNEL_READ) or "[]")
                parts, size = rerun_parts(got, kernel)
                res["parts"].append(parts)
                res["bytes"].append(size)
                eid = got["id"]
                for key, times in (("ArrowRight" if n % 2 == 0 else "ArrowLeft", res["steps"]),
                                   ("End" if n % 2 == 0 else "Home", res["jumps"])):
                    before, t0 = page.evaluate(FOCUS_JS, eid)
                    page.keyboard.press(key)
                    t1, msgs = page.evaluate(WAIT_JS, [eid, before + 1])
                    times.append(t1 - t0)
                    if times is res["jumps"]:
                        res["jump_parts"].append(move_parts(t0, t1, msgs))
                    page.wait_for_timeout(300)
        finally:
            bt.close(page)
    if log.problems():
        print("  page problems:", log.problems())
    return res


def report(res: dict, label: str) -> None:
    loads = res["loads"]
    print(f"\nLive code on page 4.1, {label} (headless Chromium; load average 1 min {min(loads):.1f} to "
          f"{max(loads):.1f} during the re-runs; {res['first_load']} at the press):")
    first = res["first"]
    print(f"  the first press -> every cell run once: {first['total'] / 1000:.1f} s  ("
          + ", ".join(f"{k} {v / 1000:.1f} s" for k, v in first.items() if k != "total") + ")")
    reruns = res["reruns"]
    print(f"  re-run of the explorer cell -> figure drawn: median {statistics.median(reruns):.2f} s, min "
          f"{min(reruns):.2f} s, max {max(reruns):.2f} s (n = {len(reruns)})   target <= {TARGET_S:g} s: "
          f"{'ok' if max(reruns) <= TARGET_S else 'MISSED'}")
    print("  where a re-run's time goes (median of the re-runs, ms):")
    for key, what in RERUN_PARTS:
        values = [p[key] for p in res["parts"]]
        extra = f"  ({statistics.median(res['bytes']) / 1000:.0f} kB)" if key == "output -> page" else ""
        print(f"    {key:<36} {statistics.median(values):7.0f}  max {max(values):6.0f}   {what}{extra}")
    for name, times in (("one step (arrow key)", res["steps"]), ("to the far end (End/Home)", res["jumps"])):
        print(f"  then the temperature {name:<26} -> redraw done: median {statistics.median(times):5.0f} ms, "
              f"max {max(times):5.0f} ms (n = {len(times)})")
    jumps = [j for j in res["jump_parts"] if j]
    if jumps:
        print("    the far end's round trip (median, ms): " + ", ".join(
            f"{k} {statistics.median([j[k] for j in jumps]):.0f}" for k in jumps[0]))


def main() -> None:
    import argparse

    from playwright.sync_api import sync_playwright

    from tests.conftest import busy_loops

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--busy", type=int, default=2, help="busy loops for the second run (0: quiet run only)")
    args = parser.parse_args()
    with built_site() as site, serve(site) as site_url:
        prelude = live_code_prelude(site)
        view = re.search(r'TOY_EXPLORER_VIEW"\] = "(\w+)"', prelude).group(1)
        print(f"machine: {os.cpu_count()} cores; {load()} (1, 5, 15 min) as the benchmark starts")
        print("Figure 4.1's explorer built and displayed in a fresh kernel (Python side, seconds):")
        live = 'import os\nos.environ["TOY_EXPLORER_VIEW"] = "live"\n'
        for label, code in ((f"Live code's view ({view!r})", prelude), ("JupyterLab's live view ('live')", live)):
            started, (imp, once, again) = kernel_times(code)
            print(f"  {label:<34} kernel start {started:5.2f} s   import toy {imp:.2f} s   first display "
                  f"{once:6.2f} s   again {again:6.2f} s   ({load()})")
        runs = [("quiet", contextlib.nullcontext())]
        if args.busy:
            runs.append((f"beside {args.busy} busy loops", busy_loops(args.busy)))
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=bt.CHROMIUM, args=bt.CHROMIUM_FLAGS)
            try:
                for label, around in runs:
                    with around:
                        report(bench_page(browser, site_url), label)
            finally:
                browser.close()
    print(f"\n{load()} after")


if __name__ == "__main__":
    main()
