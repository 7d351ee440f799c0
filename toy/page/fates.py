"""The fate of classical RL's concepts in LLM post-training (section 4.3's table), as data and as a static HTML
table (no kernel, no script), each fate on its own background colour. (It once had a filter by fate; with 13 rows
the coloured fate column already groups them at a glance, so the filter was dropped.)

Each row says what a concept meant in classical RL, what it became, its fate and why, and where in this book an
experiment shows it (a link relative to the chapter's folder).
"""

from __future__ import annotations

import html
from typing import NamedTuple

from .. import checks


class Row(NamedTuple):
    """One concept of the table."""

    concept: str
    classical: str
    llm: str
    fate: str  # one of FATES
    why: str
    experiment: str  # the experiment's name, as the link text
    href: str  # page#anchor, relative to chapters/04-the-llm-as-a-policy/


FATES = {
    "transformed": "#d9ead3",
    "trivialised": "#fff2cc",
    "discarded": "#f4cccc",
    "mostly discarded": "#f9e0e0",
    "survived": "#cfe2f3",
    "new in role": "#d9d2e9",
    "open": "#eeeeee",
}
"""The fates, with the background colour of each in the table."""

P41, P42, P43 = "4.1-formal-mapping.html", "4.2-easy-and-hard.html", "4.3-classical-vs-llm-rl.html"

ROWS = (
    Row("State", "the environment's state, often only partly observed",
        "the prompt and the prefix written so far, all of it visible", "transformed",
        "Markov by construction, but it grows with every token", "the toy's states",
        P41 + "#sec-4-1-state"),
    Row("Action", "a few discrete choices or a continuous vector",
        "one token (token view) or one whole response (sequence view)", "transformed",
        "an enormous set, with a strong prior over it", "the action space", P42 + "#sec-4-2-action-space"),
    Row("Transition", "unknown and random: learned or sampled",
        "known and deterministic: the token is appended", "trivialised",
        "until tools and environments come back (agentic RL)", "resetting is free", P42 + "#sec-4-2-resets"),
    Row("Reward", "given by the environment, often at every step",
        "one number per response, from a reward model, a verifier or a judge", "transformed",
        "sparse, and when learned, open to hacking", "a learned, hackable reward", P42 + "#sec-4-2-goodhart"),
    Row("Discount γ", "below 1: for endless horizons, and to trade bias for variance",
        "γ = 1 on finite responses", "discarded",
        "with an end token, γ < 1 would add a length preference: for stopping early when rewards are positive, "
        "for going on when they are negative", "the discount", P43 + "#sec-4-3-discount"),
    Row("Exploration", "ε-greedy, optimism, intrinsic bonuses",
        "sampling the pretrained prior at a temperature; keeping entropy from collapsing (DAPO's clip-higher)",
        "transformed", "inherited from pretraining, not engineered", "a strong prior", P42 + "#sec-4-2-prior"),
    Row("Value function / critic", "the heart of value-based and actor–critic methods",
        "a learned critic in PPO-style RLHF; RLOO, ReMax and GRPO do without", "discarded",
        "in recent recipes: a second model's memory, hard to fit to sparse terminal rewards, and Monte Carlo "
        "baselines cost little", "a learned critic", P43 + "#sec-4-3-critic"),
    Row("Bootstrapping", "TD targets, the workhorse of the bias–variance trade",
        "rare: with one terminal reward, Monte Carlo returns are at hand", "mostly discarded",
        "the return itself is cheap and unbiased", "bootstrapping", P43 + "#sec-4-3-bootstrapping"),
    Row("Off-policy learning", "learn from any behaviour (Q-learning); importance sampling",
        "near on-policy with minibatch reuse; offline methods (DPO) on fixed data; asynchronous pipelines with "
        "slightly stale samples", "transformed",
        "kept close to on-policy: large corrections are unstable", "off-policy staleness",
        P43 + "#sec-4-3-staleness"),
    Row("Trust region", "TRPO, PPO",
        "PPO's clip, GRPO, and GSPO's sequence-level clip (2025); CISPO instead caps the importance weights",
        "survived",
        "central to the stages that optimise a policy on its own samples (recipes of SFT or DPO alone have none)",
        "the trust region", P43 + "#sec-4-3-clipping"),
    Row("KL to a reference", "rare (entropy regularisation is the nearest relative)",
        "in most RLHF objectives, toward π_ref (some RLVR recipes, DAPO's among them, drop it)", "new in role",
        "it pulls toward a prior, not just limiting one step", "it must not drift", P42 + "#sec-4-2-drift"),
    Row("Experience replay", "central to DQN-style methods", "largely absent from policy optimisation",
        "mostly discarded", "stale samples fight the trust region", "off-policy staleness",
        P43 + "#sec-4-3-staleness"),
    Row("Credit assignment", "TD errors, eligibility traces, rewards at every step",
        "one advantage broadcast to every token; critics, process rewards and dense teacher signals as partial fixes",
        "open", "the main unsolved problem (Figure 4.1)", "long sequences", P42 + "#sec-4-2-long"),
)
"""The table's rows, in the chapter's order."""

