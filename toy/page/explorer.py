"""One explorer mechanism for live and static views.

An explorer is a description:

* ``controls``: named choices, each with a finite list of values (a dropdown or a slider over a grid). A slider
  may also have a continuous ``live`` range: the live view then moves continuously over it (evenly in log τ for
  a log slider), while the static view keeps the grid. A ``live_only`` control (a slider made by ``live_slider``)
  exists only in the live view; the static view holds it at its default;
* ``outputs``: named 1-d float arrays, each declaring which controls it depends on;
* ``compute(state) -> {output name: array}``: a pure function from a control state (name → value) to outputs;
* ``figure``: a plotly figure whose traces and title are filled from the outputs by ``traces`` and ``layout``
  bindings (trace attribute ← outputs concatenated; layout path ← a text template).

From that one description come

* a **live view** (in a running kernel): ipywidgets controls whose changes call ``compute`` and update a plotly
  ``FigureWidget`` in one batch;
* a **static view** (in the built book, no kernel): every output evaluated at build time on the grid of the
  controls it depends on, stored in the page as float64, and a small page script
  (``book/_static/toy/toy-explorer.js``) that only looks values up and redraws the figure;
* a **page view in a kernel** (Live code in the book, which runs a page's cells on a kernel but has no widget
  scripts): the static view's page and page script, with only the setting on screen computed when the cell runs
  (every other entry of the payload is NaN, "not computed yet"); the page script asks the kernel for any other
  setting when the reader first chooses it (and for its neighbours, so that the next step is there already),
  through a comm (``COMM_TARGET``), and keeps what it got;
* **tests**, which set controls from Python and read the same figure data the views show.

Which view an explorer shows when displayed is chosen by the environment variable ``TOY_EXPLORER_VIEW``
(``live`` by default; the book's build sets ``static``; Live code sets ``page``), so a live widget that needs a
kernel is never put in the static site. ``text`` shows only the explorer's title and computes nothing: for a
notebook run for its checks alone (nbgrader's autograde). ``page`` outside a kernel (no comm to answer the page)
is the static view.
"""

from __future__ import annotations

import base64
import contextlib
import functools
import html
import itertools
import json
import math
import os
import re
import uuid
import zlib
from collections import OrderedDict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import plotly.graph_objects as go
import plotly.io as pio

from .figures import decade_ticks, top_without_title
from .tables import figure_tables, table_plan, tables_html  # noqa: F401 - the views' numbers

VIEW_ENV = "TOY_EXPLORER_VIEW"
COMM_TARGET = "toy-explorer"
"""The comm target by which a page view asks its kernel for settings (``book/_static/toy/toy-explorer.js``)."""
PAGE_VIEWS_KEPT = 64
"""How many page views a kernel answers for: the latest shown (a re-run cell's new view replaces its old one)."""
_TEMPLATE_FIELD = re.compile(r"\{(\w+)(?::\.(\d+)f)?\}")
_LABEL_END = re.compile(r":\s*$")  # a control's label without its colon ("Prompt:" → "Prompt")


@dataclass(frozen=True)
class Control:
    """A control with a finite list of values. ``kind`` is "dropdown" or "slider"."""

    name: str
    label: str
    values: tuple
    labels: tuple[str, ...]
    default: int  # index into values
    kind: str = "dropdown"
    live: tuple[float, float] | None = None  # (low, high): the live view's slider is continuous on this range
    log: bool = False  # the live slider moves evenly in log10(value)
    step: float = 0.01  # the live slider's step (in log10(value) when ``log``)
    fmt: str = "{:.3g}"
    live_only: bool = False  # the static view offers no such control and holds it at its default

    def check(self, value):
        """The value a state holds for ``value``: any number in the live range, else one of ``values``."""
        if self.live is not None:
            low, high = self.live
            try:
                x = float(value)
            except (TypeError, ValueError):
                x = float("nan")
            if not low <= x <= high:
                raise ValueError(f"{self.label}: {value!r} is not one of the allowed values: a number in "
                                 f"[{low:g}, {high:g}]")
            return x
        return self.values[self.index(value)]

    def label_of(self, value) -> str:
        """The text a view shows for ``value``: its option label on the grid, the format off it."""
        if self.live is not None:
            return self.fmt.format(float(value))
        return self.labels[self.index(value)]

    def index(self, value) -> int:
        """Position of ``value`` in ``values``; ValueError naming the allowed values otherwise."""
        for i, v in enumerate(self.values):
            if v == value or (isinstance(v, float) and isinstance(value, (int, float)) and np.isclose(v, value)):
                return i
        raise ValueError(f"{self.label}: {value!r} is not one of the allowed values {list(self.values)}")


def dropdown(name: str, label: str, options, default) -> Control:
    """A dropdown. ``options`` is a list of values, or a dict value → label."""
    if isinstance(options, dict):
        values, labels = tuple(options), tuple(str(v) for v in options.values())
    else:
        values = tuple(options)
        labels = tuple(str(v) for v in values)
    c = Control(name, label, values, labels, 0, "dropdown")
    return Control(name, label, values, labels, c.index(default), "dropdown")


