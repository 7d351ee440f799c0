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


@pytest.mark.slow
@pytest.mark.early
def test_a_rebuild_after_one_edit_executes_that_notebook_alone_and_equals_a_clean_build(built_site, tmp_path):
    """An author edits one notebook's prose and rebuilds over the suite's build (its pages, a page an older build
    left, its execution records): only that notebook is executed, and every file equals a clean build's of the
    edited book, made in another folder with every notebook executed afresh."""
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
    if not toypdf.missing():  # that page printed again, and no other; its PDF and the chapter's made again
        log = (tmp_path / "rebuild.log").read_text()
        assert re.findall(r"toypdf: (\S+): printed in", log) == [toypdf.page_pdf(EDITED)], log[-3000:]
        made = re.findall(r"toypdf: (\S+): (?:printed in|the chapter's)", log)
        assert made == [toypdf.page_pdf(EDITED), toypdf.chapters(src)[0].pdf], log[-3000:]

    clean = build_book(src, tmp_path / "clean", tmp_path / "clean.log")
    executed, replayed = _executions(tmp_path / "clean.log")
    assert len(executed) == pages and replayed == []
    first = sorted(p.relative_to(rebuilt) for p in rebuilt.rglob("*") if p.is_file())
    second = sorted(p.relative_to(clean) for p in clean.rglob("*") if p.is_file())
    assert first == second, set(first) ^ set(second)
    differ = [str(rel) for rel in first if not filecmp.cmp(rebuilt / rel, clean / rel, shallow=False)]
    assert differ == [], f"{len(differ)} files differ between a rebuild and a clean build, first {differ[:10]}"
    assert SENTENCE in (rebuilt / f"{EDITED}.html").read_text()
