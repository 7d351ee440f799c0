"""What an exercise may use of ``toy``: its allow-list, and the watch that holds a student's function to it.

An exercise that asks for V(s) by backward induction is not done by ``return toy.value(...)``, nor by any other
``toy`` function that happens to compute the same number (``toy.exact.reach_probs``, a policy's ``prob``...). So
each exercise declares, once, the few parts of ``toy`` it may use (``allow``), from a small fixed vocabulary
(``CAPABILITIES``)::

    allow("4.1-value", "a policy's next-token probabilities and the reward", "policy.next_token_probs", "reward")

Always allowed: a policy's attributes (``length``, ``n_actions``, ``eos``, ``temperature``, ``name``, its repr)
and ``toy``'s module-level constants (``toy.EOS``, ``toy.PROMPTS``, ``toy.estimators.GRPO_EPS``...). Everything
else of ``toy`` is out. ``forbid`` keeps, for the messages, what the exercise asks for and the shortcuts a student
is most likely to reach for; it decides nothing ("this exercise asks for V(s) by backward induction, without
toy.value").

**In the student's notebook** a watch (a profile hook, ``sys.setprofile``) looks at every call into ``toy`` made
while the student's function runs. A call from ``toy`` code into ``toy`` code is ``toy``'s own business; a call
into ``toy`` made from anything else (the student's code, or library code the student called, such as
``numpy.vectorize``) is an *entry*, and an entry must be one the exercise allows, else the check reports
"forbidden" with the name of what was called. Matching is by code object, so it survives a student rebinding the
name. It is feedback in the student's own process, not a guard against deliberate tampering (code that removes the
hook or runs ``toy`` in another process is not seen). **The course grader** does not rely on it: its sandbox
holds a ``toy`` made of the allowed parts only (``course/restricted.py``), and every other name of ``toy`` raises
``ForbiddenReference`` with the same name the watch reports.
"""

from __future__ import annotations

import importlib
import inspect
import os
import sys
import sysconfig
import threading
from dataclasses import dataclass, field

CAPABILITIES = {
    "policy.next_token_probs": "policy.next_token_probs(prompt, prefix): π(· | x, prefix) of a policy the exercise "
                               "is given, at any prefix that still has a next token",
    "policy.response_probs": "policy.response_probs(prompt): π(y | x) of every response, of a policy the exercise "
                             "is given",
    "reward": "the reward functions of toy.REWARDS (such as the reward the exercise is given), called as "
              "reward(prompt, response)",
    "toy.value": "toy.value(policy, reward, prompt, prefix): V(s), for a policy the exercise is given and a reward "
                 "of toy.REWARDS",
    "toy.reward_table": "toy.reward_table(reward, prompt, length, n_actions): every response's reward",
}
"""The parts of ``toy`` an exercise can allow: name -> what it gives, in words."""

ALWAYS = ("a policy's length, n_actions, eos, temperature and name, its repr, and toy's module-level constants "
          "(toy.EOS, toy.PROMPTS, toy.estimators.GRPO_EPS, ...)")
"""What every exercise may use, in words."""

POLICY_ATTRIBUTES = ("length", "n_actions", "eos", "temperature", "name")
"""A policy's attributes that every exercise may read (those the policy has)."""


def qualname_of(code) -> str:
    """A code object's qualified name (``Policy.prob``); Python 3.10 has only its plain name, which serves the
    same matching there, a little more broadly."""
    return getattr(code, "co_qualname", code.co_name)


@dataclass(frozen=True)
class Forbidden:
    """What an exercise asks for (``asks``, e.g. "V(s) by backward induction") and the shortcuts it names in its
    messages (``references``, dotted paths from ``toy``). What is allowed is decided by ``Allowed`` alone."""

    asks: str
    references: tuple[str, ...]

    def message(self, reference: str) -> str:
        return f"this exercise asks for {self.asks}, without {reference}"

    @property
    def rule(self) -> str:
        return f"this exercise asks for {self.asks}, without {', '.join(self.references)}"


@dataclass(frozen=True)
class Allowed:
    """The parts of ``toy`` an exercise may use: ``capabilities`` (names from ``CAPABILITIES``) and the same in
    words (``uses``, e.g. "a policy's next-token probabilities and the reward")."""

    uses: str
    capabilities: tuple[str, ...]

    @property
    def rule(self) -> str:
        """What the exercise may use, in words, for the student's messages."""
        if not self.capabilities:
            return "it may use none of toy's functions, only toy's constants"
        return (f"of toy it may use {self.uses} ({', '.join(self.capabilities)}), a policy's attributes and toy's "
                "constants")