def slider(name: str, label: str, values: Sequence[float], default: float, fmt: str = "{:.3g}",
           live: bool = False, log: bool = False, step: float = 0.01) -> Control:
    """A slider over a grid of values (log-spaced grids make a log-scale slider).

    With ``live=True`` the live view's slider is continuous from the grid's first to its last value (evenly in
    log10 of the value when ``log``, in steps of ``step``); the static view keeps the grid.
    """
    values = tuple(float(v) for v in values)
    labels = tuple(fmt.format(v) for v in values)
    c = Control(name, label, values, labels, 0, "slider")
    return Control(name, label, values, labels, c.index(default), "slider",
                   live=(values[0], values[-1]) if live else None, log=log, step=step, fmt=fmt)


def live_slider(name: str, label: str, low: float, high: float, default: float, step: float = 0.1,
                fmt: str = "{:+.1f}") -> Control:
    """A continuous slider of the live view only; the static view holds it at ``default``."""
    return Control(name, label, (float(default),), (fmt.format(default),), 0, "slider",
                   live=(float(low), float(high)), step=step, fmt=fmt, live_only=True)


@dataclass(frozen=True)
class Action:
    """A button that sets ``targets`` to the next of several precomputed settings.

    The output ``output`` holds ``count`` settings one after another, each as the option indices of ``targets``
    (for example responses sampled from the policy at the current temperature).
    """

    label: str
    output: str
    targets: tuple[str, ...]
    count: int


