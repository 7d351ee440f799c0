"""Issues 11 and 50: every explorer offers the figure's numbers as tables a reader can read, under a toggle.

Each table: every row named, a caption (the quantity and its unit), a corner cell naming the columns, at most
``MAX_COLUMNS`` columns (a long curve sampled at the points a reader asks about, its ends and the marked points
included), no markup shown as text, and every value as the figure's hover shows it at that point (its format, read
here from the trace's hovertemplate). The built pages hold the same tables (tests/test_built_tables.py).
"""

import re

import numpy as np
import pytest

import toy
from toy.page.explorer import TABLE_LABEL
from toy.page.explorers import ALL, mapping
from toy.page.tables import MAX_COLUMNS, figure_tables, plain_text, tables_html

HOVER = re.compile(r"%\{(\w+)(?::([^}]*))?\}")


def cells(html: str) -> list[list[str]]:
    return [re.findall(r"<t[hd][^>]*>([^<]*)</t[hd]>", row) for row in re.findall(r"<tr>(.*?)</tr>", html)]


def hover_format(template, field: str) -> str:
    """The d3 format a hovertemplate gives ``field`` ('' when none), read independently of toy.page.tables."""
    for name, spec in HOVER.findall(template or ""):
        if name == field:
            return (spec or "").replace("~", "")
    return ""


def shown(value: float, spec: str) -> str:
    """A value as the hover's format writes it (Python's format for the shared subset; .4g when the hover names
    none)."""
    spec = spec or ".4g"
    out = format(float(value), spec if spec[-1] in "fge%" else spec + "g")
    if abs(value) >= 1e-12 and set(out) <= set("-0.%"):  # a small value that would read as 0: two significant figures
        return f"{value * 100:.2g}%" if spec.endswith("%") else f"{value:.2g}"
    return out


def check_readable(name: str, tables: list[dict]) -> None:
    assert tables, name
    for t in tables:
        texts = [t["caption"], t["corner"], *t["header"], *(c for r in t["rows"] for c in r)]
        assert t["caption"].strip(), (name, t)  # which quantity, in which unit
        # no markup as text (a tag, an entity); "< 0.0001", a bound in a cell, is text
        assert not any(re.search(r"</?[a-zA-Z]|&[a-z]+;|>", x) for x in texts), (name, t)
        assert 1 <= len(t["header"]) <= MAX_COLUMNS, (name, t["caption"], len(t["header"]))
        for row in t["rows"]:
            assert row[0].strip() and not row[0].startswith("series "), (name, t["caption"], row)
            assert len(row) == len(t["header"]) + 1, (name, row)
            assert all(len(c) <= 12 for c in row[1:]), (name, row)  # no 16-digit numbers


def case_named(ex, state: dict) -> str:
    """The setting a table's caption must end with (issue 50, I9), written here from the controls: each control's
    label (without its colon) and the value shown, as the page prints it under the figure."""
    shown = [c for c in ex.controls if not c.live_only]  # the controls the page has
    if not shown:
        return ""
    return "Shown at: " + "; ".join(f"{c.label.rstrip().rstrip(':')} = {c.label_of(state[c.name])}"
                                    for c in shown) + "."


