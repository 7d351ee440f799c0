"""The chapters' notebooks stay stored without outputs (issue 42): JupyterLab saves a notebook with its outputs, and
neither git nor the build takes that for a change. Git's clean filter (``.gitattributes``, set up by
``scripts/setup.sh``: ``toysite.py strip-outputs``) stores the notebook as it was; the build's input hash and each
notebook's execution key count a notebook without its outputs and execution counts."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path
from types import SimpleNamespace

import toyexec  # book/_ext: tests/conftest.py puts it on sys.path
import toysite

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOK = "chapters/04-the-llm-as-a-policy/4.1-formal-mapping.ipynb"


def run_in_lab(text: str) -> str:
    """The notebook as JupyterLab saves it once run: outputs, execution counts, timings, widget state."""
    nb = json.loads(text)
    for n, cell in enumerate(c for c in nb["cells"] if c["cell_type"] == "code"):
        cell["execution_count"] = n + 1
        cell["outputs"] = [{"output_type": "stream", "name": "stdout", "text": [f"ran {n}\n"]}]
        cell["metadata"]["execution"] = {"iopub.execute_input": "2026-12-06T02:00:00.000Z"}
    nb["metadata"]["widgets"] = {"application/vnd.jupyter.widget-state+json": {"state": {}}}
    return json.dumps(nb, indent=1, sort_keys=True, ensure_ascii=False) + "\n"


def test_the_stored_notebooks_are_as_the_filter_stores_them():
    for path in sorted((ROOT / "chapters").rglob("*.ipynb")):
        text = path.read_text(encoding="utf-8")
        assert toysite.stored_notebook(text) == text, f"{path} is not stored as the filter stores it"


def test_outputs_alone_change_neither_the_builds_inputs_nor_an_execution(tmp_path):
    book = tmp_path / "chapters"
    book.mkdir()
    nb = book / "page.ipynb"
    text = (ROOT / NOTEBOOK).read_text(encoding="utf-8")
    nb.write_text(text, encoding="utf-8")
    settings = SimpleNamespace(execution_timeout=180, execution_allow_errors=False, execution_raise_on_error=False,
                               execution_in_temp=False, eval_name_regex=r"^x$")
    before = toysite.files_digest(book, tmp_path), toyexec.execution_key(nb, settings, ["env"])
    nb.write_text(run_in_lab(text), encoding="utf-8")
    assert nb.read_text(encoding="utf-8") != text
    assert (toysite.files_digest(book, tmp_path), toyexec.execution_key(nb, settings, ["env"])) == before
    edited = json.loads(text)
    edited["cells"][0]["source"].append("\nAn edit to the prose.\n")
    nb.write_text(json.dumps(edited, indent=1), encoding="utf-8")  # a real edit: both change
    after = toysite.files_digest(book, tmp_path), toyexec.execution_key(nb, settings, ["env"])
    assert after[0] != before[0] and after[1] != before[1]


def _git(repo: Path, *args: str, cwd: Path | None = None) -> str:
    proc = subprocess.run(["git", *args], cwd=cwd or repo, capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc
    return proc.stdout


def test_git_stores_a_notebook_saved_with_outputs_without_them(tmp_path):
    """A clone set up as ``scripts/setup.sh`` sets one up: the notebook run and saved in JupyterLab is no change,
    ``git add`` stores it without outputs (also from a folder below), and a real edit is one."""
    filter_command = re.search(r'^STRIP_FILTER="([^"]+)"', (ROOT / "scripts" / "setup.sh").read_text(), re.M)
    assert filter_command, "scripts/setup.sh sets up no filter"
    repo = tmp_path / "clone"
    (repo / Path(NOTEBOOK).parent).mkdir(parents=True)
    for name in (".venv", "book"):  # what the filter's command names, relative to the clone
        (repo / name).symlink_to(ROOT / name)
    shutil.copy(ROOT / ".gitattributes", repo / ".gitattributes")
    text = (ROOT / NOTEBOOK).read_text(encoding="utf-8")
    (repo / NOTEBOOK).write_text(text, encoding="utf-8")
    _git(repo, "init", "-q")
    (repo / ".git" / "info" / "exclude").write_text(".venv\nbook\n")
    _git(repo, "config", "user.email", "a@example.org")
    _git(repo, "config", "user.name", "An author")
    _git(repo, "config", "filter.toybook-strip-outputs.clean", filter_command.group(1))
    _git(repo, "add", ".gitattributes", NOTEBOOK)
    _git(repo, "commit", "-qm", "the book")

    (repo / NOTEBOOK).write_text(run_in_lab(text), encoding="utf-8")
    assert _git(repo, "diff") == "", "a notebook saved with outputs differs from the stored one"
    _git(repo, "add", "-A", ".", cwd=repo / Path(NOTEBOOK).parent)
    assert _git(repo, "show", f":{NOTEBOOK}") == text, "git stored the outputs"
    assert _git(repo, "status", "--porcelain") == "", "a notebook saved with outputs is a change to commit"

    edited = json.loads(run_in_lab(text))
    edited["cells"][0]["source"].append("\nAn edit to the prose.\n")
    (repo / NOTEBOOK).write_text(json.dumps(edited, indent=1, sort_keys=True, ensure_ascii=False) + "\n")
    assert _git(repo, "status", "--porcelain").strip() == f"M {NOTEBOOK}"
    _git(repo, "add", NOTEBOOK)
    stored = json.loads(_git(repo, "show", f":{NOTEBOOK}"))
    assert stored["cells"][0]["source"][-1] == "\nAn edit to the prose.\n"
    assert all(c["outputs"] == [] and c["execution_count"] is None for c in stored["cells"]
               if c["cell_type"] == "code")


def test_the_site_offers_each_notebook_as_stored(tmp_path):
    """A build from a notebook saved with outputs offers it for download as stored (``toybook.sources_as_stored``):
    the site depends only on what the build's input hash counts."""
    import toybook

    text = (ROOT / NOTEBOOK).read_text(encoding="utf-8")
    copy = tmp_path / "_sources" / NOTEBOOK
    copy.parent.mkdir(parents=True)
    copy.write_text(run_in_lab(text), encoding="utf-8")
    (tmp_path / "_sources" / "as-stored.ipynb").write_text(text, encoding="utf-8")
    assert toybook.sources_as_stored(tmp_path) == [copy]
    assert copy.read_text(encoding="utf-8") == text


def test_a_worktree_without_its_venv_reads_its_notebooks_quietly(tmp_path):
    """The filter lives in the repository's config, which all its worktrees share: one without .venv (before its
    set-up) passes notebooks through unchanged, with no error on every git command."""
    filter_command = re.search(r'^STRIP_FILTER="([^"]+)"', (ROOT / "scripts" / "setup.sh").read_text(), re.M)
    repo = tmp_path / "worktree"
    (repo / Path(NOTEBOOK).parent).mkdir(parents=True)
    shutil.copy(ROOT / ".gitattributes", repo / ".gitattributes")
    text = (ROOT / NOTEBOOK).read_text(encoding="utf-8")
    (repo / NOTEBOOK).write_text(text, encoding="utf-8")
    _git(repo, "init", "-q")
    _git(repo, "config", "filter.toybook-strip-outputs.clean", filter_command.group(1))
    done = subprocess.run(["git", "add", "-A"], cwd=repo, capture_output=True, text=True)
    assert done.returncode == 0 and done.stderr == "", done.stderr
    assert _git(repo, "show", f":{NOTEBOOK}") == text
