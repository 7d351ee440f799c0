"""The book's explorers, one module per section. Each is a description for ``toy.explorer.Explorer``.

``ALL`` maps a name to a factory that builds the explorer with its defaults; the tests drive every explorer in it
(each control at every value it offers, extremes included) and the static view of each is what the book shows.
"""

from .credit import TEMPERATURES, credit_assignment

__all__ = ["ALL", "TEMPERATURES", "credit_assignment"]

ALL = {
    "credit_assignment": credit_assignment,
}
