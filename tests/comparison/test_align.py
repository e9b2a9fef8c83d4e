"""Aligning cases across systems: errors, skipped scores, case sets, scale."""

from __future__ import annotations

import json
import math
import warnings
from typing import Any

import numpy as np
import pytest
from helpers import FIXTURES, report_dict

import heta_nb
import heta_nb.demo
from heta_nb.comparison import Comparison, HetaComparisonWarning, compare
from heta_nb.model.report import EvaluationReport
from heta_nb.stats.paired import PairedTest, holm
from heta_nb.testing import synthetic_report, synthetic_report_dict

SYNTH_METRICS = ("evidence_recall@5", "answer_contains", "beir_ndcg@5")


def strict_compare(*args: Any, **kwargs: Any) -> Comparison:
    """compare() that fails on any warning."""
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        return compare(*args, **kwargs)


def usable(report: EvaluationReport, case_id: str, mode: str, metric: str, include_skipped: bool) -> float | None:
    """A score read straight from the report (independent of compare's arrays)."""
    try:
        result = report.case(case_id, mode)
    except KeyError:
        return None
    if not result.ok:
        return None
    score = result.score(metric)
    if score is None or score.numeric is None or (score.skipped and not include_skipped):
        return None
    return score.numeric


def aligned_by_hand(
    reports: list[EvaluationReport], mode: str, metric: str, include_skipped: bool = False
) -> tuple[list[str], list[np.ndarray]]:
    """Case ids (baseline order) and per-report values where every report has a usable score."""
    ids = list(dict.fromkeys(r.case_id for r in reports[0].case_results if r.query_mode == mode))
    kept, columns = [], [[] for _ in reports]
    for case_id in ids:
        values = [usable(r, case_id, mode, metric, include_skipped) for r in reports]
        if all(v is not None for v in values):
            kept.append(case_id)
            for column, value in zip(columns, values):
                column.append(value)
    return kept, [np.asarray(c, dtype=float) for c in columns]


def fast_report_dict(
    n: int,
    *,
    metrics: tuple[str, ...] = ("m1", "m2", "m3", "m4", "m5"),
    modes: tuple[str, ...] = ("full_text_search",),
    shift: float = 0.0,
    seed: int = 0,
    report_id: str = "r",
) -> dict[str, Any]:
    """A small-response report dict in the real schema (fast to build at 10,000 cases)."""
    rng = np.random.default_rng(seed)
    values = np.clip(rng.random((len(modes), n, len(metrics))) + shift, 0.0, 1.0).round(4).tolist()
    results = []
    for i in range(n):
        for k, mode in enumerate(modes):
            results.append(
                {
                    "case_id": f"q{i:05d}",
                    "query": f"query {i}?",
                    "query_mode": mode,
                    "scores": [
                        {"name": m, "value": values[k][i][j], "passed": None, "metadata": {}}
                        for j, m in enumerate(metrics)
                    ],
                    "response": {
                        "mode": mode,
                        "results": [],
                        "answer": None,
                        "citations": [],
                        "trace": [],
                        "metadata": {},
                    },
                    "latency_ms": 1.0,
                    "error": None,
                    "metadata": {"benchmark_run_unit": "corpus", "knowledge_base_name": "kb"},
                }
            )
    return report_dict(results, report_id=report_id, modes=modes, benchmark="fast")


@pytest.fixture(scope="module")
def normal_report() -> EvaluationReport:
    return heta_nb.load_report(FIXTURES / "report-normal.json")


@pytest.fixture(scope="module")
def errors_report() -> EvaluationReport:
    return heta_nb.load_report(FIXTURES / "report-errors.json")


def _tests(c: Comparison) -> list[PairedTest]:
    return [c.test(s, m) for s in c.systems if s != c.baseline for m in c.metrics]


# --- within one report -----------------------------------------------------------------------


