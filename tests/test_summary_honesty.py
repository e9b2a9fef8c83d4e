"""What a summary, a comparison and a progress display say when the data is thin or broken.

Each report here comes from a real run (a plain function as KB, real evaluators).
"""

from __future__ import annotations

import math
import warnings
from typing import Any

import numpy as np
import pytest
from helpers import report_dict

import heta_nb
from heta_nb import stats
from heta_nb.benchmark import Benchmark, BenchmarkCase
from heta_nb.comparison import HetaComparisonWarning, compare
from heta_nb.runner import RunState, replay
from heta_nb.runner.events import RunFinished
from heta_nb.tables import summary_frame
from heta_nb.tables.distributions import interval

MANIFEST = {"name": "thin", "version": "1", "split": "test", "task_type": "qa"}


def benchmark(n: int) -> Benchmark:
    return Benchmark(MANIFEST, (), [BenchmarkCase(case_id=f"c{i:02d}", query=f"question {i}") for i in range(n)])


def answer(query: str) -> dict[str, Any]:
    return {"mode": "m", "results": [{"id": "r1", "text": f"text of {query}"}], "answer": query}


def hit_all(case: Any, response: Any) -> dict[str, Any]:
    """A 0/1 *float* score (like hit@K) that is 1.0 for every case."""
    return {"name": "hit", "value": 1.0}


def judge(case: Any, response: Any) -> dict[str, Any]:
    """Fails on every other case (an LLM judge that times out, say)."""
    if int(case.case_id[1:]) % 2:
        raise RuntimeError("judge unavailable")
    return {"name": "judge", "value": 0.5}


def always_fails(case: Any, response: Any) -> dict[str, Any]:
    raise RuntimeError("broken evaluator")


def run(n: int, evaluators: list[Any], **kwargs: Any) -> heta_nb.EvaluationReport:
    return heta_nb.evaluate(
        benchmark(n),
        kb=answer,
        query_modes=["m"],
        evaluators=evaluators,
        knowledge_base_name="kb",
        progress=False,
        lint=False,
        **kwargs,
    )


def test_zero_one_float_scores_get_a_wilson_interval_not_a_zero_width_t_interval() -> None:
    report = run(10, [hit_all])
    [summary] = report.metric_summaries()
    assert summary.kind == "number" and summary.mean == 1.0
    # t would be [1, 1] (zero spread): it claims certainty from ten cases
    assert (summary.ci_low, summary.ci_high) == pytest.approx(stats.wilson_interval(10, 10))
    assert summary.ci_low < 0.75 and summary.ci_high == 1.0
    # the per-label tables use the same rule, so they agree with the summary
    assert interval([1.0] * 10, "number", 0.95) == pytest.approx((summary.ci_low, summary.ci_high))


def test_other_numbers_keep_the_t_interval() -> None:
    values = [0.0, 1.0, 0.5, 1.0]
    assert not stats.is_binary(values) and stats.is_binary([0.0, 1.0, 1.0]) and stats.is_binary([True, False])


def test_evaluator_errors_are_counted_and_named_in_the_summary() -> None:
    report = run(6, [judge, always_fails])
    by_metric = {s.metric: s for s in report.metric_summaries()}
    half, broken = by_metric["judge"], by_metric["always_fails"]
    assert (half.n, half.cases, half.errors, half.evaluator_errors) == (3, 6, 0, 3)
    assert half.note == "3 evaluator errors not counted"
    assert broken.kind == "text" and broken.evaluator_errors == 6 and broken.n == 0
    frame = summary_frame(report).set_index("metric")
    assert frame.loc["judge", "evaluator_errors"] == 3 and frame["evaluator_errors"].dtype == "int64"
    assert frame.loc["judge", "note"] == "3 evaluator errors not counted"
    html = report._repr_html_()
    assert 'title="6 evaluator errors, no mean"' in html
    assert "3 evaluator errors not counted" in html


def test_a_single_pair_has_no_interval_and_its_views_still_draw() -> None:
    one_a = run(1, [hit_all], report_id="a")
    one_b = run(1, [hit_all], report_id="b")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", HetaComparisonWarning)
        c = compare(one_a, one_b, resamples=200)
    t = c.test("b", "hit")
    assert t.n == 1 and math.isnan(t.ci_low) and math.isnan(t.ci_high)
    ax = c.plot_deltas("hit")
    assert not ax.patches or all(math.isfinite(p.get_x()) for p in ax.patches)
    html = c._repr_html_()
    assert "nan" not in html.lower().replace("nanoseconds", "")


