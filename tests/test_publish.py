"""Publishing (issue 23): the workflow that publishes the site, the one setting that names the repository, a build
for publishing that refuses a book without one, and the build the tests reuse only while it is current
(``book/_ext/toysite.py``). Builds of one commit being the same byte for byte: tests/test_rebuild.py."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import toysite  # book/_ext: tests/conftest.py puts it on sys.path
import yaml

from tests.conftest import build_book

ROOT = Path(__file__).resolve().parents[1]
WORKFLOW = ROOT / ".github" / "workflows" / "publish.yml"
CHECK_JSONSCHEMA = Path(sys.executable).with_name("check-jsonschema")


# -- the workflow ------------------------------------------------------------------------------------------------
def readme_build_command() -> str:
    """The command the README's "Build the book" gives."""
    readme = (ROOT / "README.md").read_text()
    block = re.search(r"\*\*Build the book\*\*.*?```bash\n(.*?)\n```", readme, re.S)
    assert block, "the README has no 'Build the book' command"
    return block.group(1).strip()


def workflow_problems(path: Path) -> list[str]:
    """What is wrong with a publish workflow: GitHub's workflow schema (check-jsonschema's copy of SchemaStore's),
    then what the schema cannot see (jobs that need missing jobs, step outputs of missing steps) and what this
    book's publishing needs (the README's build command as a publishing build, the Pages actions, the Colab
    branch from toysite)."""
    assert CHECK_JSONSCHEMA.exists(), f"{CHECK_JSONSCHEMA} is missing: bash scripts/setup.sh installs requirements.txt"
    lint = subprocess.run([str(CHECK_JSONSCHEMA), "--builtin-schema", "vendor.github-workflows", str(path)],
                          capture_output=True, text=True, timeout=120)
    if lint.returncode != 0:
        return [f"check-jsonschema: {lint.stdout[-2000:]}{lint.stderr[-2000:]}"]
    wf = yaml.safe_load(path.read_text())
    jobs, found = wf.get("jobs") or {}, []
    for name, job in jobs.items():
        for need in [job["needs"]] if isinstance(job.get("needs"), str) else job.get("needs") or []:
            if need not in jobs:
                found.append(f"job {name} needs {need}, which is not a job")
        ids = {step.get("id") for step in job.get("steps") or []}
        for ref in re.findall(r"steps\.([\w-]+)\.", json.dumps(job)):
            if ref not in ids:
                found.append(f"job {name} reads steps.{ref}, which no step of it is")
    steps = [(name, step) for name, job in jobs.items() for step in job.get("steps") or []]
    builds = [(n, s) for n, s in steps if (s.get("run") or "").strip() == readme_build_command()]
    if not builds or any((s.get("env") or {}).get(toysite.PUBLISH_ENV) != "1" for _, s in builds):
        found.append(f"no step runs the README's build command ({readme_build_command()}) with "
                     f"{toysite.PUBLISH_ENV}=1")
    uses = {(s.get("uses") or "").split("@")[0]: (n, s) for n, s in steps}
    upload, deploy = uses.get("actions/upload-pages-artifact"), uses.get("actions/deploy-pages")
    if not upload or (upload[1].get("with") or {}).get("path") != "_build/html":
        found.append("no actions/upload-pages-artifact step uploads _build/html")
    if not deploy:
        found.append("no actions/deploy-pages step")
    else:
        permissions = jobs[deploy[0]].get("permissions") or wf.get("permissions") or {}
        if permissions.get("pages") != "write" or permissions.get("id-token") != "write":
            found.append("the deploy job lacks pages: write and id-token: write")
    if not any("toysite.py colab-branch" in (s.get("run") or "") and "git push" in (s.get("run") or "")
               for _, s in steps):
        found.append("no step pushes the Colab editions to toysite.py's colab-branch")
    return found


def test_the_publish_workflow_passes_the_linter_and_builds_with_the_readmes_command():
    assert readme_build_command() == "bash scripts/book.sh"
    assert workflow_problems(WORKFLOW) == []


