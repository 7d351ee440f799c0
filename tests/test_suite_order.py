"""The suite's own order (issue 43): the test process that builds the book starts on a long test that needs it,
the others run what does not need the book meanwhile, and the run ends on the tests that need the book, slow ones
first."""

from __future__ import annotations

import inspect

from tests.conftest import pytest_collection_modifyitems


class Item:
    def __init__(self, name: str, fixtures=(), marks=()):
        self.name, self.fixturenames, self.marks = name, list(fixtures), set(marks)

    def get_closest_marker(self, mark: str):
        return mark if mark in self.marks else None


def test_the_book_is_built_first_and_needed_last():
    items = [
        Item("unit"),
        Item("page", ["site_url", "built_site"], ["slow"]),
        Item("grading", marks=["slow"]),
        Item("pdf bytes", ["built_site"]),
        Item("rebuild", ["built_site", "tmp_path"], ["slow", "early"]),
        Item("unit 2"),
        Item("early without the book", marks=["slow", "early"]),
    ]
    pytest_collection_modifyitems(items)
    assert [i.name for i in items] == ["rebuild", "grading", "early without the book", "unit", "unit 2", "page",
                                       "pdf bytes"]


def test_the_suite_has_an_early_test_that_needs_the_book():
    """Without one, the first process to need the book would build it while the others had nothing else to do."""
    from tests import test_rebuild

    early = [fn for name, fn in vars(test_rebuild).items() if name.startswith("test_")
             and "early" in {m.name for m in getattr(fn, "pytestmark", [])}]
    assert early and all("built_site" in inspect.signature(fn).parameters for fn in early), early
