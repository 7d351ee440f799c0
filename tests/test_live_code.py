"""Live code's build side (issue 14), fast: Thebe's bundle copied into the site without source maps, the plain build
unharmed when it is missing (the button then says why), and the button's config from _config.yml."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import yaml

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "book" / "_ext"))
import toybook  # noqa: E402


def fake_bundle(folder: Path, version: str = toybook.THEBE_VERSION) -> Path:
    lib = folder / "lib"
    lib.mkdir(parents=True)
    (folder / "package.json").write_text(json.dumps({"name": "thebe", "version": version}))
    for name in ["index.js", "123.index.js", "thebe.css", "index.js.map", "index.js.LICENSE.txt"]:
        (lib / name).write_text(name)
    return folder


def test_thebe_bundle_is_copied_without_maps(tmp_path, monkeypatch):
    monkeypatch.setattr(toybook, "THEBE_DIR", fake_bundle(tmp_path / "package"))
    assert toybook._vendor_thebe(tmp_path / "site" / "thebe") is None
    assert sorted(p.name for p in (tmp_path / "site" / "thebe").iterdir()) == ["123.index.js", "index.js",
                                                                               "thebe.css"]


def test_a_missing_or_other_thebe_leaves_the_build_alone_and_says_why(tmp_path, monkeypatch):
    monkeypatch.setattr(toybook, "THEBE_DIR", tmp_path / "nothing")
    why = toybook._vendor_thebe(tmp_path / "site" / "thebe")
    assert "npm" in why and "README" in why
    assert not (tmp_path / "site" / "thebe").exists()
    monkeypatch.setattr(toybook, "THEBE_DIR", fake_bundle(tmp_path / "old", "0.8.2"))
    assert "0.8.2" in toybook._vendor_thebe(tmp_path / "site2" / "thebe")


def test_live_config_names_the_server_and_binder_of_the_book():
    config = yaml.safe_load((ROOT / "_config.yml").read_text())

    def live(repository: str, thebe=None) -> dict:
        theme = {"launch_buttons": config["launch_buttons"], "repository_url": repository,
                 "repository_branch": config["repository"]["branch"]}
        app = SimpleNamespace(config=SimpleNamespace(html_theme_options=theme,
                                                     toy_live_server=config["sphinx"]["config"]["toy_live_server"]),
                              _toybook_thebe=thebe)
        return toybook._live_config(app)

    got = live("https://github.com/example/book")
    assert got["thebe"] == "_static/thebe/index.js" and got["off"] is None
    assert got["server"] == "http://127.0.0.1:8888"
    assert got["binder"] == {"url": "https://mybinder.org", "repo": "example/book", "ref": "main"}
    assert live("")["binder"] is None  # no repository set (toybook._repository): no Binder route
    assert live("https://github.com/example/book", thebe="Thebe was not installed")["thebe"] is None


def test_live_sh_is_valid_bash_and_serves_on_the_configured_port():
    text = (ROOT / "scripts" / "live.sh").read_text()
    config = yaml.safe_load((ROOT / "_config.yml").read_text())
    port = config["sphinx"]["config"]["toy_live_server"].rsplit(":", 1)[1]
    assert f"JUPYTER_PORT=${{JUPYTER_PORT:-{port}}}" in text
    assert subprocess.run(["bash", "-n", str(ROOT / "scripts" / "live.sh")]).returncode == 0


def test_the_live_code_benchmark_reads_the_prelude_the_page_sends():
    """benchmarks/bench_live_code.py runs Live code's prelude in its kernels, read from the built toy-live.js. The
    prelude became two string literals joined by + (bc6fc7a), and the benchmark's pattern for one literal found
    nothing, so it stopped before printing a figure. It reads the page's prelude whole, as the kernel gets it."""
    sys.path.insert(0, str(ROOT / "benchmarks"))
    import bench_live_code

    prelude = bench_live_code.live_code_prelude(ROOT / "book")  # book/_static/toy/toy-live.js, as the build copies
    assert prelude.startswith("import os\n") and prelude.endswith("\n")
    assert 'os.environ["TOY_EXPLORER_VIEW"] = "page"' in prelude and 'os.environ.pop("TOY_CHECKS", None)' in prelude
    namespace: dict = {}
    env = {"TOY_CHECKS": "not run"}
    exec(compile(prelude.replace("import os\n", ""), "prelude", "exec"), {"os": SimpleNamespace(environ=env)},
         namespace)
    assert env == {"TOY_EXPLORER_VIEW": "page"}
