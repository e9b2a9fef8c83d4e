"""Review mode in the one explorer, by keyboard, in a real JupyterLab 4 (light, and blind in the dark
theme), in Notebook 7 (the Review button) and on the exported offline page in Chromium.

In the notebook each verdict goes to the kernel, which appends it to the report's review log at
once: after ten keys the progress line reads "10 of N reviewed" and the log on disk has the ten
verdicts, the note and the cases in the sample's order. Blind, the explorer's DOM holds no score
value, metric name, judge block or relevance mark. On the page (no kernel, no network) three
verdicts are kept in the page and in localStorage (a reload keeps them); "Download reviews" saves
the file ``heta_nb.import_reviews`` takes back unchanged; blind, the static report around the
explorer leaves the document. Screenshots: test-artifacts/review-mode-light.png,
review-mode-blind-dark.png, review-page.png (and review-page-blind.png, review-notebook7.png).
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from explorer.judge_cases import capital_kb
from jupyter_browser import open_notebook, run_all_cells, wait_all_cells_executed
from playwright.sync_api import expect

import heta_nb
from heta_nb.explorer import Explorer
from heta_nb.llm_judges import standin_model
from heta_nb.reviews import ReviewLog, review_sample

pytestmark = pytest.mark.browser

SAMPLE = 12
HOSTILE = '<img src=x onerror=alert(1)> & "quotes"'
KEY_VERDICTS = {"1": "correct", "c": "correct", "2": "partly", "p": "partly", "3": "wrong", "w": "wrong", "s": "skip"}
TEN_KEYS = ["1", "2", "3", "c", "p", "w", "s", "1", "2", "3"]
NOT_BLIND = ["hx-judge", "agreement", "✓ ok", "✓ true", "✗ false", "score ", "latency", "skipped"]
"""What the explorer's DOM never holds in blind review (with the metric names and the case's score values)."""
BENCHMARK_SOURCE = """\
import pandas as pd
from heta_nb.benchmark import Benchmark
rows = [{"case_id": f"c{i:02d}", "query": f"What is the capital of country {i}?", "answers": [f"City{i}."]}
        for i in range(14)]
benchmark = Benchmark.from_frame(
    pd.DataFrame(rows), manifest={"name": "capitals", "version": "1", "split": "test", "task_type": "qa"})
