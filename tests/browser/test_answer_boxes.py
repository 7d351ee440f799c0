"""Every answer box on every chapter page, used as a reader would, in headless Chromium with no kernel.

Each box's spec in the page is toy's own for the book's setting; typing the right answer (as a reader types it)
and pressing Enter says right; a listed mistake gets its hint and a near miss is wrong, with the wrong field
marked; a prediction is recorded, then revealed with how far off it was; answers survive a reload; nothing logs
an error.
"""

from __future__ import annotations

import json

import pytest

from toy.exercises import questions as Q

pytestmark = pytest.mark.slow


def typed(v: float) -> str:
    return repr(round(v, 10))


def tol(spec: dict, i: int) -> float:
    return spec["tolerance"][i] if isinstance(spec["tolerance"], list) else spec["tolerance"]


def fill(box, spec: dict, values: list) -> None:
    if spec["kind"] in ("number", "numbers"):
        inputs = box.locator("input[type=text]")
        for i, v in enumerate(values):
            inputs.nth(i).fill(typed(v))
    elif spec["kind"] == "choice":
        box.locator("input[type=radio]").nth(values[0]).check()
    else:
        selects = box.locator("select")
        for rank, option in enumerate(values):
            selects.nth(rank).select_option(str(option))


def submit(box) -> str:
    box.locator("button.toy-answer-button").click()
    return box.locator(".toy-answer-feedback").inner_text()


def test_answer_boxes_check_answers_offline(bt, browser, site_url, chapter_doc):
    page, log = bt.open_book_page(browser, bt.page_url(site_url, chapter_doc))
    try:
        specs = page.evaluate("() => [...document.querySelectorAll('.toy-answer')].map(b => "
                              "JSON.parse(b.querySelector('script.toy-answer-spec').textContent))")
        if not specs:
            # the chapter's opening page, and the optional pages (key concepts, review), which have no exercises
            assert chapter_doc.rsplit("/", 1)[-1] in ("index", "key-concepts", "review"), \
                f"{chapter_doc} shows no answer box"
            return
        boxes = page.locator(".toy-answer")
        assert boxes.count() == len(specs)
        for i, spec in enumerate(specs):
            assert spec == json.loads(json.dumps(Q.QUESTIONS[spec["name"]].spec())), spec["name"]
            box = boxes.nth(i)
            box.scroll_into_view_if_needed()
            right = spec["answer"]
            if spec["predict"]:
                fill(box, spec, right)
                said = submit(box)
                assert said.startswith("✓ Your prediction was right"), (spec["name"], said)
                assert submit(box) == ""  # "Predict again" clears
                if spec["kind"] in ("number", "numbers"):
                    wrong = [v + 10 * tol(spec, i) for i, v in enumerate(right)]
                elif spec["kind"] == "choice":
                    wrong = [(right[0] + 1) % len(spec["options"])]
                else:
                    wrong = right[::-1]
                fill(box, spec, wrong)
                said = submit(box)
                assert said.startswith("✗") and ("off by" in said or "It is" in said), said
                for m in spec["mistakes"]:  # a listed mistake, predicted, gets its hint beside the answer
                    submit(box)  # "Predict again"
                    fill(box, spec, m["value"])
                    said = submit(box)
                    assert said.startswith("✗") and said.endswith(" " + m["hint"]), (spec["name"], said)
                continue
            if spec["kind"] in ("number", "numbers"):
                near = list(right)
                near[0] += 5 * tol(spec, 0)
                fill(box, spec, near)
                said = submit(box)
                assert said.startswith("✗") and said == "✗ " + Q.judge(spec, near).hint, said
                field = box.locator("input[type=text]").first
                assert field.get_attribute("aria-invalid") == "true"
                box.locator("input[type=text]").first.fill("not a number")
                assert "is not a number" in submit(box)
            for m in spec["mistakes"]:
                fill(box, spec, m["value"])
                assert submit(box) == "✗ " + m["hint"], spec["name"]
            fill(box, spec, right)
            if spec["kind"] in ("number", "numbers"):
                box.locator("input[type=text]").last.press("Enter")
                page.wait_for_timeout(50)
                said = box.locator(".toy-answer-feedback").inner_text()
            else:
                said = submit(box)
            assert said == "✓ Right.", (spec["name"], said)
        page.reload(wait_until="load")
        bt.settle(page)
        kept = page.evaluate("() => [...document.querySelectorAll('.toy-answer-feedback')].map(f => f.textContent)")
        for spec, said in zip(specs, kept, strict=True):
            if spec["predict"]:
                assert "you predicted" in said or "It is" in said, (spec["name"], said)
            else:
                assert said.startswith("✓ Right. (your answer from an earlier visit)"), (spec["name"], said)
        assert not log.page_errors and not log.console_errors, (log.page_errors, log.console_errors)
    finally:
        bt.close(page)


