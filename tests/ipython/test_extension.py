"""%load_ext heta_nb: formatters and magics."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from helpers import FIXTURES, requires_heta
from IPython.core.interactiveshell import InteractiveShell  # noqa: E402

import heta_nb


@pytest.fixture
def shell() -> Any:
    ip = InteractiveShell.instance()
    ip.run_line_magic("load_ext", "heta_nb")
    try:
        yield ip
    finally:
        ip.run_line_magic("unload_ext", "heta_nb")


def _html(ip: Any, obj: Any) -> str:
    data, _ = ip.display_formatter.format(obj)
    return data.get("text/html", "")


# -- %load_ext heta_nb ------------------------------------------------------------------


def test_magic_with_an_unclosed_quote_is_a_usage_error_not_a_traceback() -> None:
    from IPython.core.error import UsageError
    from IPython.core.interactiveshell import InteractiveShell

    ip = InteractiveShell.instance()
    ip.run_line_magic("load_ext", "heta_nb")
    try:
        for name in ("heta_report", "heta_runs", "heta_compare", "heta_export"):
            with pytest.raises(UsageError, match="No closing quotation"):
                ip.run_line_magic(name, "'unclosed")
    finally:
        ip.run_line_magic("unload_ext", "heta_nb")


def test_load_unload_load_registers_each_formatter_once() -> None:
    from IPython.core.interactiveshell import InteractiveShell

    ip = InteractiveShell.instance()
    html = ip.display_formatter.formatters["text/html"]
    before = len(html.deferred_printers)
    for _ in range(2):
        ip.run_line_magic("load_ext", "heta_nb")
        ip.run_line_magic("load_ext", "heta_nb")
        assert len(html.deferred_printers) == before + 5
        ip.run_line_magic("unload_ext", "heta_nb")
        assert len(html.deferred_printers) == before
        assert "heta_report" not in ip.magics_manager.magics["line"]


def test_loading_twice_is_harmless(shell: Any) -> None:
    shell.run_line_magic("load_ext", "heta_nb")
    shell.run_line_magic("reload_ext", "heta_nb")
    assert "heta_report" in shell.magics_manager.magics["line"]
    html = shell.display_formatter.formatters["text/html"]
    assert ("heta_framework.evaluation.types", "EvaluationReport") in html.deferred_printers or any(
        getattr(t, "__name__", "") == "EvaluationReport" for t in html.type_printers
    )


def test_unload_removes_magics_and_formatters() -> None:
    ip = InteractiveShell.instance()
    ip.run_line_magic("load_ext", "heta_nb")
    ip.run_line_magic("unload_ext", "heta_nb")
    assert "heta_report" not in ip.magics_manager.magics["line"]
    keys = ip.display_formatter.formatters["text/html"].deferred_printers
    assert ("heta_framework.evaluation.types", "EvaluationReport") not in keys


@requires_heta
def test_hetas_own_objects_render_richly(shell: Any, tmp_path: Path) -> None:
    from heta_framework.evaluation import BenchmarkManifest, EvaluationCaseResult, EvaluationReport, EvaluationScore
    from heta_framework.kb.search import QueryResponse, QueryResult

    response = QueryResponse(mode="full_text_search", results=(QueryResult(id="c1", text="Harrow <b>Point</b>"),))
    score = EvaluationScore(name="hit", value=True, passed=True)
    case = EvaluationCaseResult(
        case_id="q1",
        query="Who <designed> it?",
        query_mode="full_text_search",
        scores=(score,),
        response=response,
        latency_ms=1.0,
    )
    report = EvaluationReport(
        report_id="heta-made",
        benchmark=BenchmarkManifest(name="b", version="1", split="test", task_type="qa"),
        knowledge_base_name="kb",
        knowledge_base_manifest={},
        recipe_manifest={},
        query_modes=("full_text_search",),
        score_summary={"full_text_search.hit": 1.0},
        case_results=(case,),
        started_at="2026-12-01T00:00:00+00:00",
        finished_at="2026-12-01T00:00:01+00:00",
    )
    assert 'data-testid="heta-report"' in _html(shell, report)
    assert "Who &lt;designed&gt; it?" in _html(shell, case)
    assert "Harrow &lt;b&gt;Point&lt;/b&gt;" in _html(shell, response)
    assert "hit" in _html(shell, score)
    text, _ = shell.display_formatter.format(report)
    assert text["text/plain"].startswith("EvaluationReport(report_id='heta-made'")


def test_heta_report_and_heta_runs(shell: Any, tmp_path: Path) -> None:
    path = FIXTURES / "report-errors.json"
    report = shell.run_line_magic("heta_report", str(path))
    assert isinstance(report, heta_nb.EvaluationReport) and report.report_id == "fixture-errors"
    store = heta_nb.ReportStore(tmp_path)
    store.save(report)
    listing = shell.run_line_magic("heta_runs", str(tmp_path))
    assert list(listing["report_id"]) == ["fixture-errors"]
    by_name = shell.run_line_magic("heta_report", f"{tmp_path}:lighthouse-errors/fixture-errors")
    assert by_name == report.replace(report_key=by_name.report_key)
    newest = shell.run_line_magic("heta_report", f"'lighthouse-errors' --store {tmp_path}")
    assert newest.report_id == "fixture-errors"
    with pytest.raises(Exception, match="no such file"):
        shell.run_line_magic("heta_report", str(tmp_path / "missing.json"))


def test_heta_compare_and_export(shell: Any, tmp_path: Path) -> None:
    shell.user_ns["normal"] = heta_nb.load_report(FIXTURES / "report-normal.json")
    comparison = shell.run_line_magic("heta_compare", "normal --modes full_text_search,sql_text_search")
    assert list(comparison.systems) == ["full_text_search", "sql_text_search"]
    target = tmp_path / "out.html"
    shell.run_line_magic("heta_export", f"normal -o {target}")
    assert target.read_text().startswith("<!DOCTYPE html>")
    notebook = tmp_path / "out.ipynb"
    shell.run_line_magic("heta_export", f"normal -o {notebook}")
    assert json.loads(notebook.read_text())["nbformat"] == 4


def test_magics_have_help(shell: Any, capsys: pytest.CaptureFixture[str]) -> None:
    for name in ("heta_report", "heta_runs", "heta_compare", "heta_export"):
        for flag in ("--help", "-h"):
            assert shell.run_line_magic(name, flag) is None
            out = capsys.readouterr().out
            assert f"%{name}" in out and ("positional arguments" in out or "options:" in out), out


def test_heta_export_insert_shows_the_sections(shell: Any, capsys: pytest.CaptureFixture[str]) -> None:
    shell.user_ns["normal"] = heta_nb.load_report(FIXTURES / "report-normal.json")
    shell.run_line_magic("heta_export", "normal --insert")
    out = capsys.readouterr().out
    assert "Markdown object" in out  # the narrative cell, displayed as Markdown
    assert "EvaluationReport fixture-normal" in out  # the reload cell's stored output
    # a kernel turns set_next_input into a payload; a plain shell keeps it as the next input
    queued = shell.rl_next_input or "".join(p.get("text", "") for p in shell.payload_manager.read_payload())
    assert "heta_nb.notebook.table_view" in queued