@dataclass
class Explorer:
    """A figure driven by controls; see the module docstring."""

    title: str
    controls: list[Control]
    outputs: dict[str, tuple[str, ...]]
    compute: Callable[[dict], dict]
    figure: go.Figure
    traces: list[tuple[int, str, list[str]]]
    layout: dict[str, str] = field(default_factory=dict)
    actions: list[Action] = field(default_factory=list)
    caption: str = ""

    def __post_init__(self):
        names = {c.name for c in self.controls}
        for out, deps in self.outputs.items():
            unknown = set(deps) - names
            if unknown:
                raise ValueError(f"output {out!r} depends on unknown controls {sorted(unknown)}")
        self._control = {c.name: c for c in self.controls}
        self._fixed_json: str | None = None  # ``_payload_fixed``, made once
        self._table_plan: list | None = None  # ``table_plan``, made once
        self._page_json: str | None = None  # ``page_payload`` without its key, made once

    @property
    def static_controls(self) -> list[Control]:
        """The controls the static view offers (all but the live-only ones)."""
        return [c for c in self.controls if not c.live_only]

    # -- state and outputs -------------------------------------------------------------------------------
    def state(self, **values) -> dict:
        """The control state with defaults, overridden by ``values`` (checked against each control's values)."""
        unknown = set(values) - set(self._control)
        if unknown:
            raise ValueError(f"unknown controls {sorted(unknown)}; allowed: {list(self._control)}")
        st = {c.name: c.values[c.default] for c in self.controls}
        for name, v in values.items():
            st[name] = self._control[name].check(v)
        return st

    def evaluate(self, state: dict) -> dict[str, np.ndarray]:
        """``compute(state)`` as 1-d float arrays, one per declared output."""
        raw = self.compute(state)
        outs = {}
        for name in self.outputs:
            a = np.atleast_1d(np.asarray(raw[name], dtype=float))
            if a.ndim != 1 or not np.all(np.isfinite(a)):
                raise ValueError(f"output {name!r} must be a finite 1-d array, got {raw[name]!r}")
            outs[name] = a
        return outs

    def _fill(self, fig, outs: dict, state: dict, texts: bool = True) -> None:
        for i, attr, names in self.traces:
            fig.data[i][attr] = np.concatenate([outs[n] for n in names])
        for path, template in self.layout.items() if texts else ():
            fig.layout[path] = self.render_template(template, outs, state)

    def render_template(self, template: str, outs: dict, state: dict) -> str:
        """Replace {control} by the control's label and {output:.Nf} by the output's first value."""

        def sub(m):
            name, digits = m.group(1), m.group(2)
            if name in self._control:
                return self._control[name].label_of(state[name])
            value = float(outs[name][0])
            return f"{value:.{digits}f}" if digits is not None else f"{value:g}"

        return _TEMPLATE_FIELD.sub(sub, template)

    def figure_for(self, **values) -> go.Figure:
        """The figure at a control state: what both views show there."""
        state = self.state(**values)
        fig = go.Figure(self.figure)
        self._fill(fig, self.evaluate(state), state)
        return fig

    # -- live view --------------------------------------------------------------------------------------------
    def live(self):
        """ipywidgets controls and a FigureWidget; each change recomputes and redraws in one batch."""
        return LiveView(self)

    # -- static view ------------------------------------------------------------------------------------------
    def static_payload(self) -> dict:
        """Every output on the grid of the controls it depends on, plus the figure and bindings, as JSON data.

        Live-only controls are held at their defaults and left out of the payload, and out of every output's
        dependencies. ``axes`` holds the plans by which the page script sets the value axes' ranges (``axis_plan``,
        ``held_ranges``).

        Output ``o`` with (static) dependencies (c_1, ..., c_k) is stored as a block of floats: the entry for
        option indices (i_1, ..., i_k) starts at offset + size * (((i_1 * n_2 + i_2) * n_3 + ...) + i_k).
        All blocks together are one little-endian float64 array, zlib-compressed and base64-encoded in ``data``.
        """
        blocks, meta, offset = [], {}, 0
        by_deps: dict[tuple, list[str]] = {}
        static_deps = self._static_deps()
        for name, deps in static_deps.items():
            by_deps.setdefault(deps, []).append(name)
        values: dict[str, list] = {name: [] for name in self.outputs}
        for deps, names in by_deps.items():
            for combo in itertools.product(*(self._control[d].values for d in deps)):
                state = self.state(**dict(zip(deps, combo, strict=True)))
                outs = self.evaluate(state)
                for n in names:
                    values[n].append(outs[n])
        for name, deps in static_deps.items():
            sizes = {len(v) for v in values[name]}
            if len(sizes) != 1:
                raise ValueError(f"output {name!r} must have the same length at every state, got {sorted(sizes)}")
            block = np.concatenate(values[name])
            meta[name] = {"deps": list(deps), "size": sizes.pop(), "offset": offset}
            blocks.append(block)
            offset += block.size
        data = np.concatenate(blocks).astype("<f8")  # little-endian float64, deflated (zlib) then base64
        return self._payload(meta, data)

    def _static_deps(self) -> dict[str, tuple[str, ...]]:
        """Each output's dependencies among the static controls (live-only ones are held at their defaults)."""
        static = {c.name for c in self.static_controls}
        return {name: tuple(d for d in deps if d in static) for name, deps in self.outputs.items()}

    def _entry(self, deps: Sequence[str], indices: dict[str, int]) -> int:
        """The position of the entry at option ``indices`` in the block of an output with dependencies ``deps``."""
        index = 0
        for d in deps:
            index = index * len(self._control[d].values) + indices[d]
        return index

    def _payload_fixed(self) -> dict:
        """What every payload of this explorer holds whatever its data: the figure as the page draws it (without the
        bound values), its title and the value axes' plans. Serialised once per explorer and kept as JSON text (a
        fresh copy each call): plotly's figure objects take tens of milliseconds to copy and write out, toy's
        arithmetic for a setting one or two, and a cell re-run in Live code shows the same explorer again
        (``reused``). The figure is never changed in place: the views copy it."""
        if self._fixed_json is None:
            # The page shows the figure's title as HTML above the plot (it wraps at any width), as the live view does.
            figure = self._figure_without_bound_values()
            figure["layout"] = decade_ticks(figure["layout"])
            title = figure["layout"].get("title") or {}
            given_title = title.get("text") or ""
            if given_title or "title.text" in self.layout:
                figure["layout"]["title"] = {**title, "text": ""}
                figure["layout"].setdefault("margin", {})["t"] = top_without_title(figure["layout"])
            fixed = {"figure": figure, "figure_title": given_title, "axes": self.axis_plan(),
                     "tables": self.table_plan()}
            self._fixed_json = json.dumps(fixed, separators=(",", ":"))
        return json.loads(self._fixed_json)

    def _payload(self, meta: dict, data: np.ndarray) -> dict:
        """The page's payload: the outputs' layout ``meta`` and their ``data``, and what both page views share."""
        fixed = self._payload_fixed()
        return {
            "title": self.title,
            "controls": [
                {"name": c.name, "label": c.label, "kind": c.kind, "labels": list(c.labels), "default": c.default}
                for c in self.static_controls
            ],
            "outputs": meta,
            "data": base64.b64encode(zlib.compress(data.tobytes(), 9)).decode("ascii"),
            "traces": [[i, attr, list(names)] for i, attr, names in self.traces],
            "layout": [[path, template] for path, template in self.layout.items()],
            "actions": [
                {"label": a.label, "output": a.output, "targets": list(a.targets), "count": a.count}
                for a in self.actions
            ],
            "figure": fixed["figure"],
            "figure_title": fixed["figure_title"],  # shown above the plot while no binding sets "title.text"
            "axes": fixed["axes"],
            "tables": fixed["tables"],  # how "Numbers behind the figure" reads the figure (toy.page.tables)
        }

    def _figure_without_bound_values(self) -> dict:
        """The default figure as JSON, minus what the page would carry for nothing: the trace attributes bound to
        outputs (the page script fills those from ``data`` at every redraw) and the template's defaults for trace
        types the figure does not draw (the figure looks the same)."""
        fig = json.loads(pio.to_json(self.figure_for(), validate=False))
        template = fig["layout"].get("template", {})
        if "data" in template:
            used = {trace.get("type", "scatter") for trace in fig["data"]}
            template["data"] = {kind: v for kind, v in template["data"].items() if kind in used}
        for i, attr, _ in self.traces:
            *path, last = attr.split(".")
            node = fig["data"][i]
            for key in path:
                node = node.get(key, {})
            node.pop(last, None)
        return fig

    def table_plan(self) -> list[dict | None]:
        """How the numbers behind the figure read each trace (``toy.page.tables.table_plan``), from the figure at the
        default setting; made once (the figure never changes)."""
        if self._table_plan is None:
            self._table_plan = table_plan(self.figure_for())
        return self._table_plan

    def tables(self, **values) -> list[dict]:
        """The numbers behind the figure at a setting, as the views show them (``toy.page.tables.figure_tables``),
        each caption naming the setting shown (``named_tables``)."""
        return self.named_tables(figure_tables(self.figure_for(**values), self.table_plan()), self.state(**values))

    def shown_at(self, state: dict) -> str:
        """The setting ``state`` as text, as the page prints it under the figure: "Shown at: Prompt = 2; τ = 1."
        ("" without controls). The static view's controls only, as the page names them (a live-only control, such
        as the credit explorer's habit sliders, stays at its default there)."""
        if not self.static_controls:
            return ""
        return "Shown at: " + "; ".join(f"{_LABEL_END.sub('', c.label)} = {c.label_of(state[c.name])}"
                                        for c in self.static_controls) + "."

    def named_tables(self, tables: list[dict], state: dict) -> list[dict]:
        """``tables`` with the case they show named: {control} in a row's name becomes the control's value at
        ``state`` ("ε_high = {eps_high}"), and each caption ends with ``shown_at(state)``, so a table read alone (in
        print, by a screen reader) says which prompt, τ, method … its numbers belong to. The page script does the same
        at every redraw."""
        shown = self.shown_at(state)

        def name(text: str) -> str:
            return _TEMPLATE_FIELD.sub(lambda m: self._control[m.group(1)].label_of(state[m.group(1)])
                                       if m.group(1) in self._control else m.group(0), text)

        out = []
        for tab in tables:
            caption = tab["caption"].strip()
            if caption and shown and not caption.endswith("."):
                caption += "."
            out.append({**tab, "caption": " ".join(x for x in (caption, shown) if x),
                        "rows": [[name(r[0]), *r[1:]] for r in tab["rows"]]})
        return out

    def axis_plan(self) -> dict[str, dict]:
        """How each value axis gets its range from the bound outputs: {layout axis key: plan}.

        A plan names the bindings (indices into ``traces``) whose values the axis draws (``values``: x or y) and
        whose values widen it (``errors``: error bar lengths), the extremes of the unbound trace values on it
        (``fixed``: [low, high] or None), whether bars grow from 0 along it (``bars``) and whether it is ``log``.
        Axes that draw no bound value, or whose figure fixes the range, have no plan. An axis whose figure asks for
        ``rangemode`` "tozero" or "nonnegative" (a probability, a mean square, a KL) is ``nonnegative``: its range never
        goes below 0, whatever error bars or padding would ask. The page script applies the same plans
        (``book/_static/toy/toy-explorer.js``).
        """
        layout = self.figure.layout
        binding = {(i, attr): k for k, (i, attr, _names) in enumerate(self.traces)}
        plans: dict[str, dict] = {}
        for i, trace in enumerate(self.figure.data):
            for letter in "xy":
                key = letter + "axis" + (getattr(trace, letter + "axis", None) or letter)[1:]
                if key not in layout or layout[key].range is not None or layout[key].type in ("category", "date"):
                    continue
                plan = plans.setdefault(key, {"values": [], "errors": [], "fixed": None, "bars": False,
                                              "log": layout[key].type == "log",
                                              "nonnegative": layout[key].type != "log"
                                              and layout[key].rangemode in ("tozero", "nonnegative")})
                if (i, letter) in binding:
                    plan["values"].append(binding[(i, letter)])
                elif trace[letter] is not None:
                    nums = [float(v) for v in np.ravel(np.asarray(trace[letter], dtype=object))
                            if isinstance(v, (int, float, np.number))]
                    if nums:
                        low, high = plan["fixed"] or (min(nums), max(nums))
                        plan["fixed"] = [min(low, *nums), max(high, *nums)]
                if (i, f"error_{letter}.array") in binding:
                    plan["errors"].append(binding[(i, f"error_{letter}.array")])
                if trace.type == "bar" and letter == ("x" if trace.orientation == "h" else "y"):
                    plan["bars"] = not plan["log"]
        return {key: plan for key, plan in plans.items() if plan["values"]}

    def value_ranges(self, outs: dict[str, np.ndarray], plans: dict | None = None) -> dict[str, list[float]]:
        """The range each planned axis needs to show ``outs`` (one state's outputs): {axis key: [low, high]}, in
        log10 units on a log axis. Like plotly's autorange: the values, ± the longest error bar (only + on a log
        axis, which may cut an error bar's foot), 0 for bars, and 5% of the span as padding on each side (none
        beyond a bar's 0); None for a log axis with no positive value. ``plans``: ``axis_plan()``, if already
        computed (the live view computes it once: it reads only the fixed figure)."""
        extremes = []
        for _i, _attr, names in self.traces:
            a = np.concatenate([outs[n] for n in names])
            extremes.append((float(a.min()), float(a.max())))
        plans = self.axis_plan() if plans is None else plans
        return {key: _needed_range(plan, extremes) for key, plan in plans.items()}

    def static_html(self) -> str:
        """The static view: controls, an empty figure div and the payload; the page script brings it alive."""
        return self._html(self.static_payload())

    # -- page view in a kernel (Live code) ----------------------------------------------------------------------
    def page_payload(self, key: str) -> dict:
        """The static view's payload with only the default setting computed: every other entry of ``data`` is NaN
        (an output is never NaN: ``evaluate``), and ``kernel`` tells the page script how to ask the kernel that
        holds this explorer under ``key`` for the others (``page_outputs``, through ``COMM_TARGET``). Made once per
        explorer (the same explorer shown again, ``reused``, gives the same payload under a new key)."""
        if self._page_json is None:
            self._page_json = json.dumps(self._page_payload_once(), separators=(",", ":"))
        payload = json.loads(self._page_json)
        payload["kernel"] = {"target": COMM_TARGET, "key": key}
        return payload

    def _page_payload_once(self) -> dict:
        outs = self.evaluate(self.state())
        indices = {c.name: c.default for c in self.controls}
        blocks, meta, offset = [], {}, 0
        for name, deps in self._static_deps().items():
            size = outs[name].size
            block = np.full(size * math.prod(len(self._control[d].values) for d in deps), np.nan)
            at = self._entry(deps, indices) * size
            block[at: at + size] = outs[name]
            meta[name] = {"deps": list(deps), "size": size, "offset": offset}
            blocks.append(block)
            offset += block.size
        return self._payload(meta, np.concatenate(blocks).astype("<f8"))

    def page_outputs(self, indices: dict) -> dict[str, list[float]]:
        """Every output at a setting of the static controls given by option ``indices`` ({name: index}, as the page
        script's state holds them): what the page view's script asks its kernel for."""
        if not isinstance(indices, dict) or set(indices) != {c.name for c in self.static_controls}:
            raise ValueError(f"a setting names each of the controls {[c.name for c in self.static_controls]} "
                             f"once, got {indices!r}")
        values = {}
        for c in self.static_controls:
            i = indices[c.name]
            if isinstance(i, bool) or not isinstance(i, int) or not 0 <= i < len(c.values):
                raise ValueError(f"{c.label}: {i!r} is not an option index from 0 to {len(c.values) - 1}")
            values[c.name] = c.values[i]
        return {name: a.tolist() for name, a in self.evaluate(self.state(**values)).items()}

    def page_html(self) -> str:
        """The page view in a kernel (see the module docstring); the static view where no kernel can answer."""
        key = _serve_page_view(self)
        return self.static_html() if key is None else self._html(self.page_payload(key))

    def _html(self, payload: dict) -> str:
        payload = json.dumps(payload, separators=(",", ":")).replace("</", "<\\/")
        caption = f'<p class="toy-explorer-caption">{html.escape(self.caption)}</p>' if self.caption else ""
        # the numbers at the default setting, in the page as built (readable without a script); the page script
        # keeps them up to date with the controls
        numbers = (f'<details class="toy-explorer-table"><summary>{TABLE_LABEL}</summary>'
                   f'<div class="toy-explorer-tables">{tables_html(self.tables())}</div></details>')
        return (
            f'<div class="toy-explorer" data-title="{html.escape(self.title)}">'
            '<div class="toy-explorer-controls"></div><div class="toy-explorer-figure"></div>'
            f"{numbers}{caption}"
            '<noscript>This explorer needs JavaScript.</noscript>'
            f'<script type="application/json" class="toy-explorer-spec">{payload}</script></div>'
        )

    # -- display ----------------------------------------------------------------------------------------------
    def _repr_mimebundle_(self, include=None, exclude=None):
        view = os.environ.get(VIEW_ENV, "live")
        if view == "static":
            return {"text/html": self.static_html(), "text/plain": f"<explorer: {self.title}>"}
        if view == "page":  # Live code in the book: the page's view, each setting computed when first chosen
            return {"text/html": self.page_html(), "text/plain": f"<explorer: {self.title}>"}
        if view == "text":  # a notebook run for its checks only (nbgrader's autograde): nothing is computed
            return {"text/plain": f"<explorer: {self.title} (shown in the book and in JupyterLab)>"}
        return self.live().widget._repr_mimebundle_(include=include, exclude=exclude)


