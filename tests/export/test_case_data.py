"""Every case of a standalone export opens from its embedded data, and the file stays small."""

from __future__ import annotations

import json
import re
from pathlib import Path

from helpers import FIXTURES

import heta_nb
from heta_nb.benchmark.load import load_benchmark
from heta_nb.explorer.case_data import CaseDataLimits, case_data
from heta_nb.explorer.page import comparison_page_data, report_page_data
from heta_nb.export import ExportLimits, to_html
from heta_nb.testing import synthetic_report

REPORT = FIXTURES / "report-normal.json"
MANIFEST = {"name": "lighthouse_mini", "version": "1", "split": "test", "task_type": "multihop_qa"}


def _benchmark():  # noqa: ANN202 - heta_nb's Benchmark
    return load_benchmark(FIXTURES, manifest=MANIFEST)


def test_every_row_has_its_case_details_with_gold_data_and_judged_chunks() -> None:
    report = heta_nb.load_report(REPORT)
    data = report_page_data(report, CaseDataLimits(), _benchmark())
    table = data["tables"][""]
    assert len(table["cases"]) == table["n"] == len(table["case_ids"]) == report.case_count
    marks = set()
    for index, (case_id, details) in enumerate(zip(table["case_ids"], table["cases"])):
        raw = report.case_result_json(index)
        assert case_id == raw["case_id"]
        assert details["q"] == raw["query"][:600]
        assert [s[0] for s in details["s"]] == [s["name"] for s in raw["scores"]]
        if raw.get("response") is not None:
            assert details["a"] == raw["response"].get("answer")
            assert len(details["r"]) == min(5, len(raw["response"]["results"]))
            marks.update(r[2] for r in details["r"])
        assert case_id in data["expected"]
    assert {"r", "n"} <= marks  # the benchmark's judgements mark chunks both ways
    gold = data["expected"][table["case_ids"][0]]
    assert gold["a"] and gold["ev"]


def test_without_the_benchmark_chunks_are_judged_from_the_evaluators_metadata() -> None:
    report = heta_nb.load_report(REPORT)
    data = report_page_data(report, CaseDataLimits())
    assert data["expected"] == {}
    marks = {r[2] for d in data["tables"][""]["cases"] for r in d.get("r", [])}
    assert "r" in marks


def test_an_error_keeps_its_type_message_and_traceback_tail() -> None:
    raw = {
        "case_id": "c1",
        "query": "q",
        "query_mode": "m",
        "scores": [],
        "error": {"error_type": "Boom", "message": "it broke", "metadata": {"traceback": "x" * 5000 + "END"}},
    }
    details = case_data(raw, None, ExportLimits().case_data)
    assert details["e"][0] == "Boom" and details["e"][1] == "it broke"
    assert details["e"][2].endswith("END") and len(details["e"][2]) <= 1200


def test_the_export_is_no_larger_than_its_report_json_and_embeds_no_markup(tmp_path: Path) -> None:
    # a report of the demo's size (190 results); a tiny one is dominated by the page's own code
    report = synthetic_report(100, modes=("full_text_search", "extractive_answer"), text_words=60)
    source = tmp_path / "report.json"
    source.write_text(report.to_json(), encoding="utf-8")
    target = tmp_path / "report.html"
    html = to_html(heta_nb.load_report(source), target).read_text(encoding="utf-8")
    assert target.stat().st_size <= source.stat().st_size
    payload = re.search(r'<script type="application/json" id="[^"]+">(.*?)</script>', html, re.S)
    assert payload is not None
    data = json.loads(payload.group(1))
    assert len(data["tables"][""]["cases"]) == report.case_count
    assert "</script" not in payload.group(1).lower()
    assert "innerHTML" not in html  # the panel is built with textContent only


def test_a_comparison_shows_both_systems_side_by_side_with_quick_filters() -> None:
    report = heta_nb.load_report(REPORT)
    comparison = heta_nb.compare(report, modes=list(report.modes)[:2])
    data = comparison_page_data(comparison, CaseDataLimits())
    (system,) = comparison.candidates
    assert data["systems"] == [system]
    table = data["tables"][system]
    assert table["quick"] == ["regressions", "improvements", "differing"]
    assert len(table["cases"]) == table["n"] == len(table["case_ids"]) > 0
    some = table["cases"][0]
    assert [side[0] for side in some["s"]] == [comparison.baseline_of(system), system]
    assert all(side[1] is None or "q" in side[1] for side in some["s"])
    assert [row[0] for row in some["m"]] == list(comparison.metrics)


def test_exported_marks_follow_heta_evidence_rule_as_the_explorer_does() -> None:
    from heta_nb.benchmark import BenchmarkCase, BenchmarkEvidence, BenchmarkExpected

    gold = BenchmarkCase(
        case_id="c1",
        query="q",
        expected=BenchmarkExpected(evidence=(BenchmarkEvidence(locator={"source_key_prefix": "raw/b/test/d1/"}),)),
    )

    def result(key: str) -> dict[str, object]:
        return {"id": key, "text": "t", "score": 1.0, "source": {"object_key": key}, "metadata": {}}

    data = {
        "case_id": "c1",
        "query": "q",
        "scores": [],
        "response": {"mode": "m", "results": [result("raw/b/test/d2/x.txt"), result("raw/b/test/d1/x.txt")]},
    }
    # a locator is matched by Heta's rule, with no graded documents in sight
    assert [r[2] for r in case_data(data, gold, CaseDataLimits())["r"]] == ["n", "r"]