BROKEN = {
    "a misspelt event": ("  push:\n", "  pushh:\n"),
    "a job without runs-on": ("    runs-on: ubuntu-latest\n    timeout-minutes: 30\n", "    timeout-minutes: 30\n"),
    "a wrong permission": ("pages: write ", "pages: writ "),
    "a step with uses and run": ("      - uses: actions/checkout@v4\n",
                                 "      - uses: actions/checkout@v4\n        run: echo hi\n"),
    "broken YAML": ("jobs:\n", "jobs:\n  : [\n"),
    "a misspelt key": ("        with:\n          path: _build/html", "        wiht:\n          path: _build/html"),
    "a job that needs no job": ("needs: build", "needs: biuld"),
    "a step output of no step": ("steps.deployment.outputs", "steps.deploy.outputs"),
    "another build command": ("run: bash scripts/book.sh", "run: .venv/bin/jupyter-book build ."),
    "a build not for publishing": ('TOYBOOK_PUBLISH: "1"', 'TOYBOOK_PUBLISH: "0"'),
    "no Pages deployment": ("uses: actions/deploy-pages@v4", "uses: actions/checkout@v4"),
}


@pytest.mark.parametrize("broken", list(BROKEN))
def test_a_broken_workflow_fails_the_check(tmp_path, broken):
    old, new = BROKEN[broken]
    text = WORKFLOW.read_text()
    assert old in text, f"the workflow no longer has {old!r}: update this test"
    path = tmp_path / "publish.yml"
    path.write_text(text.replace(old, new, 1))
    assert workflow_problems(path), f"{broken} passed the check"


# -- the repository: one setting, or git's origin ----------------------------------------------------------------
@pytest.mark.parametrize("spelling", ["https://github.com/someone/a-book", "https://github.com/someone/a-book.git",
                                      "git@github.com:someone/a-book.git", "ssh://git@github.com/someone/a-book",
                                      "https://x-access-token:abc@github.com/someone/a-book/"])
def test_github_remotes_in_any_spelling(spelling):
    assert toysite.github_url(spelling) == "https://github.com/someone/a-book"


def test_not_github_is_no_repository():
    for url in ["/work/main", "https://gitlab.com/a/b", "", None, "file:///srv/git/book.git"]:
        assert toysite.github_url(url) is None


def a_book(folder: Path, url: str, remote: str | None = None) -> Path:
    """A folder with the book's _config.yml (repository.url set to ``url``), under git with ``remote`` as origin."""
    folder.mkdir(parents=True, exist_ok=True)
    config = yaml.safe_load((ROOT / "_config.yml").read_text())
    config["repository"]["url"] = url
    (folder / "_config.yml").write_text(yaml.safe_dump(config))
    subprocess.run(["git", "init", "-q", str(folder)], check=True)
    if remote:
        subprocess.run(["git", "-C", str(folder), "remote", "add", "origin", remote], check=True)
    return folder


def test_the_repository_comes_from_the_config_else_from_git(tmp_path, monkeypatch):
    monkeypatch.delenv(toysite.PUBLISH_ENV, raising=False)
    assert toysite.repository(a_book(tmp_path / "a", "https://github.com/course/book/", "git@github.com:me/x"))[0] \
        == "https://github.com/course/book"
    assert toysite.repository(a_book(tmp_path / "b", "", "git@github.com:me/x.git")) == (
        "https://github.com/me/x", "git remote origin")
    for k, placeholder in enumerate(sorted(toysite.PLACEHOLDERS)):  # a placeholder is no setting at all
        assert toysite.repository(a_book(tmp_path / f"c{k}", placeholder, "https://github.com/me/y"))[0] == \
            "https://github.com/me/y"
        url, why = toysite.repository(a_book(tmp_path / f"d{k}", placeholder))
        assert url is None and "placeholder" in why
    url, why = toysite.repository(a_book(tmp_path / "e", "", "/srv/git/book"))
    assert url is None and "empty" in why
    assert toysite.require_repository(tmp_path / "e") is None  # not for publishing: no repository, no buttons
    monkeypatch.setenv(toysite.PUBLISH_ENV, "1")
    with pytest.raises(toysite.NoRepository, match=r"TOYBOOK_PUBLISH is set.*Set repository\.url in _config\.yml"):
        toysite.require_repository(tmp_path / "e")
    assert toysite.require_repository(tmp_path / "b") == "https://github.com/me/x"