def test_modes_within_one_report(normal_report: EvaluationReport) -> None:
    c = strict_compare(normal_report, resamples=2000)
    assert c.systems == ("full_text_search", "extractive_answer", "sql_text_search")
    assert c.baseline == "full_text_search"
    assert {s.report_id for s in c.system_info} == {"fixture-normal"}
    assert c.metrics == normal_report.metric_names
    # the baseline full_text_search returns no answers: its two answer metrics are n/a, not tested
    assert c.family_size == len(c.metrics) - 2  # per tested mode, against the baseline mode
    assert [c.family(s).size for s in c.candidates] == [len(c.metrics) - 2] * 2
    assert c.verdict("extractive_answer", "answer_contains") == "n/a: full_text_search returns no answers"
    # Skipped scores are left out by default (a note, not a warning), counted per system.
    assert c.overlap.aligned["evidence_recall@3"] == 9 and c.overlap.aligned["beir_ndcg@3"] == 8
    assert all(s.metrics["beir_ndcg@3"].skipped == 2 for s in c.overlap.systems)
    assert any("skipped" in note for note in c.notes)

    t = c.test("extractive_answer", "answer_contains")
    assert (t.n, t.wins, t.ties, t.losses) == (0, 0, 0, 0) and t.method.startswith("not tested: n/a")
    assert math.isnan(t.p_value) and math.isnan(t.p_value_adjusted) and math.isnan(t.mean_diff)
    for system in c.candidates:  # Holm over each tested mode's own family
        tested = [c.test(system, m) for m in c.family(system).metrics]
        assert [x.p_value_adjusted for x in tested] == pytest.approx(holm([x.p_value for x in tested]))
    worse = c.test("sql_text_search", "beir_ndcg@3")
    assert worse.mean_diff < 0 and worse.losses > 0

    two = strict_compare(normal_report, modes=["full_text_search", "sql_text_search"], resamples=2000)
    assert two.systems == ("full_text_search", "sql_text_search")
    assert two.family_size == len(two.metrics) - 2  # answer metrics: n/a in both modes

    included = strict_compare(normal_report, modes=["full_text_search", "sql_text_search"], include_skipped=True)
    assert set(included.overlap.aligned.values()) == {10}
    assert any("counted as the 0" in note for note in included.notes)


def test_one_report_needs_two_modes(errors_report: EvaluationReport) -> None:
    single = heta_nb.load_report(FIXTURES / "report-beir-local.json")
    with pytest.raises(ValueError, match="two or more modes"):
        compare(single)
    with pytest.raises(ValueError, match="unknown mode 'nope'"):
        compare(errors_report, modes=["full_text_search", "nope"])


def test_errored_modes(errors_report: EvaluationReport) -> None:
    with pytest.warns(HetaComparisonWarning, match="errored cases are left out"):
        c = compare(errors_report, modes=["full_text_search", "vector_search"], resamples=500)
    assert c.systems == ("full_text_search", "vector_search")
    assert "fails_on_case" in c.metrics  # a system that errored everywhere does not narrow metrics
    errors = {s.name: s.errors for s in c.overlap.systems}
    assert errors == {"full_text_search": 1, "vector_search": 10}
    assert c.overlap.answered == 0 and set(c.overlap.aligned.values()) == {0}
    row = c.summary_rows()[0]
    assert row["n"] == 0 and row["verdict"] == "no aligned cases" and row["significant"] is False
    assert math.isnan(row["p_value"]) and c.family_size == 0
    assert c.cases_frame("beir_ndcg@3").empty
    assert c.plot_paired("beir_ndcg@3").texts and c.plot_deltas("beir_ndcg@3").texts


def test_errors_excluded_per_system() -> None:
    a = synthetic_report(120, modes=("m",), seed=21, error_rate=0.15, report_id="a")
    b = synthetic_report(120, modes=("m",), seed=22, error_rate=0.15, report_id="b")
    with pytest.warns(HetaComparisonWarning) as caught:
        c = compare(a, b, resamples=500)
    assert [str(w.message) for w in caught] == c.warnings
    by_name = {s.name: s for s in c.overlap.systems}
    for report in (a, b):
        assert by_name[report.report_id].errors == report.error_count > 0
    both_ok = sum(1 for r in a.case_results if r.ok and b.case(r.case_id, "m").ok)
    assert c.overlap.answered == both_ok
    assert c.overlap.aligned["answer_contains"] == both_ok  # never skipped
    for metric in SYNTH_METRICS:
        assert c.overlap.aligned[metric] == len(aligned_by_hand([a, b], "m", metric)[0])
    assert any(f"'a' {a.error_count} of 120" in w for w in c.warnings)