ALLOWED: dict[str, Allowed] = {}
"""Exercise name -> what it may use (``registry.allow``). An exercise without an entry may use nothing of ``toy``."""

NOTHING = Allowed("nothing of toy but its constants", ())


def allowed_for(name: str | None) -> Allowed:
    """What exercise ``name`` may use (``NOTHING`` if it declares nothing, or for None)."""
    return ALLOWED.get(name, NOTHING) if name else NOTHING


def resolve(reference: str):
    """The object a dotted path from ``toy`` names: ``"toy.exact.value"``, ``"toy.Policy.prob"``."""
    parts = reference.split(".")
    if parts[0] != "toy":
        raise ValueError(f"a forbidden reference starts with 'toy.', got {reference!r}")
    obj = importlib.import_module("toy")
    for i, part in enumerate(parts[1:], start=1):
        try:
            obj = getattr(obj, part)
        except AttributeError:
            try:
                obj = importlib.import_module(".".join(parts[: i + 1]))
            except ImportError:
                raise ValueError(f"forbidden reference {reference!r}: toy has no {'.'.join(parts[: i + 1])}") from None
    return obj


def _functions(obj) -> list:
    """The plain functions behind ``obj``: itself, a method's function, a wrapper's wrapped, a class's methods."""
    if inspect.isclass(obj):
        found = []
        for cls in obj.__mro__:
            if cls.__module__.split(".")[0] != "toy":
                continue
            for member in vars(cls).values():
                member = getattr(member, "__func__", member)  # staticmethod / classmethod
                member = getattr(member, "fget", member)  # property
                if inspect.isfunction(member):
                    found.append(member)
        return found
    obj = getattr(obj, "__func__", obj)
    while hasattr(obj, "__wrapped__"):
        obj = obj.__wrapped__
    return [obj] if inspect.isfunction(obj) else []


def code_keys(references) -> dict[tuple[str, str], str]:
    """{(file, qualified name) of each named function's code: the reference as the student would name it}."""
    keys = {}
    for reference in references:
        functions = _functions(resolve(reference))
        if not functions:
            raise ValueError(f"forbidden reference {reference!r} is not a function, method or class of toy")
        for fn in functions:
            keys[(fn.__code__.co_filename, qualname_of(fn.__code__))] = reference
    return keys


# -- which code is toy's, and what it is called -------------------------------------------------------------------
TOY_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep
MACHINERY_DIR = os.path.dirname(os.path.abspath(__file__)) + os.sep  # toy/exercises: the checks themselves
LIBRARY_DIRS = tuple(sorted({os.path.join(p, "") for k in ("stdlib", "platstdlib", "purelib", "platlib")
                             if (p := sysconfig.get_paths().get(k))}))
CONSTRUCTORS = (".__init__", ".__new__", ".__post_init__")

OTHER, TOY, TRANSPARENT = 0, 1, 2


def code_kind(filename: str) -> int:
    """TOY for ``toy``'s own code; TRANSPARENT for code that only passes calls on (the checks in toy/exercises, the
    standard library, installed packages); OTHER for the rest, the student's code."""
    if filename.startswith(MACHINERY_DIR):
        return TRANSPARENT
    if filename.startswith(TOY_DIR):
        return TOY
    if filename.startswith(LIBRARY_DIRS) or filename.startswith("<frozen "):
        return TRANSPARENT
    return OTHER


def module_of(filename: str) -> str:
    """The dotted module name of a file of the toy package: ``.../toy/page/figures.py`` -> ``toy.page.figures``."""
    rel = filename[len(TOY_DIR):]
    parts = rel[:-3].split(os.sep) if rel.endswith(".py") else rel.split(os.sep)
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(["toy", *parts])


def default_name(code) -> str:
    """The name of toy code as a student would write it: ``toy.exact.reach_probs``, ``toy.policy.HabitPolicy``
    (for its constructor), ``toy.policy.Policy.prob``."""
    qualname = qualname_of(code)
    for suffix in CONSTRUCTORS:
        if qualname.endswith(suffix):
            qualname = qualname[: -len(suffix)]
    return f"{module_of(code.co_filename)}.{qualname}"