REUSED_KEPT = 32
"""How many explorers a ``reused`` factory keeps (the latest built or asked for)."""


def _plain(value) -> bool:
    """Whether ``value`` is a plain value (None, a bool, number or string, or a tuple of such): a factory's argument
    that cannot change after the call, so an explorer built from it may be shown again."""
    if value is None or isinstance(value, (bool, int, float, str)):
        return True
    return isinstance(value, tuple) and all(_plain(v) for v in value)


def reused(factory: Callable[..., Explorer]) -> Callable[..., Explorer]:
    """``factory`` (a function that builds an explorer), giving back the explorer it built before when called again
    with the same plain arguments (``_plain``; any other argument builds a new one). An explorer is a description
    that nothing changes (each view copies its figure and keeps its own state), so showing it again is the same:
    a cell re-run (Live code re-runs an explorer's cell on its kernel) then builds no plotly figure, serialises
    none (``_payload_fixed``) and recomputes none of the tables it computed already; only the new view is made.
    ``factory.built`` holds the explorers kept (at most ``REUSED_KEPT``), keyed by the arguments and their types."""
    built: OrderedDict[tuple, Explorer] = OrderedDict()

    @functools.wraps(factory)
    def build(*args, **kwargs) -> Explorer:
        if not all(_plain(v) for v in (*args, *kwargs.values())):
            return factory(*args, **kwargs)
        key = (repr(args), repr(sorted(kwargs.items())))  # repr tells 1, 1.0 and True apart
        if key in built:
            built.move_to_end(key)
            return built[key]
        explorer = factory(*args, **kwargs)
        built[key] = explorer
        while len(built) > REUSED_KEPT:
            built.popitem(last=False)
        return explorer

    build.built = built
    return build