def check_against_traces(name: str, ex, fig, tables: list[dict], state: dict) -> None:
    """Each row named after a trace: its cells are that trace's values at the columns' points, in the hover's
    format (the point found by its label: the trace's x, or the figure's own override of the labels). Each caption
    names the case: it ends with the setting shown, and a row name's {control} is that control's value."""
    plan = ex.table_plan()
    case = case_named(ex, state)
    for t in tables:
        assert t["caption"].endswith(case), (name, t["caption"], case)
        own = t["caption"][: len(t["caption"]) - len(case)].strip()
        assert own, (name, t["caption"])  # the quantity and its unit, before the case
        for row in t["rows"]:
            assert "{" not in row[0], (name, row[0])
            matches = [i for i, p in enumerate(plan) if p and re.sub(r"\{(\w+)\}", lambda m: ex._control[m.group(1)]
                       .label_of(state[m.group(1)]), p["name"]) == row[0] and p["caption"].strip().rstrip(".")
                       == own.rstrip(".")]
            if not matches:
                continue  # an x row or an error row: checked by their own values below
            trace = fig.data[matches[0]].to_plotly_json()
            p = plan[matches[0]]
            values = np.ravel(np.asarray(trace[p["values"]], dtype=float))
            spec = hover_format(trace.get("hovertemplate"), p["values"])
            xs = trace.get(p["cat"])
            xs = list(xs) if xs is not None else list(range(len(values)))
            labels = p["header"] or [plain_text(x) if isinstance(x, str) else shown(x, hover_format(
                trace.get("hovertemplate"), p["cat"]) or "g") for x in xs]
            if p["label"]:
                labels = [p["label"].replace("{y}", f"{y:g}") for y in trace["y"]]
            for label, cell in zip(t["header"], row[1:], strict=True):
                at = [i for i, lab in enumerate(labels) if lab == label]
                assert at, (name, row[0], label, labels)
                if p.get("below") is not None and cell == f"< {p['below']:g}":  # a floor, not a value
                    assert all(values[i] < p["below"] for i in at), (name, row[0], label, values[at])
                    continue
                assert cell in {shown(values[i], spec) for i in at}, (name, row[0], label, cell, values[at])


@pytest.mark.parametrize("name", sorted(ALL))
def test_every_table_reads_and_matches_its_figure(name):
    ex = ALL[name]()
    rng = np.random.default_rng(50)
    settings = [ex.state()] + [ex.state(**{c.name: c.values[int(rng.integers(len(c.values)))]
                                           for c in ex.static_controls}) for _ in range(2)]
    for st in settings:
        fig = ex.figure_for(**st)
        tables = ex.tables(**st)
        check_readable(name, tables)
        check_against_traces(name, ex, fig, tables, ex.state(**st))


@pytest.mark.parametrize("name", sorted(ALL))
def test_live_view_table_follows_the_figure(name):
    ex = ALL[name]()
    view = ex.live()
    assert view.table_toggle.description == TABLE_LABEL and view.table_toggle.value is False
    assert view.table.layout.display == "none" and view.table.value == ""
    view.table_toggle.value = True
    assert view.table.layout.display == "block"
    assert view.table.value == tables_html(ex.tables())
    c = max(ex.static_controls, key=lambda c: len(c.values))
    other = c.values[(c.default + 1) % len(c.values)]
    view.set(**{c.name: other})
    assert view.table.value == tables_html(ex.tables(**{c.name: other}))
    view.table_toggle.value = False
    assert view.table.layout.display == "none"


def test_the_tree_table_lists_each_completion_once_with_its_reward():
    """4.1's tree: the five completions of the chosen path and their rewards, by brute force (it listed all five as
    both rewarded and unrewarded)."""
    ex = mapping.tree_explorer()
    for reward in ("sum_to_target", "count_target"):
        for path in [(1, 2, 3), (0, 0, 0), (4, 1, 2)]:
            st = dict(reward=reward, y1=path[0], y2=path[1], y3=path[2])
            (table,) = ex.tables(**st)
            assert table["header"] == ["0", "1", "2", "3", "4"] and len(table["rows"]) == 1
            want = [f"{toy.REWARDS[reward](2, path + (a,)):g}" for a in range(5)]
            assert table["rows"][0][1:] == want, (st, table)


def test_long_curves_are_sampled_at_their_ends_and_marked_points():
    from toy.page.explorers import easy_hard

    ex = easy_hard.prior_explorer()
    for tau in (0.1, 0.178, 1.0, 5.62):
        tau = min(ex._control["temperature"].values, key=lambda v: abs(v - tau))
        for t in ex.tables(temperature=tau):
            assert t["header"][0] == "0.10" and t["header"][-1] == "10.00"
            assert f"{tau:.2f}" in t["header"], (tau, t["header"])  # the selected τ is a column


def test_markup_becomes_plain_text():
    assert plain_text("π*<sub>β</sub> ∝ π<sub>ref</sub>·exp(r/β)") == "π*_β ∝ π_ref·exp(r/β)"
    assert plain_text("variance under π<sub>old</sub>") == "variance under π_old"
    assert plain_text("e<sup>2</sup> and x<sup>ab</sup><br>next &amp; <b>bold</b>") == "e² and x^(ab) next & bold"


