"""Issue 50, part 2: figures that agree with their own titles and axes.

- 4.2 drift: π_ref's dotted line is drawn at π_ref's own E[r], the number its title gives (it was drawn at the β = 10
  optimum's, 0.204 against the title's 0.188).
- 4.5 training: the KL axis never runs below 0 (a KL cannot be negative), at any setting, in the order a reader
  moves the controls (held ranges) as well as fresh.
- 4.2 resets, and every log axis of every explorer: at least two labelled ticks inside the range drawn.
"""

from __future__ import annotations

import itertools
import math
import re

import numpy as np
import pytest

import toy
from tests import brute
from toy.page.explorer import held_ranges
from toy.page.explorers import ALL, critic_free, easy_hard


def states(ex):
    """Every static setting of an explorer (the grid the book precomputes)."""
    controls = ex.static_controls
    for combo in itertools.product(*(c.values for c in controls)):
        yield ex.state(**{c.name: v for c, v in zip(controls, combo, strict=True)})


def test_the_drift_figure_draws_pi_ref_where_its_title_puts_it():
    ex = easy_hard.drift_explorer()
    ref = toy.reference_policy()
    for st in states(ex):
        fig = ex.figure_for(**st)
        line = np.asarray(fig.data[1].y, dtype=float)
        title = fig.layout.title.text
        quoted = float(re.search(r"π_ref: E\[r\] = ([0-9.]+)", title).group(1))
        exact = brute.value(ref, toy.REWARDS[st["reward"]], st["prompt"])  # forward enumeration, not toy.exact
        assert np.allclose(line, exact, atol=1e-12), (st, line, exact)
        assert f"{exact:.3f}" == f"{quoted:.3f}", (st, title)
        # and the curve starts above it: β = 10's optimum has already moved towards the reward
        assert fig.data[0].y[0] >= exact - 1e-12


def _shown_ranges(ex, order):
    """The ranges the views draw as a reader moves through ``order`` (settings), one after another."""
    plans, shown, out = ex.axis_plan(), {}, []
    for st in order:
        shown = held_ranges(shown, ex.value_ranges(ex.evaluate(st), plans), plans)
        out.append((st, shown))
    return out


def test_the_training_kl_axis_never_goes_below_zero():
    ex = critic_free.training_curves()
    kl_axis = "yaxis2"
    assert ex.axis_plan()[kl_axis]["nonnegative"]
    every = list(states(ex))
    for order in (every, every[::-1], every[::7] + every[3::5]):
        for st, shown in _shown_ranges(ex, order):
            assert shown[kl_axis][0] >= 0, (st, shown[kl_axis])
    # the live view draws the same
    view = ex.live()
    for st in every[::3]:
        view.set(**st)
        assert view.figure.layout.yaxis2.range[0] >= 0, st


def test_nonnegative_axes_all_stay_at_or_above_zero():
    """Every axis a figure declares tozero/nonnegative (probabilities, mean squares, KLs), at every setting."""
    for name, factory in sorted(ALL.items()):
        ex = factory()
        plans = ex.axis_plan()
        keys = [k for k, p in plans.items() if p["nonnegative"]]
        if not keys:
            continue
        for st, shown in _shown_ranges(ex, list(states(ex))[:400]):
            for k in keys:
                if k in shown:
                    assert shown[k][0] >= 0, (name, k, st, shown[k])


def _ticks_inside(axis: dict, span: list[float]) -> int:
    """How many labelled ticks a log axis (layout as a dict) shows on ``span`` (log10 units), as the page draws it:
    ``tickvals`` when given, else whole decades (``toy.page.figures.decade_ticks``)."""
    low, high = span
    if axis.get("tickvals"):
        return sum(low <= math.log10(v) <= high for v in axis["tickvals"] if v > 0)
    step = axis.get("dtick") if isinstance(axis.get("dtick"), (int, float)) else 1
    return sum(1 for e in range(math.floor(low) - 1, math.ceil(high) + 2) if e % step == 0 and low <= e <= high)


def test_the_resets_rms_axis_has_several_ticks_at_every_setting():
    ex = easy_hard.resets_explorer()
    axis = ex.figure.layout.yaxis2.to_plotly_json()
    assert axis["type"] == "log"
    for st, shown in _shown_ranges(ex, list(states(ex))):
        assert _ticks_inside(axis, shown["yaxis2"]) >= 2, (st, shown["yaxis2"])


@pytest.mark.parametrize("name", sorted(ALL))
def test_every_log_value_axis_has_two_ticks_at_the_default(name):
    ex = ALL[name]()
    plans = ex.axis_plan()
    ranges = held_ranges({}, ex.value_ranges(ex.evaluate(ex.state()), plans), plans)
    layout = ex.figure.layout.to_plotly_json()
    for key, span in ranges.items():
        axis = layout.get(key, {})
        if axis.get("type") == "log":
            assert _ticks_inside(axis, span) >= 2, (name, key, span)