_PAGE_VIEWS: OrderedDict[str, Explorer] = OrderedDict()  # key -> explorer, for the page views this kernel showed


def _comm_manager():
    """The running kernel's comm manager, or None outside a kernel."""
    try:
        from IPython import get_ipython
    except ImportError:  # pragma: no cover - IPython comes with plotly's and ipywidgets' stack
        return None
    return getattr(getattr(get_ipython(), "kernel", None), "comm_manager", None)


def _serve_page_view(explorer: Explorer) -> str | None:
    """Keep ``explorer`` for its page view to ask about; its key, or None when no kernel can answer."""
    manager = _comm_manager()
    if manager is None:
        return None
    manager.register_target(COMM_TARGET, _open_page_comm)
    key = uuid.uuid4().hex
    _PAGE_VIEWS[key] = explorer
    while len(_PAGE_VIEWS) > PAGE_VIEWS_KEPT:
        _PAGE_VIEWS.popitem(last=False)
    return key


def _open_page_comm(comm, msg) -> None:
    """A page view's script opened a comm (data: {key}); each message {id, states: [{control: option index}]}
    gets the reply {id, outputs: [{output: values}, ...]} or {id, error}. The page closes it when the view leaves
    the page (its cell re-run), and the kernel forgets that view."""
    key = ((msg.get("content") or {}).get("data") or {}).get("key")
    comm.on_msg(lambda m: comm.send(page_answer(key, (m.get("content") or {}).get("data"))))
    comm.on_close(lambda _m: _PAGE_VIEWS.pop(key, None))


