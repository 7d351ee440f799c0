"""Print the chapter's main-path words per section, and the total.

The main path is what a reader reads going straight down a section's page: the prose of its Markdown cells, outside
exercises, solutions, folded boxes (``{dropdown}``, any directive with ``:class: dropdown``, ``<details>``),
code (fenced blocks and code cells) and display math. A quoted number (``{eval}`toy.quote(...)` ``) counts as
one word, and a word is a run of characters holding a letter or a digit. Markdown cells tagged ``remove-cell``
(a student's written answer) are not on the page.

The chapter's optional pages (``OPTIONAL``: the key concepts a newcomer opens before 4.3 or from a link, and the
review a reader opens at the end) are counted on their own, outside the main path's total.

    .venv/bin/python scripts/words.py            # a table, per section and in all
    .venv/bin/python scripts/words.py --json     # the same as JSON
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

CHAPTER = Path(__file__).resolve().parent.parent / "chapters" / "04-the-llm-as-a-policy"
FOLDED = {"exercise", "solution", "dropdown", "code-cell", "code", "math"}
FENCE = re.compile(r"^(\s*)(`{3,}|~{3,}|:{3,})\s*(\{([\w-]+)\})?(.*)$")
EVAL = re.compile(r"\{eval\}`[^`]*`")
ROLE = re.compile(r"\{[\w:-]+\}`([^`]*)`")
WORD = re.compile(r"[^\W_]", re.UNICODE)
OPTIONAL = ("key-concepts", "review")
"""Pages a reader opens on purpose, not on the main path: counted apart (``optional_counts``)."""


def _source(cell) -> str:
    src = cell.get("source", "")
    return "".join(src) if isinstance(src, list) else src


def main_path(markdown: str) -> str:
    """The text of one Markdown cell that a reader meets on the main path."""
    markdown = re.sub(r"<!--.*?-->", " ", markdown, flags=re.S)
    markdown = re.sub(r"<details.*?</details>", " ", markdown, flags=re.S | re.I)
    markdown = re.sub(r"\$\$.*?\$\$", " ", markdown, flags=re.S)
    markdown = re.sub(r"^\([\w:.-]+\)=[ \t]*$", " ", markdown, flags=re.M)  # a MyST label: a link's target, not read
    kept: list[str] = []
    stack: list[tuple[str, bool]] = []  # (fence, folded)
    lines = markdown.split("\n")
    i = 0
    while i < len(lines):
        line = lines[i]
        m = FENCE.match(line)
        if m:
            fence, name, rest = m.group(2), m.group(4), m.group(5)
            if stack and fence[0] == stack[-1][0][0] and len(fence) >= len(stack[-1][0]) and not name \
                    and not rest.strip():
                stack.pop()
                i += 1
                continue
            folded = name is None and fence[0] != ":" or (name or "") in FOLDED
            if not folded and name:
                # a directive's options: ":class: dropdown" folds it
                j = i + 1
                while j < len(lines) and lines[j].strip().startswith(":") and not FENCE.match(lines[j]):
                    if re.match(r"\s*:class:.*\bdropdown\b", lines[j]):
                        folded = True
                    j += 1
            stack.append((fence, folded or any(f for _, f in stack)))
            if not stack[-1][1] and rest.strip():
                kept.append(rest)  # a directive's title is read
            i += 1
            continue
        if not (stack and stack[-1][1]):
            if not re.match(r"\s*:[\w-]+:", line) or not stack:
                kept.append(line)
        i += 1
    text = "\n".join(kept)
    text = EVAL.sub(" 0 ", text)
    text = ROLE.sub(r" \1 ", text)
    text = re.sub(r"\]\([^)]*\)", "] ", text)  # link targets
    text = re.sub(r"\$[^$]*\$", " x ", text)  # inline math counts as one word
    return text


def words(text: str) -> int:
    return sum(1 for token in text.split() if WORD.search(token))


def section_words(path: Path) -> int:
    if path.suffix == ".md":
        return words(main_path(path.read_text()))
    notebook = json.loads(path.read_text())
    total = 0
    for cell in notebook["cells"]:
        if cell["cell_type"] != "markdown":
            continue
        if "remove-cell" in cell.get("metadata", {}).get("tags", []):
            continue
        total += words(main_path(_source(cell)))
    return total


def _pages() -> list[Path]:
    return sorted(CHAPTER.glob("*.ipynb")) + sorted(CHAPTER.glob("*.md"))


def counts() -> dict[str, int]:
    """Main-path words of the opening page and each section (the optional pages left out)."""
    return {page.stem: section_words(page) for page in _pages() if page.stem not in OPTIONAL}


def optional_counts() -> dict[str, int]:
    """The same count for the optional pages, which the main path's total leaves out."""
    return {page.stem: section_words(page) for page in _pages() if page.stem in OPTIONAL}


def main(argv: list[str]) -> None:
    result, optional = counts(), optional_counts()
    total = sum(result.values())
    if "--json" in argv:
        print(json.dumps({"sections": result, "total": total, "optional": optional}, indent=1))
        return
    width = max(len(name) for name in [*result, *optional, "optional pages (not in the total)"])
    for name, n in result.items():
        print(f"{name:<{width}}  {n:>6,}")
    print(f"{'total':<{width}}  {total:>6,}")
    if optional:
        print("optional pages (not in the total)")
        for name, n in optional.items():
            print(f"{name:<{width}}  {n:>6,}")


if __name__ == "__main__":
    main(sys.argv[1:])
