"""The book's explorers, one module per section. Each is a description for ``toy.page.explorer.Explorer``.

``ALL`` maps a name to a factory that builds the explorer with its defaults; the tests drive every explorer in it
(each control at every value it offers, extremes included) and the static view of each is what the book shows.
"""

import sys

from ..explorer import reused
from .classical import EXPLORERS as SECTION_4_3
from .credit import TEMPERATURES, credit_assignment
from .critic_free import EXPLORERS as SECTION_4_5
from .easy_hard import EXPLORERS as SECTION_4_2
from .mapping import EXPLORERS as SECTION_4_1
from .pipeline import EXPLORERS as SECTION_4_4

__all__ = ["ALL", "TEMPERATURES", "credit_assignment"]

ALL = {
    "credit_assignment": credit_assignment,
    **SECTION_4_1,
    **SECTION_4_2,
    **SECTION_4_3,
    **SECTION_4_4,
    **SECTION_4_5,
}

# Each factory gives back the explorer it built before for the same arguments (toy.page.explorer.reused): an explorer
# cell re-run (Live code, JupyterLab) then shows it again without building and serialising its plotly figure anew.
# The factory is replaced where a notebook calls it too (its module, e.g. easy_hard.resets_explorer, and that
# module's EXPLORERS).
for _name, _factory in list(ALL.items()):
    _module = sys.modules[_factory.__module__]
    ALL[_name] = reused(_factory)
    setattr(_module, _factory.__name__, ALL[_name])
    if getattr(_module, "EXPLORERS", {}).get(_name) is _factory:
        _module.EXPLORERS[_name] = ALL[_name]
credit_assignment = ALL["credit_assignment"]