def test_the_colab_branch_is_the_configs(tmp_path):
    assert toysite.colab_branch(ROOT) == yaml.safe_load((ROOT / "_config.yml").read_text())["sphinx"]["config"][
        "toy_colab_branch"]
    out = subprocess.run([sys.executable, str(ROOT / "book" / "_ext" / "toysite.py"), "colab-branch"],
                         capture_output=True, text=True, check=True)
    assert out.stdout.strip() == toysite.colab_branch(ROOT)


# -- the build the tests reuse ------------------------------------------------------------------------------------
def test_a_build_is_current_only_while_nothing_it_reads_changed(tmp_path, monkeypatch):
    monkeypatch.delenv(toysite.PUBLISH_ENV, raising=False)
    root = a_book(tmp_path / "book", "")
    for name in ["chapters/04/4.1.ipynb", "toy/__init__.py", "book/intro.md", "_toc.yml", "README.md"]:
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(f"{name}\n")
    html = root / "_build" / "html"
    html.mkdir(parents=True)
    (html / "index.html").write_text("<!doctype html>")
    assert not toysite.is_current(html, root)  # no stamp: no build of record
    toysite.stamp_path(html).write_text(toysite.inputs_hash(root) + "\n")
    assert toysite.is_current(html, root)
    (root / "README.md").write_text("edited\n")  # not read by the build
    (root / "toy" / "__pycache__").mkdir()
    (root / "toy" / "__pycache__" / "x.pyc").write_bytes(b"\0")
    assert toysite.is_current(html, root)
    notebook = root / "chapters" / "04" / "4.1.ipynb"
    notebook.write_text("a changed notebook\n")  # a test that changes a notebook gets a new build
    assert not toysite.is_current(html, root)
    notebook.write_text("chapters/04/4.1.ipynb\n")
    assert toysite.is_current(html, root)
    for name in ["toy/new.py", "book/_static/x.js", "_config.yml"]:
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        before = (root / name).read_text() if (root / name).exists() else None
        (root / name).write_text(f"{before or ''}# changed\n")
        assert not toysite.is_current(html, root), name
        (root / name).unlink() if before is None else (root / name).write_text(before)
    assert toysite.is_current(html, root)
    subprocess.run(["git", "-C", str(root), "remote", "add", "origin", "https://github.com/me/z"], check=True)
    assert not toysite.is_current(html, root)  # its buttons would point elsewhere


# -- builds ------------------------------------------------------------------------------------------------------
@pytest.mark.slow
def test_a_build_for_publishing_refuses_a_book_without_a_repository(tmp_path):
    config = yaml.safe_load((ROOT / "_config.yml").read_text())
    config["repository"]["url"] = "https://github.com/llm-as-a-policy/book"  # the old placeholder
    config["sphinx"]["local_extensions"] = {"toybook": str(ROOT / "book" / "_ext")}  # (relative to the config)
    (tmp_path / "_config.yml").write_text(yaml.safe_dump(config))
    jb = Path(sys.executable).with_name("jupyter-book")
    env = {**os.environ, toysite.PUBLISH_ENV: "1", "GIT_DIR": str(tmp_path / "no-git")}  # no origin either
    proc = subprocess.run([str(jb), "build", str(ROOT), "--config", str(tmp_path / "_config.yml"),
                           "--path-output", str(tmp_path / "out")], capture_output=True, text=True, env=env,
                          timeout=600)
    log = proc.stdout + proc.stderr
    assert proc.returncode != 0, log[-3000:]
    assert "TOYBOOK_PUBLISH is set, so this build is for publishing, but the book has no repository" in log, log[-3000:]
    assert "placeholder" in log and "Executed notebook" not in log  # at once, before any notebook runs


