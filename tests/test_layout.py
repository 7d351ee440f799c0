"""The shape of the ``toy`` package, read from its source with ``ast`` (nothing is imported): its modules import
each other without a cycle, and the model and its maths (``toy``'s own modules) never reach the page side
(``toy.page``) nor the libraries that draw it. ``toy.exercises`` may: its questions ask what an explorer shows, on
the explorer's own grids and data (``toy.exercises.questions``)."""

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1] / "toy"
PAGE = "toy.page"
DRAWING = ("plotly", "ipywidgets", "IPython")
"""Libraries of the page side: the explorers' widgets and the figures."""


def module_name(path: Path) -> str:
    parts = ("toy", *path.relative_to(ROOT).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES = {module_name(p): p for p in sorted(ROOT.rglob("*.py"))}


def imports(name: str) -> tuple[set[str], set[str]]:
    """(the toy modules that module ``name`` imports, anywhere in its source, the other top-level packages it
    imports). ``from package import x`` imports the module ``package.x`` if there is one, else ``package``."""
    path = MODULES[name]
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found, outside = set(), set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            targets = [(alias.name, []) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                source = ".".join([*base, node.module] if node.module else base)
            else:
                source = node.module
            targets = [(source, [alias.name for alias in node.names])]
        else:
            continue
        for source, names in targets:
            if source.split(".")[0] != "toy":
                outside.add(source.split(".")[0])
                continue
            submodules = [f"{source}.{n}" for n in names if f"{source}.{n}" in MODULES]
            found.update(submodules)
            if not names or len(submodules) < len(names):
                assert source in MODULES, f"{name} imports {source}, which is not a module of toy"
                found.add(source)
    found.discard(name)
    return found, outside


GRAPH = {name: imports(name)[0] for name in MODULES}


def reach(name: str) -> set[str]:
    """Every toy module that importing ``name`` imports, directly or through others."""
    seen, todo = set(), [name]
    while todo:
        for dep in GRAPH[todo.pop()] - seen:
            seen.add(dep)
            todo.append(dep)
    return seen


def find_cycle() -> list[str] | None:
    """One import cycle among toy's modules (as a path that ends where it starts), or None."""
    state: dict[str, str] = {}  # "open" while on the path being explored, "done" after

    def visit(name, path):
        state[name] = "open"
        for dep in sorted(GRAPH[name]):
            if state.get(dep) == "open":
                return [*path[path.index(dep):], dep]
            if dep not in state and (cycle := visit(dep, [*path, dep])):
                return cycle
        state[name] = "done"
        return None

    for name in sorted(GRAPH):
        if name not in state and (cycle := visit(name, [name])):
            return cycle
    return None


def test_the_walk_sees_the_package():
    assert {"toy", "toy.vocab", "toy.checks", "toy.policy", PAGE, f"{PAGE}.explorer", f"{PAGE}.explorers",
            "toy.exercises"} <= set(MODULES)
    assert {"toy.checks", "toy.vocab"} <= GRAPH["toy.policy"]
    assert f"{PAGE}.figures" in GRAPH[f"{PAGE}.explorers.credit"] and "toy.exact" in GRAPH[f"{PAGE}.explorers.credit"]


def test_no_import_cycle():
    cycle = find_cycle()
    assert cycle is None, "toy's modules import each other in a cycle: " + " -> ".join(cycle)


def test_constants_sit_below_checks_and_policy():
    assert GRAPH["toy.vocab"] == set()
    assert GRAPH["toy.checks"] == {"toy.vocab"}


def test_model_does_not_reach_the_page():
    model = [name for name in MODULES if name != "toy" and not name.startswith((PAGE, "toy.exercises"))]
    for name in model:
        page = sorted(dep for dep in reach(name) if dep.startswith(PAGE))
        assert not page, f"{name} imports the page side: {page}"
        drawing = sorted(imports(name)[1] & set(DRAWING))
        assert not drawing, f"{name} imports {drawing}, which belong to the page side ({PAGE})"


def course_imports() -> dict[str, set[str]]:
    """{course module: the course modules it imports, anywhere in its source (a function's imports too)}."""
    folder = ROOT.parent / "course"
    names = {p.stem for p in folder.glob("*.py") if p.stem != "__init__"}
    graph = {}
    for name in names:
        found = set()
        for node in ast.walk(ast.parse((folder / f"{name}.py").read_text())):
            if isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level == 1 or base.startswith("course"):
                    part = base.removeprefix("course").lstrip(".")
                    found |= {part.split(".")[0]} if part else {a.name for a in node.names}
            elif isinstance(node, ast.Import):
                found |= {a.name.split(".")[1] for a in node.names if a.name.startswith("course.")}
        graph[name] = found & names - {name}
    return graph


def test_no_import_cycle_in_course():
    """The grader's modules import one way (issue 29: marks and sandbox once imported each other for Channel)."""
    graph = course_imports()
    assert "channel" in graph["marks"] and "channel" in graph["sandbox"] and "sandbox" in graph["marks"]

    def reach(name, seen):
        for other in graph[name]:
            assert other not in seen, f"course's modules import each other in a cycle: {' -> '.join(seen + [other])}"
            reach(other, seen + [other])

    for name in graph:
        reach(name, [name])
