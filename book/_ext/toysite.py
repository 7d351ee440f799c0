"""Where the book is published from, and what a build of it is made of. No Sphinx here: the tests, the publish
workflow and ``toybook`` (the Sphinx extension) all read these answers from this one module.

* **The repository** (``repository()``): ``repository.url`` in ``_config.yml``, the one setting; left empty, the
  git remote ``origin`` when it is on GitHub (a GitHub Actions checkout of a fork is, so a fork publishes with no
  edit). A placeholder counts as no repository. Without a repository the book has no Binder or Colab buttons and
  Live code has no Binder route; a build for publishing (``TOYBOOK_PUBLISH=1``) refuses to start.
* **The Colab branch** (``colab_branch()``): ``toy_colab_branch`` in ``_config.yml``, the branch the publish
  workflow pushes the Colab editions to and the Colab buttons open them from.
* **A build's inputs** (``inputs_hash()``): a hash of everything a build reads (chapters, ``toy``, ``book/``,
  ``_config.yml``, ``_toc.yml``, the installed packages and npm bundles, the repository, and the Chromium that
  prints its PDFs, or its absence: a book built without one has no PDFs, so is not current once it is there),
  which a successful warning-free build records beside its HTML (``STAMP``), so the tests reuse a build only
  while it is current. A notebook counts without what running it leaves (``strip_outputs``): one saved with
  outputs from JupyterLab is the same input as the one stored.

``python book/_ext/toysite.py repository|colab-branch|inputs-hash`` prints one of them; ``toysite.py
strip-outputs`` is git's clean filter for the notebooks (``.gitattributes``, set up by ``scripts/setup.sh``): the
notebook on stdin, as stored (no outputs), on stdout.
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import json
import os
import re
import subprocess
import sys
import sysconfig
from pathlib import Path

if str(Path(__file__).resolve().parent) not in sys.path:  # its sibling toypdf, however this module is loaded
    sys.path.insert(0, str(Path(__file__).resolve().parent))
import toypdf

ROOT = Path(__file__).resolve().parents[2]
PUBLISH_ENV = "TOYBOOK_PUBLISH"
PLACEHOLDERS = {  # made-up or inherited URLs that name no real copy of this book
    "https://github.com/llm-as-a-policy/book", "https://github.com/OWNER/REPO",
    "https://github.com/executablebooks/jupyter-book",  # Jupyter Book's default when the key is missing
}
STAMP = ".toybook-inputs"  # written beside the html folder: _build/.toybook-inputs for _build/html
INPUT_PATHS = ("chapters", "toy", "book", "_config.yml", "_toc.yml")
SKIPPED = ("__pycache__", ".ipynb_checkpoints")
_GITHUB = re.compile(r"^(?:https://(?:[^@/]+@)?github\.com/|git@github\.com:|ssh://git@github\.com/)"
                     r"([A-Za-z0-9_.-]+)/([A-Za-z0-9_.-]+?)(?:\.git)?/?$")


class NoRepository(RuntimeError):
    """A build for publishing, with no repository to point its buttons at."""


def _config(root: Path) -> dict:
    import yaml

    return yaml.safe_load((root / "_config.yml").read_text(encoding="utf-8")) or {}


def github_url(url: str | None) -> str | None:
    """``https://github.com/owner/name`` for a GitHub URL in any of git's spellings, else None."""
    m = _GITHUB.match((url or "").strip())
    return f"https://github.com/{m.group(1)}/{m.group(2)}" if m else None


def _git_remote(root: Path) -> str | None:
    try:
        proc = subprocess.run(["git", "-C", str(root), "remote", "get-url", "origin"], capture_output=True,
                              text=True, timeout=10)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return github_url(proc.stdout) if proc.returncode == 0 else None


def repository(root: Path = ROOT, configured: str | None = None) -> tuple[str | None, str]:
    """(the repository's https URL or None, where it came from), from ``repository.url`` (``configured`` if
    given), else git's ``origin``."""
    configured = (_config(root).get("repository") or {}).get("url", "") if configured is None else configured
    configured = (configured or "").strip().rstrip("/")
    if configured and configured not in PLACEHOLDERS:
        return configured, "repository.url in _config.yml"
    remote = _git_remote(root)
    if remote and remote not in PLACEHOLDERS:
        return remote, "git remote origin"
    why = f"repository.url in _config.yml is a placeholder ({configured})" if configured else \
        "repository.url in _config.yml is empty and git's origin is not a GitHub repository"
    return None, why


def require_repository(root: Path = ROOT, configured: str | None = None) -> str | None:
    """The repository; under ``TOYBOOK_PUBLISH=1`` none is an error that says what to set."""
    url, why = repository(root, configured)
    if url is None and os.environ.get(PUBLISH_ENV, "") not in ("", "0"):
        raise NoRepository(
            f"{PUBLISH_ENV} is set, so this build is for publishing, but the book has no repository: {why}. "
            "Set repository.url in _config.yml to your copy's https://github.com/<owner>/<name>, or build in a "
            "clone whose git remote 'origin' is that repository (README: Publish your own copy).")
    return url


