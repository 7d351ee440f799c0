"""Every static explorer on every chapter page, driven through its real DOM controls in headless Chromium.

The expected numbers come from ``toy`` in this process: the explorer's own ``figure_for`` at the same setting
(matched to the page by title, controls and bindings), and for Figure 4.1 also ``toy.token_advantages``,
``toy.sequence_advantage`` and ``toy.credit_by_position`` directly, independent of the explorer code.
"""

from __future__ import annotations

import inspect

import numpy as np
import pytest

import toy
from toy.page import explorer as explorer_module

pytestmark = pytest.mark.slow

TOL = 1e-9
MAX_OPTIONS = 16  # controls with more options are driven at both ends and MAX_OPTIONS - 2 evenly spaced between
ACTION_CLICKS = 3


def option_sequence(n: int, current: int) -> list[int]:
    """The option indices to visit, ascending, starting and ending at the extremes."""
    if n <= MAX_OPTIONS:
        return list(range(n))
    return sorted({int(round(k)) for k in np.linspace(0, n - 1, MAX_OPTIONS)})


def figure_4_1_from_toy(kwargs: dict, values: dict) -> dict[int, np.ndarray]:
    """Figure 4.1's four bar series at a setting, straight from toy's exact functions (trace index -> y)."""
    params = inspect.signature(toy.explorers.credit_assignment).parameters
    prompt = kwargs.get("prompt", params["prompt"].default)
    length = kwargs.get("length", params["length"].default)
    policy = toy.reference_policy(values["preset"], values["temperature"], length)
    response = tuple(values[f"y{t}"] for t in range(length))
    reward = values["reward"]
    signal, noise = toy.credit_by_position(policy, reward, prompt)
    return {
        0: np.asarray(toy.token_advantages(policy, reward, prompt, response), dtype=float),
        1: np.full(length, toy.sequence_advantage(policy, reward, prompt, response), dtype=float),
        2: np.asarray(signal, dtype=float),
        3: np.asarray(noise, dtype=float),
    }


