"""The ``toy`` a sandboxed submission imports for one exercise: a facade that holds what the exercise may use, and
nothing else of ``toy``.

Each exercise may use a few named parts of ``toy`` (its allow-list, ``toy.exercises.forbidden``: for 4.1-value, a
policy's next-token probabilities and the reward). A deny-list of forbidden functions cannot work: other ``toy``
functions compute the same answers (``toy.exact.reach_probs(policy, prompt)[len(y)][y]`` is π(y | x)), and a
policy object carries them in its internals. So the sandbox's ``toy`` for an exercise is a package generated for
it, module by module (the same modules and names as the real ``toy``, without ``toy.exercises``, which the worker
adds), holding

- every module-level constant of ``toy`` (``toy.EOS``, ``toy.estimators.GRPO_EPS``, ``from toy.vocab import EOS``);
- the allowed functions that take no policy as the real code, from a private copy of the few pure modules they
  need (``toybook_pure``: ``vocab``, ``checks``, ``rewards``, and ``policy``'s prompt and EOS helpers), none of
  which can reach any exercise's answer: the reward functions and ``toy.reward_table``;
- ``toy.value``, where allowed, as a function that answers from the values the grader sent with the policy;
- in place of every other function, method and class of ``toy`` (public or private, in any module), a stub whose
  call raises ``toybook_forbidden.ForbiddenReference`` with the name the notebook's check would report for it, so
  the grader marks the exercise "forbidden" in the same words.

The hidden inputs' policies are rebuilt in the sandbox as *capability objects* (``rebuild_policy``): the grader
computes, in its own process, the tables of what the exercise may ask of a policy (``protocol.encode_case``) and
the sandbox's policy answers from them, with the real methods' argument forms and errors; it has no other method
(the names of the real policy's other methods give stubs).

``restricted_toy(exercise)`` returns the facade, ``toybook_pure``, ``toybook_forbidden.py`` (the runtime below,
shipped as source) and the worker with its protocol (``worker.py``, ``protocol.py``) as the bytes of a zip file,
each module compiled (Python imports from a zip on ``sys.path``); the sandbox mounts it read-only from memory, so
nothing is written to disk.
"""

from __future__ import annotations

import ast
import functools
import importlib
import importlib.util
import inspect
import io
import marshal
import math
import pkgutil
import sys
import types
import zipfile
from pathlib import Path

import numpy as np

import toy
from toy import exact, rewards
from toy.exercises import EXERCISES
from toy.exercises.forbidden import TOY as TOY_CODE
from toy.exercises.forbidden import Rules, allowed_for, code_kind, policy_classes
from toy.policy import Policy

from .slicing import AST_LOCK

TOY = Path(toy.__file__).parent
ARCHIVE = "/opt/grader/sandbox.zip"  # where the sandbox mounts it
RAISE = "raise __import__('toybook_forbidden').ForbiddenReference({reference!r})"
HERE = Path(__file__).parent
PURE = {"vocab": None, "checks": None, "policy": ("MAX_LENGTH", "check_prompt", "_strip_eos"), "rewards": None}
"""The modules of ``toybook_pure``, the real code behind the allowed functions that take no policy: whole, or the
names kept (with the imports they need)."""


# >>> the sandbox's runtime: shipped as toybook_forbidden.py (numpy and the standard library only) >>>>>>>>>>>>>>>>>>>
class ForbiddenReference(RuntimeError):
    """Raised by a part of toy that this exercise does not allow: the grader's sandbox holds only a stub of it."""


POLICY_ATTRIBUTES: dict = {}  # policy class name -> {attribute: name}: what the real policy has that this one has not


def stub(reference: str):
    """A function that raises ForbiddenReference(reference), whatever it is given."""
    def forbidden(*args, **kwargs):
        raise ForbiddenReference(reference)

    forbidden.__name__ = forbidden.__qualname__ = reference.rsplit(".", 1)[-1]
    return forbidden


class CapablePolicy:
    """A hidden input's policy in the grader's sandbox: its attributes, its repr, and the tables of what the exercise
    may ask of it, sent by the grader. The methods the exercise allows are added to a subclass per policy
    (``rebuild_policy``); for any other method of the real policy's class, the name gives a stub."""

    def __repr__(self) -> str:
        return self.__dict__["_repr"]

    def __getattr__(self, name: str):
        reference = POLICY_ATTRIBUTES.get(self.__dict__.get("_class"), {}).get(name)
        if reference is None:
            raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")
        return stub(reference)


