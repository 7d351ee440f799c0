// Static explorers: the page half of toy/explorer.py.
// Each .toy-explorer element carries a JSON payload: controls, outputs precomputed by `toy` at build time
// (float64, base64), and bindings from outputs to the figure's traces and title. This script only looks
// values up and redraws; it computes nothing. Exposes window.toyExplorers (element id -> API) for tests.
(function () {
  "use strict";

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
        return digits === undefined ? String(v) : v.toFixed(Number(digits));
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
    function redraw() {
      const t0 = performance.now();
      const { traces, layout } = figureData();
      const done = Plotly.react(figDiv, traces, layout, { responsive: true, displaylogo: false });
      return Promise.resolve(done).then(() => { lastRedrawMs = performance.now() - t0; });
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
      // Set controls by option index and redraw once: {temperature: 0, reward: 1}.
      set(indices) {
        Object.entries(indices).forEach(([name, i]) => setIndex(name, i));
        return redraw();
      },
    };
    await redraw();
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
  }

  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", initAll);
  else initAll();
})();