class Driver:
    """Moves one explorer's controls in the page, and checks the figure after every move against toy."""

    def __init__(self, bt, page, doc, eid):
        self.bt, self.page, self.doc, self.eid = bt, page, doc, eid
        self.spec = bt.explorer_spec(page, eid)
        first = bt.read_explorer(page, eid)
        self.match = bt.match_explorer(doc, self.spec, first)
        self.explorer = self.match.explorer
        self.indices = {c.name: c.default for c in self.explorer.static_controls}
        self.redraws = first["redraws"]
        self.checked = 0
        self.action_steps = {a.label: 0 for a in self.explorer.actions}

    def selector(self, control) -> str:
        return f"#{self.eid}-{control.name}"

    def expect_redraws(self, n: int) -> None:
        """The move causes ``n`` redraws; the next check waits for them."""
        self.redraws += n

    # -- moves through the real controls -----------------------------------------------------------------------
    def choose(self, control, i: int) -> None:
        self.page.select_option(self.selector(control), index=i)  # (a value string may also match a label)
        self.indices[control.name] = i
        self.expect_redraws(1)

    def keys_to(self, control, i: int) -> None:
        """A slider moved with the keyboard: Home/End for the ends, arrow keys in between (one redraw per step)."""
        last, now = len(control.values) - 1, self.indices[control.name]
        self.page.focus(self.selector(control))
        if i == now:
            return
        if i in (0, last) and abs(i - now) > 1:
            self.page.keyboard.press("Home" if i == 0 else "End")
            self.indices[control.name] = i
            self.expect_redraws(1)
            return
        key = "ArrowRight" if i > now else "ArrowLeft"
        for _ in range(abs(i - now)):
            self.page.keyboard.press(key)
        self.indices[control.name] = i
        self.expect_redraws(abs(i - now))

    def drag_to(self, control, i: int) -> None:
        """A slider set as a pointer does it: the value, then an input event."""
        self.page.eval_on_selector(
            self.selector(control),
            "(el, v) => { el.value = v; el.dispatchEvent(new Event('input', {bubbles: true})); }", i)
        self.indices[control.name] = i
        self.expect_redraws(1)

    def click(self, action) -> None:
        values = {c.name: c.values[self.indices[c.name]] for c in self.explorer.static_controls}
        outs = self.explorer.evaluate(self.explorer.state(**values))
        k = self.action_steps[action.label] % action.count
        n = len(action.targets)
        chosen = outs[action.output][k * n:(k + 1) * n].astype(int)
        self.page.locator(f"#{self.eid} button.toy-action", has_text=action.label).click()
        self.action_steps[action.label] += 1
        self.indices.update(dict(zip(action.targets, chosen.tolist(), strict=True)))
        self.expect_redraws(1)

    # -- the check after every move ----------------------------------------------------------------------------
    def check(self, move: str) -> None:
        bt, ex = self.bt, self.explorer
        got = bt.read_explorer(self.page, self.eid, self.redraws)
        where = f"{self.doc} {self.spec['title']!r} after {move} at {self.indices}"
        assert got["state"] == self.indices, f"{where}: page state {got['state']}"
        for c in ex.static_controls:
            shown = got["controls"][c.name]
            assert shown["value"] == self.indices[c.name], f"{where}: control {c.name} shows {shown}"
            if c.kind == "slider":
                assert shown["readout"] == c.labels[self.indices[c.name]], f"{where}: readout {shown}"
        traces, layout = bt.expected(ex, self.indices)
        for (i, attr, _), want, have in zip(ex.traces, traces, got["traces"], strict=True):
            have = np.asarray(have, dtype=float)
            assert have.shape == want.shape, f"{where}: trace {i}.{attr} has {have.shape}, toy {want.shape}"
            assert np.max(np.abs(have - want), initial=0.0) <= TOL, f"{where}: trace {i}.{attr} {have} != {want}"
        assert [bt.unwrap(t) for t in got["layout"]] == layout, f"{where}: {got['layout']} != {layout}"
        if any(t.type == "bar" for t in ex.figure.data):
            assert got["drawnBars"] > 0, f"{where}: no bars drawn"
        self.check_ranges(where, got)
        if self.match.name == "credit_assignment":
            values = {c.name: c.values[self.indices[c.name]] for c in ex.static_controls}
            direct = figure_4_1_from_toy(self.match.kwargs, values)
            by_trace = {i: np.asarray(have, dtype=float) for (i, _, _), have in zip(ex.traces, got["traces"],
                                                                                    strict=True)}
            for i, want in direct.items():
                assert np.max(np.abs(by_trace[i] - want)) <= TOL, f"{where}: Figure 4.1 trace {i} differs from toy"
        self.checked += 1

    def check_ranges(self, where: str, got: dict) -> None:
        """The value axes' ranges: plotly draws the ones the page chose; they hold every value toy gives here; and
        they follow toy's rule: a range that holds the range these values need (``value_ranges``) and that they fill
        at least half of (``held_ranges``)."""
        ex = self.explorer
        values = {c.name: c.values[self.indices[c.name]] for c in ex.static_controls}
        needed = ex.value_ranges(ex.evaluate(ex.state(**values)))
        assert set(got["ranges"]) == {k for k, r in needed.items() if r is not None}, f"{where}: {got['ranges']}"
        for key, shown in got["ranges"].items():
            assert np.allclose(got["drawnRanges"][key], shown, rtol=0, atol=1e-12), f"{where}: {key} drawn on " \
                f"{got['drawnRanges'][key]}, chosen {shown}"
            low, high = needed[key]
            assert shown[0] <= low + 1e-12 and high <= shown[1] + 1e-12, f"{where}: {key} {shown} cuts {needed[key]}"
            assert high - low >= explorer_module.HOLD_FILL * (shown[1] - shown[0]) - 1e-12, \
                f"{where}: {key} holds {shown}, where the values fill too little of it ({needed[key]})"

    def check_drawing(self, move: str) -> None:
        """What the redraws drew (data-only redraws by plotly's transition path) equals a fresh drawing."""
        report = self.bt.drawn_as_new(self.page, self.eid)
        assert report["numbers"] == report["fresh"] > 0 and report["worst"] <= 0.01, \
            f"{self.doc} {self.spec['title']!r} after {move}: the drawn traces differ from a fresh drawing: {report}"

    def sweep(self) -> int:
        """Every control through its options (extremes included), cumulatively; then each back to its first
        option another way; then each action button a few times. Returns the number of checked settings."""
        self.check("loading")
        for c in self.explorer.static_controls:
            for i in option_sequence(len(c.values), self.indices[c.name]):
                if c.kind == "slider":
                    self.keys_to(c, i)
                else:
                    self.choose(c, i)
                self.check(f"{c.name} -> option {i}")
            self.check_drawing(f"sweeping {c.name}")
        for c in self.explorer.static_controls:
            (self.drag_to if c.kind == "slider" else self.choose)(c, 0)
            self.check(f"{c.name} -> first option")
        for a in self.explorer.actions:
            for _ in range(min(ACTION_CLICKS, a.count)):
                self.click(a)
                self.check(f"button {a.label!r}")
        return self.checked


