"""Issue 47, part 8: Binder builds the repository with the Python the project asks for. repo2docker (the builder
behind Binder's button) reads runtime.txt; this test has repo2docker's own code pick the build pack it would use for
this repository and read the Python version from it, and checks it against pyproject.toml's requires-python."""

from __future__ import annotations

import tomllib
from pathlib import Path

from packaging.specifiers import SpecifierSet
from packaging.version import Version
from repo2docker.app import Repo2Docker

ROOT = Path(__file__).resolve().parents[1]


def test_binder_builds_with_the_python_the_project_asks_for(monkeypatch):
    monkeypatch.chdir(ROOT)  # repo2docker reads the repository's files from the folder it builds in
    app = Repo2Docker()
    picked = next(pack for pack in (kind(app.base_image) for kind in app.buildpacks) if pack.detect())
    assert type(picked).__name__ == "PythonBuildPack"  # requirements.txt, pip, as the README says
    assert picked.runtime[:2] == ("python", "3.11")
    assert picked.python_version == "3.11" and picked._python_version_source == "runtime"
    wanted = SpecifierSet(tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["requires-python"])
    assert Version(picked.python_version) in wanted
    assert Version("3.10") not in wanted  # repo2docker's default would not do: the pin matters