"""


@pytest.fixture(scope="module")
def reviewed(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """A report of 14 cases judged by the stand-in judge (judge blocks, claims, verdicts), its JSON,
    its benchmark, the score texts of each case (what blind review must never show) and its page."""
    scope: dict[str, Any] = {}
    exec(BENCHMARK_SOURCE, scope)
    benchmark = scope["benchmark"]
    report = heta_nb.evaluate(
        benchmark,
        kb=capital_kb,
        evaluators=["answer_f1", "answer_contains", "faithfulness", "context_precision"],
        judge_model=standin_model(),
        judge_cache=None,
        store=None,
        progress=False,
    )
    work = tmp_path_factory.mktemp("review-mode")
    path = work / "report.json"
    path.write_text(report.to_json(), encoding="utf-8")
    report = heta_nb.load_report(path)
    explorer = Explorer(report, benchmark=benchmark)
    scores: dict[str, set[str]] = {}
    for result in report.case_results:
        explorer.open(case_id=result.case_id)
        data = explorer.case_json()["data"]
        texts = {s[1] for s in data["s"] if re.search(r"\d", s[1])} | {j["v"] for j in data.get("j", [])}
        scores[result.case_id] = {t for t in texts if t and t not in ("0", "1")}
    page = heta_nb.to_html(report, work / "report.html", benchmark=benchmark)
    return {
        "path": path,
        "report": report,
        "benchmark": benchmark,
        "scores": scores,
        "metrics": list(report.metric_names),
        "sample": review_sample(report, SAMPLE),
        "page": page,
        "work": work,
    }


def _notebook(server: Any, reviewed: dict[str, Any], call: str) -> str:
    return server.add_notebook_from_sources(
        [
            "%load_ext heta_nb",
            f"import heta_nb\n{BENCHMARK_SOURCE}report = heta_nb.load_report(r'{reviewed['path']}')",
            call,
        ]
    )


def _explorer(page: Any) -> Any:
    run_all_cells(page)
    wait_all_cells_executed(page)
    root = page.locator(".jp-OutputArea-output [data-testid='heta-explorer']")
    expect(root).to_have_count(1, timeout=30_000)
    page.evaluate("() => window.jupyterapp.commands.execute('notebook:hide-all-cell-code')")
    return root


def _title(root: Any) -> Any:
    return root.locator("[data-testid='hx-panel'] .hx-case-title")


def _review_by_keyboard(
    page: Any,
    root: Any,
    keys: list[str],
    total: int,
    *,
    done: int = 0,
    note: tuple[int, str] | None = None,
    check: Any = None,
) -> list[str]:
    """Press one verdict key per case (and type a note before the ``note[0]``-th); return the case ids judged."""
    progress = root.locator("[data-testid='hx-review-progress']")
    expect(progress).to_have_text(f"{done} of {total} reviewed")
    judged = []
    root.focus()
    for k, key in enumerate(keys):
        title = _title(root).inner_text()
        judged.append(re.match(r"Case (\S+)", title).group(1))
        if check is not None:
            check(judged[-1])
        if note is not None and note[0] == k:
            page.keyboard.press("n")
            expect(root.locator("[data-testid='hx-review-note']")).to_be_focused()
            page.keyboard.type(note[1])
            page.keyboard.press("Enter")
            expect(root.locator("[data-testid='hx-note-state']")).to_have_text("kept for your verdict")
        page.keyboard.press(key)
        expect(progress).to_have_text(f"{done + k + 1} of {total} reviewed")
        if done + k + 1 < total:
            expect(_title(root)).not_to_have_text(title)  # the next unreviewed case opened by itself
    return judged


def _log(folder: Path, reviewer: str) -> list[Any]:
    return [r for r in ReviewLog(folder).history() if r.reviewer == reviewer]


@pytest.mark.slow
def test_ten_cases_reviewed_by_keyboard_in_jupyterlab(page, jupyter_server, reviewed, artifacts_dir, tmp_path) -> None:
    folder = tmp_path / "reviews"
    call = f"report.review('ana', sample={SAMPLE}, path=r'{folder}', benchmark=benchmark)"
    name = _notebook(jupyter_server, reviewed, call)
    page.set_viewport_size({"width": 1280, "height": 1300})
    open_notebook(page, jupyter_server, name, ui="lab")
    root = _explorer(page)
    sample, total = reviewed["sample"], len(reviewed["sample"])
    expect(root.locator("[data-testid='hx-review-who']")).to_have_text("ana")
    expect(root.locator("[data-testid='hx-review-where']")).to_contain_text(str(folder / "ana.jsonl"))
    box = root.locator("[data-testid='hx-review-box']")
    expect(box.locator(".hx-verdict-btn")).to_have_text(["✓ Correct 1 c", "◐ Partly 2 p", "✗ Wrong 3 w", "Skip s"])
    expect(root.locator("[data-testid='hx-judge']").first).to_be_visible()  # not blind: the judges are there
    judged = _review_by_keyboard(page, root, TEN_KEYS, total, note=(1, HOSTILE))
    assert judged == [case_id for case_id, _ in sample[:10]]
    expect(root.locator("[data-testid='hx-review-progress']")).to_have_text(f"10 of {total} reviewed")
    # on disk at once: the ten verdicts, in order, the note with its verdict
    stored = _log(folder, "ana")
    assert [(r.case_id, r.verdict) for r in stored] == [(c, KEY_VERDICTS[k]) for c, k in zip(judged, TEN_KEYS)]
    assert [r.note for r in stored] == [None, HOSTILE] + [None] * 8 and not any(r.blind for r in stored)
    # back to the second case: the verdict is pre-selected, the note shown as text
    root.locator(f"tbody tr.hx-row:has(td:text-is('{judged[1]}'))").first.click()
    expect(_title(root)).to_contain_text(f"Case {judged[1]}")
    expect(box.locator(".hx-verdict-btn[aria-pressed='true']")).to_have_attribute("data-verdict", "partly")
    expect(root.locator("[data-testid='hx-review-note']")).to_have_value(HOSTILE)
    expect(box.locator("[data-testid='hx-review-line']")).to_have_text([f"ana: partly — {HOSTILE}"])
    assert root.locator("img").count() == 0
    expect(root.locator("tbody tr.hx-reviewed")).to_have_count(10)
    html = root.inner_html()  # (not blind: what blind review must not show is here)
    assert all(text in html for text in reviewed["scores"][judged[1]]) and reviewed["scores"][judged[1]]
    assert all(metric in html for metric in reviewed["metrics"])
    # keys do not fire while typing: a note with 1, c, s in it changes no verdict
    root.locator("[data-testid='hx-review-note']").fill("")
    root.locator("[data-testid='hx-review-note']").press_sequentially("1 c s w")
    expect(root.locator("[data-testid='hx-review-progress']")).to_have_text(f"10 of {total} reviewed")
    root.locator("[data-testid='hx-review-note']").press("Escape")  # leaves it: the saved note comes back
    expect(root.locator("[data-testid='hx-review-note']")).to_have_value(HOSTILE)
    assert len(_log(folder, "ana")) == 10
    # a changed verdict stands (the history is kept); the next unreviewed case opens
    root.focus()
    page.keyboard.press("w")
    expect(_title(root)).to_contain_text(f"Case {sample[10][0]}")
    expect(root.locator("[data-testid='hx-review-progress']")).to_have_text(f"10 of {total} reviewed")
    frame = reviewed["report"].reviews(path=folder)
    assert frame.set_index("case_id").loc[judged[1], "verdict"] == "wrong" and len(frame) == 10
    assert frame.set_index("case_id").loc[judged[1], "note"] == HOSTILE  # (the note field's text went with it)
    assert len(_log(folder, "ana")) == 11
    root.locator(f"tbody tr.hx-row:has(td:text-is('{judged[1]}'))").first.click()
    expect(box.locator(".hx-verdict-btn[aria-pressed='true']")).to_have_attribute("data-verdict", "wrong")
    root.evaluate("(r) => r.scrollIntoView({block: 'start'})")  # the review bar and the open case
    page.screenshot(path=str(artifacts_dir / "review-mode-light.png"))
    expect(page.get_by_text("Error displaying widget")).to_have_count(0)
    assert page.js_errors == []


def _assert_blind(root: Any, reviewed: dict[str, Any], case_id: str) -> None:
    """Nothing of the scores in the explorer's DOM: no judge, score table, mark, metric or score value."""
    for selector in ("[data-testid='hx-judge']", "[data-testid='hx-scores']", ".hx-mark", "[data-testid='hx-jnotes']"):
        expect(root.locator(selector)).to_have_count(0)
    expect(root.locator("[data-testid='hx-case'] .hx-query")).to_be_visible()
    expect(root.locator("[data-testid='hx-case'] .hx-expected")).to_contain_text("City")
    expect(root.locator("[data-testid='hx-answer']")).to_be_visible()
    expect(root.locator("[data-testid='hx-chunks'] li.hx-chunk")).to_have_count(2)
    html = root.inner_html()
    for word in [*reviewed["metrics"], *NOT_BLIND]:
        assert word not in html, word
    for text in reviewed["scores"][case_id]:
        assert text not in html, (case_id, text)


