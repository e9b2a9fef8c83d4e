"""The live views' running means follow the report's convention: the mean of the scored values
(skipped scores left out) shown first, Heta's mean kept, and "n/a" for a metric a mode cannot
produce, decided by the same rule as :meth:`ReportColumns.not_applicable`."""

from __future__ import annotations

import html
import math
from pathlib import Path

import pytest

import heta_nb
from heta_nb.progress.console import format_state_line
from heta_nb.render import render_widget_parts
from heta_nb.runner.events import CasesFinished, RunStarted, case_finished, event_from_dict, to_dict
from heta_nb.runner.state import RunState, reduce, replay

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "heta-0.1.2" / "report-normal.json"


@pytest.fixture(scope="module")
def report() -> heta_nb.EvaluationReport:
    return heta_nb.load_report(FIXTURE)


def _started(report: heta_nb.EvaluationReport) -> RunState:
    return reduce(
        RunState(),
        RunStarted(
            report_id="r",
            knowledge_base_name="kb",
            benchmark={"name": "b", "split": "test"},
            modes=tuple(report.modes),
            evaluators=tuple(report.metric_names),
            total=len(report.case_results),
            resumed=0,
            units=1,
            concurrency=1,
            started_at="2026-01-01T00:00:00Z",
            t=0.0,
        ),
    )


def _records(report: heta_nb.EvaluationReport) -> tuple[tuple[str, object, float], ...]:
    return tuple(("u", result, float(i)) for i, result in enumerate(report.case_results))


def _states(report: heta_nb.EvaluationReport) -> dict[str, RunState]:
    """The same cases folded three ways: engine records, per-case events, and events sent as JSON."""
    start = _started(report)
    records = _records(report)
    events = [case_finished(*record) for record in records]  # type: ignore[arg-type]
    return {
        "records": reduce(start, CasesFinished(records=records, t=1.0)),  # type: ignore[arg-type]
        "events": replay(events, start),
        "json": replay((event_from_dict(to_dict(event)) for event in events), start),
    }


def test_running_means_end_equal_to_the_reports_mean_of_scored_and_its_n_a(report: heta_nb.EvaluationReport) -> None:
    summaries = report.metric_summaries()
    assert any(s.skipped for s in summaries) and any(s.not_applicable for s in summaries)
    for how, state in _states(report).items():
        for summary in summaries:
            if summary.kind == "text":
                continue
            scored = state.mean_scored(summary.mode, summary.metric)
            heta = state.mean(summary.mode, summary.metric)
            assert heta == pytest.approx(summary.mean), (how, summary)
            if math.isnan(summary.mean_scored):
                assert scored is None, (how, summary)
            else:
                assert scored == pytest.approx(summary.mean_scored), (how, summary)
            assert state.not_applicable(summary.mode, summary.metric) == summary.not_applicable, (how, summary)


def test_skipped_scores_move_the_scored_mean_not_heta_s(report: heta_nb.EvaluationReport) -> None:
    state = _states(report)["records"]
    differing = [
        s
        for s in report.metric_summaries()
        if s.skipped and not s.not_applicable and not math.isnan(s.mean_scored) and s.mean_scored != s.mean
    ]
    assert differing, "the fixture has a metric whose two means differ"
    for summary in differing:
        assert state.mean_scored(summary.mode, summary.metric) != state.mean(summary.mode, summary.metric)


def test_n_a_is_known_from_the_first_answerless_responses(report: heta_nb.EvaluationReport) -> None:
    records = [r for r in _records(report) if r[1].raw["query_mode"] == "full_text_search"][:2]  # type: ignore[attr-defined]
    state = reduce(_started(report), CasesFinished(records=tuple(records), t=1.0))  # type: ignore[arg-type]
    assert state.not_applicable("full_text_search", "answer_contains") == "full_text_search returns no answers"
    assert state.not_applicable("full_text_search", "evidence_recall@3") == ""


def test_an_event_without_the_answer_field_never_reads_n_a(report: heta_nb.EvaluationReport) -> None:
    record = next(r for r in _records(report) if r[1].raw["query_mode"] == "full_text_search")  # type: ignore[attr-defined]
    data = to_dict(case_finished(*record))  # type: ignore[arg-type]
    for key in ("answered", "n_results", "skipped"):
        data.pop(key)
    state = reduce(_started(report), event_from_dict(data))
    assert state.not_applicable("full_text_search", "answer_contains") == ""


def test_the_widget_shows_n_a_and_the_mean_of_scored_with_heta_s_on_hover(report: heta_nb.EvaluationReport) -> None:
    state = _states(report)["records"]
    means = render_widget_parts(state)["means"]
    assert 'title="full_text_search returns no answers">n/a</td>' in means
    assert "running mean of the scored values" in means and "skipped scores count as 0" not in means
    assert 'title="Heta\'s mean (skipped scores as 0): 0.700">0.778</td>' in means
    row = means.split("<code>full_text_search</code>")[1].split("</tr>")[0]
    shown = list(state.metrics)[:8]
    expected = sum(1 for metric in shown if state.not_applicable("full_text_search", metric))
    assert expected and row.count(">n/a</td>") == expected


def test_the_console_line_shows_the_mean_of_scored_and_n_a(report: heta_nb.EvaluationReport) -> None:
    state = _states(report)["records"]
    na = RunState.__new__(RunState)
    na.__dict__.update(state.__dict__, metrics=("answer_contains",))
    line = format_state_line(na)
    assert "answer_contains (mean of scored):" in line
    assert "full_text_search n/a" in line
    summary = next(
        s for s in report.metric_summaries() if (s.mode, s.metric) == ("extractive_answer", "answer_contains")
    )
    assert f"extractive_answer {summary.mean_scored:.3f}" in line


def test_warnings_are_one_line_each_cut_at_words_and_collapsed_beyond_the_first() -> None:
    from heta_nb.runner.events import RunWarning

    long = "the benchmark's judgements cover only part of the corpus; " * 6 + "recall is a lower bound"
    state = replay(
        [RunWarning("a", "first warning"), RunWarning("b", "second warning"), RunWarning("c", long)], RunState()
    )
    stats = render_widget_parts(state)["stats"]
    assert stats.count("<details") == 1 and "<details open" not in stats
    summary = stats.split("<summary")[1].split("</summary>")[0]
    line = html.unescape(summary.split("⚠ ")[1].split(" <span")[0])
    assert len(line) <= 110 and line.endswith("…")
    assert long.startswith(line[:-1]) and long[len(line) - 1] == " ", "cut at a word boundary"
    assert "(+2 more)" in summary
    body = stats.split("</summary>")[1]
    assert long in html.unescape(body) and "first warning" in body and "second warning" in body