class PolicyClass(type):
    """The metaclass of the stubs of toy's policy classes: a policy the grader sent is an instance of the stubs of
    its real class and of that class's bases (``isinstance(policy, toy.Policy)``), as in the notebook."""

    def __instancecheck__(cls, obj) -> bool:
        return cls.__subclasscheck__(type(obj))

    def __subclasscheck__(cls, other) -> bool:
        return f"{cls.__module__}.{cls.__qualname__}" in getattr(other, "_classes", ()) or type.__subclasscheck__(
            cls, other)


def next_token_probs(self, prompt, prefix=()):
    """π(· | x, prefix): shape (n_actions,)."""
    from toybook_pure import checks

    prefix = checks.prefix("prefix", prefix, self.length, self.eos, strict=True)
    prompt = checks.prompt("prompt", prompt)
    return np.array(self.__dict__["_next_token_probs"][prompt][len(prefix)][prefix])


def response_probs(self, prompt):
    """π(y | x) for every (padded) response y: shape (n_actions,)*length, summing to one."""
    from toybook_pure import checks

    prompt = checks.prompt("prompt", prompt)
    return np.array(self.__dict__["_response_probs"][prompt])


_CAPABLE_CLASSES: dict = {}


def _tables(tables, prompts) -> dict:
    """{prompt: the tables sent for it}, each a read-only array (a list of them per prompt, or one)."""
    def array(table):
        a = np.array(table["data"], dtype=float).reshape(table["shape"])
        a.flags.writeable = False
        return a

    return {x: [array(t) for t in per] if isinstance(per, list) else array(per)
            for x, per in zip(prompts, tables, strict=True)}


def rebuild_policy(data: dict) -> CapablePolicy:
    """The policy that ``protocol.encode_case`` described: its methods are the capabilities it was sent with."""
    methods = {name: fn for name, fn in (("next_token_probs", next_token_probs), ("response_probs", response_probs))
               if name in data}
    key = (data["class"], tuple(data["classes"]), tuple(methods))
    if key not in _CAPABLE_CLASSES:
        _CAPABLE_CLASSES[key] = type(data["class"], (CapablePolicy,), {**methods, "__module__": "toy.policy",
                                                                        "_classes": tuple(data["classes"])})
    policy = object.__new__(_CAPABLE_CLASSES[key])
    policy.__dict__.update(data["attributes"], _repr=data["repr"], _class=data["class"])
    for name in methods:
        policy.__dict__["_" + name] = _tables(data[name], data["prompts"])
    if "values" in data:
        policy.__dict__["_values"] = {reward: _tables(tables, data["prompts"])
                                      for reward, tables in data["values"].items()}
    return policy


def value(policy, reward, prompt, prefix=()) -> float:
    """V^π(s) for the state s = (prompt, prefix): the expected reward of completing ``prefix`` with π (in the grader's
    sandbox: from the values the grader sent with the policy, for the rewards of toy.REWARDS)."""
    from toybook_pure import checks

    from toy.rewards import REWARDS

    if not isinstance(policy, CapablePolicy):
        raise checks.fail("policy", "a toy Policy (for example toy.reference_policy())", policy)
    prefix = checks.prefix("prefix", prefix, policy.length, policy.eos)
    fn = reward if callable(reward) else checks.choose("reward", reward, REWARDS)
    name = next((n for n, f in REWARDS.items() if f is fn), None)
    if name is None:
        raise ValueError(f"in the grader's sandbox, toy.value knows the rewards of toy.REWARDS only, not {reward!r}")
    prompt = checks.prompt("prompt", prompt)
    values = policy.__dict__.get("_values")
    if values is None:
        raise ForbiddenReference("toy.value")
    return float(values[name][prompt][len(prefix)][prefix])
# <<< the sandbox's runtime <<<<<<<<<<<<<<<<<<<<<<<<<<<<<<<<<<<<<<<<<<<<<<<<<<<<<<<<<<<<<<<<<<<<<<<<<<<<<<<<<<<<<<<<<