def page_answer(key, request: dict) -> dict:
    """The kernel's answer to a page view's ``request`` ({id, states}); see ``_open_page_comm``."""
    if not isinstance(request, dict):
        return {"id": None, "error": f"a request is {{id, states}}, got {request!r}"}
    reply = {"id": request.get("id")}
    explorer = _PAGE_VIEWS.get(key)
    if explorer is None:
        reply["error"] = "this kernel no longer holds the explorer (it restarted, or showed it long ago)"
        return reply
    _PAGE_VIEWS.move_to_end(key)
    states = request.get("states")
    try:
        if not isinstance(states, list):
            raise ValueError(f"states must be a list of settings, got {states!r}")
        reply["outputs"] = [explorer.page_outputs(s) for s in states]
    except Exception as err:  # noqa: BLE001 - the page shows why, and the reader may move on
        reply["error"] = f"{type(err).__name__}: {err}"
    return reply


def _needed_range(plan: dict, extremes: list[tuple[float, float]]) -> list[float] | None:
    """One axis's range for the bindings' (min, max) ``extremes`` (see ``Explorer.value_ranges``)."""
    low, high = plan["fixed"] or (np.inf, -np.inf)
    for k in plan["values"]:
        low, high = min(low, extremes[k][0]), max(high, extremes[k][1])
    longest = max((extremes[k][1] for k in plan["errors"]), default=0.0)
    low, high = (low if plan["log"] else low - longest), high + longest  # a log axis may cut an error bar's foot
    if plan["bars"]:
        low, high = min(low, 0.0), max(high, 0.0)
    if plan["log"]:
        if high <= 0:
            return None
        low, high = np.log10(max(low, high * 1e-12)), np.log10(high)
    pad = 0.05 * (high - low) if high > low else 0.05 * max(abs(high), 1.0)
    low, high = (low if plan["bars"] and low == 0 else low - pad), (high if plan["bars"] and high == 0 else high + pad)
    if plan.get("nonnegative"):
        low, high = max(low, 0.0), max(high, 0.0)
    return [float(low), float(high)]