HEADERS = ("Concept", "Classical meaning", "In LLM post-training", "Fate, and why", "Shown in")


def _check_rows(rows) -> tuple[Row, ...]:
    if isinstance(rows, (str, bytes)) or not isinstance(rows, (list, tuple)):
        raise checks.fail("rows", "a sequence of toy.fates.Row", rows)
    for r in rows:
        if not isinstance(r, Row) or not all(isinstance(f, str) for f in r):
            raise checks.fail("rows", "a sequence of toy.fates.Row with text fields", r)
        checks.choose("fate in rows", r.fate, FATES)
    return tuple(rows)


class FateTable:
    """The table as static HTML (its style inline, no script); displays itself in Jupyter."""

    def __init__(self, rows=ROWS, link_prefix: str = "", uid: str = "fates"):
        self.rows, self.link_prefix = _check_rows(rows), checks.text("link_prefix", link_prefix)
        self.uid = checks.text("uid", uid)
        if not self.uid or not (self.uid[0].isalpha() and all(c.isalnum() or c in "-_" for c in self.uid)):
            raise checks.fail("uid", "a CSS identifier (a letter, then letters, digits, - or _)", uid)

    def html(self) -> str:
        """The table and its style, as one self-contained HTML fragment."""
        uid, esc = self.uid, html.escape
        css = [
            f".{uid} {{ margin: 0.5em 0 1em; }}",
            f".{uid} table {{ border-collapse: collapse; width: 100%; font-size: 0.88em; table-layout: auto; }}",
            f".{uid} th, .{uid} td {{ border: 1px solid #ddd; padding: 0.3em 0.4em; text-align: left; "
            "vertical-align: top; overflow-wrap: break-word; }",
            f".{uid} th {{ background: #eee; }}",
            # On a phone each row becomes a card, each cell labelled with its column's name.
            f"@media (max-width: 640px) {{ .{uid} thead {{ display: none; }} "
            f".{uid} table, .{uid} tbody, .{uid} tr, .{uid} td {{ display: block; }} "
            f".{uid} tr {{ border: 1px solid #bbb; margin-bottom: 0.6em; }} "
            f".{uid} td {{ border: none; border-bottom: 1px solid #eee; }} "
            f".{uid} td::before {{ content: attr(data-label) \": \"; font-weight: 600; }} }}",
        ]
        for fate, colour in FATES.items():
            css.append(f".{uid} td.{uid}-{_slug(fate)} {{ background: {colour}; }}")
            # the book's dark mode: the same hue, dark, under the theme's light text
            css.append(f"html[data-theme=dark] .{uid} td.{uid}-{_slug(fate)} {{ "
                       f"background: color-mix(in srgb, {colour} 22%, #121212); }}")
        css.append(f"html[data-theme=dark] .{uid} {{ color: var(--pst-color-text-base, #ced6dd); }} "
                   f"html[data-theme=dark] .{uid} th {{ background: #2b2b2b; }} "
                   f"html[data-theme=dark] .{uid} th, html[data-theme=dark] .{uid} td {{ border-color: #555; }}")
        parts = [f'<div class="toy-fates {uid}"><style>{" ".join(css)}</style>']
        parts.append(f'<table><thead><tr>{"".join(f"<th>{h}</th>" for h in HEADERS)}</tr></thead><tbody>')
        for r in self.rows:
            link = f'<a href="{esc(self.link_prefix + r.href)}">{esc(r.experiment)}</a>'
            h = [esc(x) for x in HEADERS]
            parts.append(
                f'<tr><td data-label="{h[0]}"><b>{esc(r.concept)}</b></td>'
                f'<td data-label="{h[1]}">{esc(r.classical)}</td><td data-label="{h[2]}">{esc(r.llm)}</td>'
                f'<td data-label="{h[3]}" class="{uid}-{_slug(r.fate)}"><b>{esc(r.fate)}</b>: {esc(r.why)}</td>'
                f'<td data-label="{h[4]}">{link}</td></tr>')
        parts.append("</tbody></table></div>")
        return "".join(parts)

    def _repr_html_(self) -> str:
        return self.html()


def _slug(text: str) -> str:
    return "".join(c if c.isalnum() else "-" for c in text.lower())


def fate_table(rows=ROWS, link_prefix: str = "") -> FateTable:
    """Section 4.3's table, static, each fate coloured (displays as HTML)."""
    return FateTable(rows, link_prefix)