def runtime_source() -> str:
    """The runtime above, as the module ``toybook_forbidden`` (without the exercise's data)."""
    text = Path(__file__).read_text()
    start = text.index("# >>> the sandbox's runtime")
    end = text.index("# <<< the sandbox's runtime")
    return ('"""The grader\'s sandbox\'s runtime behind its toy (course/restricted.py): ForbiddenReference, the stubs, '
            'the policies\nrebuilt from their capabilities, and toy.value from the values sent."""\n\nimport numpy as '
            'np\n\n\n' + text[start:end].split("\n", 1)[1])


# -- toy as it is: its modules, and each name's kind ---------------------------------------------------------------
def _module_names() -> list[str]:
    """Every module of the toy package but toy.exercises, packages before their modules."""
    names = ["toy"] + [info.name for info in pkgutil.walk_packages(toy.__path__, "toy.")]
    return [n for n in names if n != "toy.exercises" and not n.startswith("toy.exercises.")]


def _is_toy_module(name: str) -> bool:
    return (name == "toy" or name.startswith("toy.")) and name != "toy.exercises" and not name.startswith(
        "toy.exercises.")


def _top_level_imports(module: types.ModuleType) -> dict[str, tuple[str, str]]:
    """{local name: (absolute module, name)} for the module's top-level ``from ... import ...`` statements."""
    with AST_LOCK:
        tree = ast.parse(inspect.getsource(module))
    package = module.__name__ if hasattr(module, "__path__") else module.__name__.rpartition(".")[0]
    found = {}
    for node in tree.body:
        if isinstance(node, ast.ImportFrom):
            source = importlib.util.resolve_name("." * node.level + (node.module or ""), package)
            for alias in node.names:
                found[alias.asname or alias.name] = (source, alias.name)
    return found


STATIC = (ast.Dict, ast.List, ast.Set, ast.DictComp, ast.ListComp, ast.SetComp)


def _top_level_literals(module: types.ModuleType) -> dict[str, str | None]:
    """{name: how the module's top-level assignment defines it}: the source of a literal (``_TABLES: dict = {}``), or
    None for a static structure (a display or comprehension, ``dict(color=...)``) whose value at run time may be
    mirrored. A mutable constant defined any other way is not mirrored (a stub): no cache filled in the grader's
    process can reach the sandbox."""
    with AST_LOCK:
        tree = ast.parse(inspect.getsource(module))
        found = {}
        for node in tree.body:
            targets = node.targets if isinstance(node, ast.Assign) else [node.target] if isinstance(
                node, ast.AnnAssign) and node.value is not None else []
            for target in targets:
                if not isinstance(target, ast.Name):
                    continue
                found.pop(target.id, None)
                value = node.value
                try:
                    ast.literal_eval(value)
                except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
                    called = isinstance(value, ast.Call) and isinstance(value.func, ast.Name) and value.func.id in (
                        "dict", "list", "set")
                    if isinstance(value, STATIC) or called and (value.args or value.keywords):
                        found[target.id] = None
                    elif called:
                        found[target.id] = ast.unparse(ast.Call(value.func, [], []))
                else:
                    found[target.id] = ast.unparse(value)
    return found


class _NotPlain(Exception):
    pass


IMMUTABLE = (type(None), bool, int, float, complex, str, bytes)


def _literal(value, names: dict, immutable_only: bool = False) -> str:
    """Source that rebuilds ``value``, made of plain data and references to toy's functions and classes (``names``:
    id -> expression); _NotPlain for anything else."""
    if type(value) in IMMUTABLE:
        if type(value) is float and not math.isfinite(value):
            return f"float({repr(value)!r})"
        return repr(value)
    if type(value) in (tuple, frozenset) or (not immutable_only and type(value) in (list, set, dict)):
        if type(value) is dict:
            return "{" + ", ".join(f"{_literal(k, names, True)}: {_literal(v, names)}" for k, v in value.items()) + "}"
        items = [_literal(v, names, immutable_only) for v in value]
        if type(value) is tuple:
            return "(" + ", ".join(items) + ("," if len(items) == 1 else "") + ")"
        if type(value) is list:
            return "[" + ", ".join(items) + "]"
        return f"{type(value).__name__}([{', '.join(items)}])"
    if id(value) in names:
        return names[id(value)]
    raise _NotPlain


def _toy_callable(value) -> bool:
    module = getattr(value, "__module__", None)
    return callable(value) and isinstance(module, str) and _is_toy_module(module) and (
        inspect.isfunction(value) or inspect.isclass(value) or inspect.isfunction(getattr(value, "__wrapped__", None)))


