"""Copy flags an instructor can act on (issue 29): the calibration corpus, the rates of false flags and of detected
disguised copies per exercise (``benchmarks/bench_copies.py`` computes them; here they are asserted), the code
compared, and the gradebook and review pages the flags end up in."""

from __future__ import annotations

import ast
import csv
import re

import pytest

import toy
from benchmarks import bench_copies as bench
from course import classroom, editions, marks, review, similarity, slicing
from tests import hostile_class as hc
from toy.exercises import check

EXERCISES = bench.book_exercises()
ALLOWED_POLICY = {"next_token_probs", "response_probs", "length", "n_actions"}
POLICY_METHODS = {name for name in dir(toy.reference_policy()) if not name.startswith("__")} - ALLOWED_POLICY


@pytest.fixture(scope="module")
def cases():
    return bench.all_cases(seeds=1, run_check=False)


# -- the corpus ---------------------------------------------------------------------------------------------------
def test_every_checked_exercise_has_a_corpus_of_independent_answers():
    assert sorted(similarity.exercises()) == sorted(EXERCISES)
    for exercise in EXERCISES:
        answers = similarity.corpus(exercise)
        assert len(answers) >= (6 if exercise.startswith("4.1-") else 4), exercise
        assert len({similarity.fingerprint(src) for src in answers.values()}) == len(answers), "two the same"


def _toy_names(tree: ast.AST) -> set[str]:
    """Every ``toy.a.b`` chain and ``from toy... import x`` name the code uses."""
    found = set()
    inner = {id(n.value) for n in ast.walk(tree) if isinstance(n, ast.Attribute)}  # toy.a of toy.a.b
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and id(node) not in inner:
            chain, base = [node.attr], node.value
            while isinstance(base, ast.Attribute):
                chain.append(base.attr)
                base = base.value
            if isinstance(base, ast.Name) and base.id == "toy":
                found.add(".".join(reversed(chain)))
        elif isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] == "toy":
            found |= {f"{node.module[4:]}.{a.name}".lstrip(".") for a in node.names}
    return found


@pytest.mark.parametrize("exercise", sorted(EXERCISES))
def test_corpus_answers_pass_their_checks_using_only_what_the_exercise_allows(exercise):
    function = EXERCISES[exercise][0]
    for style, source in similarity.corpus(exercise).items():
        tree = ast.parse(source)
        assert similarity.defined_functions(source)[-1] == function, style
        # of toy: constants everywhere, toy.value in the advantages, toy.reward_table where the text offers it
        allowed = {"value"} if exercise == "4.1-token-advantages" else set()
        allowed |= {"reward_table"} if exercise in ("4.2-first-success", "4.2-kl-optimum") else set()
        for name in _toy_names(tree):
            assert name.split(".")[-1].isupper() or name in allowed, (style, name)
        # of a policy: next_token_probs, length, n_actions, and response_probs where the exercise is not it
        used = {n.attr for n in ast.walk(tree) if isinstance(n, ast.Attribute)}
        assert not used & POLICY_METHODS, (style, used & POLICY_METHODS)
        if exercise == "4.1-response-probability":
            assert "response_probs" not in used, style
        namespace = {}
        exec(compile(source, f"{exercise}/{style}.py", "exec"), namespace)  # the shipped corpus
        result = check(exercise, namespace[function])
        assert result.passed, (style, result.message)


# -- fingerprints ---------------------------------------------------------------------------------------------------
def test_fingerprints_ignore_names_layout_comments_statement_order_and_magics():
    source = similarity.corpus("4.1-value")["explicit_stack"]
    disguised, mapping = bench.disguise(source, seed=3)
    assert mapping["value_of_prefix"] != "value_of_prefix" and "#" in disguised and "  " in disguised
    assert similarity.fingerprint(disguised) == similarity.fingerprint(source)
    assert similarity.fingerprint("%%time\n" + source) == similarity.fingerprint(source)
    timed = source.replace("    expected = 0.0", "    %time expected = 0.0\n    !echo hi\n    %who")
    assert similarity.fingerprint(timed) == similarity.fingerprint(source)
    # a tuple assignment split in two is one way of writing the same thing
    assert similarity.fingerprint("a, b = f(), 0\n") == similarity.fingerprint("a = f()\nb = 0\n")
    # a cell magic whose body is not Python has no fingerprint; a cell that does not parse has none
    assert similarity.fingerprint("%%bash\nls -la\n") == frozenset()
    assert similarity.fingerprint("(" * 10_000) == frozenset() == similarity.fingerprint("def f(:\n")
    assert similarity.fingerprint("x = " + "[" * 90 + "]" * 90 + "\n")  # deep, but parses: no recursion error


