// Static explorers: the page half of toy/page/explorer.py.
// Each .toy-explorer element carries a JSON payload: controls, outputs precomputed by `toy` at build time
// (float64, base64), and bindings from outputs to the figure's traces and title. This script only looks
// values up and redraws; it computes nothing. Exposes window.toyExplorers (element id -> API) for tests.
// An explorer a kernel showed in Live code (toy-live.js; explorer.py's page view) comes with only the setting on
// screen computed (NaN elsewhere) and the key by which this script asks that kernel for the others, through a comm,
// when the reader first chooses them (and for their neighbours, so the next step is there already).
// It also draws the page's plain figures (toy.figures.book_figure_html: an empty box and the figure's data), and
// resizes every plotly figure on the page when its column settles. Figures and explorers start when they come
// near the screen, so nothing of theirs delays the text; window.toyDrawAll() starts them all (tests, the PDFs).
// Printing draws every figure at once, whatever the reader scrolled past (see Printing, below).
// plotly.js itself (1.2 MB) is loaded only then, once: a reader who never scrolls to a figure never pays for it.
// window.toyLoadPlotly() loads it (Live code calls it before a cell can show a figure).
// Colours follow the reader's theme by CSS (toy/page/figure_theme.css).
(function () {
  "use strict";

  // plotly.js sits in the site's _static folder beside this script's folder; the page names the file (with its
  // checksum, so a new plotly.js is never taken from a stale cache) in this script's data-plotly attribute.
  const self = document.currentScript;
  let plotlyLoad = null;
  let printPlotly = null;  // the plotly.js that printing loaded at once (drawForPaper), if it had to
  const plotlyUrl = () => new URL((self && self.dataset.plotly) || "plotly.min.js",
    self && self.src ? new URL("../", self.src) : new URL("_static/", document.baseURI)).href;
  function loadPlotly() {
    if (typeof Plotly !== "undefined") return Promise.resolve(window.Plotly);
    if (!plotlyLoad) plotlyLoad = new Promise((resolve, reject) => {
      const script = document.createElement("script");
      script.src = plotlyUrl();
      script.onload = () => {
        if (printPlotly) window.Plotly = printPlotly;  // printing ran its own copy meanwhile: figures keep that one
        if (typeof Plotly === "undefined") reject(new Error("plotly.js loaded but defined nothing"));
        else resolve(window.Plotly);
      };
      script.onerror = () => {
        plotlyLoad = null;  // a later figure tries again
        reject(new Error("the figure needs plotly.js, which did not load (" + script.src + ")"));
      };
      document.head.appendChild(script);
    });
    return plotlyLoad;
  }
  window.toyLoadPlotly = loadPlotly;

  // A figure's data: in its <script type="application/json"> element, or (in the built book, which keeps pages
  // light) in the file that element's data-src names, a script that puts it in window.toyData under its name.
  // A script, not fetch(): a book opened from the disk (file://) loads it too.
  const dataLoads = {};
  function loadSpec(el) {
    if (!el.dataset.src) return Promise.resolve(JSON.parse(el.textContent));
    const url = new URL(el.dataset.src, document.baseURI).href;
    const key = url.split("/").pop().replace(/\.js$/, "");
    if (!dataLoads[url]) dataLoads[url] = new Promise((resolve, reject) => {
      const script = document.createElement("script");
      script.src = url;
      script.onload = () => (window.toyData && window.toyData[key] ? resolve(window.toyData[key])
        : reject(new Error("the figure's data file defined nothing (" + url + ")")));
      script.onerror = () => {
        delete dataLoads[url];
        reject(new Error("the figure's data did not load (" + url + ")"));
      };
      document.head.appendChild(script);
    });
    return dataLoads[url].then((spec) => structuredClone(spec));  // plotly writes into what it is given
  }

  // -- Printing cannot wait: a page is laid out for paper right after its `beforeprint` handlers return. So what
  // a figure needs and the page has not loaded yet (plotly.js, the figure's data) is fetched there and then, with
  // synchronous requests, and an explorer's data is inflated in this script (DecompressionStream is asynchronous).
  function fetchNow(url) {
    const request = new XMLHttpRequest();
    request.open("GET", url, false);
    request.send();
    if (request.status !== 200 && !(request.status === 0 && request.responseText)) {
      throw new Error(`${url} did not load (HTTP ${request.status})`);
    }
    return request.responseText;
  }
  function runNow(url) {  // a script's text run in place: it has run when this returns
    const script = document.createElement("script");
    script.textContent = fetchNow(url) + "\n//# sourceURL=" + url;
    document.head.appendChild(script);
    script.remove();
  }
  function plotlyNow() {
    if (typeof Plotly === "undefined") {
      runNow(plotlyUrl());
      printPlotly = window.Plotly;
    }
    return window.Plotly;
  }
  function specNow(el) {
    if (!el.dataset.src) return JSON.parse(el.textContent);
    const url = new URL(el.dataset.src, document.baseURI).href;
    const key = url.split("/").pop().replace(/\.js$/, "");
    if (!(window.toyData && window.toyData[key])) runNow(url);
    if (!(window.toyData && window.toyData[key])) throw new Error("the figure's data file defined nothing (" + url + ")");
    return structuredClone(window.toyData[key]);
  }

  // zlib's format (RFC 1950/1951), inflated: stored, fixed and dynamic Huffman blocks. After puff.c (zlib/contrib).
  const LENGTH_BASE = [3, 4, 5, 6, 7, 8, 9, 10, 11, 13, 15, 17, 19, 23, 27, 31, 35, 43, 51, 59, 67, 83, 99, 115,
    131, 163, 195, 227, 258];
  const LENGTH_EXTRA = [0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3, 4, 4, 4, 4, 5, 5, 5, 5, 0];
  const DIST_BASE = [1, 2, 3, 4, 5, 7, 9, 13, 17, 25, 33, 49, 65, 97, 129, 193, 257, 385, 513, 769, 1025, 1537,
    2049, 3073, 4097, 6145, 8193, 12289, 16385, 24577];
  const DIST_EXTRA = [0, 0, 0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 6, 6, 7, 7, 8, 8, 9, 9, 10, 10, 11, 11, 12, 12, 13, 13];
  const CODE_ORDER = [16, 17, 18, 0, 8, 7, 9, 6, 10, 5, 11, 4, 12, 3, 13, 2, 14, 1, 15];
  function inflate(input) {
    if (input.length < 2 || (input[0] & 0x0f) !== 8 || ((input[0] << 8) | input[1]) % 31 !== 0) {
      throw new Error("not zlib data");
    }
    let pos = 2, held = 0, count = 0, size = 0;
    let out = new Uint8Array(Math.max(1024, input.length * 4));
    const need = (n) => {
      if (size + n <= out.length) return;
      const bigger = new Uint8Array(Math.max(out.length * 2, size + n));
      bigger.set(out.subarray(0, size));
      out = bigger;
    };
    const bits = (n) => {
      while (count < n) {
        if (pos >= input.length) throw new Error("zlib data ends early");
        held |= input[pos++] << count;
        count += 8;
      }
      const v = held & ((1 << n) - 1);
      held >>>= n;
      count -= n;
      return v;
    };
    const table = (lengths) => {  // a canonical Huffman code: how many codes of each length, symbols by code
      const counts = new Uint16Array(16), offsets = new Uint16Array(16), symbols = new Uint16Array(lengths.length);
      lengths.forEach((len) => { counts[len]++; });
      counts[0] = 0;
      for (let len = 1; len < 16; len++) offsets[len] = offsets[len - 1] + counts[len - 1];
      lengths.forEach((len, symbol) => { if (len) symbols[offsets[len]++] = symbol; });
      return { counts, symbols };
    };
    const symbol = (h) => {
      let code = 0, first = 0, index = 0;
      for (let len = 1; len < 16; len++) {
        code |= bits(1);
        const n = h.counts[len];
        if (code - n < first) return h.symbols[index + code - first];
        index += n;
        first = (first + n) << 1;
        code <<= 1;
      }
      throw new Error("bad Huffman code in zlib data");
    };
    const fixedLit = table(Array.from({ length: 288 }, (_, i) => (i < 144 ? 8 : i < 256 ? 9 : i < 280 ? 7 : 8)));
    const fixedDist = table(new Array(30).fill(5));
    let last = 0;
    while (!last) {
      last = bits(1);
      const type = bits(2);
      if (type === 0) {  // stored: the rest of this byte skipped, then LEN, NLEN and LEN bytes
        held = 0;
        count = 0;
        const len = input[pos] | (input[pos + 1] << 8);
        if (pos + 4 + len > input.length) throw new Error("zlib data ends early");
        pos += 4;
        need(len);
        out.set(input.subarray(pos, pos + len), size);
        size += len;
        pos += len;
        continue;
      }
      if (type === 3) throw new Error("bad block type in zlib data");
      let lit = fixedLit, dist = fixedDist;
      if (type === 2) {
        const nlit = bits(5) + 257, ndist = bits(5) + 1, ncode = bits(4) + 4;
        const codeLengths = new Array(19).fill(0);
        for (let i = 0; i < ncode; i++) codeLengths[CODE_ORDER[i]] = bits(3);
        const lengthCode = table(codeLengths);
        const lengths = [];
        while (lengths.length < nlit + ndist) {
          const s = symbol(lengthCode);
          if (s < 16) lengths.push(s);
          else {
            const repeat = s === 16 ? 3 + bits(2) : s === 17 ? 3 + bits(3) : 11 + bits(7);
            const value = s === 16 ? lengths[lengths.length - 1] : 0;
            if (value === undefined) throw new Error("bad code lengths in zlib data");
            for (let i = 0; i < repeat; i++) lengths.push(value);
          }
        }
        lit = table(lengths.slice(0, nlit));
        dist = table(lengths.slice(nlit, nlit + ndist));
      }
      for (;;) {
        const s = symbol(lit);
        if (s < 256) { need(1); out[size++] = s; continue; }
        if (s === 256) break;
        const len = LENGTH_BASE[s - 257] + bits(LENGTH_EXTRA[s - 257]);
        const d = symbol(dist);
        const back = DIST_BASE[d] + bits(DIST_EXTRA[d]);
        if (back > size) throw new Error("bad distance in zlib data");
        need(len);
        for (let i = 0; i < len; i++, size++) out[size] = out[size - back];
      }
    }
    return out.slice(0, size);
  }
  window.toyInflate = inflate;  // for the tests
  function decodeNow(b64) {
    const bin = atob(b64);
    const bytes = new Uint8Array(bin.length);
    for (let i = 0; i < bin.length; i++) bytes[i] = bin.charCodeAt(i);
    return new Float64Array(inflate(bytes).buffer);
  }

  // Follow the figure's container: plotly's own `responsive` only listens to window resizes, so a column that
  // settles to its width later (the theme's sidebars) left figures wider than the page. Every text in a figure
  // fits a phone screen as toy.figures breaks it (titles are HTML above the plot), so nothing is measured here.
  function follow(gd) {
    if (printing) return;  // laid out for paper: fitToPaper sizes the figures
    const width = gd.getBoundingClientRect().width;
    if (!gd._fullLayout || width <= 0 || Math.abs(width - gd._fullLayout.width) <= 1) return;
    if (gd._toyResizing) { gd._toyResizeAgain = true; return; }
    gd._toyResizing = true;
    requestAnimationFrame(() => {
      // Plotly.Plots.resize never settles when another resize (plotly's own, on window resizes) supersedes it
      Promise.race([Plotly.Plots.resize(gd), new Promise((r) => setTimeout(r, 1000))]).finally(() => {
        gd._toyResizing = false;
        if (gd._toyResizeAgain) { gd._toyResizeAgain = false; follow(gd); }
      });
    });
  }
  const resizer = typeof ResizeObserver === "undefined" ? null
    : new ResizeObserver((entries) => entries.forEach((entry) => follow(entry.target)));
  // As toy.figures.PLOT_CONFIG: no mode bar (no buttons in the tab order, no upload to Plotly's cloud)
  const PLOT_CONFIG = { displaylogo: false, displayModeBar: false };

  // A plain figure: its box, and the JSON beside it
  // (plotly draws within newPlot: when it returns, the figure is on the page; its promise settles later)
  function drawPlain(box, fig) {
    if (box._toyDrawn) return box._toyDrawn;  // drawn already (printing may draw it first)
    box.style.height = "";
    box._toyDrawn = Promise.resolve(Plotly.newPlot(box, fig.data, fig.layout, { ...fig.config, ...PLOT_CONFIG }))
      .then((gd) => {
        box.dataset.ready = "true";
        if (resizer) resizer.observe(gd);
      });
    return box._toyDrawn;
  }

  // -- Numbers in titles written exactly as Python writes them ("{x:.3f}", "{x:g}"): Python rounds the exact
  // binary value half to even (0.3125 -> "0.312"), JavaScript's toFixed rounds half up ("0.313"). String work only.
  function exactDigits(x) {  // the exact decimal digits of |x| and the position of its decimal point
    const [int, frac] = Math.abs(x).toFixed(100).split(".");
    return [int + frac, int.length];
  }
  function roundDigits(all, point, keep) {  // the first `keep` digits of `all`, rounded half to even
    const head = all.slice(0, Math.max(keep, 0)).padEnd(Math.max(keep, 0), "0").split("").map(Number);
    const next = all.slice(Math.max(keep, 0));
    const last = head.length ? head[head.length - 1] : 0;
    const up = next[0] > "5" || (next[0] === "5" && (/[1-9]/.test(next.slice(1)) || last % 2 === 1));
    if (up) {
      let i = head.length - 1;
      while (i >= 0 && head[i] === 9) head[i--] = 0;
      if (i < 0) { head.unshift(1); point += 1; } else head[i] += 1;
    }
    return [head.join(""), point];
  }
  function pyFixed(x, d) {
    if (!(Math.abs(x) < 1e21)) return String(x);
    const [all, point] = exactDigits(x);
    const [digits, p] = roundDigits(all, point, point + d);
    const int = digits.slice(0, p).replace(/^0+(?=\d)/, "") || "0";
    const sign = x < 0 || Object.is(x, -0) ? "-" : "";
    return sign + int + (d > 0 ? "." + digits.slice(p, p + d) : "");
  }
  function pyGeneral(x, sig = 6) {  // Python's "{x:g}" ("{x:.<sig>g}"): sig significant digits, no trailing zeros
    if (x === 0) return Object.is(x, -0) ? "-0" : "0";
    if (!(Math.abs(x) < 1e21)) return String(x);
    const [all, point] = exactDigits(x);
    const [digits, p] = roundDigits(all, point, all.search(/[1-9]/) + sig);
    const first = digits.search(/[1-9]/);
    const exp = p - first - 1;
    const sign = x < 0 ? "-" : "";
    if (exp < -4 || exp >= sig) {
      const kept = digits.slice(first, first + sig).replace(/0+$/, "");
      return sign + kept[0] + (kept.length > 1 ? "." + kept.slice(1) : "") + "e" + (exp < 0 ? "-" : "+")
        + String(Math.abs(exp)).padStart(2, "0");
    }
    return sign + pyFixed(Math.abs(x), sig - 1 - exp).replace(/(\.\d*?)0+$/, "$1").replace(/\.$/, "");
  }

  // base64 -> zlib-compressed bytes -> Float64Array (little-endian, as numpy wrote it).
  async function decode(b64) {
    const bin = atob(b64);
    const bytes = new Uint8Array(bin.length);
    for (let i = 0; i < bin.length; i++) bytes[i] = bin.charCodeAt(i);
    const stream = new Blob([bytes]).stream().pipeThrough(new DecompressionStream("deflate"));
    return new Float64Array(await new Response(stream).arrayBuffer());
  }

  // The kernel that showed an explorer in Live code (toy-live.js sets window.toyLiveKernel): ask(states) sends
  // settings ([{control: option index}]) through a comm (toy.page.explorer.COMM_TARGET) and resolves to their
  // outputs ([{output: values}]), each also given to onData as it arrives (a late answer still fills the data).
  // A request fails, never hangs: no kernel, a closed comm, a dead or restarted kernel, or ASK_MS without an
  // answer (the kernel runs one thing at a time: a long cell delays it) reject it with the reason.
  const ASK_MS = 60000;
  function kernelSource(link, onData) {
    let comm = null;
    let next = 0;
    const waiting = new Map();  // request id -> {resolve, reject, timer}, until it is answered or fails
    const sent = new Map();  // request id -> its settings, until the kernel answers (late answers count too)
    const settle = (id, error, outputs) => {
      const w = waiting.get(id);
      if (!w) return;
      waiting.delete(id);
      clearTimeout(w.timer);
      if (error) w.reject(new Error(error));
      else w.resolve(outputs);
    };
    const failAll = (why) => [...waiting.keys()].forEach((id) => settle(id, why));
    const quietly = (future) => { if (future && future.done) future.done.catch(() => {}); };
    function open() {
      const kernel = window.toyLiveKernel && window.toyLiveKernel();
      if (!kernel) throw new Error("no kernel is connected to this page: press Live code and run the cell again");
      sent.clear();  // a new comm: what the old one was asked is not coming
      const c = kernel.createComm(link.target);
      c.onMsg = (msg) => {
        const d = msg.content.data || {};
        const states = sent.get(d.id);
        sent.delete(d.id);
        if (d.outputs && states) d.outputs.forEach((outs, j) => onData(states[j], outs));
        settle(d.id, d.error, d.outputs);
      };
      c.onClose = () => {
        if (comm !== c) return;
        comm = null;
        failAll("the kernel closed this explorer's connection (it restarted?): run the explorer's cell again");
      };
      if (kernel.statusChanged) {
        kernel.statusChanged.connect((_k, status) => {
          if (comm === c && ["dead", "restarting", "autorestarting"].includes(status)) {
            comm = null;
            failAll(`the kernel is ${status === "dead" ? "dead" : "restarting"}: run the explorer's cell again`);
          }
        });
      }
      quietly(c.open({key: link.key}));
      return c;
    }
    return {
      ask(states) {
        return new Promise((resolve, reject) => {
          const id = ++next;
          const timer = setTimeout(() => settle(id, `the kernel gave no answer within ${ASK_MS / 1000} s ` +
            "(is a long cell running?); move a control to ask again"), ASK_MS);
          waiting.set(id, {resolve, reject, timer});
          try {
            if (!comm || comm.isDisposed) comm = open();
            sent.set(id, states);
            quietly(comm.send({id, states}));
          } catch (err) {
            comm = null;
            settle(id, err.message);
          }
        });
      },
      close() {
        const c = comm;
        comm = null;
        failAll("the explorer left the page");
        try {
          if (c && !c.isDisposed) quietly(c.close());
        } catch (err) { /* the kernel has gone already */ }
      },
    };
  }

  function setPath(obj, path, value) {
    const keys = path.split(/[.[\]]+/).filter(Boolean);
    let o = obj;
    for (let i = 0; i < keys.length - 1; i++) o = o[keys[i]] = o[keys[i]] || {};
    o[keys[keys.length - 1]] = value;
  }

  async function init(root, n, spec) {
    const data = root._toyReady ? null : await decode(spec.data);
    return setup(root, n, spec, data);
  }

  // An explorer built from its spec and its decoded data; its first figure is drawn before this returns (the
  // promise it returns settles when plotly is done). Once per element: printing may have built it already.
  function setup(root, n, spec, data) {
    if (root._toyReady) return root._toyReady;
    const state = {};
    const controls = {};
    const byName = {};
    spec.controls.forEach((c) => { state[c.name] = c.default; byName[c.name] = c; });
    root.id = root.id || "toy-explorer-" + n;
    const box = root.querySelector(".toy-explorer-controls");
    const figDiv = root.querySelector(".toy-explorer-figure");
    figDiv.setAttribute("role", "img");
    figDiv.setAttribute("aria-label", spec.title);
    // The figure's title is HTML above the plot, not SVG text: it wraps by itself at any width, and a redraw
    // that changes only numbers leaves plotly's layout alone (no relayout, no text to measure).
    const titleDiv = document.createElement("div");
    titleDiv.className = "toy-explorer-title";
    titleDiv.id = root.id + "-title";
    figDiv.before(titleDiv);
    figDiv.setAttribute("aria-describedby", titleDiv.id);
    const texts = {};  // layout path -> the text shown for it (the title's in titleDiv)
    const TITLE = "title.text";

    function entry(o, st) {  // where the entry of output o at setting st starts in data
      let index = 0;
      o.deps.forEach((d) => { index = index * byName[d].labels.length + st[d]; });
      return o.offset + index * o.size;
    }
    function output(name) {
      const o = spec.outputs[name];
      const start = entry(o, state);
      return data.subarray(start, start + o.size);
    }

    // A page view in a kernel (spec.kernel): the settings not computed yet are NaN, asked for when first shown.
    const source = spec.kernel ? kernelSource(spec.kernel, fill) : null;
    const pending = new Map();  // setting (its key) -> the request that brings its outputs
    const settingKey = (st) => spec.controls.map((c) => st[c.name]).join(",");
    function known(st) {
      return Object.values(spec.outputs).every((o) => o.size === 0 || !Number.isNaN(data[entry(o, st)]));
    }
    function fill(st, outs) {
      Object.entries(outs).forEach(([name, values]) => {
        const o = spec.outputs[name];
        if (o && values.length === o.size) data.set(values, entry(o, st));
      });
    }
    function ask(states) {
      const request = source.ask(states);
      const keys = states.map(settingKey);
      keys.forEach((k) => pending.set(k, request));
      const forget = () => keys.forEach((k) => { if (pending.get(k) === request) pending.delete(k); });
      request.then(forget, forget);
      return request;
    }
    async function shown() {  // until the setting on screen has its outputs (the reader may move on meanwhile)
      while (!known(state)) {
        if (!source) throw new Error("this setting was not computed");
        const st = Object.assign({}, state);
        const batch = pending.get(settingKey(st));  // asked already, maybe with its neighbours
        try {
          await (batch || ask([st]));
        } catch (err) {
          if (!batch) throw err;
          await ask([st]);  // a batch fails as a whole: ask for this one alone
        }
        if (settingKey(st) === settingKey(state) && !known(state)) {
          throw new Error("the kernel's answer does not fit this explorer");
        }
      }
    }
    function prefetch() {  // the settings one step away from the one on screen, in one request
      if (!source) return;
      const near = [];
      spec.controls.forEach((c) => [-1, 1].forEach((step) => {
        const i = state[c.name] + step;
        if (i < 0 || i >= c.labels.length) return;
        const st = Object.assign({}, state, {[c.name]: i});
        if (!known(st) && !pending.has(settingKey(st))) near.push(st);
      }));
      if (near.length) ask(near).catch(() => {});  // a failure shows if the reader goes there
    }
    // While the kernel computes: the figure dimmed and a line saying so (after a moment, so a quick answer does not
    // flicker); if it fails, why, and the next change of a control asks again.
    let status = null;
    let saying = null;  // what the line says: "computing", "failed" or null
    if (source) {
      status = document.createElement("p");
      status.className = "toy-explorer-status";
      status.setAttribute("role", "status");
      status.style.cssText = "margin: 0.2em 0; font-size: 0.9em; min-height: 1.35em";
      box.after(status);
    }
    function say(text, mode) {  // mode: "computing", "failed" or null (the explorer's data-kernel attribute)
      if (!status) return;
      saying = mode;
      status.textContent = text;
      figDiv.style.opacity = mode ? "0.55" : "";  // computing, or failed: the figure is not the setting chosen
      if (mode) root.dataset.kernel = mode;
      else delete root.dataset.kernel;
    }
    async function computed() {  // shown(), saying so while it waits
      const start = performance.now();
      const tell = () => say("Computing this setting in the kernel…" + (performance.now() - start > 2000
        ? ` ${Math.round((performance.now() - start) / 1000)} s (a running cell ends first)` : ""), "computing");
      let timer = setTimeout(function tick() { tell(); timer = setTimeout(tick, 1000); }, 150);
      try {
        await shown();
      } catch (err) {
        say(`This setting could not be computed: ${err.message}.`, "failed");
        throw err;
      } finally {
        clearTimeout(timer);
      }
    }

    function render(template) {
      return template.replace(/\{(\w+)(?::\.(\d+)f)?\}/g, (m, name, digits) => {
        if (byName[name]) return byName[name].labels[state[name]];
        const v = output(name)[0];
        return digits === undefined ? pyGeneral(v) : pyFixed(v, Number(digits));
      });
    }

    // The value axes' ranges, as toy.page.explorer does it (axis_plan, value_ranges, held_ranges): the range the values
    // need (values, ± the longest error bar, 0 for bars, 5% padding; log10 units on a log axis), held while the
    // needed range fits inside the shown one and fills at least half of it, else the needed range with 10% of its
    // span as room on each side; a nonnegative axis never below 0.
    let shownRanges = {};
    function neededRange(plan, ext) {
      let [low, high] = plan.fixed || [Infinity, -Infinity];
      plan.values.forEach((k) => { low = Math.min(low, ext[k][0]); high = Math.max(high, ext[k][1]); });
      const longest = plan.errors.reduce((m, k) => Math.max(m, ext[k][1]), 0);
      if (!plan.log) low -= longest;  // a log axis may cut an error bar's foot
      high += longest;
      if (plan.bars) { low = Math.min(low, 0); high = Math.max(high, 0); }
      if (plan.log) {
        if (high <= 0) return null;
        [low, high] = [Math.log10(Math.max(low, high * 1e-12)), Math.log10(high)];
      }
      const pad = high > low ? 0.05 * (high - low) : 0.05 * Math.max(Math.abs(high), 1);
      const range = [plan.bars && low === 0 ? low : low - pad, plan.bars && high === 0 ? high : high + pad];
      return plan.nonnegative ? range.map((v) => Math.max(v, 0)) : range;  // a KL, a probability: never below 0
    }
    function holdRanges(ext) {
      const held = {};
      Object.entries(spec.axes).forEach(([key, plan]) => {
        const want = neededRange(plan, ext);
        const have = shownRanges[key];
        if (want === null) return;
        const keep = have && have[0] <= want[0] && want[1] <= have[1] && want[1] - want[0] >= 0.5 * (have[1] - have[0]);
        const room = 0.1 * (want[1] - want[0]);  // a range that moves leaves room for neighbouring settings
        held[key] = keep ? have : [want[0] === 0 ? 0 : want[0] - room, want[1] === 0 ? 0 : want[1] + room];
        if (!keep && plan.nonnegative) held[key] = held[key].map((v) => Math.max(v, 0));
      });
      return (shownRanges = held);
    }

    function figureData() {
      const traces = spec.figure.data.map((t) => Object.assign({}, t));
      const updates = spec.figure.data.map(() => ({}));  // per trace: only its bound attributes
      const ext = spec.traces.map(([i, attr, names]) => {
        const parts = names.map(output);
        const total = parts.reduce((s, p) => s + p.length, 0);
        const arr = new Array(total);
        let k = 0;
        parts.forEach((p) => { for (let j = 0; j < p.length; j++) arr[k++] = p[j]; });
        setPath(traces[i], attr, arr);
        setPath(updates[i], attr, arr);
        return [Math.min(...arr), Math.max(...arr)];
      });
      const layout = JSON.parse(JSON.stringify(spec.figure.layout));
      texts[TITLE] = spec.figure_title;
      spec.layout.forEach(([path, template]) => { texts[path] = render(template); });
      Object.entries(texts).forEach(([path, text]) => { if (path !== TITLE) setPath(layout, path, text); });
      layout.margin = Object.assign({}, layout.margin, margins);
      return { traces, layout, updates, ext };
    }

    // The numbers behind the figure, as tables in a <details> under it: the page as built holds them at the default
    // setting; each redraw while it is open builds them again, from the figure's data by the plan the payload carries
    // (spec.tables), as toy.page.tables.figure_tables does for the live view.
    const numbers = root.querySelector("details.toy-explorer-table") || document.createElement("details");
    if (!numbers.parentNode) {
      numbers.className = "toy-explorer-table";
      numbers.innerHTML = "<summary>Numbers behind the figure</summary><div class=\"toy-explorer-tables\"></div>";
    }
    figDiv.after(numbers);
    // The setting shown, as text (toy.css prints it in place of the controls)
    const setting = document.createElement("p");
    setting.className = "toy-explorer-setting";
    figDiv.after(setting);
    const settingText = () => (spec.controls.length ? "Shown at: " + spec.controls.map((c) =>
      `${c.label.replace(/:\s*$/, "")} = ${c.labels[state[c.name]]}`).join("; ") + "." : "");
    function pyFormat(x, fmt) {  // toy.page.tables.format_value: Python's format for ",.Nf", ".Ng", ".N%", ".Ne"
      if (!Number.isFinite(x)) return String(x);
      const m = /^(,?)(?:\.(\d+))?([fge%]?)$/.exec(fmt || "") || ["", "", undefined, "g"];
      const [, comma, digits, type] = m;
      const p = digits === undefined ? undefined : Number(digits);
      let out;
      if (type === "f") out = pyFixed(x, p === undefined ? 6 : p);
      else if (type === "%") out = pyFixed(x * 100, p === undefined ? 6 : p) + "%";
      else if (type === "e") {
        const e = x.toExponential(p === undefined ? 6 : p).replace(/e([+-])(\d)$/, "e$10$2");
        out = e;
      } else out = pyGeneral(x, p === undefined ? 6 : Math.max(p, 1));
      if (comma) out = out.replace(/^(-?)(\d+)/, (_, sign, d) => sign + d.replace(/\B(?=(\d{3})+(?!\d))/g, ","));
      // a value that is not 0 (nor round-off, under 1e-12) but reads as zeros: 2 significant figures
      // (toy.page.tables.SMALL_DIGITS, ROUNDOFF)
      if (Math.abs(x) >= 1e-12 && !/[1-9]/.test(out.split("e")[0])) out = type === "%" ? pyGeneral(x * 100, 2) + "%" : pyGeneral(x, 2);
      return out;
    }
    const asNumber = (v) => (typeof v === "string" && v.trim() === "" ? null
      : typeof v === "boolean" ? null : Number.isFinite(Number(v)) ? Number(v) : null);
    const plainText = (v) => String(v);  // labels of categories are plain already (toy.page.tables.plain_text)
    const cellText = (v, fmt) => {
      const x = asNumber(v);
      return x === null || (typeof v === "string" && !fmt) ? plainText(v) : pyFormat(x, fmt);
    };
    const getPath = (obj, path) => path.split(".").reduce((o, k) => (o == null ? o : o[k]), obj);
    // toy.page.tables._shown: a value under the plan's bound ("below": a log axis's floor) reads "< bound"
    const shownCell = (x, fmt, below) => (below != null && x < below ? "< " + pyGeneral(below) : pyFormat(x, fmt));
    function tablesOf(traces) {
      const plan = spec.tables || [];
      const arr = (v) => (v && v._inputArray) || v;  // plotly keeps a typed array's decoded values there
      const marked = {};
      const groups = new Map();
      traces.forEach((t, i) => {
        const p = plan[i];
        if (!p) return;
        const raw = arr(getPath(t, p.values));
        if (!raw) return;
        const values = Array.from(raw, Number);
        const catRaw = arr(t[p.cat]);
        const cats = catRaw ? Array.from(catRaw) : values.map((_, j) => j);
        if (p.marks) {
          (marked[p.cat_axis] = marked[p.cat_axis] || []).push(...cats.map(asNumber).filter((x) => x !== null));
          return;
        }
        const ys = p.label && t.y ? Array.from(arr(t.y)) : cats.map(() => null);
        let labels = cats.map((x, j) => (p.label ? p.label.replace("{x}", cellText(x, p.cat_format))
          .replace("{y}", cellText(ys[j], "")) : cellText(x, p.cat_format)));
        if (p.header) labels = p.header.slice(0, values.length).map(String);
        const key = labels.join("\u0000") + "|" + p.axis + "|" + p.caption;
        if (!groups.has(key)) {
          groups.set(key, { caption: p.caption, corner: p.corner, labels, points: p.points, cat_axis: p.cat_axis,
            columns: p.columns, xs: cats.map((c) => (typeof c === "string" ? null : asNumber(c))), rows: [] });
        }
        const g = groups.get(key);
        g.points = g.points || p.points;
        if (p.x_row) g.rows.push([p.x_row, cats.map(asNumber), p.cat_format || ".4g"]);
        g.rows.push([p.name, values, p.format, p.below]);
        const err = arr(getPath(t, "error_y.array"));
        if (p.error && err) g.rows.push([p.error, Array.from(err, Number), p.format]);
      });
      return [...groups.values()].map((g) => {
        const nearest = (v) => g.xs.reduce((best, x, i) => (Math.abs(x - v) < Math.abs(g.xs[best] - v) ? i : best), 0);
        const marks = marked[g.cat_axis] || [];
        let cols;
        if (g.columns) {
          cols = new Set(g.columns);
          if (g.xs[0] !== null) marks.forEach((m) => cols.add(nearest(m)));
        } else {
          const seen = new Set();
          const distinct = [];
          g.labels.forEach((label, i) => {
            const cells = [label, ...g.rows.map(([, v, f, b]) => shownCell(v[i], f, b))].join("\u0000");
            if (!seen.has(cells)) { seen.add(cells); distinct.push(i); }
          });
          g.labels = distinct.map((i) => g.labels[i]);
          g.xs = distinct.map((i) => g.xs[i]);
          g.rows = g.rows.map(([n, v, f, b]) => [n, distinct.map((i) => v[i]), f, b]);
          const n = g.labels.length;
          if (n <= 9) cols = new Set(g.labels.map((_, i) => i));
          else {
            const numeric = g.xs.every((x) => x !== null);
            cols = new Set(g.points && numeric ? g.points.map(nearest)
              : Array.from({ length: 6 }, (_, i) => Math.round(i * (n - 1) / 5)));
            if (numeric) marks.forEach((m) => cols.add(nearest(m)));
          }
        }
        const order = [...cols].sort((a, b) => a - b);
        return { caption: g.caption, corner: g.corner, header: order.map((i) => g.labels[i]),
          rows: g.rows.map(([name, v, f, b]) => [name, ...order.map((i) => shownCell(v[i], f, b))]) };
      });
    }
    // toy.page.explorer.Explorer.named_tables: each caption ends with the setting shown, and {control} in a row's
    // name is the control's value, so the tables name their case at every redraw.
    const withCase = (caption) => {
      const shownAt = settingText();
      const base = caption.trim();
      return [base && shownAt && !base.endsWith(".") ? base + "." : base, shownAt].filter((x) => x).join(" ");
    };
    const rowName = (name) => name.replace(/\{(\w+)(?::\.(\d+)f)?\}/g, (m, key) => (byName[key]
      ? byName[key].labels[state[key]] : m));
    function fillTables(traces) {
      if (!numbers.open) return;
      const esc = (x) => String(x).replace(/[&<>"]/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;" })[c]);
      numbers.lastChild.innerHTML = tablesOf(traces).map((g) => "<table class=\"toy-explorer-numbers\">"
        + (withCase(g.caption) ? "<caption>" + esc(withCase(g.caption)) + "</caption>" : "")
        + "<thead><tr>" + (g.corner ? "<th scope=\"col\">" + esc(g.corner) + "</th>" : "<td></td>")
        + g.header.map((c) => "<th scope=\"col\">" + esc(c) + "</th>").join("") + "</tr></thead><tbody>"
        + g.rows.map(([name, ...v]) => "<tr><th scope=\"row\">" + esc(rowName(name)) + "</th>"
          + v.map((x) => "<td>" + esc(x) + "</td>").join("") + "</tr>").join("") + "</tbody></table>").join("");
    }
    numbers.addEventListener("toggle", () => { if (figDiv.data) fillTables(figDiv.data); });

    let redraws = 0;
    let drawnLayout = null;  // the layout last given to plotly (JSON): a redraw that keeps it changes data only
    // Side and bottom margins only grow: the widest the figure has needed (plotly's automargin, for tick labels
    // and axis titles) is kept, so a new axis range with other tick labels does not make plotly draw twice.
    const margins = {};
    function keepMargins() {
      const size = figDiv._fullLayout && figDiv._fullLayout._size;
      if (size) ["l", "r", "b"].forEach((k) => { margins[k] = Math.max(margins[k] || 0, Math.ceil(size[k])); });
    }
    // Redraws run one at a time (a transition must not interrupt another); the requests that arrive during one are
    // answered together by the next, which draws the state as it is then.
    let drawing = null;
    let asked = 0;
    function redraw() {
      asked += 1;
      if (!drawing) drawing = (async () => {
        try {
          while (asked > 0) {
            const n = asked;
            asked = 0;
            if (source && !known(state)) {  // a page view in a kernel: its outputs first (state may move on)
              try {
                await computed();
              } catch (err) {
                continue;  // the figure stays as it was, the line under the controls says why
              }
            }
            // a transition cut short (plotly rejects it when the figure is relayout meanwhile): draw in full
            await draw().catch(() => { drawnLayout = null; return draw(); });
            redraws += n;
            if (source) {
              if (saying) say("", null);
              prefetch();
            }
          }
        } finally {
          drawing = null;
        }
      })();
      return drawing;
    }
    function draw() {
      const { traces, layout, updates, ext } = figureData();
      const title = texts[TITLE].replace(/<br\s*\/?>/g, "\n").replace(/<[^>]*>/g, "");
      if (titleDiv.textContent !== title) titleDiv.textContent = title;
      const shownAt = settingText();
      if (setting.textContent !== shownAt) setting.textContent = shownAt;
      const key = JSON.stringify(layout);  // all but the value axes' ranges
      const before = shownRanges;
      const moved = {};
      Object.entries(holdRanges(ext)).forEach(([axis, range]) => {
        layout[axis] = Object.assign({}, layout[axis], { range, autorange: false });
        if (String(before[axis]) !== String(range)) moved[axis + ".range"] = range;
      });
      Object.keys(before).forEach((axis) => { if (!shownRanges[axis]) moved[axis + ".autorange"] = true; });
      let done;
      if (key === drawnLayout) {
        // The same layout: new ranges (ticks only) now, then the traces' data by plotly's transition path, which
        // draws in the next animation frame, before it is painted. No relayout of texts.
        const indices = updates.map((u, i) => (Object.keys(u).length ? i : -1)).filter((i) => i >= 0);
        const data = () => Plotly.animate(figDiv, { data: indices.map((i) => updates[i]), traces: indices },
          { transition: { duration: 0 }, frame: { duration: 0, redraw: false }, mode: "immediate" });
        done = Object.keys(moved).length ? Promise.resolve(Plotly.relayout(figDiv, moved)).then(data) : data();
      } else {
        drawnLayout = key;
        done = Plotly.react(figDiv, traces, layout, PLOT_CONFIG);
      }
      return Promise.resolve(done).then(() => {
        keepMargins();
        fillTables(figDiv.data);
      });
    }

    spec.controls.forEach((c, ci) => {
      const id = root.id + "-" + c.name;
      const wrap = document.createElement("div");
      wrap.className = "toy-control toy-control-" + c.kind;
      const label = document.createElement("label");
      label.htmlFor = id;
      label.textContent = c.label;
      wrap.appendChild(label);
      let input;
      if (c.kind === "slider") {
        input = document.createElement("input");
        input.type = "range";
        input.min = 0;
        input.max = c.labels.length - 1;
        input.step = 1;
        input.value = c.default;
        const readout = document.createElement("output");
        readout.htmlFor = id;
        readout.textContent = c.labels[c.default];
        input.setAttribute("aria-valuetext", c.labels[c.default]);
        input.addEventListener("input", () => {
          state[c.name] = Number(input.value);
          readout.textContent = c.labels[state[c.name]];
          input.setAttribute("aria-valuetext", readout.textContent);
          redraw();
        });
        wrap.appendChild(input);
        wrap.appendChild(readout);
      } else {
        input = document.createElement("select");
        c.labels.forEach((lab, i) => {
          const opt = document.createElement("option");
          opt.value = i;
          opt.textContent = lab;
          input.appendChild(opt);
        });
        input.value = c.default;
        input.addEventListener("change", () => { state[c.name] = Number(input.value); redraw(); });
        wrap.appendChild(input);
      }
      input.id = id;
      input.dataset.control = c.name;
      controls[c.name] = input;
      box.appendChild(wrap);
    });

    function setIndex(name, i) {
      state[name] = i;
      const input = controls[name];
      input.value = i;
      if (input.type === "range") {
        input.nextSibling.textContent = byName[name].labels[i];
        input.setAttribute("aria-valuetext", byName[name].labels[i]);
      }
    }

    spec.actions.forEach((a) => {
      let step = 0;
      const b = document.createElement("button");
      b.type = "button";
      b.className = "toy-action";
      b.textContent = a.label;
      const act = () => {
        const k = step++ % a.count;
        const v = output(a.output);
        a.targets.forEach((name, j) => setIndex(name, v[k * a.targets.length + j]));
        redraw();
      };
      b.addEventListener("click", () => {
        if (!source || known(state)) act();
        else computed().then(act, () => {});  // the setting on screen is still being computed
      });
      box.appendChild(b);
    });

    const api = {
      spec,
      state,
      figure: figDiv,
      redraw,
      text: (path) => texts[path],  // the text a layout binding shows (the title's is the HTML above the plot)
      redraws: () => redraws,  // completed redraws, so tests and benchmarks can wait for one
      ranges: () => shownRanges,  // the value axes' ranges shown (log10 units on a log axis)
      // Set controls by option index and redraw once: {temperature: 0, reward: 1}.
      set(indices) {
        Object.entries(indices).forEach(([name, i]) => setIndex(name, i));
        return redraw();
      },
      // a page view in a kernel: whether the setting on screen is computed, and its comm closed when it leaves
      known: () => known(state),
      dispose: () => { if (source) source.close(); },
    };
    root._toyReady = redraw().then(() => {
      if (resizer) resizer.observe(figDiv);
      window.toyExplorers = window.toyExplorers || {};
      window.toyExplorers[root.id] = api;
      root.dataset.ready = "true";
    });
    return root._toyReady;
  }

  // Start each explorer and figure once, when it comes within a screen of the viewport (or when asked to).
  const started = new Map();  // element -> promise
  function start(el) {
    if (started.has(el)) return started.get(el);
    let done;
    if (el.classList.contains("toy-plot")) {
      const specEl = el.nextElementSibling;
      if (!specEl || !specEl.classList.contains("toy-plot-spec")) {  // a box without data: nothing to draw
        started.set(el, Promise.resolve());
        return started.get(el);
      }
      done = Promise.all([loadSpec(specEl), loadPlotly()]).then(([fig]) => drawPlain(el, fig)).catch((err) => {
        el.textContent = "This figure could not be drawn: " + err.message;
        throw err;
      });
    } else {
      el.dataset.started = "true";
      if (!el.id) el.id = "toy-explorer-" + started.size;
      const n = started.size;
      const specEl = el.querySelector("script.toy-explorer-spec");
      done = Promise.all([loadSpec(specEl), loadPlotly()]).then(([spec]) => init(el, n, spec)).catch((err) => {
        el.querySelector(".toy-explorer-figure").textContent = "This explorer could not start: " + err.message;
        throw err;
      });
    }
    started.set(el, done);
    return done;
  }
  const near = typeof IntersectionObserver === "undefined" ? null : new IntersectionObserver((entries) => {
    entries.forEach((entry) => {
      if (entry.isIntersecting) { near.unobserve(entry.target); start(entry.target); }
    });
  }, { rootMargin: "100% 0px" });
  function watch(el) {
    if (started.has(el)) return;
    if (near) near.observe(el); else start(el);
  }
  const SELECTOR = ".toy-explorer, .toy-plot";
  window.toyDrawAll = () => Promise.all([...document.querySelectorAll(SELECTOR)].map(start));

  // -- Printing. Before the page is laid out for paper (`beforeprint`, or print media however it came: Ctrl+P, the
  // theme's print button, a headless browser's PDF), every figure not drawn yet is drawn at once, each explorer at
  // the setting on screen (its default if the reader never came to it; toy.css prints the setting as text in place
  // of the controls). Then, laid out for paper, each figure is redrawn as wide as its column there; afterwards, as
  // wide as its column on screen again. A page in dark mode prints in light mode (paper is white).
  let printing = false;
  // What toy.css keeps whole on a page, and the height over which one is let break (CSS px): an A4 page holds about
  // 1,000 px of the column. Measured on screen when printing begins (where the column may be wider than on paper,
  // so blocks grow there), then again once laid out for paper, where a block over half a page is let break: kept
  // whole, it could leave most of the page before it empty.
  const TALL_SELECTOR = "div.cell_input, div.cell_output > div.output, .toy-answer";
  const TALL_PX = 700;
  const PAPER_TALL_PX = 500;
  function startNow(el) {
    if (el.classList.contains("toy-plot")) {
      const specEl = el.nextElementSibling;
      if (el._toyDrawn || !specEl || !specEl.classList.contains("toy-plot-spec")) return;
      const fig = specNow(specEl);
      plotlyNow();
      if (!started.has(el)) started.set(el, drawPlain(el, fig));
      else drawPlain(el, fig);
      return;
    }
    if (el._toyReady) return;
    el.dataset.started = "true";
    const n = started.size;
    if (!el.id) el.id = "toy-explorer-" + n;
    const spec = specNow(el.querySelector("script.toy-explorer-spec"));
    plotlyNow();
    const ready = setup(el, n, spec, decodeNow(spec.data));
    if (!started.has(el)) started.set(el, ready);
  }
  function drawForPaper() {
    if (printing) return;
    printing = true;
    const root = document.documentElement;
    root.classList.add("toy-printing");  // toy.css: sections laid out, even off screen
    if (root.dataset.theme === "dark") {  // paper is white: dark mode's light text (and figures) would fade on it
      root.dataset.toyScreenTheme = "dark";
      root.dataset.theme = "light";
    }
    // blocks that avoid a page break inside (toy.css) but are taller than most of a page: marked, so they break
    markTall(TALL_PX);
    document.querySelectorAll(SELECTOR).forEach((el) => {
      try {
        startNow(el);
      } catch (err) {
        const box = el.querySelector(".toy-explorer-figure") || el;
        box.textContent = "This figure could not be drawn for printing: " + err.message;
      }
    });
  }
  function markTall(limit) {
    document.querySelectorAll(TALL_SELECTOR).forEach((el) => {
      el.classList.toggle("toy-print-tall", el.getBoundingClientRect().height > limit);
    });
  }
  function fitToPaper() {  // laid out for paper: each figure as wide as its column
    markTall(PAPER_TALL_PX);
    if (typeof Plotly === "undefined") return;
    document.querySelectorAll(".js-plotly-plot").forEach((gd) => {
      const width = Math.floor(gd.getBoundingClientRect().width);
      if (!gd._fullLayout || width <= 0 || Math.abs(width - gd._fullLayout.width) <= 1) return;
      gd._toyPaper = true;
      Plotly.relayout(gd, { width });
    });
  }
  function backToScreen() {
    if (!printing) return;
    printing = false;
    const root = document.documentElement;
    root.classList.remove("toy-printing");
    if (root.dataset.toyScreenTheme) {
      root.dataset.theme = root.dataset.toyScreenTheme;
      delete root.dataset.toyScreenTheme;
    }
    document.querySelectorAll(".js-plotly-plot").forEach((gd) => {
      if (!gd._toyPaper) return;
      delete gd._toyPaper;
      Promise.resolve(Plotly.relayout(gd, { width: null })).then(() => follow(gd), () => follow(gd));
    });
  }
  addEventListener("beforeprint", drawForPaper);
  addEventListener("afterprint", backToScreen);
  const paper = matchMedia("print");
  paper.addEventListener("change", (event) => {
    if (event.matches) {
      drawForPaper();
      fitToPaper();
    } else backToScreen();
  });
  window.toyPrintNow = () => { drawForPaper(); fitToPaper(); };  // what printing does (tests)

  // A page opened from the disk (file://) cannot fetch at once when it is printed (browsers refuse synchronous
  // requests for files), so there everything a figure needs is loaded as the page opens (by scripts, which the
  // page's load event waits for), and printing draws from it. Served pages keep loading figures as they come near.
  function preloadForPaper() {
    if (location.protocol !== "file:") return;
    const quiet = () => {};  // a figure that fails to load says so when it is drawn
    loadPlotly().catch(quiet);
    document.querySelectorAll("script.toy-plot-spec, script.toy-explorer-spec").forEach((el) => {
      if (el.dataset.src) loadSpec(el).catch(quiet);
    });
  }

  function initAll() {
    preloadForPaper();
    document.querySelectorAll(SELECTOR).forEach(watch);
    // Figures plotly drew by itself (Live code shows a cell's output in place) follow their column.
    const followPlain = () => document.querySelectorAll(".js-plotly-plot").forEach((gd) => {
      if (resizer && !gd.closest(".toy-explorer")) resizer.observe(gd);
    });
    followPlain();
    // Explorers and figures put into the page later (Live code re-runs a cell) start too; those whose element
    // has left the page are forgotten.
    let later = 0;
    new MutationObserver((records) => {
      followPlain();
      // An explorer in the output of a cell the reader ran in Live code (after the page's first run-through) is
      // where the reader is: it starts now, not when IntersectionObserver reports it a rendering frame or more
      // later. Those the run-through showed start as they come near the screen, as on the page as built.
      const ran = new Set();
      if (document.documentElement.dataset.toyLive === "live") {
        records.forEach((r) => r.addedNodes.forEach((node) => {
          if (node.nodeType !== 1 || !node.closest("[data-output]")) return;
          if (node.matches(".toy-explorer")) ran.add(node);
          node.querySelectorAll(".toy-explorer").forEach((el) => ran.add(el));
        }));
      }
      document.querySelectorAll(".toy-explorer:not([data-started]), .toy-plot:not([data-ready])").forEach((el) => {
        if (!el.id && el.classList.contains("toy-explorer")) el.id = "toy-explorer-later-" + later++;
        if (ran.has(el)) start(el);
        else watch(el);
      });
      Object.keys(window.toyExplorers || {}).forEach((id) => {
        if (document.getElementById(id)) return;
        window.toyExplorers[id].dispose();
        delete window.toyExplorers[id];
      });
    }).observe(document.body, { childList: true, subtree: true });
  }

  // A reader who arrives at a place in the page (a link to #id from another page) stays there while the page
  // settles. Figures drawn near the screen and sections laid out as they near it (toy.css: .toy-lazy) change the
  // height of what is above, and the browser's scroll anchoring does not always make up for it: it may anchor on
  // the section above, which grows below its own top (4.5's "Training every method" moved 757 px down). The hold
  // ends at the reader's first wheel, touch, key or click, or after 5 s.
  function holdFragment() {
    const target = location.hash.length > 1 && document.getElementById(decodeURIComponent(location.hash.slice(1)));
    const article = document.querySelector(".bd-article");
    if (!target || !article || typeof ResizeObserver === "undefined") return;
    const top = target.getBoundingClientRect().top;
    const intents = ["wheel", "touchstart", "keydown", "pointerdown"];
    const sizes = new ResizeObserver(() => {
      const drift = target.getBoundingClientRect().top - top;
      if (Math.abs(drift) > 1) window.scrollBy(0, drift);
    });
    const stop = () => {
      sizes.disconnect();
      intents.forEach((type) => removeEventListener(type, stop, true));
    };
    intents.forEach((type) => addEventListener(type, stop, { capture: true, passive: true }));
    sizes.observe(article);
    setTimeout(stop, 5000);
  }
  if (document.readyState === "complete") holdFragment();
  else addEventListener("load", holdFragment);

  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", initAll);
  else initAll();
})();