TINY_NOTEBOOK = {
    "cells": [
        {"cell_type": "markdown", "metadata": {}, "source": ["# A page\n", "\n", "One cell of code."]},
        {"cell_type": "code", "execution_count": None, "metadata": {"tags": ["colab-setup", "remove-cell"]},
         "outputs": [], "source": ["import sys\n", "if \"google.colab\" in sys.modules:\n",
                                   "    %pip install --quiet \"toy @ git+https://github.com/llm-as-a-policy/book\""]},
        {"cell_type": "code", "execution_count": None, "metadata": {}, "outputs": [], "source": ["1 + 1"]},
    ],
    "metadata": {"kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"}},
    "nbformat": 4, "nbformat_minor": 5,
}


@pytest.mark.slow
def test_a_book_with_a_repository_has_launch_buttons_pointing_at_it(tmp_path):
    """A one-page book (the book's own configuration and extension) whose repository is set: its page's Binder and
    Colab buttons, Live code's Binder route and its Colab edition all name that repository, and the Colab button
    the Colab branch."""
    root = tmp_path / "book"
    root.mkdir()
    for name in ["book/_ext", "book/_static", "book/references.bib"]:
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (shutil.copytree if (ROOT / name).is_dir() else shutil.copy)(ROOT / name, root / name)
    (root / "page.ipynb").write_text(json.dumps(TINY_NOTEBOOK))
    (root / "_toc.yml").write_text("format: jb-book\nroot: page\n")
    a_book(root, "https://github.com/course/our-book")
    site = build_book(root, None, tmp_path / "build.log")
    html = (site / "page.html").read_text()
    branch = toysite.colab_branch(ROOT)
    assert "https://mybinder.org/v2/gh/course/our-book/main?urlpath=lab/tree/page.ipynb" in html
    assert f"https://colab.research.google.com/github/course/our-book/blob/{branch}/_colab/page.ipynb" in html
    live = json.loads(re.search(r"data-toy-live=\"([^\"]+)\"", html).group(1).replace("&quot;", '"'))
    assert live["binder"] == {"url": "https://mybinder.org", "repo": "course/our-book", "ref": "main"}
    edition = json.loads((site / "_colab" / "page.ipynb").read_text())
    assert 'git+https://github.com/course/our-book"' in edition["cells"][1]["source"]
    assert toysite.is_current(site, root)  # a warning-free -W -n build records its inputs


@pytest.mark.slow
def test_a_rebuild_with_nothing_changed_executes_nothing(built_site, tmp_path):
    """``scripts/book.sh`` skips a build whose inputs are those of the build in _build/html (issue 33): ``--check``
    says so and builds nothing; a stamp that no longer matches what the build reads means a build."""
    import time

    if built_site.resolve() == (ROOT / "_build" / "html").resolve():
        start = time.monotonic()
        proc = subprocess.run(["bash", str(ROOT / "scripts" / "book.sh"), "--check"], capture_output=True, text=True,
                              timeout=300, cwd=ROOT)
        print(f"book.sh --check on a current build: {time.monotonic() - start:.1f} s")
        assert proc.returncode == 0 and "is current" in proc.stdout and "no notebook was" in proc.stdout, proc
    # the same check says a build of other inputs is not current
    check = [sys.executable, str(ROOT / "book" / "_ext" / "toysite.py"), "is-current"]
    stale = tmp_path / "_build" / "html"
    stale.mkdir(parents=True)
    shutil.copy(built_site / "index.html", stale / "index.html")
    (tmp_path / "_build" / toysite.STAMP).write_text(toysite.inputs_hash() + "\n")
    assert subprocess.run([*check, str(stale)], timeout=120).returncode == 0
    (tmp_path / "_build" / toysite.STAMP).write_text("a hash of other inputs\n")
    assert subprocess.run([*check, str(stale)], timeout=120).returncode == 1
