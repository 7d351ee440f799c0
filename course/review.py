"""One review page per flagged pair of answers: the two side by side, the fragments they share highlighted, the
score, the threshold and how to read them.

A page is one self-contained HTML file: inline CSS, no script, nothing fetched (a Content-Security-Policy that
allows nothing else says so to the browser), every piece of text from a student (names, code, the exercise's
name) escaped. ``write_pages`` writes one page per flag into ``<out>/review/`` and removes the pages of an earlier
run that no longer flag anything.
"""

from __future__ import annotations

import hashlib
import re
from html import escape
from pathlib import Path

from . import private, similarity

STYLE = """
body{font:15px/1.45 system-ui,-apple-system,"Segoe UI",sans-serif;margin:1.5em auto;max-width:110em;padding:0 1em;
color:#1f2328;background:#fff}
h1{font-size:1.35em;margin:0 0 .3em}
.facts{display:flex;flex-wrap:wrap;gap:.4em 2em;margin:.6em 0;padding:.6em .9em;background:#f6f8fa;
border:1px solid #d0d7de;border-radius:6px}
.facts b{font-variant-numeric:tabular-nums}
.how{max-width:62em}
.pair{display:grid;grid-template-columns:1fr 1fr;gap:1em;margin-top:1em}
.side h2{font-size:1.05em;margin:.2em 0;overflow-wrap:anywhere}
.side p{margin:.2em 0 .5em;color:#59636e;font-size:.9em}
table.code{border-collapse:collapse;width:100%;font:13px/1.4 ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;
border:1px solid #d0d7de}
table.code td{padding:0 .5em;vertical-align:top;white-space:pre-wrap;overflow-wrap:anywhere}
table.code td.n{color:#6e7781;text-align:right;user-select:none;width:1%;white-space:nowrap;
border-right:1px solid #d0d7de}
tr.hit td{background:#fff1b8}
tr.hit td.n{background:#f7d96b;color:#1f2328;font-weight:600}
.key{display:inline-block;width:1em;height:1em;background:#fff1b8;border:1px solid #f7d96b;vertical-align:middle}
@media (max-width:60em){.pair{grid-template-columns:1fr}}
@media print{tr.hit td{background:#eee!important}}
"""

CSP = "default-src 'none'; style-src 'unsafe-inline'; img-src 'none'; form-action 'none'; base-uri 'none'"


def file_name(match: similarity.Match) -> str:
    """The page's file name: readable parts of the exercise and both names, and a hash of the three (so two pairs
    never share a page, however their names are spelt)."""
    digest = hashlib.sha256("\0".join((match.exercise, match.student, match.other)).encode()).hexdigest()[:10]
    parts = [re.sub(r"[^\w.-]", "_", p).strip("._")[:40] or "_" for p in (match.exercise, match.student, match.other)]
    return "--".join(parts + [digest]) + ".html"


def _lines_hit(code: str, shared: frozenset) -> set[int]:
    return {line for gram, lines in similarity.grams(code).items() if gram in shared for line in lines}


def _code_table(code: str, hits: set[int]) -> str:
    rows = []
    for number, text in enumerate(code.split("\n"), start=1):
        cls = ' class="hit"' if number in hits else ""
        rows.append(f'<tr{cls}><td class="n">{number}</td><td>{escape(text) or " "}</td></tr>')
    return f'<table class="code"><tbody>{"".join(rows)}</tbody></table>'