@functools.cache
def _toy_layout() -> dict[str, tuple[bool, list[tuple]]]:
    """{module: (is a package, entries)} for every module of toy (but toy.exercises). An entry is
    ("object", name, obj): a function or class of toy defined there; ("import", name, module, attr); ("const",
    name, source); or ("other", name): anything else, a stub."""
    modules = {name: importlib.import_module(name) for name in _module_names()}
    layout = {}
    for module_name, module in modules.items():
        imports, literals = _top_level_imports(module), _top_level_literals(module)
        references = {}  # id of a toy function or class -> an expression for it in this module
        for name, value in vars(module).items():
            if _toy_callable(value) and id(value) not in references:
                references[id(value)] = name
        entries = []
        for name, value in vars(module).items():
            if name.startswith("__") and name.endswith("__") and name != "__all__":
                continue
            entry = _entry(module_name, name, value, imports, literals, references)
            if entry:
                entries.append(entry)
        layout[module_name] = (hasattr(module, "__path__"), entries)
    return layout


def _entry(module_name, name, value, imports, literals, references) -> tuple | None:
    if name in imports:
        source, attr = imports[name]
        if not _is_toy_module(source):
            if source.startswith("toy"):  # from toy.exercises: the worker's, not the facade's
                return None
        elif isinstance(value, types.ModuleType) and not _is_toy_module(value.__name__):
            return None  # from . import exercises: the worker's, not the facade's
        else:
            home = importlib.import_module(source)
            if getattr(home, attr, _NotPlain) is value or (
                    isinstance(value, types.ModuleType) and value.__name__ == f"{source}.{attr}"):
                return ("import", name, source, attr)
    if isinstance(value, types.ModuleType):
        if _is_toy_module(value.__name__):
            parent, _, child = value.__name__.rpartition(".")
            return ("import", name, parent, child) if parent else ("other", name)
        return None if value.__name__.startswith("toy.exercises") else ("other", name)
    if _toy_callable(value):
        home = getattr(value, "__module__", module_name)
        attr = getattr(value, "__name__", name)
        if home != module_name and getattr(sys.modules.get(home), attr, None) is value:
            return ("import", name, home, attr)
        return ("object", name, value)
    try:
        if type(value) in (list, set, dict):
            if name not in literals:
                return ("other", name)
            return ("const", name, literals[name] or _literal(value, references))
        return ("const", name, _literal(value, references, immutable_only=True))
    except _NotPlain:
        return ("other", name)


# -- the facade for one exercise -----------------------------------------------------------------------------------
def _replacements(capabilities: tuple[str, ...]) -> dict[int, str]:
    """id of a toy function an exercise may use -> where the facade takes it from."""
    found = {}
    if "reward" in capabilities:
        for fn in rewards.REWARDS.values():
            found[id(fn)] = f"toybook_pure.rewards:{fn.__name__}"
    if "toy.reward_table" in capabilities:
        found[id(rewards.reward_table)] = "toybook_pure.rewards:reward_table"
    if "toy.value" in capabilities:
        found[id(exact.value)] = "toybook_forbidden:value"
    return found


def _stub_function(name: str, reference: str, indent: str = "") -> str:
    return (f"{indent}def {name}(*args, **kwargs):\n{indent}    \"\"\"Not in this exercise's toy: {reference}.\"\"\"\n"
            f"{indent}    {RAISE.format(reference=reference)}\n")


def _class_members(cls) -> dict[str, object]:
    """The functions behind the callable attributes of a toy class (its toy base classes' too), by name."""
    members = {}
    for klass in cls.__mro__:
        if not _is_toy_module(klass.__module__):
            continue
        for attr, member in vars(klass).items():
            if attr.startswith("__") and attr.endswith("__") or attr in members:
                continue
            member = getattr(member, "__func__", member)  # staticmethod / classmethod
            member = getattr(member, "fget", member)  # property
            while hasattr(member, "__wrapped__"):
                member = member.__wrapped__
            if inspect.isfunction(member):
                members[attr] = member
    return members


def _member_name(rules: Rules, cls, attr: str, fn) -> str:
    """What the notebook's check calls a method of a toy class (code that toy did not write: after the class)."""
    if code_kind(fn.__code__.co_filename) == TOY_CODE:
        return rules.name_of_object(fn)
    return f"{rules.name_of_object(cls)}.{attr}"


