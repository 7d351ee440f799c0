"""The page side of ``toy``: what shows the toy LM's numbers to a reader, in JupyterLab and in the built book.

- ``explorer``: the one explorer mechanism (a description gives the live ipywidgets view and the page's static view)
- ``explorers``: the book's explorers, one module per section
- ``figures`` and ``figure_theme.css``: plotly figures, the book's colours and layout, and their dark theme
- ``prose``: numbers quoted in a notebook's prose (``glue`` and ``quote``)
- ``fates`` and ``recipes``: section 4.3's table of fates and section 4.4's pipeline figure

The model and its maths (``toy``'s own modules) never import this package. ``import toy`` re-exports the names
the notebooks call (``toy.explorers``, ``toy.figures``, ``toy.fates``, ``toy.recipes``, ``toy.glue``,
``toy.quote``), and a notebook takes its section's explorers from here: ``from toy.page import easy_hard``.
"""

# figures first (before explorer, which imports it): plotly's first import of nbformat builds some 40 Lark grammars
# (rfc3987_syntax), and on CPython 3.11 that took 1.5-2 s more CPU when started one import level deeper; so `import toy`
# costs what it did when figures.py sat at toy's top level.
from . import figures  # noqa: I001
from . import explorer, explorers, fates, prose, recipes
from .explorers import classical, credit, critic_free, easy_hard, mapping, pipeline
from .prose import glue, quote

__all__ = [
    "explorer", "explorers", "fates", "figures", "prose", "recipes",
    "classical", "credit", "critic_free", "easy_hard", "mapping", "pipeline",
    "glue", "quote",
]