@pytest.mark.slow
def test_blind_review_in_jupyterlab_dark(page, jupyter_server, reviewed, artifacts_dir, tmp_path) -> None:
    folder = tmp_path / "reviews"
    call = f"report.review('bo', sample={SAMPLE}, path=r'{folder}', benchmark=benchmark, blind=True)"
    name = _notebook(jupyter_server, reviewed, call)
    page.set_viewport_size({"width": 1280, "height": 1300})
    open_notebook(page, jupyter_server, name, ui="lab")
    root = _explorer(page)
    total = len(reviewed["sample"])
    try:
        page.evaluate("() => window.jupyterapp.commands.execute('apputils:change-theme', {theme: 'JupyterLab Dark'})")
        page.wait_for_function("() => document.body.dataset.jpThemeLight === 'false'", timeout=30_000)
        expect(root.locator("[data-testid='hx-review-bar'] .hx-blind-badge")).to_be_visible()
        keys = root.locator(".hx-table thead th").evaluate_all("els => els.map(e => e.getAttribute('data-key'))")
        assert sorted(keys) == ["answer", "case_id", "query", "row"]  # no status, metric or latency column
        expect(root.locator(".hx-status")).to_be_hidden()
        expect(root.locator(".hx-metric")).to_be_hidden()
        judged = _review_by_keyboard(
            page, root, TEN_KEYS, total, check=lambda case_id: _assert_blind(root, reviewed, case_id)
        )
        expect(root.locator("[data-testid='hx-review-progress']")).to_have_text(f"10 of {total} reviewed")
        stored = _log(folder, "bo")
        assert [(r.case_id, r.verdict, r.blind) for r in stored] == [
            (c, KEY_VERDICTS[k], True) for c, k in zip(judged, TEN_KEYS)
        ]
        _assert_blind(root, reviewed, re.match(r"Case (\S+)", _title(root).inner_text()).group(1))
        root.locator("[data-testid='hx-panel']").scroll_into_view_if_needed()
        page.screenshot(path=str(artifacts_dir / "review-mode-blind-dark.png"))
        # leaving blind review brings the scores back
        root.locator(".hx-review-stop").click()
        expect(root.locator("[data-testid='hx-review-bar']")).to_be_hidden()
        expect(root.locator("[data-testid='hx-judge']").first).to_be_visible()
    finally:  # the server (and its settings) serve every later test: back to light
        page.evaluate("() => window.jupyterapp.commands.execute('apputils:change-theme', {theme: 'JupyterLab Light'})")
        page.wait_for_function("() => document.body.dataset.jpThemeLight === 'true'", timeout=30_000)
    expect(page.get_by_text("Error displaying widget")).to_have_count(0)
    assert page.js_errors == []