def test_the_code_compared_is_the_graded_function_and_what_it_uses():
    cells = ["import numpy as np\nimport toy",
             "TOKENS = []\n\n\ndef add_tokens(tokens, n):\n    for t in range(n):\n        tokens.append(t)\n\n\n"
             "add_tokens(TOKENS, toy.VOCAB_SIZE)\nprint(TOKENS)",
             "def value_of_prefix(policy, reward, prompt, prefix):\n    raise NotImplementedError",
             "%%time\ndef helper(policy, prompt, state):\n    return policy.next_token_probs(prompt, state)",
             "def my_value(policy, reward, prompt, prefix):\n    return sum(helper(policy, prompt, prefix)[a] "
             "for a in TOKENS)",
             "def response_probability(policy, prompt, response):\n    return 1.0",
             'toy.exercises.check("4.1-value", my_value)\n%time toy.exercises.check("4.1-response-probability", '
             "response_probability)"]
    code = classroom._final_code([[k + 1, c] for k, c in enumerate(cells)], "value_of_prefix", "4.1-value")
    assert "def my_value" in code and "def helper" in code and "add_tokens(TOKENS" in code and "TOKENS = []" in code
    assert "response_probability" not in code and "NotImplementedError" not in code and "check(" not in code
    assert "print(TOKENS)" not in code  # scratch code the function does not need
    assert "%%time" not in code  # the body of a %%time cell, without the magic line
    other = classroom._final_code([[k + 1, c] for k, c in enumerate(cells)], "response_probability",
                                  "4.1-response-probability")
    assert other.strip() == cells[5]


# -- the rates -------------------------------------------------------------------------------------------------------
def test_no_honest_pair_is_flagged_and_nine_in_ten_disguised_copies_are(cases):
    rows = bench.summary(cases)
    print("\n" + bench.table(rows))
    assert len(rows) == len(EXERCISES)
    for row in rows:
        assert row["honest"] > 20 and row["copies"] >= 4, row["exercise"]
        assert not row["false_flags"], (row["exercise"], row["false_flags"])
    copies, detected = sum(r["copies"] for r in rows), sum(r["detected"] for r in rows)
    assert detected >= 0.9 * copies, f"{detected} of {copies} disguised copies flagged"
    # every copy of a classmate in the corpus is caught, renamed, reformatted, re-commented and reordered
    missed = [c.what for r in rows for c in r["missed"] if c.what.startswith("corpus/")]
    assert len(missed) <= 2, missed
    # the hostile class's honest styles were there to be compared
    assert sum(1 for c in cases if not c.copy and "HONEST[" in c.what) > 500


def test_the_rates_fail_under_the_scoring_before_issue_29():
    """The same pairs, scored as commit 4046ced did (no calibration): independent honest answers are flagged."""
    today = [c for c in bench.all_cases(seeds=1, run_check=False, today=True) if not c.copy and c.flagged]
    print("\n".join(f"{c.exercise}: {c.what} ({c.score:.2f})" for c in today))
    assert len(today) >= 3
    assert any(c.what.endswith(similarity.BOOK) for c in today)  # a natural answer, flagged against the book


def test_disguised_copies_still_pass_their_checks():
    """The disguises change nothing a check can see: each still passes (on three of its hidden cases)."""
    broken = []
    for exercise, (function, _, solution) in EXERCISES.items():
        for name, source in [*similarity.corpus(exercise).items(), ("book", solution)]:
            text, mapping = bench.disguise(source, seed=1)
            if not bench._passes(exercise, text, mapping.get(function, function), n_cases=3):
                broken.append(f"{exercise}/{name}")
    assert not broken


