"""Every explorer, driven from Python: each control at each of its values, live view, static payload.

The static payload is decoded here with the same lookup rule the page script uses, so the numbers the built
page shows are checked against what toy computes at that setting.
"""

import base64
import itertools
import numbers
import zlib

import numpy as np
import pytest

import toy
from toy.page.explorers import ALL


@pytest.fixture(scope="module", params=sorted(ALL))
def explorer(request):
    return ALL[request.param]()


def random_states(ex, n, seed=0):
    rng = np.random.default_rng(seed)
    for _ in range(n):
        yield {c.name: c.values[rng.integers(len(c.values))] for c in ex.controls}


def figure_numbers(values) -> list:
    """Every number in a trace's data (nested for a heatmap's z), numpy's included; text (a category) and None (a
    gap) are not numbers, and nothing is skipped for where it stands."""
    if values is None or isinstance(values, (str, bytes)):
        return []
    if isinstance(values, (bool, np.bool_)):
        raise AssertionError(f"a boolean in figure data: {values!r}")
    if isinstance(values, (numbers.Real, np.number)):
        return [float(values)]
    if isinstance(values, np.ndarray) and values.dtype.kind in "biuf":
        return values.astype(float).ravel().tolist()
    return [x for v in values for x in figure_numbers(v)]


def test_every_control_value_gives_finite_figure_data(explorer):
    seen = 0
    for c in explorer.controls:
        for v in c.values:  # every value, so the extremes too
            fig = explorer.figure_for(**{c.name: v})
            for trace in fig.data:
                for attr in ("x", "y", "z"):
                    found = figure_numbers(trace[attr]) if attr in trace else []
                    seen += len(found)
                    assert np.all(np.isfinite(found)), (c.name, v, trace.name, attr)
    assert seen, "no numbers in any figure: nothing was checked"


def test_outputs_depend_only_on_their_declared_controls(explorer):
    for state in random_states(explorer, 12):
        base = explorer.evaluate(state)
        for c in explorer.controls:
            for v in (c.values[0], c.values[-1]):
                other = explorer.evaluate({**state, c.name: v})
                for name, deps in explorer.outputs.items():
                    if c.name not in deps:
                        np.testing.assert_array_equal(other[name], base[name], err_msg=f"{name} depends on {c.name}")


def decode(payload):
    return np.frombuffer(zlib.decompress(base64.b64decode(payload["data"])), dtype="<f8")


def lookup(payload, data, name, indices):
    """The page script's rule: the block of ``name`` at the option indices of its dependencies."""
    out = payload["outputs"][name]
    sizes = {c["name"]: len(c["labels"]) for c in payload["controls"]}
    index = 0
    for d in out["deps"]:
        index = index * sizes[d] + indices[d]
    start = out["offset"] + index * out["size"]
    return data[start: start + out["size"]]


def test_static_payload_holds_exactly_what_compute_gives(explorer):
    payload = explorer.static_payload()
    data = decode(payload)
    controls = {c.name: c for c in explorer.controls}
    states = list(random_states(explorer, 25, seed=1))
    states.append({c.name: c.values[0] for c in explorer.controls})
    states.append({c.name: c.values[-1] for c in explorer.controls})
    for state in states:
        indices = {name: controls[name].index(v) for name, v in state.items()}
        outs = explorer.evaluate(state)
        for name in explorer.outputs:
            np.testing.assert_array_equal(lookup(payload, data, name, indices), outs[name])


def test_static_view_is_small(explorer):
    html = explorer.static_html()
    assert len(html) < 600_000, f"{explorer.title}: static view is {len(html):,} bytes"


def test_live_view_redraws_to_the_same_figure(explorer):
    live = explorer.live()
    for c in explorer.controls:
        for v in (c.values[0], c.values[-1]):
            live.set(**{c.name: v})
            want = explorer.figure_for(**live.state())
            for got_trace, want_trace in zip(live.figure.data, want.data, strict=True):
                for attr in ("x", "y"):
                    np.testing.assert_array_equal(np.asarray(got_trace[attr]), np.asarray(want_trace[attr]))
            assert live.title_text == want.layout.title.text and live.title_text in live.title.value