def colab_branch(root: Path = ROOT) -> str:
    return str(((_config(root).get("sphinx") or {}).get("config") or {}).get("toy_colab_branch") or "gh-pages")


def _npm_versions() -> list[str]:
    found = []
    for package_json in sorted((Path(sys.prefix) / "share").glob("toybook-*/**/package/package.json")):
        m = re.search(r'"version":\s*"([^"]+)"', package_json.read_text(encoding="utf-8", errors="replace"))
        found.append(f"{package_json.parent.parent.name}={m.group(1) if m else '?'}")
    return found


def installed_packages() -> list[str]:
    """``name==version`` of every package installed in this environment, sorted."""
    site = sorted({sysconfig.get_paths()["purelib"], sysconfig.get_paths()["platlib"]})  # not sys.path: the cwd
    return sorted({f"{d.metadata['Name']}=={d.version}" for d in importlib.metadata.distributions(path=site)})


def strip_outputs(nb: dict) -> dict:
    """A notebook as the repository stores it: what running it leaves (each code cell's outputs and execution
    count, JupyterLab's timing record, the widgets' saved state) taken out; the rest as it is."""
    nb = json.loads(json.dumps(nb))
    for cell in nb.get("cells") or []:
        if cell.get("cell_type") == "code":
            cell["outputs"], cell["execution_count"] = [], None
        (cell.get("metadata") or {}).pop("execution", None)
    (nb.get("metadata") or {}).pop("widgets", None)
    return nb


def stored_notebook(text: str) -> str:
    """The text of a notebook as stored (``strip_outputs``, written as nbformat and JupyterLab write it)."""
    return json.dumps(strip_outputs(json.loads(text)), indent=1, sort_keys=True, ensure_ascii=False) + "\n"


def notebook_digest(path: Path) -> bytes:
    """A hash of a notebook without what running it leaves, so a notebook saved with outputs (JupyterLab saves
    them) hashes as the one stored without: outputs alone never make a build. Not a notebook's JSON: its bytes."""
    data = Path(path).read_bytes()
    try:
        data = stored_notebook(data.decode("utf-8")).encode()
    except ValueError:
        pass
    return hashlib.sha256(data).digest()


def files_digest(path: Path, root: Path | None = None) -> str:
    """A hash of the files under ``path`` (or of the file ``path``), named relative to ``root`` (default ``path``);
    caches (``SKIPPED``, ``.pyc``) left out, a missing file hashed as missing."""
    path = Path(path)
    root = path if root is None else Path(root)
    h = hashlib.sha256()
    for f in sorted(p for p in path.rglob("*") if p.is_file()) if path.is_dir() else [path]:
        rel = f.relative_to(root)
        if any(part in SKIPPED for part in rel.parts) or f.suffix == ".pyc":
            continue
        h.update(f"{rel.as_posix()}\0".encode())
        if not f.exists():
            h.update(b"-")
        else:
            h.update(notebook_digest(f) if f.suffix == ".ipynb" else hashlib.sha256(f.read_bytes()).digest())
    return h.hexdigest()


def inputs_hash(root: Path = ROOT) -> str:
    """A hash of what a build of the book reads: its sources, the environment it runs in, the repository."""
    h = hashlib.sha256()
    for name in INPUT_PATHS:
        h.update(f"{name}\0{files_digest(root / name, root)}\n".encode())
    environment = [sys.version, *installed_packages(), *_npm_versions(), f"repository={repository(root)[0]}",
                   f"pdf printer={toypdf.printer()}"]
    h.update("\n".join(environment).encode())
    return h.hexdigest()


def stamp_path(html_dir: Path) -> Path:
    return Path(html_dir).parent / STAMP


def is_current(html_dir: Path, root: Path = ROOT) -> bool:
    """Whether ``html_dir`` holds a warning-free build of exactly these inputs."""
    stamp = stamp_path(html_dir)
    return (Path(html_dir) / "index.html").is_file() and stamp.is_file() and \
        stamp.read_text().strip() == inputs_hash(root)


if __name__ == "__main__":
    what = sys.argv[1] if len(sys.argv) > 1 else ""
    if what == "repository":
        try:
            print(require_repository() or "")
        except NoRepository as err:
            sys.exit(f"toysite.py: {err}")
    elif what == "colab-branch":
        print(colab_branch())
    elif what == "strip-outputs":  # git's clean filter: a notebook on stdin, as stored on stdout
        text = sys.stdin.buffer.read().decode("utf-8")
        try:
            text = stored_notebook(text)
        except ValueError:  # not a notebook's JSON (a merge conflict's markers): left as it is
            pass
        sys.stdout.buffer.write(text.encode("utf-8"))
    elif what == "inputs-hash":
        print(inputs_hash())
    elif what == "is-current":  # exit code 0 if the html folder (default _build/html) is a build of these inputs
        sys.exit(0 if is_current(Path(sys.argv[2]) if len(sys.argv) > 2 else ROOT / "_build" / "html") else 1)
    else:
        sys.exit("usage: toysite.py repository|colab-branch|inputs-hash|strip-outputs|is-current [html folder]")