def test_tables_group_series_by_panel_and_format_like_the_hover():
    import plotly.graph_objects as go
    from plotly.subplots import make_subplots

    fig = make_subplots(rows=2, cols=1)
    fig.add_bar(x=["a", "b"], y=[0.123456, -2e-7], name="first", row=1, col=1,
                hovertemplate="%{x}: %{y:.3f}<extra></extra>")
    fig.add_bar(x=["a", "b"], y=[1, 2], name="second <b>", row=1, col=1)
    fig.add_scatter(x=list(range(40)), y=np.arange(40) ** 0.5, name="long", row=2, col=1)
    fig.update_yaxes(title_text="value<br>(nats)", row=1, col=1)
    tables = figure_tables(go.Figure(fig))
    assert [t["caption"] for t in tables] == ["value (nats)", ""]
    assert [r[0] for r in tables[0]["rows"]] == ["first", "second"]
    assert tables[0]["rows"][0][1:] == ["0.123", "-2e-07"]  # not "-0.000": a small value never reads as 0
    assert len(tables[1]["header"]) == 6 and tables[1]["header"][0] == "0" and tables[1]["header"][-1] == "39"
    html = tables_html(tables)
    assert cells(html)[:2] == [["", "a", "b"], ["first", "0.123", "-2e-07"]]


def test_the_plain_figures_have_their_numbers_too():
    """Issue 50, I9.17: the book's data figures without controls (4.1's temperature bars and prior comparison, 4.2's
    action space and sparse reward, 4.3's critic figure) carry "Numbers behind the figure" as the explorers do, each
    caption the quantity and then the figure's title, which names the case; every value as its hover shows it."""
    import plotly.graph_objects as go
    from bs4 import BeautifulSoup

    from toy.page.explorers import classical, credit, easy_hard
    from toy.page.figures import _BookRenderer

    bars = toy.figures.distribution_bars({"τ = 0.5": np.array([0.5, 0.2, 0.1, 0.1, 0.1]), "τ = 1": np.full(5, 0.2)},
                                         [str(a) for a in range(5)], "π_τ(· | x = 2) at two temperatures")
    figures = [bars, credit.prior_comparison(prompt=2), easy_hard.action_space_figure(),
               easy_hard.sparse_reward_figure(prompt=2), classical.critic_figure(prompt=2)]
    for fig in figures:
        page = BeautifulSoup(_BookRenderer().to_mimebundle(fig.to_dict())["text/html"], "html.parser")
        details = page.select_one("details.toy-explorer-table")
        assert details is not None and details.summary.get_text() == TABLE_LABEL, fig.layout.title.text
        lines = [" ".join(x.split()) for x in page.select_one(".toy-figure-title").get_text().split("\n") if x.strip()]
        title = " ".join(lines)
        tables = []
        for table in details.select("table"):
            rows = [[c.get_text() for c in tr.find_all(["th", "td"])] for tr in table.select("tr")]
            tables.append({"caption": table.caption.get_text(), "corner": rows[0][0], "header": rows[0][1:],
                           "rows": rows[1:]})
        check_readable(title, tables)
        for t in tables:
            caption = " ".join(t["caption"].split())  # the quantity, then the title's lines as sentences
            assert caption.endswith(" ".join(x if x[-1] in ".:;!?" else x + "." for x in lines)), (caption, lines)
            for row in t["rows"]:  # each row: a trace's values, as its hover shows them
                traces = [tr for tr in go.Figure(fig).data if plain_text(tr.name) == row[0]]
                assert any(row[1:] == [shown(v, hover_format(tr.hovertemplate, "y")) for v in np.ravel(tr.y)]
                           or set(row[1:]) < {shown(v, hover_format(tr.hovertemplate, "y")) for v in np.ravel(tr.y)}
                           for tr in traces), row
    assert "Numbers behind the figure" not in _BookRenderer().to_mimebundle(go.Figure().to_dict())["text/html"]