def test_live_controls_are_widgets_that_drive_the_figure(explorer):
    live = explorer.live()
    for c in explorer.controls:
        widget = live.controls[c.name]
        if c.live is not None:  # a continuous slider: to its far end, as a reader would drag it
            end = c.live[1] if widget.value != c.live[1] else c.live[0]
            widget.value = end
            assert live.state()[c.name] == pytest.approx(end, rel=1e-12)
        else:
            widget.value = len(c.values) - 1 if widget.value != len(c.values) - 1 else 0  # as a reader would
            assert live.state()[c.name] == c.values[widget.value]
        want = explorer.figure_for(**live.state())
        for got_trace, want_trace in zip(live.figure.data, want.data, strict=True):
            np.testing.assert_array_equal(np.asarray(got_trace.y), np.asarray(want_trace.y))


def test_static_payload_offers_only_static_controls(explorer):
    payload = explorer.static_payload()
    assert [c["name"] for c in payload["controls"]] == [c.name for c in explorer.static_controls]
    static = {c.name for c in explorer.static_controls}
    assert all(set(o["deps"]) <= static for o in payload["outputs"].values())


def test_unknown_control_values_are_rejected_clearly(explorer):
    c = explorer.controls[0]
    with pytest.raises(ValueError, match="not one of the allowed values"):
        explorer.state(**{c.name: object()})
    with pytest.raises(ValueError, match="unknown controls"):
        explorer.state(no_such_control=1)


# -- Figure 4.1 against toy directly ------------------------------------------------------------------------------
def test_figure_4_1_shows_toys_exact_credit():
    ex = toy.explorers.credit_assignment(prompt=2)
    temps = toy.explorers.TEMPERATURES
    for reward, temperature, preset in itertools.product(toy.REWARDS, (temps[0], 1.0, temps[-1]), toy.PRESETS):
        for y in [(1, 2, 3, 4), (0, 0, 0, 0), (4, 3, 2, 1)]:
            fig = ex.figure_for(reward=reward, temperature=temperature, preset=preset,
                                **{f"y{t}": y[t] for t in range(4)})
            pi = toy.reference_policy(preset, temperature)
            np.testing.assert_allclose(fig.data[0].y, toy.token_advantages(pi, reward, 2, y), atol=1e-15)
            np.testing.assert_allclose(fig.data[1].y, [toy.sequence_advantage(pi, reward, 2, y)] * 4, atol=1e-15)
            signal, noise = toy.credit_by_position(pi, reward, 2)
            np.testing.assert_allclose(fig.data[2].y, signal, atol=1e-15)
            np.testing.assert_allclose(fig.data[3].y, noise, atol=1e-15)
            assert f"response {' '.join(map(str, y))}" in fig.layout.title.text


def test_figure_4_1_sample_button_sets_responses_drawn_from_the_policy():
    ex = toy.explorers.credit_assignment(prompt=2)
    live = ex.live()
    live.set(temperature=toy.explorers.TEMPERATURES[0], preset="knows_task")
    pi = toy.reference_policy("knows_task", toy.explorers.TEMPERATURES[0])
    seen = []
    for _ in range(5):
        live.run_action("Sample a response")
        y = tuple(live.state()[f"y{t}"] for t in range(4))
        assert pi.prob(2, y) > 0
        seen.append(y)
    np.testing.assert_array_equal(np.array(seen), pi.sample(2, toy.explorers.credit.N_SAMPLES, rng=0)[:5])


def test_figure_4_1_live_redraw_is_batched():
    """One control change sends one message to the front end, not one per trace: an update when the axes' ranges
    move, else an animation of the traces' data only, which the browser draws without a relayout."""
    live = toy.explorers.credit_assignment().live()
    sent = []
    for kind in ("restyle", "relayout", "update", "animate"):
        setattr(live.figure, f"_send_{kind}_msg", lambda *a, kind=kind, **k: sent.append((kind, k)))
    live.set(temperature=toy.explorers.TEMPERATURES[0])
    assert [kind for kind, _ in sent] == ["update"]  # from τ = 1 to 0.1 the values shrink far below the range
    live.set(temperature=toy.explorers.TEMPERATURES[-1])
    before = dict(live.ranges)
    sent.clear()
    live.set(temperature=9.0)  # values that fit the range and fill most of it: the range holds
    assert live.ranges == before
    assert [kind for kind, _ in sent] == ["animate"]
    msg = sent[0][1]  # the traces' data only, drawn by plotly's transition path without a redraw of the frame
    assert msg["relayout_data"] == {} and msg["animation_opts"]["frame"]["redraw"] is False
    assert sorted(msg["trace_indexes"]) == [0, 1, 2, 3]
    by_trace = dict(zip(msg["trace_indexes"], msg["styles_data"], strict=True))
    np.testing.assert_array_equal(by_trace[0]["y"], live.figure.data[0].y)