BORDERS_JS = r"""() => {
    const parse = c => { const m = /rgba?\(([\d.]+),\s*([\d.]+),\s*([\d.]+)(?:,\s*([\d.]+))?\)/.exec(c || '');
        return m ? [+m[1], +m[2], +m[3], m[4] === undefined ? 1 : +m[4]] : null; };
    const lum = ([r, g, b]) => [r, g, b].map(v => { v /= 255; return v <= 0.03928 ? v / 12.92
        : Math.pow((v + 0.055) / 1.055, 2.4); }).reduce((s, v, i) => s + v * [0.2126, 0.7152, 0.0722][i], 0);
    const ratio = (a, b) => { const [x, y] = [lum(a), lum(b)].sort((p, q) => q - p); return (x + 0.05) / (y + 0.05); };
    const behind = el => { for (let e = el; e && e.nodeType === 1; e = e.parentElement) {
        const c = parse(getComputedStyle(e).backgroundColor); if (c && c[3] > 0.5) return c; }
        return [255, 255, 255, 1]; };
    return [...document.querySelectorAll('.toy-answer input[type=text], .toy-answer select')].map(f => {
        const box = f.closest('.toy-answer');
        return {border: getComputedStyle(f).borderTopColor, box: behind(box).join(','),
                ratio: ratio(parse(getComputedStyle(f).borderTopColor), behind(box))};
    });
}"""


def test_a_prediction_keeps_the_focus_on_a_control_fields_fit_their_answer_and_their_borders_show(
        bt, browser, site_url, chapter_doc):
    """Issue 42: after Enter in a prediction's field (which the outcome disables), the focus is on the box's
    button, not the page's body; a long number fits its field; every field's border is at least 3:1 against the
    box, in light and in dark mode."""
    page, log = bt.open_book_page(browser, bt.page_url(site_url, chapter_doc))
    try:
        specs = page.evaluate("() => [...document.querySelectorAll('.toy-answer')].map(b => "
                              "JSON.parse(b.querySelector('script.toy-answer-spec').textContent))")
        boxes = page.locator(".toy-answer")
        focus, widths = [], []
        for i, spec in enumerate(specs):
            box = boxes.nth(i)
            box.scroll_into_view_if_needed()
            if spec["kind"] not in ("number", "numbers"):
                continue
            field = box.locator("input[type=text]").first
            field.fill("-0.123456789012345")
            widths.append(field.evaluate("f => [f.scrollWidth, f.clientWidth]"))
            if spec["predict"]:
                fill(box, spec, spec["answer"])
                box.locator("input[type=text]").last.press("Enter")
                page.wait_for_timeout(50)
                focus.append(page.evaluate("""() => { const a = document.activeElement;
                    return a === document.body ? 'body' : a.closest('.toy-answer') ? a.className || a.tagName
                    : 'elsewhere: ' + a.tagName; }"""))
                box.locator("button.toy-answer-button").click()  # "Predict again": as it was
        light = page.evaluate(BORDERS_JS)
        bt.to_dark(page)
        dark = page.evaluate(BORDERS_JS)
    finally:
        bt.close(page)
    assert all(f in ("toy-answer-button", "toy-answer-feedback") for f in focus), focus
    assert all(scroll <= client + 1 for scroll, client in widths), widths
    weak = [(theme, b) for theme, rows in (("light", light), ("dark", dark)) for b in rows if b["ratio"] < 3]
    assert weak == [], weak