def _stub_class(name: str, cls, rules: Rules) -> str:
    reference = rules.name_of_object(cls)
    meta = "(metaclass=__import__('toybook_forbidden').PolicyClass)" if issubclass(cls, Policy) else ""
    lines = [f"class {name}{meta}:", f"    \"\"\"Not in this exercise's toy: {reference}.\"\"\"", "",
             "    def __new__(cls, *args, **kwargs):", f"        {RAISE.format(reference=reference)}", ""]
    for attr, fn in _class_members(cls).items():
        lines.append(_stub_function(attr, _member_name(rules, cls, attr, fn), "    "))
    return "\n".join(lines).rstrip() + "\n"


def facade_source(module_name: str, exercise: str | None, rules: Rules, capabilities: tuple[str, ...]) -> str:
    """The source of the facade's ``module_name`` for ``exercise``."""
    _, entries = _toy_layout()[module_name]
    replacements = _replacements(capabilities)
    defined, imported, constants = [], [], []
    for entry in entries:
        kind, name = entry[0], entry[1]
        if kind == "object":
            obj = entry[2]
            if id(obj) in replacements:
                source, attr = replacements[id(obj)].split(":")
                defined.append(f"from {source} import {attr}" + (f" as {name}" if attr != name else "") + "\n")
            elif inspect.isclass(obj):
                defined.append(_stub_class(name, obj, rules))
            elif inspect.isfunction(obj) or inspect.isfunction(getattr(obj, "__wrapped__", None)):
                defined.append(_stub_function(name, rules.name_of_object(obj)))
            else:
                defined.append(_stub_function(name, f"{module_name}.{name}"))
        elif kind == "other":
            defined.append(_stub_function(name, f"{module_name}.{name}"))
        elif kind == "import":
            source, attr = entry[2], entry[3]
            imported.append(f"from {source} import {attr}" + (f" as {name}" if attr != name else ""))
        else:
            constants.append(f"{name} = {entry[2]}")
    about = f"for exercise {exercise}" if exercise else "with no exercise"
    head = (f'"""The grader\'s sandbox\'s {module_name}, {about}: toy\'s constants, what the exercise may use, and a '
            'stub\nthat raises ForbiddenReference for everything else (course/restricted.py)."""\n')
    parts = [head, "\n\n".join(defined), "\n".join(imported), "\n".join(constants)]
    return "\n\n".join(p.rstrip("\n") for p in parts if p.strip()) + "\n"


def _policy_attributes(rules: Rules, capabilities: tuple[str, ...]) -> dict[str, dict[str, str]]:
    """For each policy class of toy: the callable attributes its objects have that a sandbox's policy has not."""
    kept = {"n_actions"} | {c.split(".")[1] for c in capabilities if c.startswith("policy.")}
    return {cls.__name__: {attr: _member_name(rules, cls, attr, fn) for attr, fn in _class_members(cls).items()
                           if attr not in kept}
            for cls in policy_classes()}


def _pure_module(name: str, keep: tuple[str, ...] | None) -> str:
    """toybook_pure's copy of ``toy.<name>``: the whole module, or only its imports and the names in ``keep``."""
    source = (TOY / f"{name}.py").read_text()
    if keep is None:
        return source
    with AST_LOCK:
        tree = ast.parse(source)
        body = [node for node in tree.body if isinstance(node, (ast.Import, ast.ImportFrom)) or any(
            n in keep for n in _defines(node))]
        found = {n for node in body for n in _defines(node)}
        if set(keep) - found:
            raise ValueError(f"toy/{name}.py: no {', '.join(sorted(set(keep) - found))} to keep")
        return f'"""toy.{name}\'s {", ".join(keep)}, for toybook_pure (course/restricted.py)."""\n\n' + ast.unparse(
            ast.Module(body=body, type_ignores=[])) + "\n"


def _defines(node) -> list[str]:
    if isinstance(node, (ast.FunctionDef, ast.ClassDef, ast.AsyncFunctionDef)):
        return [node.name]
    if isinstance(node, ast.Assign):
        return [t.id for t in node.targets if isinstance(t, ast.Name)]
    if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
        return [node.target.id]
    return []


