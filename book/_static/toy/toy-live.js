// Live code: a button on every notebook page that turns the page's code cells into editable cells running on a
// Jupyter kernel (Thebe), their outputs replaced in place. Nothing of Thebe loads until the button is pressed.
//
// The kernel comes from, in order: the Jupyter server given by a link (scripts/live.sh prints one:
// #toy-live-server=...&toy-live-token=..., loopback addresses only; kept for this tab in sessionStorage), or the
// one named in the book's config (toy_live_server: scripts/live.sh's, or a course's JupyterHub server); then
// Binder for the published repository. Each is asked first (a few seconds at most), so when none answers the page
// says so within seconds and stays as it was built. The book's build writes this script's config into its
// data-toy-live attribute (book/_ext/toybook.py).
(function () {
  const script = document.currentScript;
  const config = JSON.parse(script.dataset.toyLive || "{}");
  const contentRoot = document.documentElement.dataset.content_root || "";
  const STORE = "toy-live";
  const PROBE_MS = 3000; // per server: a refused or silent server costs at most this
  const CONNECT_MS = 60000; // a server that answered must give a kernel within this (slow machines included)
  const BINDER_MS = 600000; // Binder may build an image first: minutes, with its progress shown
  // In the kernel, before any cell: explorers show the view this page can run (see the note added to them): the
  // page's view, with the setting on screen computed at once and each other one when the reader first chooses it
  // (toy-explorer.js asks the kernel through window.toyLiveKernel; toy/page/explorer.py's page view).
  // And the code exercises' checks run (only the book's build, which runs no reader's code, says "not run").
  const PRELUDE = 'import os\nos.environ["TOY_EXPLORER_VIEW"] = "page"  # Live code in the book: the page view\n' +
    'os.environ.pop("TOY_CHECKS", None)  # checks run here\n';
  const NOTE = "Live code re-ran this explorer in the kernel: it shows the page's view, each setting computed " +
    "by toy in this kernel when you first choose it. The live ipywidgets view needs JupyterLab's widget scripts, " +
    "which this page does not load (they would come from a CDN); open the notebook in JupyterLab or Binder for it.";

  function fromLink() {
    // A link from scripts/live.sh: #toy-live-server=http://127.0.0.1:8888&toy-live-token=...
    const params = new URLSearchParams(location.hash.slice(1));
    if (!params.has("toy-live-server") && !params.has("toy-live-token")) return;
    const saved = JSON.parse(sessionStorage.getItem(STORE) || "{}");
    const server = params.get("toy-live-server");
    if (server && isLoopback(server)) saved.server = server;
    if (params.has("toy-live-token")) saved.token = params.get("toy-live-token");
    sessionStorage.setItem(STORE, JSON.stringify(saved));
    history.replaceState(null, "", location.pathname + location.search); // the token leaves the address bar
  }

  function isLoopback(url) {
    try {
      return ["127.0.0.1", "localhost", "[::1]"].includes(new URL(url).hostname);
    } catch (e) {
      return false;
    }
  }

  function routes() {
    const saved = JSON.parse(sessionStorage.getItem(STORE) || "{}");
    const list = [];
    const servers = [saved.server, config.server].filter(Boolean).map((u) => u.replace(/\/+$/, ""));
    [...new Set(servers)].forEach((url) => {
      list.push({kind: "server", url, token: saved.token || "", label: `the Jupyter server at ${url}`});
    });
    if (config.binder) {
      const host = new URL(config.binder.url).host;
      list.push({kind: "binder", ...config.binder, label: `Binder (${host}, ${config.binder.repo})`});
    }
    return list;
  }

  function idleText() {
    // What Live code does and where its kernel comes from, in words a reader of the published book can act on. A
    // loopback server (scripts/live.sh's, the book's default) is named by its address only when a link from
    // scripts/live.sh gave it: the reader may run none, and scripts/live.sh's answers only the book it serves, opened
    // from that link. Without a link, the same words as book/_ext/toyhtml.py's live_status writes into the page as
    // built (tests/test_page_speed.py runs both).
    if (!config.thebe) return `Live code is unavailable in this build: ${config.off}.`;
    const does = "Live code turns this page's code cells into editors you can change and run in a Jupyter kernel; " +
      "figures and explorers redraw.";
    const linked = (JSON.parse(sessionStorage.getItem(STORE) || "{}").server || "").replace(/\/+$/, "");
    const server = (config.server || "").replace(/\/+$/, "");
    const local = Boolean(server) && isLoopback(server);
    const routes = [];
    if (linked) routes.push(`the Jupyter server at ${linked} (from your link)`);
    if (server && !local && server !== linked) routes.push(`the Jupyter server at ${server}`);
    if (config.binder) routes.push("Binder (which takes a minute or more to start)");
    if (!routes.length && !local) return `${does} No kernel is configured for this book.`;
    let said = routes.join(", else from ");
    if (local && !linked) {
      const here = "your computer: run bash scripts/live.sh in the book's repository and open the link it prints";
      said = said ? `${said}, or from ${here}` : here;
    }
    return `${does} Its kernel comes from ${said}.`;
  }

  async function timed(promise, ms, why) {
    let timer;
    const limit = new Promise((_, reject) => { timer = setTimeout(() => reject(new Error(why)), ms); });
    try {
      return await Promise.race([promise, limit]);
    } finally {
      clearTimeout(timer);
    }
  }

  async function probe(route) {
    // null if the route answers, else why not (in words for the reader)
    try {
      if (route.kind === "binder") {
        await fetchWithin(`${route.url}/health`, {mode: "no-cors"});
        return null;
      }
      const headers = route.token ? {Authorization: `token ${route.token}`} : {};
      const r = await fetchWithin(`${route.url}/api/status`, {headers});
      if (r.ok) return null;
      if (r.status === 401 || r.status === 403) {
        return `it answered but refused this page's token (open the link that scripts/live.sh printed)`;
      }
      return `it answered with HTTP ${r.status}`;
    } catch (e) {
      if (route.kind === "binder") return "it did not answer (offline?)";
      // A server that refuses a request without its token (or from another origin) answers with no CORS header,
      // which the page sees as no answer at all. An opaque request tells the two apart: it fails only when
      // nothing listens there.
      if (await running(route.url)) {
        return route.token ?
          "it is running but refused this page (open the link that scripts/live.sh printed, in this tab)" :
          "it is running but wants its token: open the link that scripts/live.sh printed (a tab opened " +
          "without it has no token)";
      }
      return "it did not answer (start one with: bash scripts/live.sh)";
    }
  }

  async function running(url) {
    // whether anything answers at url (an opaque no-cors request: no headers, no token, nothing read)
    try {
      await fetchWithin(`${url}/api/status`, {mode: "no-cors"});
      return true;
    } catch (e) {
      return false;
    }
  }

  async function fetchWithin(url, init) {
    // fetch, never from the cache, abandoned after PROBE_MS (a silent server costs no more)
    const ctrl = new AbortController();
    const timer = setTimeout(() => ctrl.abort(), PROBE_MS);
    try {
      return await fetch(url, {...init, signal: ctrl.signal, cache: "no-store"});
    } finally {
      clearTimeout(timer);
    }
  }

  function loadThebe() {
    return new Promise((resolve, reject) => {
      const css = document.createElement("link");
      css.rel = "stylesheet";
      css.href = contentRoot + config.thebe.replace(/index\.js$/, "thebe.css");
      document.head.append(css);
      const s = document.createElement("script");
      s.src = contentRoot + config.thebe;
      s.onload = () => (window.thebe ? resolve(window.thebe) : reject(new Error("Thebe did not start")));
      s.onerror = () => reject(new Error(`${s.src} did not load`));
      document.head.append(s);
    });
  }

  function markCells() {
    // Thebe pairs the n-th source with the n-th output placeholder: give every code cell one, empty if need be.
    let n = 0;
    document.querySelectorAll("div.cell").forEach((cell) => {
      const pre = cell.querySelector(":scope > .cell_input pre, :scope > details > .cell_input pre");
      if (!pre) return;
      pre.setAttribute("data-executable", "true");
      pre.setAttribute("data-language", "python");
      let out = cell.querySelector(":scope > .cell_output");
      if (!out) {
        out = document.createElement("div");
        out.className = "cell_output docutils container";
        cell.append(out);
      }
      out.setAttribute("data-output", "");
      cell.querySelectorAll("button.copybtn").forEach((b) => b.remove());
      n += 1;
    });
    return n;
  }

  function tuneCells() {
    // Thebe's buttons say "run": say what they run, for the eye and for a screen reader. Long lines wrap (an edit
    // never leaves the starts of lines scrolled out of view) and an editor grows with its code (every line drawn);
    // set on each editor, as Thebe 0.9 does not pass these options on.
    const cells = document.querySelectorAll(".thebe-cell");
    cells.forEach((cell, i) => {
      const cm = cell.querySelector(".CodeMirror")?.CodeMirror;
      if (cm) {
        cm.setOption("lineWrapping", true);
        cm.setOption("viewportMargin", Infinity);
      }
      const button = cell.querySelector(".thebe-run-button");
      if (!button) return;
      button.textContent = "Run cell";
      button.setAttribute("aria-label", `Run code cell ${i + 1} of ${cells.length}`);
      button.title = "Run this cell on the kernel (Shift+Enter in the editor)";
    });
  }

  function noteNewExplorers(built) {
    // An explorer that a cell printed in Live code gets a note saying which view it is and why; an answer box that a
    // cell printed is built (toy-answers.js).
    new MutationObserver(() => {
      if (window.toyAnswers && document.querySelector("[data-output] .toy-answer:not([data-ready])")) {
        window.toyAnswers.buildAll();
      }
      document.querySelectorAll("[data-output] .toy-explorer").forEach((ex) => {
        if (built.has(ex) || ex.previousElementSibling?.classList.contains("toy-live-note")) return;
        const p = document.createElement("p");
        p.className = "toy-live-note";
        p.textContent = NOTE;
        ex.before(p);
      });
    }).observe(document.body, {childList: true, subtree: true});
  }

  function pagePath() {
    // The page's notebook, as a path on the server: /chapters/04-the-llm-as-a-policy/4.1-formal-mapping.ipynb
    const page = decodeURIComponent(location.pathname).replace(/\/index\.html$|\.html$|\/$/, "");
    const root = new URL(contentRoot || "./", location.href).pathname.replace(/\/$/, "");
    return (page.startsWith(root) ? page.slice(root.length) : page).replace(/^\/*/, "/") + ".ipynb";
  }

  function options(route) {
    const base = {
      requestKernel: true,
      mountActivateWidget: false,
      mountStatusWidget: false,
      mountRestartButton: false,
      mountRestartAllButton: false,
      mathjaxUrl: "", // Thebe's default is MathJax 2 from a CDN; outputs here carry no LaTeX
      // one session, so one kernel, per page: the server keys sessions by path, and every page once shared "/"
      kernelOptions: {kernelName: config.kernel || "python3", path: pagePath()},
      codeMirrorConfig: {lineNumbers: false},
    };
    if (route.kind === "binder") {
      return {...base, useBinder: true, binderOptions: {binderUrl: route.url, repo: route.repo, ref: route.ref,
        repoProvider: "github"}};
    }
    return {...base, useBinder: false, serverSettings: {baseUrl: route.url + "/",
      wsUrl: route.url.replace(/^http/, "ws") + "/", token: route.token, appendToken: true}};
  }

  function mount() {
    // The bar is in the page as built (book/_ext/toyhtml.py writes it under the title); made here only for a page
    // without one (another build), under the title.
    let bar = document.querySelector(".toy-live");
    if (!bar) {
      const article = document.querySelector("main article") || document.querySelector("main") || document.body;
      bar = document.createElement("div");
      bar.className = "toy-live";
      bar.setAttribute("role", "region");
      bar.setAttribute("aria-label", "Live code");
      bar.innerHTML = '<button type="button" class="toy-live-button" aria-describedby="toy-live-status">Live code' +
        '</button><p class="toy-live-status" id="toy-live-status" aria-live="polite"></p>';
      const h1 = article.querySelector("section > h1") || article.querySelector("h1");  // the title, not the print header
      if (h1) h1.after(bar);
      else article.prepend(bar);
    }
    const button = bar.querySelector(".toy-live-button");
    const status = bar.querySelector(".toy-live-status");
    const text = idleText();
    if (status.textContent !== text) status.textContent = text;  // a server from a link (sessionStorage) named
    const say = (text, state, details = []) => {
      status.textContent = text;
      if (details.length) {
        const ul = document.createElement("ul");
        details.forEach((d) => ul.append(Object.assign(document.createElement("li"), {textContent: d})));
        status.append(ul);
      }
      bar.dataset.state = state;
      // A screen reader hears how it ended, not each step: a live region is not read out while it is busy
      if (state === "busy") status.setAttribute("aria-busy", "true");
      else status.removeAttribute("aria-busy");
    };
    button.addEventListener("click", () => start(button, say).catch((e) => {
      say(`Live code stopped: ${e.message}. The page stays as it was built.`, "error");
      button.disabled = false;
    }));
  }

  async function start(button, say) {
    button.disabled = true;
    if (!config.thebe) {
      say(`Live code is unavailable in this build: ${config.off}.`, "error");
      return;
    }
    const failures = [];
    let route = null;
    for (const r of routes()) {
      say(`Asking ${r.label}…`, "busy");
      const why = await probe(r);
      if (!why) {
        route = r;
        break;
      }
      failures.push(`${r.label[0].toUpperCase()}${r.label.slice(1)}: ${why}.`);
    }
    if (!route) {
      say("Live code could not start: no kernel answered. The page stays as it was built (its outputs and " +
        "explorers still work).", "error", failures);
      button.disabled = false;
      return;
    }
    say(`Loading Live code from this book, for ${route.label}…`, "busy");
    // plotly.js loads with the first figure the reader scrolls to; a cell's output may be a figure before that
    const plotly = window.toyLoadPlotly ? window.toyLoadPlotly() : Promise.resolve();
    const thebe = await timed(loadThebe(), CONNECT_MS, "Thebe's scripts did not load");
    await timed(plotly, CONNECT_MS, "plotly.js did not load");
    // Binder's progress while it builds and launches a server (minutes); nothing else of Thebe's: its session and
    // kernel events (a busy/idle pair for every cell) never reach the status line, which says the book's progress.
    let connecting = true;
    thebe.on("status", (_evt, data) => {
      if (route.kind !== "binder" || !connecting || !data || data.subject !== "server" || !data.message) return;
      if (/status changed to/.test(data.message) || bar().dataset.state !== "busy") return;
      say(`${route.label}: ${data.message}`, "busy");
    });
    const built = new Set(document.querySelectorAll(".toy-explorer"));
    const cells = markCells();
    say(`Connecting to ${route.label}…`, "busy");
    const limit = route.kind === "binder" ? BINDER_MS : CONNECT_MS;
    const {session, notebook} = await timed(thebe.bootstrap(options(route)), limit,
      `${route.label} gave no kernel within ${limit / 1000} s`);
    connecting = false;
    if (!session || !session.kernel) throw new Error(`${route.label} gave no kernel`);
    window.toyLiveKernel = () => session.kernel;  // explorers shown by a cell ask it for settings (toy-explorer.js)
    await timed(session.kernel.requestExecute({code: PRELUDE, silent: true}).done, CONNECT_MS,
      "the kernel did not answer");
    noteNewExplorers(built);
    tuneCells();
    // The first run-through, one cell at a time with its progress shown. A cell the reader runs meanwhile (its run
    // button, or Shift+Enter) waits in a queue and runs after it: run at once, it would cancel the run-through's
    // request for that cell ("Canceled future").
    const list = notebook.cells || [];
    const queued = [];
    let done = 0;
    const progress = () => `Running the page's ${cells} code cells once, in order, on ${route.label}: ${done} of ` +
      `${list.length} done.` + (queued.length ? ` ${queued.length} cell(s) you ran will run next.` : "");
    const hold = (event) => {
      if (document.documentElement.dataset.toyLive === "live") return;
      const key = event.type === "keydown";
      if (key && !(event.key === "Enter" && event.shiftKey)) return;
      const cell = event.target.closest && event.target.closest(".thebe-cell");
      const run = cell && (key ? cell.querySelector(".thebe-run-button") : event.target.closest(".thebe-run-button"));
      if (!run) return;
      event.preventDefault();
      event.stopImmediatePropagation();
      if (!queued.includes(run)) queued.push(run);
      cell.dataset.toyQueued = "true";
      say(progress(), "busy");
    };
    document.addEventListener("click", hold, true);
    document.addEventListener("keydown", hold, true);
    try {
      for (const cell of list) {
        say(progress(), "busy");
        await cell.execute();
        done += 1;
      }
    } finally {
      document.documentElement.dataset.toyLive = "live";
      document.removeEventListener("click", hold, true);
      document.removeEventListener("keydown", hold, true);
    }
    say(`Live code on ${route.label}: edit any cell and press its run button; outputs are replaced in place.`,
      "live");
    for (const run of queued) {
      delete run.closest(".thebe-cell").dataset.toyQueued;
      run.click();
    }
  }

  function bar() {
    return document.querySelector(".toy-live");
  }

  fromLink();
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", mount);
  else mount();
})();
