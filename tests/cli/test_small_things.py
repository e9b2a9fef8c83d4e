"""The small things of issue 19 (defect 11): recipe steps from 1, times to the minute with the
ISO value on hover, skipped counts that say what they count, ``heta-nb show`` without a Python
repr or repeated notes, ``heta-nb list`` counting results, name suggestions and the store hint."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from helpers import FIXTURES

import heta_nb
from heta_nb.cli import main
from heta_nb.render import build_report_context, render_report_html
from heta_nb.render.context.formatting import format_time

NORMAL = str(FIXTURES / "report-normal.json")
ERRORS = str(FIXTURES / "report-errors.json")


def test_recipe_steps_are_numbered_from_one() -> None:
    report = heta_nb.load_report(NORMAL)
    assert report.raw["recipe_manifest"]["steps"][0]["index"] == 0  # Heta counts from 0
    steps = build_report_context(report)["header"]["steps"]
    assert [s["index"] for s in steps[:3]] == ["1", "2", "3"]
    assert "<li>1. parse_documents" in render_report_html(report)


def test_times_are_shown_to_the_minute_with_the_iso_value_on_hover() -> None:
    assert format_time("2026-12-02T15:54:07.123456+00:00") == {
        "text": "2026-12-02 15:54 UTC",
        "iso": "2026-12-02T15:54:07.123456+00:00",
    }
    assert format_time("2026-12-02T16:54:07+01:00")["text"] == "2026-12-02 15:54 UTC"
    assert format_time("not a time")["text"] == "not a time" and format_time(None)["text"] == "—"
    report = heta_nb.load_report(NORMAL)
    html = render_report_html(report)
    started = report.raw["started_at"]
    assert f'<span title="{started}">2026-12-01 07:38 UTC</span>' in html
    assert not re.search(r">\d{4}-\d\d-\d\dT[\d:]+\.\d{6}", html)  # no raw ISO time with microseconds as text


def test_skipped_counts_say_whether_they_count_cases_or_scores() -> None:
    report = heta_nb.load_report(NORMAL)
    summary = build_report_context(report)["summary"]
    html = render_report_html(report)
    per_metric = [s.skipped for s in report.metric_summaries() if s.mode == "full_text_search"]
    cases = sum(
        any(score.metadata.get("skipped") is True for score in r.scores)
        for r in report.case_results
        if r.query_mode == "full_text_search"
    )
    row = summary["rows"][0]
    # the row counts cases with a skipped score (not the sum over metrics, which was shown before);
    # each footnote counts one metric's skipped scores
    assert row["skipped"] == str(cases) and sum(per_metric) > cases
    assert f"{cases} cases skipped" in html
    assert any(f"{max(per_metric)} skipped score" in f["text"]["text"] for f in summary["footnotes"])


def test_show_starts_with_the_report_and_prints_each_note_once(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["show", NORMAL]) == 0
    out = capsys.readouterr().out
    assert out.startswith("Evaluation report 'fixture-normal'\n") and "EvaluationReport(" not in out
    notes = out.split("notes:\n", 1)[1].split("\n\n", 1)[0].splitlines()
    assert len(notes) == len(set(notes)) and len(notes) <= 4


def test_list_counts_results(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    store = heta_nb.ReportStore(tmp_path / "store")
    store.save(heta_nb.load_report(NORMAL))
    assert main(["list", str(tmp_path / "store")]) == 0
    head = capsys.readouterr().out.splitlines()[0].split()
    assert "results" in head and "cases" not in head


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["show", NORMAL, "--metrics", "beir_ndgc@3"], "unknown metric 'beir_ndgc@3'; did you mean 'beir_ndcg@3'?"),
        (
            ["show", NORMAL, "--modes", "full_text_serch"],
            "unknown mode 'full_text_serch'; did you mean 'full_text_search'?",
        ),
        (["compare", NORMAL, "--metrics", "beir_ndgc@3"], "unknown metric 'beir_ndgc@3'; did you mean 'beir_ndcg@3'?"),
        (["compare", NORMAL, "--modes", "extractve_answer,full_text_search"], "did you mean 'extractive_answer'?"),
    ],
)
def test_typos_get_a_suggestion(argv: list[str], message: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(argv) == 1
    assert message in capsys.readouterr().err


def test_show_of_a_store_folder_hints_list_and_store_kb(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    store = heta_nb.ReportStore(tmp_path / "demo-store")
    store.save(heta_nb.load_report(NORMAL))
    assert main(["show", str(tmp_path / "demo-store")]) == 1
    err = capsys.readouterr().err
    assert "heta-nb list" in err and ":KB/REPORT_ID" in err
