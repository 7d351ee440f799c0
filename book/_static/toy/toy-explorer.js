// Static explorers: the page half of toy/explorer.py.
// Each .toy-explorer element carries a JSON payload: controls, outputs precomputed by `toy` at build time
// (float64, base64), and bindings from outputs to the figure's traces and title. This script only looks
// values up and redraws; it computes nothing. Exposes window.toyExplorers (element id -> API) for tests.
// It also fits every plotly figure's title and subplot titles to narrow screens (line breaks, layout only).
(function () {
  "use strict";

  // -- Titles that fit: break a title or subplot title into lines when the figure is too narrow for it. ----
  const ruler = document.createElement("canvas").getContext("2d");
  function textWidth(text, font) {
    ruler.font = font.size + "px " + font.family;
    return ruler.measureText(text.replace(/<[^>]*>/g, "")).width;
  }
  function wrapText(text, font, width) {
    if (text.includes("<br>") || textWidth(text, font) <= width) return text;
    const lines = [];
    let line = "";
    text.split(" ").forEach((word) => {
      const longer = line ? line + " " + word : word;
      if (line && textWidth(longer, font) > width) { lines.push(line); line = word; } else line = longer;
    });
    lines.push(line);
    return lines.join("<br>");
  }
  // Room for a text anchored at x pixels (of a figure `total` pixels wide), given how it is anchored; with a
  // margin, since the canvas measures text a little differently from the SVG that shows it.
  function room(x, anchor, total) {
    const free = anchor === "left" ? total - x : anchor === "right" ? x : 2 * Math.min(x, total - x);
    return 0.94 * free - 8;
  }
  function autoAnchor(anchor, frac) {
    if (anchor !== "auto") return anchor;
    return frac < 1 / 3 ? "left" : frac > 2 / 3 ? "right" : "center";
  }
  // Each fitted value remembers what the figure gave (`given`) and what was shown instead (`shown`), so a later
  // fit (after a resize) starts from the figure's own text; a value that changed since is taken as given anew.
  function given(gd, key, current) {
    const memo = gd._toyFit || (gd._toyFit = {});
    if (!memo[key] || memo[key].shown !== current) memo[key] = { given: current, shown: current };
    return memo[key];
  }
  const LINE = 1.3;  // line height, in font sizes
  function fitTexts(gd) {
    const fl = gd._fullLayout;
    if (!fl || !fl.width || gd._toyFitting) return Promise.resolve();
    const W = fl.width;
    const plotW = W - fl.margin.l - fl.margin.r;
    const updates = {};
    // Subplot titles (paper-anchored annotations without arrows): wrap; those on the top edge need room above.
    let topBlock = 0;
    (fl.annotations || []).forEach((a, i) => {
      if (a.xref !== "paper" || a.showarrow || !a.text) return;
      const t = given(gd, "annotation" + i, a.text);
      t.shown = wrapText(t.given, a.font, room(fl.margin.l + a.x * plotW, autoAnchor(a.xanchor, a.x), W));
      if (t.shown !== a.text) updates["annotations[" + i + "].text"] = t.shown;
      if (a.yref === "paper" && a.y >= 0.99) topBlock = Math.max(topBlock, t.shown.split("<br>").length * a.font.size * LINE);
    });
    // The figure's title: wrap; when it takes several lines, hang it from the top and make the top margin fit.
    const title = fl.title;
    const hasTitle = gd.layout.title && (typeof gd.layout.title === "string" || gd.layout.title.text);
    if (hasTitle && title.text) {
      const t = given(gd, "title", title.text);
      const top = given(gd, "top", fl.margin.t);
      const y = given(gd, "title.y", title.y);
      const anchor = given(gd, "title.yanchor", title.yanchor);
      const x = title.xref === "paper" ? fl.margin.l + title.x * plotW : title.x * W;
      t.shown = wrapText(t.given, title.font, room(x, autoAnchor(title.xanchor, title.x), W));
      const lines = t.shown.split("<br>").length;
      if (lines > 1) {
        const pad = 8;  // plotly sets a top-anchored title about one font size too high: hang it that much lower
        y.shown = 1 - (pad + title.font.size) / fl.height;
        anchor.shown = "top";
        top.shown = Math.max(top.given, 2 * pad + lines * title.font.size * LINE + topBlock);
      } else {
        y.shown = y.given;
        anchor.shown = anchor.given;
        top.shown = top.given;
      }
      if (t.shown !== title.text) updates["title.text"] = t.shown;
      if (top.shown !== fl.margin.t) updates["margin.t"] = top.shown;
      if (y.shown !== title.y) updates["title.y"] = y.shown;
      if (anchor.shown !== title.yanchor) updates["title.yanchor"] = anchor.shown;
    }
    // Axis titles longer than their axis: wrap, and let plotly make room for the extra lines.
    ["xaxis", "yaxis"].forEach((letter) => (fl._subplots[letter] || []).forEach((id) => {
      const name = letter + id.slice(1);
      const ax = fl[name];
      const own = gd.layout[name] && gd.layout[name].title;
      if (!ax || !ax.title || !ax.title.text || !own || !ax._length) return;
      const t = given(gd, name + ".title", ax.title.text);
      t.shown = wrapText(t.given, ax.title.font, 0.94 * ax._length - 8);
      if (t.shown !== ax.title.text) {
        updates[name + ".title.text"] = t.shown;
        if (t.shown.includes("<br>")) updates[name + ".automargin"] = true;
      }
    }));
    // Tick labels or axis titles cut off at the figure's edge: let plotly make the margins fit them.
    const box = gd.getBoundingClientRect();
    const cut = [...gd.querySelectorAll(".xtick text, .ytick text, .g-xtitle text, .g-ytitle text")].some((t) => {
      const r = t.getBoundingClientRect();
      return r.width > 0 && (r.left < box.left - 1 || r.right > box.right + 1);
    });
    if (cut) {
      ["xaxis", "yaxis"].forEach((letter) => (fl._subplots[letter] || []).forEach((id) => {
        const name = letter + id.slice(1);
        if (fl[name] && fl[name].automargin !== true) updates[name + ".automargin"] = true;
      }));
    }
    // Legend entries wider than the figure (with room for the symbol): wrap the series' names.
    const names = [], indices = [];
    if (fl.showlegend !== false && fl.legend) {
      (gd._fullData || []).forEach((trace) => {
        if (!trace.showlegend || trace.visible !== true || !trace.name) return;
        const t = given(gd, "name" + trace.index, trace.name);
        t.shown = wrapText(t.given, fl.legend.font, 0.94 * W - 60);
        if (t.shown !== trace.name) { names.push(t.shown); indices.push(trace.index); }
      });
    }
    if (!Object.keys(updates).length && !names.length) return Promise.resolve();
    gd._toyFitting = true;
    const done = names.length ? Plotly.update(gd, { name: names }, updates, indices) : Plotly.relayout(gd, updates);
    return Promise.resolve(done).finally(() => { gd._toyFitting = false; });
  }
  // Follow the figure's container: plotly's own `responsive` only listens to window resizes, so a column that
  // settles to its width later (the theme's sidebars) left figures wider than the page. Then refit the titles.
  // A figure given a fixed width wider than its column follows the column instead, up to its own width
  // (plotly's HTML also wraps it in a div of that fixed width). Returns plotly's promise when it relayouts.
  function unfix(gd) {
    const fixed = gd._toyFixedWidth || (gd.layout && gd.layout.width) || 0;
    const column = (gd.closest(".cell_output, .toy-explorer, article, main") || document.body).clientWidth;
    if (!fixed || column <= 0 || !gd._fullLayout) return null;
    if (!gd._toyFixedWidth) {
      if (fixed <= column + 1) return null;
      gd._toyFixedWidth = fixed;
      const wrap = gd.parentElement;
      if (wrap && /px$/.test(wrap.style.width)) wrap.style.width = "100%";
      gd.style.width = "100%";
    }
    const target = Math.min(fixed, column);
    if (Math.abs(gd._fullLayout.width - target) <= 1) return null;
    return Promise.resolve(Plotly.relayout(gd, { width: target })).then(() => fitTexts(gd));
  }
  function follow(gd) {
    if (unfix(gd) || gd._toyFixedWidth) return;
    const width = gd.getBoundingClientRect().width;
    if (!gd._fullLayout || width <= 0 || Math.abs(width - gd._fullLayout.width) <= 1) return;
    if (gd._toyResizing) { gd._toyResizeAgain = true; return; }
    gd._toyResizing = true;
    requestAnimationFrame(() => {
      Promise.resolve(Plotly.Plots.resize(gd)).then(() => fitTexts(gd)).finally(() => {
        gd._toyResizing = false;
        if (gd._toyResizeAgain) { gd._toyResizeAgain = false; follow(gd); }
      });
    });
  }
  const resizer = typeof ResizeObserver === "undefined" ? null
    : new ResizeObserver((entries) => entries.forEach((entry) => follow(entry.target)));
  function watchTexts(gd) {
    if (gd._toyWatched || typeof gd.on !== "function") return;
    gd._toyWatched = true;
    gd.on("plotly_relayout", () => { if (!gd._toyFitting) fitTexts(gd); });
    if (resizer) resizer.observe(gd);
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
  function pyGeneral(x) {  // Python's "{x:g}": 6 significant digits, no trailing zeros
    if (x === 0) return Object.is(x, -0) ? "-0" : "0";
    if (!(Math.abs(x) < 1e21)) return String(x);
    const [all, point] = exactDigits(x);
    const [digits, p] = roundDigits(all, point, all.search(/[1-9]/) + 6);
    const first = digits.search(/[1-9]/);
    const exp = p - first - 1;
    const sign = x < 0 ? "-" : "";
    if (exp < -4 || exp >= 6) {
      const sig = digits.slice(first, first + 6).replace(/0+$/, "");
      return sign + sig[0] + (sig.length > 1 ? "." + sig.slice(1) : "") + "e" + (exp < 0 ? "-" : "+")
        + String(Math.abs(exp)).padStart(2, "0");
    }
    return sign + pyFixed(Math.abs(x), 5 - exp).replace(/(\.\d*?)0+$/, "$1").replace(/\.$/, "");
  }

  // base64 -> zlib-compressed bytes -> Float64Array (little-endian, as numpy wrote it).
  async function decode(b64) {
    const bin = atob(b64);
    const bytes = new Uint8Array(bin.length);
    for (let i = 0; i < bin.length; i++) bytes[i] = bin.charCodeAt(i);
    const stream = new Blob([bytes]).stream().pipeThrough(new DecompressionStream("deflate"));
    return new Float64Array(await new Response(stream).arrayBuffer());
  }

  function setPath(obj, path, value) {
    const keys = path.split(".");
    let o = obj;
    for (let i = 0; i < keys.length - 1; i++) o = o[keys[i]] = o[keys[i]] || {};
    o[keys[keys.length - 1]] = value;
  }

  async function init(root, n) {
    const spec = JSON.parse(root.querySelector("script.toy-explorer-spec").textContent);
    const data = await decode(spec.data);
    const state = {};
    const controls = {};
    const byName = {};
    spec.controls.forEach((c) => { state[c.name] = c.default; byName[c.name] = c; });
    root.id = root.id || "toy-explorer-" + n;
    const box = root.querySelector(".toy-explorer-controls");
    const figDiv = root.querySelector(".toy-explorer-figure");
    figDiv.setAttribute("role", "img");
    figDiv.setAttribute("aria-label", spec.title);

    function output(name) {
      const o = spec.outputs[name];
      let index = 0;
      o.deps.forEach((d) => { index = index * byName[d].labels.length + state[d]; });
      const start = o.offset + index * o.size;
      return data.subarray(start, start + o.size);
    }

    function render(template) {
      return template.replace(/\{(\w+)(?::\.(\d+)f)?\}/g, (m, name, digits) => {
        if (byName[name]) return byName[name].labels[state[name]];
        const v = output(name)[0];
        return digits === undefined ? pyGeneral(v) : pyFixed(v, Number(digits));
      });
    }

    function figureData() {
      const traces = spec.figure.data.map((t) => Object.assign({}, t));
      spec.traces.forEach(([i, attr, names]) => {
        const parts = names.map(output);
        const total = parts.reduce((s, p) => s + p.length, 0);
        const arr = new Array(total);
        let k = 0;
        parts.forEach((p) => { for (let j = 0; j < p.length; j++) arr[k++] = p[j]; });
        setPath(traces[i], attr, arr);
      });
      const layout = JSON.parse(JSON.stringify(spec.figure.layout));
      spec.layout.forEach(([path, template]) => setPath(layout, path, render(template)));
      return { traces, layout };
    }

    let lastRedrawMs = 0;
    let redraws = 0;
    function redraw() {
      const t0 = performance.now();
      const { traces, layout } = figureData();
      const done = Plotly.react(figDiv, traces, layout, { responsive: true, displaylogo: false });
      return Promise.resolve(done)
        .then(() => fitTexts(figDiv))
        .then(() => { lastRedrawMs = performance.now() - t0; redraws += 1; });
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
      b.addEventListener("click", () => {
        const k = step++ % a.count;
        const v = output(a.output);
        a.targets.forEach((name, j) => setIndex(name, v[k * a.targets.length + j]));
        redraw();
      });
      box.appendChild(b);
    });

    const api = {
      spec,
      state,
      figure: figDiv,
      redraw,
      lastRedrawMs: () => lastRedrawMs,
      redraws: () => redraws,  // completed redraws, so tests and benchmarks can wait for one
      // Set controls by option index and redraw once: {temperature: 0, reward: 1}.
      set(indices) {
        Object.entries(indices).forEach(([name, i]) => setIndex(name, i));
        return redraw();
      },
    };
    await redraw();
    watchTexts(figDiv);
    window.toyExplorers = window.toyExplorers || {};
    window.toyExplorers[root.id] = api;
    root.dataset.ready = "true";
  }

  function initAll() {
    if (typeof Plotly === "undefined") {
      document.querySelectorAll(".toy-explorer-figure").forEach((d) => {
        d.textContent = "The figure needs plotly.js, which did not load.";
      });
      return;
    }
    document.querySelectorAll(".toy-explorer").forEach((root, n) => {
      init(root, n).catch((err) => {
        root.querySelector(".toy-explorer-figure").textContent = "This explorer could not start: " + err;
        throw err;
      });
    });
    // Plain figures (plotly's own output in the page) get their titles fitted too.
    document.querySelectorAll(".js-plotly-plot").forEach((gd) => {
      if (gd.closest(".toy-explorer")) return;
      watchTexts(gd);
      if (!unfix(gd)) fitTexts(gd);
    });
  }

  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", initAll);
  else initAll();
})();
