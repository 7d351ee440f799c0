"""A rebuild redoes only what changed (issue 33): each notebook's execution is recorded and replayed while the
notebook, ``toy`` and the installed packages are unchanged (``book/_ext/toyexec.py``), and the pages are the same
bytes as a clean build's. Builds of one commit are the same byte for byte, whatever an earlier build left. Each
page's print is kept and reused while what the page loads is unchanged (issue 42, ``book/_ext/toypdf.py``), so
the rebuild prints the edited page alone, and its PDFs equal a clean build's too."""

from __future__ import annotations

import filecmp
import json
import re
import shutil
from pathlib import Path
from types import SimpleNamespace

import pypdf
import pytest
import toyexec  # book/_ext: tests/conftest.py puts it on sys.path
import toypdf
import toysite

from tests.conftest import build_book

ROOT = Path(__file__).resolve().parents[1]
EDITED = "chapters/04-the-llm-as-a-policy/4.4-post-training-pipeline"
SENTENCE = "An author adds this sentence and rebuilds."


def _settings(**changed):
    base = dict(execution_timeout=180, execution_allow_errors=False, execution_raise_on_error=False,
                execution_in_temp=False, eval_name_regex=r"^x$")
    return SimpleNamespace(**{**base, **changed})


def test_an_execution_is_replayed_only_for_the_same_inputs(tmp_path):
    nb = tmp_path / "page.ipynb"
    nb.write_text('{"cells": [], "metadata": {}}')
    env = ["python 3.11", "plotly==6.0", "toy=abc"]
    key = toyexec.execution_key(nb, _settings(), env)
    assert toyexec.execution_key(nb, _settings(), list(env)) == key
    others = {
        "another toy": toyexec.execution_key(nb, _settings(), [*env[:2], "toy=abd"]),
        "another package": toyexec.execution_key(nb, _settings(), ["python 3.11", "plotly==6.1", "toy=abc"]),
        "another timeout": toyexec.execution_key(nb, _settings(execution_timeout=60), env),
        "errors allowed": toyexec.execution_key(nb, _settings(execution_allow_errors=True), env),
    }
    nb.write_text('{"cells": [], "metadata": {"widgets": {}}}')  # what running it leaves: not an edit
    assert toyexec.execution_key(nb, _settings(), env) == key
    nb.write_text('{"cells": [{"cell_type": "markdown", "metadata": {}, "source": "An edit."}]}')
    others["an edited notebook"] = toyexec.execution_key(nb, _settings(), env)
    assert all(k != key for k in others.values()), [name for name, k in others.items() if k == key]
    assert len(set(others.values())) == len(others)

    folder = tmp_path / "records"
    assert toyexec.load(folder, "chapters/page", key) is None  # nothing recorded yet
    toyexec.save(folder, "chapters/page", {"key": key, "cells": []})
    assert toyexec.load(folder, "chapters/page", key) == {"key": key, "cells": []}
    assert toyexec.load(folder, "chapters/page", others["another toy"]) is None
    assert toyexec.load(folder, "chapters/other", key) is None
    toyexec.record_path(folder, "chapters/page").write_text('{"key": "')  # a record cut short: executed again
    assert toyexec.load(folder, "chapters/page", key) is None


def test_the_kernel_environment_names_the_toy_the_kernel_imports():
    environment = toyexec.kernel_environment()
    toy = [line for line in environment if line.startswith("toy=") and not line.startswith("toy==")]
    assert len(toy) == 1 and toy[0] != "toy=missing" and len(toy[0]) == len("toy=") + 64
    assert any(line.startswith("plotly==") for line in environment)


def _executions(log: Path) -> tuple[list[str], list[str]]:
    text = log.read_text()
    executed = re.findall(r"([\w.-]+)\.ipynb: Executed notebook in", text)
    replayed = re.findall(r"([\w.-]+)\.ipynb: Replayed the recorded execution", text)
    return executed, replayed


def _pdf_epoch(pdf: Path) -> int:
    """The time a PDF of the book carries (its creation date, which toypdf sets from SOURCE_DATE_EPOCH)."""
    from datetime import UTC, datetime

    when = str(pypdf.PdfReader(pdf).metadata["/CreationDate"])[2:16]
    return int(datetime.strptime(when, "%Y%m%d%H%M%S").replace(tzinfo=UTC).timestamp())


