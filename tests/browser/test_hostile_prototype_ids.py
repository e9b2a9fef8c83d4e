"""Case ids named after ``Object.prototype``'s members, in a standalone export, in Chromium.

A case ``constructor``, ``__proto__`` or ``toString`` looked up on a plain object finds the
prototype's member instead of the case: the page stopped drawing rows and the case could
not be opened. Here every case of a report export and of a comparison export (with the
benchmark's gold data, keyed by the same ids) is drawn, opens when clicked, and its panel
shows its own query and expected answer; a permalink to ``__proto__`` opens it too; no
uncaught error. The screenshot is ``test-artifacts/hostile-prototype-ids.png``.
"""

from __future__ import annotations

import json
import shutil
import warnings
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest
from helpers import FIXTURES

import heta_nb
from heta_nb.benchmark.load import load_benchmark

pytestmark = [pytest.mark.browser, pytest.mark.hostile]

IDS = [
    "constructor",
    "__proto__",
    "toString",
    "hasOwnProperty",
    "valueOf",
    "__defineGetter__",
    "prototype",
    "isPrototypeOf",
    "propertyIsEnumerable",
    "toLocaleString",
]
"""The ten cases of the fixture, renamed (c01 -> constructor, ...)."""
MANIFEST = {"name": "lighthouse_mini", "version": "1", "split": "test", "task_type": "multihop_qa"}
PANEL = "[data-testid='hx-panel']"
ROWS = "[data-testid='heta-explorer'] tbody tr.hx-row"


@pytest.fixture(scope="module")
def exports(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """The report and comparison pages, and each case id's query."""
    folder = tmp_path_factory.mktemp("prototype-ids")
    renamed = {f"c{k + 1:02d}": name for k, name in enumerate(IDS)}
    bench = folder / "benchmark"
    shutil.copytree(FIXTURES, bench)
    cases = [json.loads(line) for line in (bench / "cases.jsonl").read_text(encoding="utf-8").splitlines() if line]
    for case in cases:
        case["case_id"] = renamed.get(case["case_id"], case["case_id"])
    (bench / "cases.jsonl").write_text("".join(json.dumps(c) + "\n" for c in cases), encoding="utf-8")
    data = json.loads((FIXTURES / "report-normal.json").read_text(encoding="utf-8"))
    for result in data["case_results"]:
        result["case_id"] = renamed[result["case_id"]]
    report = heta_nb.load_report(json.dumps(data))
    benchmark = load_benchmark(bench, manifest=MANIFEST)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        comparison = heta_nb.compare(report, modes=["full_text_search", "sql_text_search"])
    return {
        "report": heta_nb.to_html(report, folder / "report.html", benchmark=benchmark),
        "comparison": heta_nb.to_html(comparison, folder / "comparison.html", benchmark=benchmark),
        "queries": {r["case_id"]: r["query"] for r in data["case_results"]},
        "gold": {c["case_id"]: _gold(c["expected"]) for c in cases},
        "rows": len(data["case_results"]),
    }


def _gold(expected: dict[str, Any]) -> str:
    """What the panel's Expected block shows of a case: its first answer, else its first evidence id."""
    answers = expected.get("answers") or []
    return answers[0] if answers else expected["evidence"][0]["reference_id"]


def _open(browser: Any, path: Path, fragment: str = "") -> tuple[Any, list[str]]:
    context = browser.new_context(viewport={"width": 1280, "height": 1000})
    context.set_default_timeout(15_000)
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    page.on("console", lambda message: errors.append(message.text) if message.type == "error" else None)
    page.goto(path.as_uri() + fragment)
    page.wait_for_selector(ROWS)
    return page, errors


def _open_every_row(page: Any, exports: dict[str, Any], count: int) -> set[str]:
    opened: set[str] = set()
    for index in range(count):
        row = page.locator(ROWS).nth(index)
        case_id = row.locator("td").first.text_content().strip()
        assert case_id in exports["queries"], case_id
        row.click()
        panel = page.locator(PANEL)
        assert panel.is_visible(), case_id
        text = panel.text_content()
        assert exports["queries"][case_id] in text, case_id  # its own query, not another case's
        assert exports["gold"][case_id] in text, case_id  # its gold answer, found by its id
        assert "keeps no gold data" not in text, case_id
        opened.add(case_id)
        page.keyboard.press("Escape")
    return opened


def test_every_prototype_named_case_is_drawn_and_opens_in_a_report_export(
    browser: Any, exports: dict[str, Any], artifacts_dir: Path
) -> None:
    page, errors = _open(browser, exports["report"])
    assert page.locator(ROWS).count() == exports["rows"] == 30  # every row drawn
    ids = page.eval_on_selector_all(ROWS, "rows => rows.map(r => r.querySelector('td').textContent.trim())")
    assert sorted(set(ids)) == sorted(IDS)
    assert _open_every_row(page, exports, exports["rows"]) == set(IDS)
    page.set_viewport_size({"width": 1280, "height": 1500})  # the screenshot: rows, then __proto__'s panel
    page.locator(ROWS).nth(3).click()
    page.evaluate("() => document.querySelector('[data-testid=heta-explorer]').scrollIntoView()")
    page.screenshot(path=str(artifacts_dir / "hostile-prototype-ids.png"))
    assert errors == []
    page.context.close()


def test_every_prototype_named_case_opens_in_a_comparison_export(browser: Any, exports: dict[str, Any]) -> None:
    page, errors = _open(browser, exports["comparison"])
    assert page.locator(ROWS).count() == len(IDS)
    assert _open_every_row(page, exports, len(IDS)) == set(IDS)
    assert errors == []
    page.context.close()


def test_a_permalink_opens_the_case_named_proto(browser: Any, exports: dict[str, Any]) -> None:
    page, errors = _open(browser, exports["report"], "#case=" + quote("__proto__~sql_text_search", safe=""))
    panel = page.locator(PANEL)
    assert panel.is_visible()
    assert exports["queries"]["__proto__"] in panel.text_content()
    assert "__proto__" in page.locator("[data-testid='heta-explorer']").text_content()
    assert errors == []
    page.context.close()