HOLD_FILL = 0.5  # an axis keeps its range while the values need at least this fraction of it
HOLD_ROOM = 0.1  # a range that moves takes this fraction of the needed span again as room on each side


def held_ranges(shown: dict[str, list[float]], needed: dict[str, list[float] | None],
                plans: dict[str, dict] | None = None) -> dict[str, list[float]]:
    """The ranges to draw: an axis keeps the range it shows while the range it needs fits inside and fills at
    least ``HOLD_FILL`` of it; otherwise it takes the needed range widened by ``HOLD_ROOM`` of its span on each
    side (not past a bar's 0), so that neighbouring settings fit too. Held axes let a reader compare neighbouring
    settings on one scale, and a redraw that changes only data redraws within a frame (no relayout). The room
    stops at 0 on an axis whose plan (``plans``, from ``Explorer.axis_plan``) is ``nonnegative``."""
    out = {}
    for key, want in needed.items():
        have = shown.get(key)
        if want is None:
            continue
        keep = have is not None and have[0] <= want[0] and want[1] <= have[1] and (
            want[1] - want[0] >= HOLD_FILL * (have[1] - have[0]))
        room = HOLD_ROOM * (want[1] - want[0])
        out[key] = list(have) if keep else [want[0] - room if want[0] != 0 else 0.0,
                                            want[1] + room if want[1] != 0 else 0.0]
        if not keep and (plans or {}).get(key, {}).get("nonnegative"):
            out[key] = [max(v, 0.0) for v in out[key]]
    return out


TITLE_STYLE = "font-size: 15px; line-height: 1.35; margin: 4px 0 0 8px"  # the live view's title (HTML)
TABLE_LABEL = "Numbers behind the figure"

FIGURE_THEME_CSS = Path(__file__).with_name("figure_theme.css")
"""Plotly figures in a dark theme (the book's and JupyterLab's), as CSS: see the file. The live view puts it beside
each live explorer; the book's extension adds it to every page."""