def test_figure_4_1_live_view_off_the_grid_shows_toys_numbers():
    """The live view is continuous: at temperatures between the static grid's points and with π_ref's habits
    shifted by its sliders, it shows exactly what toy computes there."""
    ex = toy.explorers.credit_assignment(prompt=2)
    live = ex.live()
    assert type(live.controls["temperature"]).__name__ == "FloatLogSlider"
    assert (live.controls["temperature"].min, live.controls["temperature"].max) == (-1.0, 1.0)
    for c in ("count", "repeat", "know"):
        assert (live.controls[c].min, live.controls[c].max) == toy.HABIT_RANGE
    y = (3, 0, 4, 1)
    settings = [dict(temperature=0.137), dict(temperature=7.3, preset="terse", count=2.4),
                dict(temperature=1.0, preset="uniform", know=3.3, repeat=-1.7),
                dict(temperature=0.1, preset="confidently_wrong", count=-5.0, know=5.0, repeat=5.0),
                dict(temperature=10.0, reward="first_token", preset="knows_task", know=-5.0)]
    for setting in settings:
        live.set(**setting, **{f"y{t}": y[t] for t in range(4)})
        st = live.state()
        assert all(st[k] == (pytest.approx(v) if isinstance(v, float) else v) for k, v in setting.items())
        habits = {h: st[h] for h in ("count", "repeat", "know")}
        pi = toy.reference_policy(st["preset"], st["temperature"], **habits)
        reward = st["reward"]
        signal, noise = toy.credit_by_position(pi, reward, 2)
        d = live.figure.data
        np.testing.assert_allclose(d[0].y, toy.token_advantages(pi, reward, 2, y), atol=1e-15)
        np.testing.assert_allclose(d[1].y, [toy.sequence_advantage(pi, reward, 2, y)] * 4, atol=1e-15)
        np.testing.assert_allclose(d[2].y, signal, atol=1e-15)
        np.testing.assert_allclose(d[3].y, noise, atol=1e-15)
        assert f"V(x) = {toy.value(pi, reward, 2):.3f}" in live.title_text
    # the habit sliders change the bars: each one moves something the others do not
    base = ex.figure_for()
    for habit in ("count", "repeat", "know"):
        moved = ex.figure_for(**{habit: 1.0})
        assert np.abs(np.asarray(moved.data[2].y) - np.asarray(base.data[2].y)).max() > 1e-3, habit


def test_figure_4_1_controls_reject_values_outside_their_range():
    ex = toy.explorers.credit_assignment()
    with pytest.raises(ValueError, match=r"knows the task \+.*5.5.*\[-5, 5\]"):
        ex.state(know=5.5)
    with pytest.raises(ValueError, match=r"Temperature.*0.05.*\[0.1, 10\]"):
        ex.state(temperature=0.05)
    with pytest.raises(ValueError, match="'tuned'"):
        ex.state(preset="tuned")
    with pytest.raises(ValueError, match=r"count.*\[-5, 5\].*7"):
        toy.reference_policy(count=7)


# -- the value axes' ranges ----------------------------------------------------------------------------------------
def drawn_values(ex, fig, key):
    """Every value figure ``fig`` draws along layout axis ``key`` (bound or not, error bars included), in the axis's
    units (log10 on a log axis, where values <= 0 are not drawn), plus 0 for bars growing along it."""
    letter, ref = key[0], key[0] + key[5:]
    out = []
    for trace in fig.data:
        if (trace[letter + "axis"] or letter) != ref or trace[letter] is None:
            continue
        v = np.array([x for x in np.ravel(np.asarray(trace[letter], dtype=object))
                      if isinstance(x, (int, float, np.number))], dtype=float)
        err = trace[f"error_{letter}"].array if trace[f"error_{letter}"] is not None else None
        if err is not None:
            err = np.asarray(err, dtype=float)
            log = fig.layout[key].type == "log"  # where an error bar's foot may be cut off
            v = np.concatenate([v, v + err] if log else [v, v - err, v + err])
        if trace.type == "bar" and letter == ("x" if trace.orientation == "h" else "y"):
            v = np.append(v, 0.0)
        out.append(v)
    v = np.concatenate(out)
    if fig.layout[key].type == "log":
        v = np.log10(v[v > 0])
    return v