def policy_classes() -> list[type]:
    """``toy.Policy`` and every subclass of it that ``toy`` defines."""
    from ..policy import Policy

    found, todo = [], [Policy]
    while todo:
        cls = todo.pop()
        if cls not in found and cls.__module__.split(".")[0] == "toy" and not cls.__module__.startswith(
                "toy.exercises"):
            found.append(cls)
            todo += cls.__subclasses__()
    return found


def capability_functions(capability: str) -> list:
    """The functions of ``toy`` that ``capability`` lets a student call."""
    from .. import exact, rewards

    if capability in ("policy.next_token_probs", "policy.response_probs"):
        method = capability.split(".")[1]
        return [vars(cls)[method] for cls in policy_classes() if method in vars(cls)]
    if capability == "reward":
        return list(rewards.REWARDS.values())
    if capability == "toy.value":
        return [exact.value]
    if capability == "toy.reward_table":
        return [rewards.reward_table]
    raise ValueError(f"unknown capability {capability!r}; known: {', '.join(CAPABILITIES)}")


def always_functions() -> list:
    """The functions behind what every exercise may use: each policy class's repr and ``n_actions``."""
    found = []
    for cls in policy_classes():
        for name in ("__repr__", "__str__", "n_actions"):
            member = vars(cls).get(name)
            member = getattr(member, "fget", member)
            if inspect.isfunction(member):
                found.append(member)
    return found


def _unwrapped(fn):
    while hasattr(fn, "__wrapped__"):
        fn = fn.__wrapped__
    return fn


def cached_functions() -> list:
    """Every ``functools.lru_cache`` (or ``cache``) wrapper around toy code, in any module of toy: a call that the
    cache answers runs no Python code, so the watch sees it only in the cache's count of hits."""
    found, seen = [], set()
    for name, module in list(sys.modules.items()):
        if not (name == "toy" or name.startswith("toy.")) or name.startswith("toy.exercises") or module is None:
            continue
        members = list(vars(module).values())
        members += [m for cls in members if inspect.isclass(cls) and cls.__module__ == name for m in vars(cls).values()]
        for member in members:
            member = getattr(member, "__func__", member)
            code = getattr(getattr(member, "__wrapped__", None), "__code__", None)
            if code is not None and hasattr(member, "cache_info") and id(member) not in seen \
                    and code_kind(code.co_filename) == TOY:
                seen.add(id(member))
                found.append(member)
    return found


class Rules:
    """One exercise's rules, compiled for the watch: the code objects it may enter (``allowed``) and the name of
    each piece of toy code (``name_of``), the exercise's own ``forbid`` references first."""

    def __init__(self, exercise: str | None = None, forbidden: Forbidden | None = None,
                 allowed: Allowed | None = None):
        self.exercise = exercise
        self.forbidden = forbidden
        self.allowed = allowed or NOTHING
        self.names = code_keys(forbidden.references) if forbidden else {}
        self.class_names = {}
        for reference in forbidden.references if forbidden else ():
            obj = resolve(reference)
            if inspect.isclass(obj):
                self.class_names.setdefault(obj, reference)
        functions = always_functions()
        for capability in self.allowed.capabilities:
            functions += capability_functions(capability)
        self.codes = frozenset(_unwrapped(fn).__code__ for fn in functions)

    def name_of(self, code) -> str:
        """What the student would call this piece of toy code: the exercise's reference for it, or its path."""
        return self.names.get((code.co_filename, qualname_of(code))) or default_name(code)

    def name_of_object(self, obj) -> str:
        """The same for a function, method or class of toy (how ``course/restricted.py`` names its stubs)."""
        if inspect.isclass(obj):
            return self.class_names.get(obj) or f"{obj.__module__}.{obj.__qualname__}"
        return self.name_of(_unwrapped(getattr(obj, "__func__", getattr(obj, "fget", obj))).__code__)


