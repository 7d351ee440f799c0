"""Forbidden references: the parts of ``toy`` an exercise asks the student not to call.

An exercise that asks for V(s) by backward induction is not done by ``return toy.value(...)``. While a student's
function runs, a watch (a profile hook, ``sys.setprofile``) notes every call whose code is the code of a forbidden
reference, however the student reached it: ``toy.value``, ``from toy.exact import value as v``, or through
another ``toy`` function that calls it. The check then reports it in words::

    this exercise asks for V(s) by backward induction, without toy.value

A reference is named as a dotted path from ``toy`` (``"toy.value"``, ``"toy.Policy.prob"``); a class stands for
all of its methods. Matching is by (file, qualified name) of the code, so it survives a student rebinding the
name. It is feedback in the student's own notebook, not a guard against deliberate tampering (code that removes
the hook or runs ``toy`` in another process is not seen). The course grader does not rely on it: in its sandbox
the forbidden code is simply not there (``course/restricted.py``).
"""

from __future__ import annotations

import importlib
import inspect
import sys
import threading
from dataclasses import dataclass, field


@dataclass(frozen=True)
class Forbidden:
    """What an exercise asks for (``asks``, e.g. "V(s) by backward induction") and the references it forbids."""

    asks: str
    references: tuple[str, ...]

    def message(self, reference: str) -> str:
        return f"this exercise asks for {self.asks}, without {reference}"

    @property
    def rule(self) -> str:
        return f"this exercise asks for {self.asks}, without {', '.join(self.references)}"


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
    """{(file, qualified name) of each forbidden function's code: the reference as the student would name it}."""
    keys = {}
    for reference in references:
        functions = _functions(resolve(reference))
        if not functions:
            raise ValueError(f"forbidden reference {reference!r} is not a function, method or class of toy")
        for fn in functions:
            keys[(fn.__code__.co_filename, fn.__code__.co_qualname)] = reference
    return keys


@dataclass
class CallWatch:
    """Notes calls into forbidden code while active (``with CallWatch(keys) as watch: ...``; ``watch.seen``).

    ``keys`` maps (file, qualified name) to the name shown to the student. The hook is bound at creation, so a
    later rebinding of ``sys.setprofile`` by student code does not switch it off for this watch.
    """

    keys: dict
    seen: list = field(default_factory=list)
    still_intact: bool = True
    _setprofile: object = field(default=sys.setprofile, repr=False)
    _getprofile: object = field(default=sys.getprofile, repr=False)
    _thread_setprofile: object = field(default=threading.setprofile, repr=False)

    def _hook(self, frame, event, arg):
        if event == "call":
            name = self.keys.get((frame.f_code.co_filename, frame.f_code.co_qualname))
        elif event == "c_call":  # a C wrapper around toy code, e.g. functools.lru_cache
            code = getattr(getattr(arg, "__wrapped__", None), "__code__", None)
            name = self.keys.get((code.co_filename, code.co_qualname)) if code else None
        else:
            return
        if name and name not in self.seen:
            self.seen.append(name)

    @property
    def intact(self) -> bool:
        """False if the watched code switched the hook off or replaced it."""
        return self._getprofile() == self._hook

    def __enter__(self):
        if not self.keys:
            return self
        self._previous = self._getprofile()
        self._thread_setprofile(self._hook)
        self._setprofile(self._hook)
        return self

    def __exit__(self, *exc):
        if self.keys:
            self.still_intact = self.intact
            self._setprofile(self._previous)
            self._thread_setprofile(None)
        return False