def _pyc(source: str, path: str) -> bytes:
    """An unchecked hash-based .pyc of ``source`` (zipimport loads it without compiling again)."""
    with AST_LOCK:
        code = compile(source, path, "exec", dont_inherit=True, optimize=0)
    flags = 0b01  # hash-based, not checked against the source
    return (importlib.util.MAGIC_NUMBER + flags.to_bytes(4, "little")
            + importlib.util.source_hash(source.encode()) + marshal.dumps(code))


def sandbox_files(exercise: str | None, capabilities: tuple[str, ...] | None = None) -> dict[str, str]:
    """{path in the zip: source} of the sandbox for ``exercise`` (None: one that may use nothing of toy). Tests pass
    ``capabilities`` to build a facade that allows more than the exercise does."""
    if exercise is not None and exercise not in EXERCISES:
        raise ValueError(f"there is no exercise {exercise!r}")
    ex = EXERCISES[exercise] if exercise else None
    allowed = allowed_for(exercise)
    capabilities = allowed.capabilities if capabilities is None else tuple(capabilities)
    rules = Rules(exercise, ex.forbidden if ex else None, allowed)
    runtime = (runtime_source() + f"\n\nEXERCISE = {exercise!r}\nCAPABILITIES = {capabilities!r}\n"
               f"POLICY_ATTRIBUTES = {_policy_attributes(rules, capabilities)!r}\n")
    files = {"toybook_forbidden.py": runtime, "worker.py": (HERE / "worker.py").read_text(),
             "protocol.py": (HERE / "protocol.py").read_text(),
             "toybook_pure/__init__.py": '"""The pure parts of toy behind the sandbox\'s allowed functions."""\n'}
    for name, keep in PURE.items():
        files[f"toybook_pure/{name}.py"] = _pure_module(name, keep)
    for module_name, (package, _) in _toy_layout().items():
        path = module_name.replace(".", "/") + ("/__init__.py" if package else ".py")
        files[path] = facade_source(module_name, exercise, rules, capabilities)
    return files


def zip_files(files: dict[str, str]) -> bytes:
    """The zip of ``files``, each module with its compiled .pyc beside it."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_STORED) as archive:
        for name, source in sorted(files.items()):
            archive.writestr(name, source)
            archive.writestr(name[:-3] + ".pyc", _pyc(source, f"{ARCHIVE}/{name}"))
    return buffer.getvalue()


@functools.cache
def restricted_toy(exercise: str | None) -> bytes:
    """The sandbox's zip for ``exercise`` (None: a toy that allows nothing, for the probe), as bytes: the facade
    ``toy``, ``toybook_pure``, ``toybook_forbidden.py``, and the worker with its protocol."""
    return zip_files(sandbox_files(exercise))


# -- the old way, kept for tests that show why it was not enough ---------------------------------------------------
class _Strip(ast.NodeTransformer):
    """Replace the bodies of the functions whose qualified names are in ``targets`` ({qualname: reference})."""

    def __init__(self, targets: dict[str, str]):
        self.targets, self.scope, self.found = targets, [], set()

    def _visit_def(self, node):
        qualname = ".".join([*self.scope, node.name])
        self.scope += [node.name, "<locals>"] if not isinstance(node, ast.ClassDef) else [node.name]
        self.generic_visit(node)
        del self.scope[-2 if not isinstance(node, ast.ClassDef) else -1:]
        if qualname in self.targets and not isinstance(node, ast.ClassDef):
            node.body = [ast.parse(RAISE.format(reference=self.targets[qualname])).body[0]]
            self.found.add(qualname)
        return node

    visit_FunctionDef = visit_AsyncFunctionDef = visit_ClassDef = _visit_def


def strip_source(source: str, targets: dict[str, str], where: str = "<toy>") -> str:
    """``source`` with each target function's body replaced by a raise; ValueError if a target is not there (how the
    grader's sandbox once took forbidden functions out: a deny-list, which leaks)."""
    with AST_LOCK:  # see course.slicing.AST_LOCK
        tree = ast.parse(source)
        stripper = _Strip(targets)
        tree = stripper.visit(tree)
        missing = set(targets) - stripper.found
        if missing:
            raise ValueError(f"{where}: no function {', '.join(sorted(missing))} to take out")
        return ast.unparse(ast.fix_missing_locations(tree)) + "\n"