@pytest.mark.slow
@pytest.mark.early
def test_a_rebuild_after_one_edit_executes_that_notebook_alone_and_equals_a_clean_build(built_site, tmp_path,
                                                                                       monkeypatch):
    """An author edits one notebook's prose and rebuilds over the suite's build (its pages, a page an older build
    left, its execution records): only that notebook is executed, and every file equals a clean build's.

    The clean build is the suite's own (on a fresh clone, every notebook executed afresh, as CI builds it): the
    edit changes only the edited page (by its new paragraph), its notebook and PDFs, the chapter's PDF and the
    search index, so every other file must be the same bytes, and the edited page the same but for the paragraph."""
    records = built_site.parent / toyexec.FOLDER_NAME
    assert records.is_dir(), f"the suite's build left no execution records in {records}"
    src = tmp_path / "book"
    for name in toysite.INPUT_PATHS:
        copy = shutil.copytree if (ROOT / name).is_dir() else shutil.copy2
        copy(ROOT / name, src / name, **({"ignore": shutil.ignore_patterns(*toysite.SKIPPED)}
                                        if (ROOT / name).is_dir() else {}))
    shutil.copytree(built_site, src / "_build" / "html")
    (src / "_build" / "html" / "a-page-of-an-older-build.html").write_text("<!doctype html>")
    shutil.copytree(records, src / "_build" / toyexec.FOLDER_NAME)
    prints = toypdf.cache_dir(built_site)
    if not toypdf.missing():
        assert prints.is_dir(), f"the suite's build kept no prints in {prints}"
        shutil.copytree(prints, src / "_build" / toypdf.CACHE_NAME)
        # the copy is no git checkout: its PDFs carry the date the suite's build gave its own
        monkeypatch.setenv("SOURCE_DATE_EPOCH", str(_pdf_epoch(built_site / toypdf.page_pdf(EDITED))))
    notebook = src / f"{EDITED}.ipynb"
    nb = json.loads(notebook.read_text())
    prose = next(c for c in nb["cells"] if c["cell_type"] == "markdown" and len("".join(c["source"])) > 300)
    prose["source"] = "".join(prose["source"]).rstrip("\n") + f"\n\n{SENTENCE}\n"
    notebook.write_text(json.dumps(nb, indent=1, ensure_ascii=False) + "\n")

    rebuilt = build_book(src, None, tmp_path / "rebuild.log")
    executed, replayed = _executions(tmp_path / "rebuild.log")
    assert executed == [Path(EDITED).name], f"executed {executed}, replayed {replayed}"
    pages = len(list((ROOT / "chapters").rglob("*.ipynb")))  # the sections and the optional pages
    assert len(replayed) == pages - 1 and Path(EDITED).name not in replayed
    edited_pdfs = set()
    if not toypdf.missing():  # that page printed again, and no other; its PDF and the chapter's made again
        log = (tmp_path / "rebuild.log").read_text()
        assert re.findall(r"toypdf: (\S+): printed in", log) == [toypdf.page_pdf(EDITED)], log[-3000:]
        made = re.findall(r"toypdf: (\S+): (?:printed in|the chapter's)", log)
        edited_pdfs = {toypdf.page_pdf(EDITED), toypdf.chapters(src)[0].pdf}
        assert made == [toypdf.page_pdf(EDITED), toypdf.chapters(src)[0].pdf], log[-3000:]

    first = sorted(p.relative_to(rebuilt) for p in rebuilt.rglob("*") if p.is_file())
    second = sorted(p.relative_to(built_site) for p in built_site.rglob("*") if p.is_file())
    assert first == second, set(first) ^ set(second)
    differ = {rel.as_posix() for rel in first if not filecmp.cmp(rebuilt / rel, built_site / rel, shallow=False)}
    page = f"{EDITED}.html"
    edited = {page, f"_sources/{EDITED}.ipynb", f"{EDITED}.ipynb", f"_colab/{EDITED}.ipynb", "searchindex.js",
              *edited_pdfs}
    assert page in differ and differ <= edited, f"files that differ from a clean build: {sorted(differ - edited)}"
    added = f"<p>{SENTENCE}</p>\n"
    text = (rebuilt / page).read_text(encoding="utf-8")
    assert text.count(added) == 1 and text.replace(added, "") == (built_site / page).read_text(encoding="utf-8")
    for pdf in edited_pdfs:
        assert SENTENCE.replace(" ", "") in "".join(
            p.extract_text() for p in pypdf.PdfReader(rebuilt / pdf).pages).replace(" ", "").replace("\n", "")