def test_static_explorers_match_toy_at_every_control_setting(bt, browser, site_url, chapter_doc):
    page, log = bt.open_book_page(browser, bt.page_url(site_url, chapter_doc))
    try:
        ids = bt.explorer_ids(page)
        counts = {eid: Driver(bt, page, chapter_doc, eid).sweep() for eid in ids}
    finally:
        bt.close(page)
    assert log.problems() == []
    for eid, n in counts.items():
        assert n > 2, f"{chapter_doc}: explorer {eid} was checked at only {n} settings"


def test_figure_4_1_is_driven_and_matches_toy_directly(bt, browser, site_url):
    """The generic sweep is not vacuous: Figure 4.1 is found and checked against toy's exact functions."""
    doc = "chapters/04-the-llm-as-a-policy/4.1-formal-mapping"
    page, log = bt.open_book_page(browser, bt.page_url(site_url, doc))
    try:
        drivers = [Driver(bt, page, doc, eid) for eid in bt.explorer_ids(page)]
        fig41 = [d for d in drivers if d.match.name == "credit_assignment"]
        assert len(fig41) == 1, [d.match.name for d in drivers]
        d = fig41[0]
        # Move several controls, then compare with toy at a corner of the grid: τ = 0.1, the last preset that
        # temperature changes (uniform is the same at every τ), the last reward.
        presets = d.explorer._control["preset"].values
        last = max(i for i, p in enumerate(presets) if p != "uniform")
        for name, i in [("temperature", 0), ("preset", last),
                        ("reward", len(d.explorer._control["reward"].values) - 1), ("y0", 4), ("y3", 0)]:
            c = d.explorer._control[name]
            (d.keys_to if c.kind == "slider" else d.choose)(c, i)
            d.check(f"{name} -> {i}")
        caption = page.text_content(f"#{d.eid} .toy-explorer-caption")
        before = bt.read_explorer(page, d.eid, d.redraws)["traces"]
        d.keys_to(d.explorer._control["temperature"], 1)
        d.check("temperature one step right")
        after = bt.read_explorer(page, d.eid, d.redraws)["traces"]
    finally:
        bt.close(page)
    assert before != after, "moving the temperature slider did not change the bars"
    # the static view says that it is a grid, and what the live view adds
    assert "grid of 9 values" in caption and "live version" in caption and "habits" in caption, caption
    assert [c["name"] for c in d.spec["controls"]] == [c.name for c in d.explorer.static_controls]
    assert not {"count", "repeat", "know"} & {c["name"] for c in d.spec["controls"]}