def test_p_column_is_called_adjusted_only_when_it_is() -> None:
    a, b = run(8, [hit_all], report_id="a"), run(8, [hit_all], report_id="b")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", HetaComparisonWarning)
        holm = compare(a, b, resamples=200)._repr_html_()
        none = compare(a, b, resamples=200, correction="none")._repr_html_()
    assert '<th class="heta-n">p (adj.)</th>' in holm
    assert '<th class="heta-n">p</th>' in none and "p (adj.)" not in none


def test_a_display_that_missed_the_case_events_catches_up_on_the_final_one() -> None:
    events: list[Any] = []
    report = run(5, [judge], on_event=events.append)
    full = replay(events)
    assert (full.done, full.errors) == (5, 0)
    late = replay([e for e in events if e.kind == "run_finished"], RunState())
    assert late.done == len(report.case_results) and late.status == "complete" and late.fraction == 1.0
    failed = RunFinished(status="failed", done=3, total=5, errors=2, seconds=1.0)
    assert (replay([failed]).done, replay([failed]).errors) == (3, 2)


def paired_reports() -> tuple[heta_nb.EvaluationReport, heta_nb.EvaluationReport]:
    """Two 60-case reports with four metrics; the second is about 0.08 better on each."""

    def make(seed: int, shift: float, report_id: str) -> heta_nb.EvaluationReport:
        rng = np.random.default_rng(seed)
        results = [
            {
                "case_id": f"q{i:03d}",
                "query": f"q{i}?",
                "query_mode": "m",
                "scores": [
                    {"name": f"m{j}", "value": float(np.clip(rng.random() + shift, 0, 1)), "passed": None}
                    | {"metadata": {}}
                    for j in range(4)
                ],
                "response": {"mode": "m", "results": [], "answer": None, "citations": [], "trace": [], "metadata": {}},
                "latency_ms": 1.0,
                "error": None,
                "metadata": {"benchmark_run_unit": "corpus", "knowledge_base_name": "kb"},
            }
            for i in range(60)
        ]
        return heta_nb.load_report(report_dict(results, report_id=report_id, modes=["m"], benchmark="b"))

    return make(1000, 0.0, "a"), make(1, 0.08, "b")


def comparison_markdown(c: Any) -> list[str]:
    """The markdown cell of ``heta_nb.sections(c)`` that states the method."""
    return [cell.source for cell in heta_nb.sections(c) if cell.cell_type == "markdown" and "Paired by" in cell.source]


def test_a_ci_that_excludes_zero_beside_no_detectable_difference_is_explained() -> None:
    a, b = paired_reports()
    c = compare(a, b, resamples=2000)
    [note] = [n for n in c.notes if n.startswith("the CI excludes 0")]
    assert "not adjusted for the 4 tests" in note and "Holm-adjusted p-value" in note
    flagged = [m for m in c.metrics if f"b {m}" in note]
    assert flagged
    for metric in flagged:
        t = c.test("b", metric)
        assert (t.ci_low > 0 or t.ci_high < 0) and not c.significant("b", metric)
    for metric in set(c.metrics) - set(flagged):  # the others agree
        t = c.test("b", metric)
        assert (t.ci_low > 0 or t.ci_high < 0) == c.significant("b", metric)
    assert "bootstrap CI per test, p Holm-corrected" in c._repr_html_()
    [text] = comparison_markdown(c)
    assert "95 % bootstrap CIs per test (not adjusted)" in text and "- Note: the CI excludes 0" in text


def test_an_uncorrected_comparison_does_not_call_its_p_values_adjusted() -> None:
    a, b = paired_reports()
    c = compare(a, b, resamples=2000, correction="none", alpha=0.1)
    [text] = comparison_markdown(c)
    assert "uncorrected p-values" in text and "adjusted p=" not in text and "after correction" not in text
    if not any(r["significant"] for r in c.summary_rows()):
        assert "at the 10% level." in text
    else:
        assert " p=" in text


def test_the_run_settings_show_the_timeout_in_seconds() -> None:
    html = run(2, [hit_all], timeout_s=60)._repr_html_()
    start = html.index("timeout")
    assert "60 s" in html[start : start + 80] and "60.0000" not in html