def test_value_ranges_hold_every_value_drawn(explorer):
    # Brute force: the figure at the state, every drawn value along each planned axis, against the range.
    plans = explorer.axis_plan()
    for state in list(random_states(explorer, 6, seed=3)):
        ranges = explorer.value_ranges(explorer.evaluate(state))
        assert set(ranges) == set(plans)
        fig = explorer.figure_for(**state)
        for key, span in ranges.items():
            v = drawn_values(explorer, fig, key)
            if span is None:
                assert v.size == 0
                continue
            if plans[key]["nonnegative"]:  # a KL's or a probability's axis stops at 0: an error bar's foot is cut
                v = np.maximum(v, 0.0)
            assert span[0] <= v.min() and v.max() <= span[1], (key, span, v.min(), v.max())
            # not much wider (the longest error bar pads both ends, whichever value it belongs to)
            assert span[1] - span[0] <= 2 * (v.max() - v.min()) + 1e-9 or v.max() == v.min(), (key, span)


def test_no_value_runs_off_the_top_of_an_axis_whose_range_the_figure_fixes(explorer):
    """An axis whose figure fixes its range (no plan follows the values) must hold what every setting draws: the
    long-credit explorer's top panel was fixed for the sum reward, and the count reward's noise bars (about 170)
    ran off its top (a newcomer's read). Each control at every value, and every corner of the controls' ranges.
    A value below a log axis's floor is allowed: figures put "not drawn" values there on purpose."""
    fixed = [key for key in explorer.figure.layout if key[1:5] == "axis" and explorer.figure.layout[key].range
             is not None and explorer.figure.layout[key].type not in ("category", "date")]
    if not fixed:
        return
    states = [explorer.state(**{c.name: v}) for c in explorer.controls for v in c.values]
    states += [explorer.state(**dict(zip([c.name for c in explorer.controls], corner, strict=True)))
               for corner in itertools.product(*((c.values[0], c.values[-1]) for c in explorer.controls))]
    for state in states:
        fig = explorer.figure_for(**state)
        for key in fixed:
            v = drawn_values(explorer, fig, key)
            top = max(fig.layout[key].range)
            assert v.size == 0 or v.max() <= top + 1e-9, (key, state, float(v.max()), top)


def test_held_ranges_keep_a_range_while_the_values_fit_and_fill_half():
    held = toy.page.explorer.held_ranges
    assert held({}, {"yaxis": [0.0, 1.0]}) == {"yaxis": [0.0, 1.1]}  # nothing shown yet: room above, none below 0
    assert held({"yaxis": [0.0, 1.0]}, {"yaxis": [0.1, 0.6]}) == {"yaxis": [0.0, 1.0]}  # fits, fills 0.5
    assert held({"yaxis": [0.0, 1.0]}, {"yaxis": [0.1, 0.5]}) == {"yaxis": [0.06, 0.54]}  # fills 0.4: rescale
    assert held({"yaxis": [0.0, 1.0]}, {"yaxis": [-0.1, 0.5]}) == {"yaxis": [-0.16, 0.56]}  # does not fit
    assert held({"yaxis": [0.0, 1.0]}, {"yaxis": None}) == {}  # nothing to draw on a log axis


def test_live_view_axes_hold_the_values_they_draw(explorer):
    live = explorer.live()
    for c in explorer.controls:
        for v in (c.values[0], c.values[-1]) if c.live is None else c.live:
            live.set(**{c.name: v})
            for key, span in live.ranges.items():
                assert tuple(live.figure.layout[key].range) == tuple(span)
                vals = drawn_values(explorer, live.figure, key)
                assert span[0] <= vals.min() and vals.max() <= span[1], (c.name, v, key, span)