class LiveView:
    """The live view of an explorer: ``widget`` (to display), ``controls`` (name → ipywidget), ``figure``.

    Its value axes hold their range while the values fit (``held_ranges``), as in the static view.
    """

    def __init__(self, explorer: Explorer):
        import ipywidgets as W

        self.explorer = explorer
        self.figure = go.FigureWidget(explorer.figure)
        # The title is HTML above the plot, as in the static view: it wraps by itself, and a redraw that changes
        # only numbers leaves the plot's layout alone, so plotly redraws the traces only (``_data_only``).
        layout = self.figure.layout
        self._given_title = layout.title.text or ""
        if self._given_title or "title.text" in explorer.layout:
            layout.margin.t = top_without_title(layout.to_plotly_json())
        layout.title.text = ""
        self.title = W.HTML()
        self.title_text = ""  # the title shown above the plot (plotly's markup: <br> for a new line)
        self.controls = {}
        self._holding = False
        self.ranges: dict[str, list[float]] = {}  # the value axes' ranges shown (``held_ranges``)
        self._plans = explorer.axis_plan()  # how each value axis's range follows the values (fixed per figure)
        self._tables = explorer.table_plan()  # how the numbers behind the figure read its traces
        self._sent: dict[tuple, np.ndarray] = {}  # the bound values the figure holds, by (trace, attribute)
        self._texts: dict[str, str] | None = None  # the layout texts shown (None: nothing drawn yet)
        self._action_step = {a.label: 0 for a in explorer.actions}
        for c in explorer.controls:
            options = [(label, i) for i, label in enumerate(c.labels)]
            style = {"description_width": "initial"}
            slider_layout = W.Layout(width="100%", max_width="420px")
            if c.live is not None and c.log:
                low, high = np.log10(c.live)
                w = W.FloatLogSlider(value=c.values[c.default], base=10, min=low, max=high, step=c.step,
                                     description=c.label, style=style, readout_format=".3g", continuous_update=True,
                                     layout=slider_layout)
            elif c.live is not None:
                w = W.FloatSlider(value=c.values[c.default], min=c.live[0], max=c.live[1], step=c.step,
                                  description=c.label, style=style, readout_format="+.1f", continuous_update=True,
                                  layout=slider_layout)
            elif c.kind == "slider":
                w = W.SelectionSlider(options=options, value=c.default, description=c.label, style=style,
                                      continuous_update=True, layout=W.Layout(width="100%", max_width="420px"))
            else:
                w = W.Dropdown(options=options, value=c.default, description=c.label, style=style,
                               layout=W.Layout(width="auto"))
            w.observe(self._on_change, names="value")
            self.controls[c.name] = w
        buttons = []
        for a in explorer.actions:
            b = W.Button(description=a.label, tooltip=a.label)
            b.on_click(lambda _b, a=a: self.run_action(a.label))
            buttons.append(b)
        for w in list(self.controls.values()) + buttons:
            w.layout.margin = "2px 14px 2px 0"
        box = W.Layout(display="flex", flex_flow="row wrap", align_items="center")
        # The figure's numbers as a table, under it, for readers who prefer numbers and for screen readers.
        self.table_toggle = W.ToggleButton(value=False, description=TABLE_LABEL, icon="table", tooltip=TABLE_LABEL)
        self.table = W.HTML(layout=W.Layout(display="none", overflow="auto"))
        self.table_toggle.observe(self._show_table, names="value")
        theme = W.HTML(f"<style>{FIGURE_THEME_CSS.read_text()}</style>")  # follows JupyterLab's dark theme
        self.widget = W.VBox([theme, W.Box(list(self.controls.values()) + buttons, layout=box), self.title,
                              self.figure, self.table_toggle, self.table])
        self.widget.add_class("toy-live-explorer")
        self.redraw()

    def _show_table(self, _change=None) -> None:
        self.table.layout.display = "block" if self.table_toggle.value else "none"
        if self.table_toggle.value:
            self.table.value = self._tables_html()

    def _tables_html(self) -> str:
        return tables_html(self.explorer.named_tables(figure_tables(self.figure, self._tables), self.state()))

    def state(self) -> dict:
        """The control state the widgets show (continuous sliders give their value, the others an option)."""
        return {c.name: (float(self.controls[c.name].value) if c.live is not None
                         else c.values[self.controls[c.name].value]) for c in self.explorer.controls}

    def redraw(self) -> None:
        """Recompute the outputs for the current controls and update the figure in one batch."""
        state = self.state()
        outs = self.explorer.evaluate(state)
        ex = self.explorer
        texts = {path: ex.render_template(template, outs, state) for path, template in ex.layout.items()}
        self.title_text = texts.pop("title.text", self._given_title)
        self.title.value = f'<div style="{TITLE_STYLE}">{self.title_text}</div>'
        ranges = held_ranges(self.ranges, ex.value_ranges(outs, self._plans), self._plans)
        data_only = texts == self._texts and ranges == self.ranges
        self.ranges, self._texts = ranges, texts
        # only the bound values that changed go to the page: a token's menu moves the upper panel's bars alone
        changed = []
        for i, attr, names in ex.traces:
            value = np.concatenate([outs[n] for n in names])
            if not np.array_equal(self._sent.get((i, attr)), value):
                changed.append((i, attr, value))
                self._sent[(i, attr)] = value
        if data_only and not changed:
            return
        with self._data_only() if data_only else self.figure.batch_update():
            for i, attr, value in changed:
                self.figure.data[i][attr] = value
            if not data_only:
                for path, text in texts.items():
                    self.figure.layout[path] = text
                for key, span in ranges.items():
                    self.figure.layout[key].range = span
        if self.table_toggle.value:
            self.table.value = self._tables_html()

    @contextlib.contextmanager
    def _data_only(self):
        """``FigureWidget.batch_animate`` for a change of trace data only: plotly's transition path, which redraws
        the traces and leaves axes and texts alone (``frame.redraw`` off; ``batch_animate`` keeps it on, which costs
        a full plot in the browser)."""
        fig = self.figure
        fig._in_batch_mode = True  # as batch_animate does
        try:
            yield
        finally:
            fig._in_batch_mode = False
        fig._perform_batch_animate({"transition": {"duration": 0}, "frame": {"duration": 0, "redraw": False},
                                    "mode": "immediate"})

    def _on_change(self, _change) -> None:
        if not self._holding:
            self.redraw()

    def set(self, **values) -> None:
        """Set several controls (by value) and redraw once."""
        self._holding = True
        try:
            for name, v in values.items():
                c = self.explorer._control[name]
                self.controls[name].value = c.check(v) if c.live is not None else c.index(v)
        finally:
            self._holding = False
        self.redraw()

    def run_action(self, label: str) -> None:
        """Press an action button: set its targets to the next precomputed setting."""
        a = next(a for a in self.explorer.actions if a.label == label)
        k = self._action_step[label] % a.count
        self._action_step[label] += 1
        outs = self.explorer.evaluate(self.state())
        idx = outs[a.output][k * len(a.targets): (k + 1) * len(a.targets)].astype(int)
        values = {name: self.explorer._control[name].values[i] for name, i in zip(a.targets, idx, strict=True)}
        self.set(**values)