def test_skipped_excluded_or_included() -> None:
    a = synthetic_report(200, modes=("m",), seed=31, error_rate=0.0, report_id="a")
    b = synthetic_report(200, modes=("m",), seed=32, error_rate=0.0, report_id="b")
    skipped_a = sum(1 for r in a.case_results if r.score("evidence_recall@5").skipped)
    skipped_b = sum(1 for r in b.case_results if r.score("evidence_recall@5").skipped)
    assert skipped_a and skipped_b
    excluded = strict_compare(a, b, resamples=500)
    included = strict_compare(a, b, resamples=500, include_skipped=True)
    systems = {s.name: s.metrics["evidence_recall@5"] for s in excluded.overlap.systems}
    assert (systems["a"].skipped, systems["b"].skipped) == (skipped_a, skipped_b)
    assert systems["a"].usable == 200 - skipped_a
    assert excluded.overlap.aligned["evidence_recall@5"] == len(aligned_by_hand([a, b], "m", "evidence_recall@5")[0])
    assert excluded.overlap.aligned["evidence_recall@5"] < 200
    assert included.overlap.aligned["evidence_recall@5"] == 200
    ids, (x, y) = aligned_by_hand([a, b], "m", "evidence_recall@5", include_skipped=True)
    assert included.test("b", "evidence_recall@5").mean_diff == pytest.approx(float(np.mean(y - x)))


def test_different_case_sets_warn_and_count() -> None:
    a = heta_nb.load_report(fast_report_dict(60, seed=1, report_id="a"))
    b = heta_nb.load_report(fast_report_dict(50, seed=2, report_id="b"))
    with pytest.warns(HetaComparisonWarning, match="case sets differ"):
        c = compare(a, b, resamples=500)
    assert (c.overlap.cases, c.overlap.common, c.overlap.only_in_some) == (60, 50, 10)
    sa, sb = c.overlap.systems
    assert (sa.cases, sa.unmatched, sa.missing) == (60, 10, 0)
    assert (sb.cases, sb.unmatched, sb.missing) == (50, 0, 10)
    assert set(c.overlap.aligned.values()) == {50}
    assert sa.metrics["m1"].dropped == 10 and sb.metrics["m1"].dropped == 0
    assert "'a': 10" in c.warnings[0] and "'b': 0" in c.warnings[0]


def test_run_units_differ_falls_back_to_case_id() -> None:
    first = synthetic_report_dict(30, modes=("m",), seed=61, error_rate=0.0, report_id="x")
    second = synthetic_report_dict(30, modes=("m",), seed=62, error_rate=0.0, report_id="y")
    for result in second["case_results"]:
        result["metadata"]["benchmark_run_unit"] = "everything"
    with pytest.warns(HetaComparisonWarning, match="run units differ"):
        c = compare(first, second, resamples=500)
    assert c.overlap.key == "case_id" and c.overlap.common == 30


def test_aligning_ten_thousand_cases() -> None:
    """Alignment at scale (its speed is measured by benchmarks/compare.py, not here)."""
    reports = [
        EvaluationReport.from_raw(fast_report_dict(10_000, seed=i, shift=0.01 * i, report_id=f"r{i}")) for i in range(3)
    ]
    c = strict_compare(*reports, resamples=1)
    assert set(c.overlap.aligned.values()) == {10_000} and len(c.metrics) == 5


def test_text_nan_and_duplicate_scores_are_counted_not_compared() -> None:
    first = fast_report_dict(20, metrics=("m1",), seed=1, report_id="a")
    second = fast_report_dict(20, metrics=("m1",), seed=2, report_id="b")
    second["case_results"][0]["scores"][0]["value"] = float("nan")
    second["case_results"][1]["scores"][0]["value"] = float("inf")
    second["case_results"][2]["scores"][0]["value"] = "n/a"
    second["case_results"].append(json.loads(json.dumps(second["case_results"][5])))  # a repeated case
    second["score_summary"] = {}
    with pytest.warns(HetaComparisonWarning) as caught:
        c = compare(first, EvaluationReport.from_raw(second), resamples=500)
    messages = [str(w.message) for w in caught]
    assert any("repeated result" in m for m in messages)
    assert any("left out of every pair they belong to ('b' 3 of 20)" in m for m in messages)
    sb = c.overlap.systems[1]
    assert sb.metrics["m1"].unscored == 3 and sb.duplicates == 1 and sb.cases == 20
    assert c.overlap.aligned["m1"] == 17 and math.isfinite(c.test("b", "m1").p_value)