def test_the_hostile_class_copycat_is_flagged_and_the_natural_answers_are_not():
    book = editions.book()[hc.NOTEBOOK]
    paths = {"repo": "/r", "classmate": "/c", "class": "/k", "out": "/o", "gradebook": "/g", "marker": "/m",
             "litter": "/l", "port": 1}
    students = hc.hostile(paths)
    found = {}
    for exercise, function in book.exercises:
        codes = {}
        for student, cells in students.items():
            run, mine, _ = slicing.cells_to_run(cells, exercise, function, book.cells)
            code = [[c, dict(run)[c]] for c in mine]
            if code:
                codes[student] = classroom._final_code(code, function, exercise)
        found[exercise] = {(m.student, m.other) for m in similarity.find_copies(
            codes, book.solutions[function], book.stubs[function], exercise)}
    assert ("copycat", "honest_b") in found["4.1-value"]  # renamed, re-laid-out, re-commented: still a copy
    # honest_a's value is the book's solution itself, which is all natural (nothing of it is left once what the
    # corpus's independent answers share is taken out): the same token for token means nothing, so no flag (issue
    # 40); no independent honest style is flagged against the book
    assert ("honest_a", similarity.BOOK) not in found["4.1-value"]
    assert not any(s in hc.HONEST for pairs in found.values() for s, _ in pairs), found
    assert not any("writer" in pair or "reader" in pair for pairs in found.values() for pair in pairs), found


def test_thresholds_are_computed_once_per_process():
    function, stub, solution = EXERCISES["4.5-gae"]
    first = similarity.calibrate("4.5-gae", solution, stub)
    assert similarity.calibrate("4.5-gae", solution, stub) is first
    assert first.answers == len(similarity.corpus("4.5-gae"))
    assert similarity.FLOOR <= first.threshold <= similarity.CEILING and first.min_shared >= similarity.MIN_SHARED
    assert all(score <= first.threshold - similarity.MARGIN or shared < first.min_shared
               for score, shared, _ in first.honest)


# -- the gradebook and the review pages ---------------------------------------------------------------------------
EVIL = '<script>alert("x")</script>=HYPERLINK("http://e")'


def _record(student: str, cells: list[str], book) -> dict:
    exercises = []
    for exercise, function in book.exercises:
        run, mine, _ = slicing.cells_to_run(cells, exercise, function, book.cells)
        exercises.append({"exercise": exercise, "status": "pass", "message": "all 12 hidden cases pass.",
                          "cases_passed": 12, "cases_total": 12, "problems": [], "seconds": 0.1,
                          "code": [[c, dict(run)[c]] for c in mine]})
    return {"version": classroom.VERSION, "student": student, "file": f"{student}/{hc.NOTEBOOK}",
            "notebook": hc.NOTEBOOK, "digest": "0", "problem": "", "exercises": exercises}