@pytest.mark.slow
def test_the_review_button_in_notebook_7(page, notebook_server, reviewed, artifacts_dir, tmp_path) -> None:
    folder = tmp_path / "reviews"
    place = f"from heta_nb.reviews import review_log\nreview_log(report, path=r'{folder}')\n"
    name = _notebook(notebook_server, reviewed, place + "report.explore(benchmark=benchmark)")
    page.set_viewport_size({"width": 1280, "height": 1300})
    open_notebook(page, notebook_server, name, ui="notebook")
    root = _explorer(page)
    expect(root.locator("[data-testid='hx-review-bar']")).to_be_hidden()
    root.locator(".hx-review-btn").click()
    expect(root.locator(".hx-reviewer")).to_be_focused()
    page.keyboard.type("../cy")  # not a file name: said, nothing written
    page.keyboard.press("Enter")
    expect(root.locator("[data-testid='hx-review-error']")).to_contain_text("reviewer '../cy' contains '/'")
    assert not folder.exists() or list(folder.iterdir()) == []
    root.locator(".hx-reviewer").fill("cy")
    page.keyboard.press("Enter")
    total = len(review_sample(reviewed["report"], 60))
    judged = _review_by_keyboard(page, root, ["2", "3"], total)
    assert [(r.case_id, r.verdict) for r in _log(folder, "cy")] == list(zip(judged, ["partly", "wrong"]))
    expect(root.locator("[data-testid='hx-review-error']")).to_be_hidden()
    root.locator("[data-testid='hx-panel']").scroll_into_view_if_needed()
    page.screenshot(path=str(artifacts_dir / "review-notebook7.png"))
    expect(page.get_by_text("Error displaying widget")).to_have_count(0)
    known = re.compile(r"Cannot read properties of undefined \(reading 'schema'\)")
    assert [e for e in page.js_errors if not known.search(e)] == []