def page(match: similarity.Match, code: str, other_code: str) -> str:
    """The review page of one flagged pair: ``code`` is the student's, ``other_code`` the classmate's or the
    book's solution (as compared)."""
    book = match.book
    left, right = _lines_hit(code, match.shared), _lines_hit(other_code, match.shared)
    who, whom = escape(match.student), escape(match.other)
    exercise = escape(match.exercise)
    versus = "the book's solution" if book else whom
    whole = book and match.threshold >= similarity.SAME_AS_BOOK  # the book's own code, all but unchanged
    how = (
        f"<p>The answer on the left is the code the grader compared for exercise {exercise}: the graded function and "
        "what it uses, from the student's own cells; on the right, the book's solution. Each is reduced to the shape "
        "of its syntax: names, constants, layout, comments and the order of statements do not count. Here nothing "
        "but the code handed out is discounted: the book's solution to this exercise is close to what independent "
        "students write anyway, so the usual rule, which discounts that, cannot see a copy of it. Instead a flag "
        f"here means the answer is the book's solution all but unchanged: the two share {match.score:.0%} of their "
        f"fragments (<b>score {match.score:.2f}</b>; flagged at {match.threshold:.2f}, for solutions of at least "
        f"{match.min_shared} "
        "fragments, long enough that two people rarely write them alike by chance). "
        '<span class="key"></span> marks the lines the shared fragments come from.</p>'
        "<p>A flag is a prompt to look, not a verdict. The mark is not changed, and the students' feedback does not "
        "mention flags.</p>") if whole else (
        f"<p>The two answers below are the code the grader compared for exercise {exercise}: the graded function and "
        "what it uses, from " + ("the student's own cells (on the right, the book's solution)" if book else
                                 "each student's own cells") + ". Each is reduced to the "
        "shape of its syntax: names, constants, layout, comments and the order of statements do not count, so a "
        "renamed, reformatted or reordered copy matches in full. What independent honest answers to this exercise "
        "share is not counted either: the code handed out, the fragments that two or more of the grader's "
        f"{match.answers} independent answers to it have in common"
        + ("" if book else ", and what more than 40% of the class wrote") + ".</p>"
        f"<p><b>Score {match.score:.2f}</b> is the share of their remaining, distinctive fragments that the two have "
        f"in common (1 is all of them). A pair is flagged at {match.threshold:.2f} or more with at least "
        f"{match.min_shared} fragments in common; these two share {len(match.shared)}. "
        '<span class="key"></span> marks the lines those shared fragments come from.</p>'
        "<p>A flag is a prompt to look, not a verdict: two students who wrote the same short answer, or who worked "
        "from the same notes, can match. Read both answers, decide, and talk to the students if you need to. The "
        "mark is not changed, and the students' feedback does not mention flags.</p>")
    shared_words = "fragments shared" if whole else "distinctive fragments shared"
    return (
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
        f'<meta http-equiv="Content-Security-Policy" content="{CSP}">'
        '<meta name="viewport" content="width=device-width,initial-scale=1">'
        '<meta name="robots" content="noindex">'
        f"<title>Possible copy: {exercise}, {who} and {versus}</title><style>{STYLE}</style></head><body>"
        f"<h1>Possible copy in {exercise}: {who} and {versus}</h1>"
        '<div class="facts">'
        f"<span>score <b>{match.score:.2f}</b></span><span>threshold <b>{match.threshold:.2f}</b></span>"
        f"<span>{shared_words} <b>{len(match.shared)}</b> (at least {match.min_shared} needed)</span>"
        f"<span>highest score between independent answers to this exercise <b>{match.honest_high:.2f}</b></span>"
        "</div>"
        f'<div class="how">{how}</div>'
        '<div class="pair">'
        f'<section class="side"><h2>{who}</h2><p>{len(left)} of {len(code.splitlines())} lines share a fragment'
        f"</p>{_code_table(code, left)}</section>"
        f'<section class="side"><h2>{versus}</h2><p>{len(right)} of {len(other_code.splitlines())} lines share a '
        f"fragment</p>{_code_table(other_code, right)}</section>"
        "</div></body></html>\n")


def write_pages(out: Path, flagged: list[tuple[similarity.Match, str, str]], write) -> dict:
    """Write one page per ``(match, code, other_code)`` into ``out/review`` with ``write(path, text)``; remove the
    pages no longer flagged. Returns {(exercise, student, other): the page's path relative to ``out``}."""
    folder = out / "review"
    private.folder(folder)
    written = {}
    for match, code, other_code in flagged:
        name = file_name(match)
        write(folder / name, page(match, code, other_code))
        written[(match.exercise, match.student, match.other)] = f"review/{name}"
    keep = {Path(path).name for path in written.values()}
    for old in folder.glob("*.html"):
        if old.name not in keep:
            old.unlink(missing_ok=True)
    return written
