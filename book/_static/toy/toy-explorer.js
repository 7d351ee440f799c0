// Static explorers: the page half of toy/explorer.py.
// Each .toy-explorer element carries a JSON payload: controls, outputs precomputed by `toy` at build time
// (float64, base64), and bindings from outputs to the figure's traces and title. This script only looks
// values up and redraws; it computes nothing. Exposes window.toyExplorers (element id -> API) for tests.
// It also makes every plotly figure on the page fit its column, whatever its width (layout only, no numbers):
// titles, subplot titles, axis titles and legend entries broken into lines when too long (plotly's automargin,
// on in its templates, makes room for them and for tick labels), figures resized when their column settles.
// Colours follow the reader's theme by CSS (toy/figure_theme.css).
(function () {
  "use strict";

  // -- Texts that fit: break a title, axis title or legend entry into lines when the figure is too narrow. ----
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
  // What the last fit showed, put into a layout about to be drawn (where it still holds what the figure gave), so
  // that redrawing an explorer does not undo the fit and fit again (a second relayout).
  function applyFit(gd, traces, layout) {
    Object.entries(gd._toyFit || {}).forEach(([path, t]) => {
      const m = /^name(\d+)$/.exec(path);
      const [obj, at] = m ? [traces[Number(m[1])], "name"] : [layout, path];
      const now = obj && getPath(obj, at);
      if (obj && (now === t.given || now === undefined)) setPath(obj, at, t.shown);
    });
  }
  const LINE = 1.3;  // line height, in font sizes
  function fitTexts(gd) {
    const fl = gd._fullLayout;
    if (!fl || !fl.width || gd._toyFitting) return Promise.resolve();
    const W = fl.width;
    // The plot area as the figure gives it (before plotly's automargin makes room for tick labels, which change
    // with the data): a fit then depends on the width only, and refitting what it showed changes nothing.
    const plotL = fl.margin.l;
    const plotW = W - fl.margin.l - fl.margin.r;
    const plotH = given(gd, "height", fl.height).given - given(gd, "margin.t", fl.margin.t).given - fl.margin.b;
    const updates = {};
    // Panels stacked one above another: text lines added by wrapping inside the gap between two panels (a lower
    // panel's subplot title, an upper panel's x-axis title) are paid for by a taller figure, so nothing overlaps.
    const yDomains = (fl._subplots.yaxis || []).map((id) => fl["yaxis" + id.slice(1)]).filter(Boolean)
      .map((ax) => ax.domain);
    const gaps = {};
    function addToGap(lower, extra) {  // `lower`: paper y of the top of the panel below the gap
      let upper = null;
      yDomains.forEach(([lo]) => { if (lo > lower + 1e-6 && (upper === null || lo < upper)) upper = lo; });
      if (upper === null || extra <= 0) return;
      const gap = gaps[lower.toFixed(4)] || (gaps[lower.toFixed(4)] = { size: upper - lower, extra: 0 });
      gap.extra += extra;
    }
    // Subplot titles (paper-anchored annotations without arrows): wrap; those on the top edge need room above.
    let topBlock = 0;
    (fl.annotations || []).forEach((a, i) => {
      if (a.xref !== "paper" || a.showarrow || !a.text) return;
      const t = given(gd, "annotations[" + i + "].text", a.text);
      t.shown = wrapText(t.given, a.font, room(plotL + a.x * plotW, autoAnchor(a.xanchor, a.x), W));
      if (t.shown !== a.text) updates["annotations[" + i + "].text"] = t.shown;
      const lines = t.shown.split("<br>").length;
      if (a.yref === "paper" && a.y >= 0.99) topBlock = Math.max(topBlock, lines * a.font.size * LINE);
      else if (a.yref === "paper") addToGap(a.y, (lines - 1) * a.font.size * LINE);
    });
    // The figure's title: wrap; when it takes several lines, hang it from the top and make the top margin fit.
    const title = fl.title;
    const hasTitle = gd.layout.title && (typeof gd.layout.title === "string" || gd.layout.title.text);
    let titleTop = null;  // when the title takes several lines: its offset from the top, in pixels
    let marginGrowth = 0;
    if (hasTitle && title.text) {
      const t = given(gd, "title.text", title.text);
      const top = given(gd, "margin.t", fl.margin.t);
      const anchor = given(gd, "title.yanchor", title.yanchor);
      const x = title.xref === "paper" ? plotL + title.x * plotW : title.x * W;
      t.shown = wrapText(t.given, title.font, room(x, autoAnchor(title.xanchor, title.x), W));
      const lines = t.shown.split("<br>").length;
      if (lines > 1) {
        const pad = 8;  // plotly sets a top-anchored title about one font size too high: hang it that much lower
        titleTop = pad + title.font.size;
        anchor.shown = "top";
        top.shown = Math.max(top.given, 2 * pad + lines * title.font.size * LINE + topBlock);
      } else {
        anchor.shown = anchor.given;
        top.shown = top.given;
      }
      marginGrowth = top.shown - top.given;
      if (t.shown !== title.text) updates["title.text"] = t.shown;
      if (top.shown !== fl.margin.t) updates["margin.t"] = top.shown;
      if (anchor.shown !== title.yanchor) updates["title.yanchor"] = anchor.shown;
    } else if (topBlock) {  // no SVG title (an explorer's is HTML above the plot): room for the top subplot titles
      const top = given(gd, "margin.t", fl.margin.t);
      top.shown = Math.max(top.given, topBlock + 8);
      marginGrowth = top.shown - top.given;
      if (top.shown !== fl.margin.t) updates["margin.t"] = top.shown;
    }
    // Axis titles longer than their axis: wrap, and let plotly make room for the extra lines.
    ["xaxis", "yaxis"].forEach((letter) => (fl._subplots[letter] || []).forEach((id) => {
      const name = letter + id.slice(1);
      const ax = fl[name];
      const own = gd.layout[name] && gd.layout[name].title;
      if (!ax || !ax.title || !ax.title.text || !own) return;
      const t = given(gd, name + ".title.text", ax.title.text);
      const length = (letter === "xaxis" ? plotW : plotH) * (ax.domain[1] - ax.domain[0]);
      t.shown = wrapText(t.given, ax.title.font, 0.94 * length - 8);
      if (t.shown !== ax.title.text) updates[name + ".title.text"] = t.shown;  // (plotly's templates: automargin)
      const anchorAxis = letter === "xaxis" && ax.anchor && fl["yaxis" + ax.anchor.slice(1)];
      if (anchorAxis && anchorAxis.domain[0] > 0.01) {  // an inner x axis: its title sits in the gap below
        let below = null;
        const bottom = anchorAxis.domain[0];
        yDomains.forEach(([, hi]) => { if (hi < bottom - 1e-6 && (below === null || hi > below)) below = hi; });
        if (below !== null) addToGap(below, (t.shown.split("<br>").length - 1) * ax.title.font.size * LINE);
      }
    }));
    // A taller figure for the lines added above: the plot area keeps its height, every gap gets its extra lines.
    const height = given(gd, "height", fl.height);
    let grow = 0;
    Object.values(gaps).forEach((g) => { grow = Math.max(grow, g.extra / g.size); });
    height.shown = height.given + marginGrowth + grow;
    if (Math.abs(height.shown - fl.height) > 0.5) {
      updates.height = height.shown;
      if (fl.autosize) updates.autosize = true;  // after height: setting a height alone turns plotly's autosize off
    }
    const titleY = given(gd, "title.y", fl.title ? fl.title.y : "auto");
    titleY.shown = titleTop === null ? titleY.given : 1 - titleTop / height.shown;
    if (fl.title && titleY.shown !== fl.title.y) updates["title.y"] = titleY.shown;
    const wrap = gd.parentElement;  // plotly's HTML wraps a figure in a div of its fixed height
    if (wrap && !gd.closest(".toy-explorer") && /px$/.test(wrap.style.height)) wrap.style.height = height.shown + "px";
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
    try {
      const done = names.length ? Plotly.update(gd, { name: names }, updates, indices) : Plotly.relayout(gd, updates);
      return Promise.resolve(done).finally(() => { gd._toyFitting = false; });
    } catch (err) {
      gd._toyFitting = false;
      throw err;
    }
  }
  // Follow the figure's container: plotly's own `responsive` only listens to window resizes, so a column that
  // settles to its width later (the theme's sidebars) left figures wider than the page. Then refit the titles.
  // (The book's figures have no fixed width: toy.figures lays them out to follow the page.)
  function follow(gd) {
    const width = gd.getBoundingClientRect().width;
    if (!gd._fullLayout || width <= 0 || Math.abs(width - gd._fullLayout.width) <= 1) return;
    if (gd._toyResizing) { gd._toyResizeAgain = true; return; }
    gd._toyResizing = true;
    requestAnimationFrame(() => {
      // Plotly.Plots.resize never settles when another resize (plotly's own, on window resizes) supersedes it
      const resized = Promise.race([Plotly.Plots.resize(gd), new Promise((r) => setTimeout(r, 1000))]);
      resized.then(() => fitTexts(gd)).finally(() => {
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

  function getPath(obj, path) {
    return path.split(/[.[\]]+/).filter(Boolean).reduce((o, k) => (o == null ? undefined : o[k]), obj);
  }
  function setPath(obj, path, value) {
    const keys = path.split(/[.[\]]+/).filter(Boolean);
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
    // The figure's title is HTML above the plot, not SVG text: it wraps by itself at any width, and a redraw
    // that changes only numbers leaves plotly's layout alone (no relayout, no text to measure).
    const titleDiv = document.createElement("div");
    titleDiv.className = "toy-explorer-title";
    titleDiv.id = root.id + "-title";
    figDiv.before(titleDiv);
    figDiv.setAttribute("aria-describedby", titleDiv.id);
    const texts = {};  // layout path -> the text shown for it (the title's in titleDiv)
    const TITLE = "title.text";
    const givenTitle = spec.figure.layout.title || {};
    const titled = givenTitle.text || spec.layout.some(([path]) => path === TITLE);
    const marginTop = Math.max(((spec.figure.layout.margin || {}).t || 70) - (titled ? 40 : 0), 30);

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

    // The value axes' ranges, as toy.explorer does it (axis_plan, value_ranges, held_ranges): the range the values
    // need (values, ± the longest error bar, 0 for bars, 5% padding; log10 units on a log axis), held while the
    // needed range fits inside the shown one and fills at least half of it, else the needed range with 10% of its
    // span as room on each side.
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
      return [plan.bars && low === 0 ? low : low - pad, plan.bars && high === 0 ? high : high + pad];
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
      texts[TITLE] = givenTitle.text || "";
      spec.layout.forEach(([path, template]) => { texts[path] = render(template); });
      Object.entries(texts).forEach(([path, text]) => { if (path !== TITLE) setPath(layout, path, text); });
      layout.title = Object.assign({}, givenTitle, { text: "" });
      layout.margin = Object.assign({}, layout.margin, { t: marginTop }, margins);
      applyFit(figDiv, traces, layout);
      return { traces, layout, updates, ext };
    }

    // The numbers behind the figure, as tables in a <details> under it (built only while it is open); the same
    // grouping as toy.explorer.figure_tables, which the live view uses.
    const numbers = document.createElement("details");
    numbers.className = "toy-explorer-table";
    numbers.innerHTML = "<summary>Numbers behind the figure</summary><div class=\"toy-explorer-tables\"></div>";
    figDiv.after(numbers);
    function fillTables(traces, layout) {
      if (!numbers.open) return;
      const groups = new Map();
      const arr = (v) => (v && v._inputArray) || v;  // plotly keeps a typed array's decoded values there
      traces.forEach((t, i) => {
        const h = t.orientation === "h";
        const values = arr(h ? t.x : t.y);
        if (!values || t.visible === false) return;
        const cats = Array.from(arr(h ? t.y : t.x) || Array.from(values, (_, j) => j), String);
        const axis = (h ? t.xaxis : t.yaxis) || (h ? "x" : "y");
        const key = cats.join("\u0000") + "|" + axis;
        if (!groups.has(key)) {
          const ax = layout[(h ? "xaxis" : "yaxis") + axis.slice(1)] || {};
          const title = ax.title && typeof ax.title === "object" ? ax.title.text : ax.title;
          groups.set(key, { title: String(title || "").replace(/<br>/g, " "), cats, rows: [] });
        }
        groups.get(key).rows.push([t.name || "series " + (i + 1), ...Array.from(values, Number)]);
      });
      const esc = (x) => String(x).replace(/[&<>"]/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;" })[c]);
      numbers.lastChild.innerHTML = [...groups.values()].map((g) => "<table class=\"toy-explorer-numbers\">"
        + (g.title ? "<caption>" + esc(g.title) + "</caption>" : "")
        + "<thead><tr><td></td>" + g.cats.map((c) => "<th scope=\"col\">" + esc(c) + "</th>").join("") + "</tr></thead><tbody>"
        + g.rows.map(([name, ...v]) => "<tr><th scope=\"row\">" + esc(name) + "</th>"
          + v.map((x) => "<td>" + pyGeneral(x, 4) + "</td>").join("") + "</tr>").join("") + "</tbody></table>").join("");
    }
    numbers.addEventListener("toggle", () => fillTables(figDiv.data, figDiv.layout));

    let redraws = 0;
    let drawnLayout = null;  // the layout last given to plotly (JSON): a redraw that keeps it changes data only
    // Side and bottom margins only grow: the widest the figure has needed (plotly's automargin, for tick labels
    // and wrapped axis titles) is kept, so a new axis range with other tick labels does not make plotly draw twice.
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
            // a transition cut short (plotly rejects it when the figure is relayout meanwhile): draw in full
            await draw().catch(() => { drawnLayout = null; return draw(); });
            redraws += n;
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
        // draws in the next animation frame, before it is painted. No relayout of texts, nothing to fit.
        const indices = updates.map((u, i) => (Object.keys(u).length ? i : -1)).filter((i) => i >= 0);
        const data = () => Plotly.animate(figDiv, { data: indices.map((i) => updates[i]), traces: indices },
          { transition: { duration: 0 }, frame: { duration: 0, redraw: false }, mode: "immediate" });
        done = Object.keys(moved).length ? Promise.resolve(Plotly.relayout(figDiv, moved)).then(data) : data();
      } else {
        drawnLayout = key;
        done = Promise.resolve(Plotly.react(figDiv, traces, layout, { displaylogo: false }))
          .then(() => fitTexts(figDiv));
      }
      return Promise.resolve(done).then(() => {
        keepMargins();
        fillTables(figDiv.data, figDiv.layout);
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
      text: (path) => texts[path],  // the text a layout binding shows (the title's is the HTML above the plot)
      redraws: () => redraws,  // completed redraws, so tests and benchmarks can wait for one
      ranges: () => shownRanges,  // the value axes' ranges shown (log10 units on a log axis)
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
      root.dataset.started = "true";
      init(root, n).catch((err) => {
        root.querySelector(".toy-explorer-figure").textContent = "This explorer could not start: " + err;
        throw err;
      });
    });
    // Plain figures (plotly's own output in the page) get their titles fitted too.
    const plain = [...document.querySelectorAll(".js-plotly-plot")].filter((gd) => !gd.closest(".toy-explorer"));
    plain.forEach((gd) => {
      watchTexts(gd);
      fitTexts(gd);
    });
    // Explorers put into the page later (Live code re-runs a cell and shows its output in place) start too;
    // those whose element has left the page are forgotten.
    let later = 0;
    new MutationObserver(() => {
      document.querySelectorAll(".toy-explorer:not([data-started])").forEach((root) => {
        root.dataset.started = "true";
        if (!root.id) root.id = "toy-explorer-later-" + later++;
        init(root, 0).catch((err) => {
          root.querySelector(".toy-explorer-figure").textContent = "This explorer could not start: " + err;
          throw err;
        });
      });
      Object.keys(window.toyExplorers || {}).forEach((id) => {
        if (!document.getElementById(id)) delete window.toyExplorers[id];
      });
    }).observe(document.body, { childList: true, subtree: true });
  }

  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", initAll);
  else initAll();
})();