@dataclass
class CallWatch:
    """Notes each entry into ``toy`` that the rules do not allow, while active (``with CallWatch(rules) as watch:
    ...``; ``watch.seen``: the names, in order).

    An entry is a call into toy code whose nearest caller that is not merely passing the call on (the checks
    themselves, the standard library, installed packages) is not toy code. A call of toy code cached by
    ``functools.lru_cache`` that the cache answers runs no code: it is seen in the cache's hits, counted before and
    after (none of the allowed parts of toy calls cached code). The hook is bound at creation, so a later
    rebinding of ``sys.setprofile`` by student code does not switch it off for this watch.
    """

    rules: Rules
    seen: list = field(default_factory=list)
    still_intact: bool = True
    _kinds: dict = field(default_factory=dict, repr=False)
    _setprofile: object = field(default=sys.setprofile, repr=False)
    _getprofile: object = field(default=sys.getprofile, repr=False)
    _thread_setprofile: object = field(default=threading.setprofile, repr=False)

    def _kind(self, code) -> int:
        kind = self._kinds.get(code)
        if kind is None:
            kind = self._kinds[code] = code_kind(code.co_filename)
        return kind

    def _entered_from_outside(self, frame) -> bool:
        """True if the nearest frame from ``frame`` up that does more than pass a call on is not toy code."""
        while frame is not None:
            kind = self._kind(frame.f_code)
            if kind == TOY:
                return False
            if kind == OTHER:
                return True
            frame = frame.f_back
        return True

    def _hook(self, frame, event, arg):
        if event == "call":
            code = frame.f_code
            if self._kind(code) != TOY or code in self.rules.codes or code.co_name == "<module>":
                return
            if not self._entered_from_outside(frame.f_back):
                return
        elif event == "c_call":  # a C wrapper around toy code, e.g. functools.lru_cache: no frame of its own
            wrapped = getattr(arg, "__wrapped__", None)
            code = getattr(wrapped, "__code__", None)
            if code is None or self._kind(code) != TOY or code in self.rules.codes:
                return
            if not self._entered_from_outside(frame):
                return
        else:
            return
        name = self.rules.name_of(code)
        if name not in self.seen:
            self.seen.append(name)

    @property
    def intact(self) -> bool:
        """False if the watched code switched the hook off or replaced it."""
        return self._getprofile() == self._hook

    def __enter__(self):
        self._cached = [(fn, fn.cache_info().hits) for fn in cached_functions()]
        self._previous = self._getprofile()
        self._thread_setprofile(self._hook)
        self._setprofile(self._hook)
        return self

    def __exit__(self, *exc):
        self.still_intact = self.intact
        self._setprofile(self._previous)
        self._thread_setprofile(None)
        for fn, hits in self._cached:
            code = fn.__wrapped__.__code__
            if fn.cache_info().hits > hits and code not in self.rules.codes:
                name = self.rules.name_of(code)
                if name not in self.seen:
                    self.seen.append(name)
        return False


# -- the policies a student's function is given in the notebook ---------------------------------------------------
from ..policy import Policy  # noqa: E402  (toy.policy is imported before toy.exercises; kept here, by its use)

_SHOWN_CLASSES: dict[type, type] = {}


class Shown(Policy):
    """A hidden input's policy as the student's function sees it in the notebook's check: the same probabilities
    through the same methods, but only the attributes every exercise may read (``POLICY_ATTRIBUTES``), as in the
    grader's sandbox. A function that reads a policy's internals (``policy.table``) fails here as it would there."""

    def _prefix_probs(self, prompt: int, depth: int):
        real = self.__dict__["_real"]
        return type(real)._prefix_probs(real, prompt, depth)

    def _next_rows(self, prompt: int, prefixes):
        real = self.__dict__["_real"]
        return type(real)._next_rows(real, prompt, prefixes)

    def __repr__(self) -> str:
        return repr(self.__dict__["_real"])


def shown(value):
    """``value`` as a student's function is given it: a policy of toy as a ``Shown`` copy, anything else itself."""
    if not isinstance(value, Policy) or isinstance(value, Shown):
        return value
    cls = type(value)
    if cls not in _SHOWN_CLASSES:  # an instance of the policy's class too (isinstance), without its data
        _SHOWN_CLASSES[cls] = type(cls.__name__, (Shown, cls), {"__doc__": Shown.__doc__, "__module__": cls.__module__})
    copy = object.__new__(_SHOWN_CLASSES[cls])
    copy.__dict__["_real"] = value
    for attribute in POLICY_ATTRIBUTES:
        if attribute in vars(value) and attribute != "n_actions":
            copy.__dict__[attribute] = vars(value)[attribute]
    copy.__dict__.setdefault("length", value.length)
    copy.__dict__.setdefault("eos", value.eos)
    return copy