def test_the_offline_page_reviews_downloads_and_imports(browser, reviewed, artifacts_dir, tmp_path) -> None:
    context = browser.new_context(viewport={"width": 1280, "height": 1200}, accept_downloads=True)
    page = context.new_page()
    errors: list[str] = []
    requests: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    page.on("console", lambda message: errors.append(message.text) if message.type == "error" else None)
    page.on("request", lambda request: requests.append(request.url))
    report = reviewed["report"]
    total = len(review_sample(report, 60))
    try:
        page.goto(Path(reviewed["page"]).as_uri())
        root = page.locator("[data-testid='heta-explorer']")
        root.scroll_into_view_if_needed()
        root.locator(".hx-review-btn").click()
        page.keyboard.type("eve")
        page.keyboard.press("Enter")
        expect(root.locator("[data-testid='hx-review-who']")).to_have_text("eve")
        judged = _review_by_keyboard(page, root, ["1", "p", "w"], total, note=(2, HOSTILE))
        assert judged == [case_id for case_id, _ in review_sample(report, 60)[:3]]
        assert root.locator("img").count() == 0
        # a reload keeps them (localStorage, keyed by the report id), and the review goes on
        page.reload()
        root = page.locator("[data-testid='heta-explorer']")
        expect(root.locator("[data-testid='hx-review-progress']")).to_have_text(f"3 of {total} reviewed")
        expect(root.locator("tbody tr.hx-reviewed")).to_have_count(3)
        root.locator(f"tbody tr.hx-row:has(td:text-is('{judged[2]}'))").first.click()
        expect(root.locator("[data-testid='hx-review-box'] [data-testid='hx-review-line']")).to_have_text(
            [f"eve: wrong — {HOSTILE}"]
        )
        root.evaluate("(r) => r.scrollIntoView({block: 'start'})")
        page.screenshot(path=str(artifacts_dir / "review-page.png"))
        with page.expect_download() as caught:
            root.locator("[data-testid='hx-review-download']").click()
        download = caught.value
        assert download.suggested_filename == f"reviews-{report.report_id}-eve.json"
        saved = tmp_path / download.suggested_filename
        download.save_as(saved)
        document = json.loads(saved.read_text(encoding="utf-8"))
        assert [list(r) for r in document["reviews"]] == [
            ["case_id", "query_mode", "reviewer", "verdict", "note", "blind", "at"]
        ] * 3
        # heta_nb.import_reviews takes the file back unchanged
        frame = heta_nb.import_reviews(saved, report=report, path=tmp_path / "reviews")
        assert list(frame["case_id"]) == judged
        assert list(frame["verdict"]) == ["correct", "partly", "wrong"]
        assert list(frame["value"]) == [1.0, 0.5, 0.0]
        assert list(frame["note"].fillna("")) == ["", "", HOSTILE]
        assert set(frame["reviewer"]) == {"eve"} and not frame["blind"].any()
        assert list(report.reviews(path=tmp_path / "reviews")["verdict"]) == ["correct", "partly", "wrong"]
        # blind: the static report around the explorer leaves the document; back when it ends
        assert page.locator(".heta-report").count() == 1
        root.locator(".hx-review-stop").click()
        root.locator(".hx-review-btn").click()
        root.locator(".hx-blind-box").check()
        root.locator(".hx-review-go").click()
        expect(root.locator("[data-testid='hx-review-bar'] .hx-blind-badge")).to_be_visible()
        assert page.locator(".heta-report").count() == 0 and page.locator("[data-testid='heta-figures']").count() == 0
        case_id = re.match(r"Case (\S+)", _title(root).inner_text()).group(1)
        _assert_blind(root, reviewed, case_id)
        body = page.evaluate("() => document.body.innerText")
        assert not any(metric in body for metric in reviewed["metrics"])
        root.focus()
        page.keyboard.press("3")
        expect(root.locator("[data-testid='hx-review-progress']")).to_have_text(f"4 of {total} reviewed")
        root.locator("[data-testid='hx-panel']").scroll_into_view_if_needed()
        page.screenshot(path=str(artifacts_dir / "review-page-blind.png"))
        root.locator(".hx-review-stop").click()
        expect(page.locator(".heta-report")).to_have_count(1)
    finally:
        context.close()
    assert errors == []
    assert all(url.startswith("file://") for url in requests), requests  # no network, ever
