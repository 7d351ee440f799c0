"""The Colab edition (issue 11): Colab renders plain Markdown, not MyST, so the build writes each chapter notebook
again for it (``_colab/<page>.ipynb`` in the site): the numbers this build quoted in place of the ``{eval}`` roles,
exercises and solutions in plain Markdown and HTML, cross-references as text, citations linking to the repository.

Unit tests of the conversion, of how ``toy.quote`` keeps the build's quotes, and (slow) the editions of the built
book against its pages: the same numbers, no MyST left, the same code, and each page's Colab button opening it.
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import pytest
import yaml

import toy
from toy.page import prose

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "book" / "_ext"))
import toybook  # noqa: E402

REPO, BRANCH = "https://github.com/example/book", "main"
import toysite  # noqa: E402

# the repository the book's build points at (toysite.repository: _config.yml, else git's origin), or none
BOOK_REPO = (toysite.repository(ROOT)[0] or "",
             yaml.safe_load((ROOT / "_config.yml").read_text())["repository"].get("branch", "main"))
NOTEBOOKS = sorted(p for p in (ROOT / "chapters").rglob("*.ipynb") if ".ipynb_checkpoints" not in p.parts)
MYST_LEFT = re.compile(r"\{(eval|ref|doc|numref|cite(:\w+)?|glue(:\w+)?)\}`|^(```|:::)\{", re.M)


def test_quotes_take_the_place_of_the_roles_in_order():
    text = 'At τ = {eval}`toy.quote("tau", ".2f")` the value is {eval}`toy.quote("v")`, then {eval}`toy.quote("tau")`.'
    quotes = [["tau", ".2f", "0.50"], ["v", "", "0.188"], ["tau", "", "0.5"], ["rest", "", "1"]]
    assert toybook.colab_markdown(text, quotes, REPO, BRANCH) == "At τ = 0.50 the value is 0.188, then 0.5."
    assert quotes == [["rest", "", "1"]]  # consumed in order, the rest left for the next cell
    with pytest.raises(ValueError, match="where the notebook has"):
        toybook.colab_markdown('{eval}`toy.quote("v", ".3f")`', [["v", "", "0.188"]], REPO, BRANCH)
    with pytest.raises(ValueError, match="no quoted value left"):
        toybook.colab_markdown('{eval}`toy.quote("v")`', [], REPO, BRANCH)


def test_exercises_solutions_references_and_citations_become_plain_markdown():
    text = ("See {ref}`the exercise <ex-1>` and {doc}`4.2 <4.2-easy-and-hard>` "
            "([Sutton and Barto, 2018](../../book/references.bib#sutton2018rl)).\n\n"
            "```{exercise}\n:label: ex-1\n\n**Value.** Write it.\n```\n\n"
            "```{solution} ex-1\n:class: dropdown\n\nThe code below.\n```\n")
    out = toybook.colab_markdown(text, [], REPO, BRANCH)
    assert "See the exercise and 4.2 ([Sutton and Barto, 2018](https://github.com/example/book/blob/main/book/" \
           "references.bib))." in out
    assert "**Exercise.** **Value.** Write it." in out
    assert "<details><summary><b>Solution</b></summary>\n\nThe code below.\n\n</details>" in out
    assert not MYST_LEFT.search(out) and ":label:" not in out and ":class:" not in out


def test_key_ideas_become_a_bold_heading_and_a_dropdown_stays_folded():
    text = ("```{admonition} Key ideas of 4.1\n:class: tip\n\n- one\n- two\n```\n\n"
            "```{dropdown} How sure is this? (20 seeds)\n\nOn 17 of 20 seeds.\n```\n")
    out = toybook.colab_markdown(text, [], REPO, BRANCH)
    assert out.startswith("**Key ideas of 4.1**\n\n- one\n- two")
    assert "<details><summary><b>How sure is this? (20 seeds)</b></summary>\n\nOn 17 of 20 seeds.\n\n</details>" in out
    assert not MYST_LEFT.search(out) and ":class:" not in out


def test_without_a_repository_citations_are_their_text_and_colab_installs_from_the_repository():
    text = "As ([Sutton and Barto, 2018](../../book/references.bib#sutton2018rl)) say."
    assert toybook.colab_markdown(text, [], "", BRANCH) == "As (Sutton and Barto, 2018) say."
    setup = 'if "google.colab" in sys.modules:\n    %pip install --quiet "toy @ git+https://github.com/any/where"\n'
    assert 'git+https://github.com/example/book"' in toybook.colab_install(setup, REPO)
    assert toybook.colab_install(setup, "") == setup
    nb = {"cells": [{"cell_type": "code", "metadata": {"tags": ["colab-setup", "remove-cell"]}, "source": [setup]}]}
    edition = toybook.colab_notebook(nb, [], REPO, BRANCH)
    assert edition["cells"][0]["source"] == "#@title Install toy on Colab\n" + toybook.colab_install(setup, REPO)


def test_every_quote_is_shown_exactly_once():
    nb = {"cells": [{"cell_type": "markdown", "metadata": {}, "source": ['{eval}`toy.quote("a")`']},
                    {"cell_type": "code", "metadata": {"tags": ["solution"]}, "source": ["x = 1\n"]}]}
    edition = toybook.colab_notebook(nb, [["a", "", "1"]], REPO, BRANCH)
    assert edition["cells"][0]["source"] == "1"
    assert edition["cells"][1]["source"] == "#@title Solution\nx = 1\n"  # Colab folds it behind its title
    assert edition["cells"][1]["metadata"]["cellView"] == "form"
    assert nb["cells"][0]["source"] == ['{eval}`toy.quote("a")`']  # the notebook itself is untouched
    with pytest.raises(ValueError, match="does not show"):
        toybook.colab_notebook(nb, [["a", "", "1"], ["b", "", "2"]], REPO, BRANCH)


def test_quote_keeps_the_builds_quotes_only_when_asked(tmp_path, monkeypatch):
    toy.glue("colab_test_value", 0.123456)
    monkeypatch.delenv(prose.QUOTES_ENV, raising=False)
    toy.quote("colab_test_value", ".3f")
    record = tmp_path / "quotes.jsonl"
    monkeypatch.setenv(prose.QUOTES_ENV, str(record))
    assert toy.quote("colab_test_value", ".3f") == "0.123"
    assert toy.quote("colab_test_value") == "0.123456"
    lines = [json.loads(line) for line in record.read_text().splitlines()]
    assert lines == [["colab_test_value", ".3f", "0.123"], ["colab_test_value", "", "0.123456"]]


SMART_QUOTES = str.maketrans({"\u2019": "'", "\u2018": "'", "\u201c": '"', "\u201d": '"'})


@pytest.mark.slow
@pytest.mark.parametrize("notebook", NOTEBOOKS, ids=[p.name for p in NOTEBOOKS])
def test_the_built_books_colab_editions_read_like_its_pages(built_site, notebook):
    page = str(notebook.relative_to(ROOT))[: -len(".ipynb")]  # (names like 4.1-formal-mapping hold dots)
    edition = json.loads((built_site / "_colab" / f"{page}.ipynb").read_text())
    source = json.loads(notebook.read_text())
    html = (built_site / f"{page}.html").read_text()
    # the page's text as a reader sees it, with Sphinx's typographic quotes read as the plain ones they stand for
    text = re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", html)).translate(SMART_QUOTES)
    assert len(edition["cells"]) == len(source["cells"])
    quoted = 0
    for mine, theirs in zip(edition["cells"], source["cells"], strict=True):
        body = "".join(theirs["source"])
        if mine["cell_type"] == "code":  # the same code, some folded behind a Colab form title
            folded = ("#@title Solution\n", "#@title Install toy on Colab\n", f"#@title {toybook.QUOTED_TITLE}\n")
            body = toybook.colab_install(body, BOOK_REPO[0])  # toy from the book's repository
            assert "".join(mine["source"]) in (body, *(title + body for title in folded))
            continue
        assert not MYST_LEFT.search(mine["source"]), mine["source"][:300]
        # each number the edition quotes is one the page shows: the cell converted with markers for the quotes
        # is a pattern that the edition's cell matches, the quotes in its groups
        names = prose.quoted_names(body)
        marked = toybook.colab_markdown(body, [[n, sp, f"\x00{k}\x00"] for k, (n, sp) in enumerate(names)],
                                        *BOOK_REPO)
        pattern = "(.+?)".join(re.escape(piece) for piece in re.split(r"\x00\d+\x00", marked))
        got = re.fullmatch(pattern, mine["source"], re.S)
        assert got, mine["source"][:300]
        for value in got.groups():
            assert value.translate(SMART_QUOTES) in text, \
                f"{notebook.name}: the edition quotes {value!r}, which its page does not show"
        quoted += len(names)
    if notebook.stem != "review":  # the chapter review quotes no number: its links lead to the figures
        assert quoted > 10, f"{notebook.name}: only {quoted} quoted numbers"
    # the page's Colab button opens this edition from the branch the site is published to; no repository, no button
    button = re.search(r'https://colab\.research\.google\.com/github/[^"]+/blob/gh-pages/_colab/'
                       + re.escape(page) + r'\.ipynb', html)
    assert bool(button) == bool(BOOK_REPO[0]), "a Colab button needs a repository, and a repository a Colab button"
