// Answer boxes: the page half of toy/exercises/questions.py.
// Each .toy-answer element carries a question's spec as JSON (what to ask, the answer at the book's setting, the
// tolerance, the mistakes worth a hint). This script builds the form, judges an answer with the same rules as
// questions.judge (tests/test_questions.py runs both on the same answers), and keeps the reader's answers in the
// browser (localStorage) across reloads. A "predict, then check" question records the prediction first, then shows
// the answer and how far off each number was. Nothing here needs a kernel or the network.
(function () {
  "use strict";

  // -- judging: the same rules as questions.judge -----------------------------------------------------------
  // the tolerance of the answer's number i: one number for all, or one per number
  function tol(spec, i) { return (Array.isArray(spec.tolerance) ? spec.tolerance[i] : spec.tolerance) + 1e-12; }

  function judge(spec, given) {
    const right = spec.answer;
    if (spec.kind === "number" || spec.kind === "numbers") {
      const fields = given.map((g, i) => Math.abs(g - right[i]) <= tol(spec, i));
      if (fields.every(Boolean)) return { right: true, fields: fields, hint: "" };
      // an answer between the exact value and an approximation the prompt prescribes is right, with its note
      for (const a of spec.accepted || []) {
        if (given.every((g, i) => Math.min(right[i], a.value[i]) - tol(spec, i) <= g &&
            g <= Math.max(right[i], a.value[i]) + tol(spec, i))) {
          return { right: true, fields: given.map(() => true), hint: a.note };
        }
      }
      for (const m of spec.mistakes) {
        if (given.every((g, i) => Math.abs(g - m.value[i]) <= tol(spec, i))) return { right: false, fields: fields, hint: m.hint };
      }
      const labels = spec.labels.length ? spec.labels : ["the number"];
      const first = fields.indexOf(false);
      const way = given[first] > right[first] ? "too high" : "too low";
      if (fields.length === 1) return { right: false, fields: fields, hint: "Not quite: " + way + "." };
      const n = fields.filter(Boolean).length;
      return { right: false, fields: fields, hint: n + " of " + fields.length + " right; " + labels[first] + " is " + way + "." };
    }
    const fields = given.map((g, i) => g === right[i]);
    if (fields.every(Boolean)) return { right: true, fields: fields, hint: "" };
    for (const m of spec.mistakes) {
      if (m.value.length === given.length && m.value.every((w, i) => w === given[i])) {
        return { right: false, fields: fields, hint: m.hint };
      }
    }
    if (spec.kind === "choice") {
      const said = spec.option_hints[String(given[0])];
      return { right: false, fields: fields, hint: said !== undefined ? said : "Not that one." };
    }
    return { right: false, fields: fields, hint: fields.filter(Boolean).length + " of " + fields.length + " in the right place." };
  }

  // A number as a reader types it: 0.16, -0.2 or −0.2, 1e-3, 4/25, 1,000. Not "16 %": whether that means 16 or
  // 0.16 depends on the question, so the reader is asked to write the number the question asks for.
  function parseNumber(text) {
    const t = String(text).trim().replace(/\u2212/g, "-").replace(/,/g, "");
    if (!t) return null;
    const frac = /^([-+]?[0-9.]+(?:e[-+]?\d+)?)\s*\/\s*([-+]?[0-9.]+(?:e[-+]?\d+)?)$/i.exec(t);
    if (frac) { const v = Number(frac[1]) / Number(frac[2]); return Number.isFinite(v) ? v : null; }
    if (!/^[-+]?(\d+\.?\d*|\.\d+)(e[-+]?\d+)?$/i.test(t)) return null;
    const v = Number(t);
    return Number.isFinite(v) ? v : null;
  }

  function show(v) { return Math.abs(v) < 1e-12 ? "0" : String(Number(v.toPrecision(4))); }

  // What a checked answer's box says: right (with the note of an approximation it was accepted by), or the hint.
  function said(verdict) {
    return verdict.right ? "\u2713 Right." + (verdict.hint ? " " + verdict.hint : "") : "\u2717 " + verdict.hint;
  }

  // What a prediction's box says once it is recorded: right or not, the answer and how far off each number was,
  // then the note of an accepted approximation, or the hint of a listed mistake (or of a chosen option) when the
  // prediction was one; not the generic "too high", which "off by" already says.
  function predicted(spec, prediction) {
    const verdict = judge(spec, prediction);
    let text;
    if (spec.kind === "number" || spec.kind === "numbers") {
      const labels = spec.kind === "number" ? ["It"] : spec.labels;
      text = labels.map((label, i) => label + " is " + show(spec.answer[i]) + "; you predicted " + show(prediction[i]) +
        " (off by " + show(Math.abs(prediction[i] - spec.answer[i])) + ")").join("; ") + ".";
    } else {
      text = "It is " + spec.answer.map((i) => spec.options[i]).join(", then ") + ".";
    }
    const hints = spec.mistakes.map((m) => m.hint).concat(Object.values(spec.option_hints || {}));
    if (verdict.hint && (verdict.right || hints.indexOf(verdict.hint) >= 0)) text += " " + verdict.hint;
    return { text: (verdict.right ? "\u2713 Your prediction was right. " : "\u2717 ") + text, verdict: verdict };
  }

  if (typeof module !== "undefined" && module.exports) {  // node, for the tests
    module.exports = { judge: judge, parseNumber: parseNumber, said: said, predicted: predicted };
    return;
  }

  // -- the page -------------------------------------------------------------------------------------------------
  function store(key, value) {
    try {
      if (value === null) window.localStorage.removeItem(key); else window.localStorage.setItem(key, JSON.stringify(value));
    } catch (e) { /* storage off: the box still works, it only forgets */ }
  }
  function recall(key) {
    try { return JSON.parse(window.localStorage.getItem(key) || "null"); } catch (e) { return null; }
  }

  let counter = 0;
  function fit(input) {  // a number field as wide as what it holds (7em at least, its box's width at most)
    if (input.type === "text") input.style.width = "max(7em, " + (input.value.length + 3) + "ch)";
  }
  function el(tag, attrs, text) {
    const e = document.createElement(tag);
    for (const k in attrs || {}) e.setAttribute(k, attrs[k]);
    if (text !== undefined) e.textContent = text;
    return e;
  }

  function build(box) {
    const source = box.querySelector("script.toy-answer-spec");
    if (!source || box.dataset.ready) return;
    box.dataset.ready = "1";
    const spec = JSON.parse(source.textContent);
    const key = "toy-answer:" + window.location.pathname + ":" + spec.name;
    const id = "toy-answer-" + (++counter);
    const form = el("form", { class: "toy-answer-form", novalidate: "" });
    const inputs = [];
    if (spec.kind === "number" || spec.kind === "numbers") {
      const labels = spec.kind === "number" ? ["Your answer"] : spec.labels;
      labels.forEach((label, i) => {
        const wrap = el("label", { class: "toy-answer-field" });
        wrap.appendChild(el("span", {}, label));
        const input = el("input", { type: "text", inputmode: "decimal", autocomplete: "off", id: id + "-" + i,
          "aria-describedby": id + "-feedback" });
        input.addEventListener("input", () => fit(input));
        wrap.appendChild(input);
        form.appendChild(wrap);
        inputs.push(input);
      });
    } else if (spec.kind === "choice") {
      const set = el("fieldset", { class: "toy-answer-options" });
      set.appendChild(el("legend", {}, "Your answer"));
      spec.options.forEach((option, i) => {
        const wrap = el("label", {});
        const input = el("input", { type: "radio", name: id, value: String(i) });
        wrap.appendChild(input);
        wrap.appendChild(document.createTextNode(" " + option));
        set.appendChild(wrap);
        inputs.push(input);
      });
      form.appendChild(set);
    } else {
      spec.options.forEach((_, rank) => {
        const wrap = el("label", { class: "toy-answer-field" });
        wrap.appendChild(el("span", {}, (rank + 1) + "."));
        const select = el("select", { id: id + "-" + rank });
        select.appendChild(el("option", { value: "" }, "choose"));
        spec.options.forEach((option, i) => select.appendChild(el("option", { value: String(i) }, option)));
        wrap.appendChild(select);
        form.appendChild(wrap);
        inputs.push(select);
      });
    }
    const button = el("button", { type: "submit", class: "toy-answer-button" });
    form.appendChild(button);
    const feedback = el("p", { class: "toy-answer-feedback", id: id + "-feedback", role: "status" });
    box.appendChild(form);
    box.appendChild(feedback);

    function read() {  // the answer as judge takes it, or a complaint in words
      if (spec.kind === "number" || spec.kind === "numbers") {
        const values = inputs.map((input) => parseNumber(input.value));
        const bad = values.indexOf(null);
        if (bad >= 0) {
          const what = inputs[bad].value.trim();
          return { problem: what ? "\u201c" + what + "\u201d is not a number (write 0.16, -0.2 or 4/25, without %)."
            : (spec.kind === "number" ? "Write a number first." : "Fill in " + spec.labels[bad] + " first."), at: bad };
        }
        return { given: values };
      }
      if (spec.kind === "choice") {
        const chosen = inputs.findIndex((input) => input.checked);
        return chosen < 0 ? { problem: "Choose an option first.", at: 0 } : { given: [chosen] };
      }
      const order = inputs.map((s) => (s.value === "" ? null : Number(s.value)));
      if (order.indexOf(null) >= 0) return { problem: "Choose an option for every place.", at: order.indexOf(null) };
      if (new Set(order).size !== order.length) return { problem: "Each option goes in one place only.", at: 0 };
      return { given: order };
    }
    function write(given) {
      if (spec.kind === "choice") inputs.forEach((input, i) => { input.checked = i === given[0]; });
      else inputs.forEach((input, i) => { input.value = given[i] === undefined ? "" : String(given[i]); fit(input); });
    }
    function mark(fields) {
      inputs.forEach((input, i) => {
        const ok = spec.kind === "choice" ? fields[0] : fields[i];
        if (fields.length && ok === false) input.setAttribute("aria-invalid", "true"); else input.removeAttribute("aria-invalid");
      });
    }
    function say(text, state) {
      feedback.textContent = text;
      box.dataset.state = state;
    }
    function reveal(prediction) {  // a prediction's outcome: the answer, and how far off each number was
      write(prediction);
      inputs.forEach((input) => { input.disabled = true; });
      const outcome = predicted(spec, prediction);
      const verdict = outcome.verdict;
      say(outcome.text, verdict.right ? "right" : "revealed");
      mark(verdict.fields);
      button.textContent = "Predict again";
    }
    function ready() {
      inputs.forEach((input) => { input.disabled = false; });
      button.textContent = spec.predict ? "Record my prediction" : "Check";
    }

    form.addEventListener("submit", (event) => {
      event.preventDefault();
      if (spec.predict && inputs[0].disabled) {  // "Predict again"
        store(key, null);
        inputs.forEach((input) => { if (input.type === "radio") input.checked = false; else input.value = ""; });
        mark([]);
        say("", "");
        ready();
        inputs[0].focus();
        return;
      }
      const got = read();
      if (got.problem) {
        say(got.problem, "problem");
        inputs[got.at].focus();
        return;
      }
      store(key, got.given);
      if (spec.predict) {
        // the fields are disabled now, and a disabled field loses the focus (to the page's body): the focus
        // goes on to the next control, the button that offers to predict again (its outcome is read out)
        reveal(got.given);
        button.focus();
        return;
      }
      const verdict = judge(spec, got.given);
      mark(verdict.fields);
      say(said(verdict), verdict.right ? "right" : "wrong");
    });

    ready();
    const kept = recall(key);
    const size = spec.kind === "numbers" ? spec.labels.length : spec.kind === "order" ? spec.options.length : 1;
    if (Array.isArray(kept) && kept.length === size && kept.every((v) => typeof v === "number" && Number.isFinite(v))) {
      if (spec.predict) reveal(kept);
      else {
        write(kept);
        const verdict = judge(spec, kept);
        mark(verdict.fields);
        say(said(verdict) + " (your answer from an earlier visit)", verdict.right ? "right" : "wrong");
      }
    }
  }

  function buildAll(root) { (root || document).querySelectorAll(".toy-answer").forEach(build); }
  window.toyAnswers = { buildAll: buildAll, judge: judge, parseNumber: parseNumber };
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", () => buildAll());
  else buildAll();
})();
