"""Issue 40, for the instructor: marking pages typeset the worked solution's maths offline with KaTeX, as the book
does; the instructor edition's questions are answered at the book's setting; the grader prints the command that
brings the written marks in; the roster and assignment files live in the course folder; the Colab set-up cell of
the editions installs from the book's repository or says what to do, never from a placeholder.
"""

from __future__ import annotations

import re
from pathlib import Path

import nbformat
import pytest

from course import answers, cli, editions, maths, written
from toy.exercises import questions as Q

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.skipif(maths.missing() is not None, reason=f"KaTeX cannot run here: {maths.missing()}")
def test_marking_pages_typeset_the_worked_solutions_maths_offline(tmp_path):
    worked = {ex: t for nb in editions.book().values() for ex, t in nb.worked.items()}
    texts = {"ex-4-3-discount": {"alice": "I think $x$ <b>is</b> it."}}
    written.write_marking(tmp_path, texts, worked, False, lambda p, t: p.write_text(t))
    page = (tmp_path / "written" / "ex-4-3-discount.html").read_text()
    solution = page.split('<div class="worked">')[1].split("</div></details>")[0]
    assert 'class="katex"' in solution and "\\pi_{\\text{ref}}(y)\\," not in re.sub(r"<annotation.*?</annotation>",
                                                                                    "", solution)
    assert "<script" not in page.lower() and "font-src data:" in page and "data:font/woff2;base64," in page
    assert "http://" not in page.replace("http://www.w3.org/1998/Math/MathML", "")
    assert "https://" not in page
    assert "I think $x$ &lt;b&gt;is&lt;/b&gt; it." in page  # what a student wrote stays plain text


def test_maths_that_katex_refuses_stays_latex():
    assert maths.typeset("a $\\notacommand{x}$ b").count("$\\notacommand{x}$") == 1
    assert maths.typeset("costs $5 and $6") == "costs $5 and $6"  # no maths in it


def test_the_instructor_editions_questions_are_answered_at_the_books_setting(tmp_path):
    editions.write_editions(tmp_path)
    seen = set()
    for path in (tmp_path / "instructor").glob("*.ipynb"):
        nb = nbformat.read(path, as_version=4)
        found, _ = answers.read_answers(nb)
        for name, given in found.items():
            assert Q.check_answer(name, given.value, None).right, (name, given)
            seen.add(name)
    assert seen == set(Q.QUESTIONS)
    student = "".join(p.read_text() for p in (tmp_path / "student").glob("*.ipynb"))
    assert "the answer at the book's setting" not in student


def test_the_colab_cell_installs_from_the_repository_or_says_what_to_do(tmp_path):
    nb = nbformat.read(editions.book_notebooks()[0], as_version=4)
    made = editions.colab_setup(nb, "https://github.com/someone/toybook")
    cell = next(c for c in made.cells if "colab-setup" in c.metadata.get("tags", []))
    assert '%pip install --quiet "toy @ git+https://github.com/someone/toybook"' in cell.source
    editions.write_editions(tmp_path, ["Ana"], url=None)
    for path in tmp_path.rglob("*.ipynb"):
        text = path.read_text()
        assert "llm-as-a-policy/book" not in text, path
        assert "ask your instructor for the install line" in text, path


def test_roster_and_assignment_files_are_found_in_the_course_folder(tmp_path, monkeypatch):
    monkeypatch.setenv("TOYBOOK_COURSE_DIR", str(tmp_path))
    monkeypatch.chdir(ROOT)
    (tmp_path / "week.toml").write_text("[points]\nex-4-1-value = 1\n")
    (tmp_path / "roster.csv").write_text("name,login\nAna,ana1\n")
    assert cli.course_file(Path("week.toml")) == tmp_path / "week.toml"
    assert cli.course_file(Path("README.md")) == Path("README.md")  # one in the current folder comes first
    assert cli.default_roster() == tmp_path / "roster.csv"


def test_the_written_marks_command_is_this_run_again_with_resume(tmp_path):
    line = cli.resume_command(["grade", "subs", "--seed", "3", "--anonymous", "--out", "x", "--student", "Ana"],
                              tmp_path / "out")
    assert line.endswith(f"grade subs --anonymous --out {tmp_path / 'out'} --resume")
    assert "--seed" not in line and "--student" not in line and "scripts/course.py" in line
