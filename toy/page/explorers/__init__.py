"""The book's explorers, one module per section. Each is a description for ``toy.page.explorer.Explorer``.

``ALL`` maps a name to a factory that builds the explorer with its defaults (each factory is ``@reused``: called
again with the same arguments, as a re-run explorer cell does in Live code or JupyterLab, it gives back the explorer
it built instead of building and serialising its plotly figure anew); the tests drive every explorer in it
(each control at every value it offers, extremes included) and the static view of each is what the book shows.
"""

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