def test_gradebook_is_short_and_each_flag_has_a_self_contained_review_page(tmp_path):
    book = {hc.NOTEBOOK: editions.book()[hc.NOTEBOOK]}
    keys = {hc.NOTEBOOK: marks.AnswerKey(1, dict(book[hc.NOTEBOOK].exercises))}
    disguised, _ = bench.disguise(hc.OWN_VALUE, seed=2)
    at = disguised.index("\n", disguised.index("def ")) + 1  # a comment inside a function: in the code compared
    evil_value = (disguised[:at] + '# </td></tr></table><script>alert("code")</script> <img src=x onerror=alert(1)>\n'
                  + disguised[at:])
    students = {"honest_a": hc.honest(), "honest_b": hc.honest(hc.OWN_VALUE, hc.OWN_PROBABILITY, hc.OWN_ADVANTAGES),
                "copycat": hc.honest(hc.COPIED_VALUE, hc.OWN_PROBABILITY, hc.ADVANTAGES),
                EVIL: hc.honest(evil_value, hc.OWN_PROBABILITY, hc.OWN_ADVANTAGES)}
    students.update({name: cells for name, cells in list(hc.HONEST.items())[:8]})
    records = [_record(student, cells, book[hc.NOTEBOOK]) for student, cells in students.items()]
    (tmp_path / "feedback").mkdir()
    (tmp_path / "review").mkdir()
    (tmp_path / "review" / "stale.html").write_text("an earlier run's page")
    paths = classroom.write_reports(tmp_path, records, book, keys)
    assert paths["review"] == str(tmp_path / "review")

    with open(tmp_path / "gradebook.csv", newline="") as f:
        gradebook = {row["student"].lstrip("'"): row for row in csv.DictReader(f)}
    assert gradebook["copycat"]["flags"] == "4.1-value: 2 flags; 4.1-response-probability: 2 flags"
    assert gradebook["honest_a"]["flags"] == "" and gradebook["honest_a"]["total"] == "3"  # the book's natural code
    assert not any(gradebook[name]["flags"] for name in list(hc.HONEST)[:8])
    assert max(len(row["flags"]) for row in gradebook.values()) < 100
    with open(tmp_path / "similarity.csv", newline="") as f:
        flags = list(csv.DictReader(f))
    assert {"exercise", "student", "other", "similarity", "threshold", "shared", "min_shared", "review"} <= set(
        flags[0])
    pairs = {(f["exercise"], f["student"].lstrip("'"), f["other"].lstrip("'")) for f in flags}
    assert ("4.1-value", "copycat", "honest_b") in pairs and ("4.1-value", "honest_b", "copycat") in pairs
    assert ("4.1-value", EVIL, "honest_b") in pairs
    assert not (tmp_path / "review" / "stale.html").exists()
    for flag in flags:
        page = (tmp_path / flag["review"]).read_text()
        assert flag["review"].startswith("review/") and re.fullmatch(r"review/[\w.-]+\.html", flag["review"])
        tags = set(re.findall(r"<([!/]?\w+)", page))  # what comes from a student is text: no tag of its own
        assert tags <= {"!DOCTYPE", "html", "head", "meta", "title", "style", "body", "h1", "h2", "div", "span", "b",
                        "p", "section", "table", "tbody", "tr", "td"} | {"/" + t for t in ("html", "head", "title",
                        "style", "body", "h1", "h2", "div", "span", "b", "p", "section", "table", "tbody", "tr",
                        "td")}, tags
        assert not re.search(r"<[^>]*\s(?:src|href|on\w+)\s*=", page) and "url(" not in page
        assert "Content-Security-Policy" in page and 'class="hit"' in page
        assert f"threshold <b>{float(flag['threshold']):.2f}</b>" in page
    evil_page = next((tmp_path / f["review"]).read_text() for f in flags
                     if f["student"].lstrip("'") == EVIL and f["exercise"] == "4.1-value")
    assert "&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;" in evil_page
    assert "&lt;/td&gt;&lt;/tr&gt;&lt;/table&gt;&lt;script&gt;" in evil_page
    # the students' feedback does not mention flags
    for path in (tmp_path / "feedback").iterdir():
        text = path.read_text().lower()
        assert not re.search(r"flag|near-copy|copied|similarity|review/|book's solution", text), path.name


def test_a_review_page_shows_both_answers_with_the_shared_lines_marked():
    match = similarity.find_copies({"a": hc.OWN_VALUE, "b": hc.COPIED_VALUE}, exercise="4.1-value")[0]
    page = review.page(match, hc.OWN_VALUE, hc.COPIED_VALUE)
    rows = re.findall(r'<tr( class="hit")?><td class="n">(\d+)</td>', page)
    own_lines = len(hc.OWN_VALUE.splitlines())
    assert len(rows) == own_lines + len(hc.COPIED_VALUE.splitlines())
    marked = [int(n) for hit, n in rows[:own_lines] if hit]
    blank = [k + 1 for k, line in enumerate(hc.OWN_VALUE.splitlines()) if not line.strip()]
    assert len(marked) >= 10 and not set(marked) & set(blank)
    assert f"Score {match.score:.2f}" in page and "not a verdict" in page
    assert review.file_name(match) != review.file_name(similarity.Match("4.1-value", "a", "b/../x", 1, 1, 1))
