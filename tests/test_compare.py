"""heta_nb.compare: paired comparison of recipes and modes, on real reports."""

from __future__ import annotations

import json
import math
import warnings
import zlib
from dataclasses import replace
from typing import Any

import numpy as np
import pandas as pd
import pytest
from helpers import FIXTURES, report_dict
from scipy import stats

import heta_nb
import heta_nb.demo
from heta_nb.comparison import SUMMARY_COLUMNS, Comparison, HetaComparisonWarning, compare
from heta_nb.model.report import EvaluationReport
from heta_nb.stats.paired import PairedTest, holm, paired_test
from heta_nb.testing import synthetic_report, synthetic_report_dict

SYNTH_METRICS = ("evidence_recall@5", "answer_contains", "beir_ndcg@5")


# --- helpers ---------------------------------------------------------------------------------


def quiet_compare(*args: Any, **kwargs: Any) -> Comparison:
    """compare() with HetaComparisonWarning silenced (for tests that check .warnings)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", HetaComparisonWarning)
        return compare(*args, **kwargs)


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


# --- real runs on the demo benchmark ---------------------------------------------------------

DEMO_PREFIX = "raw/benchmarks/saltmarsh_isles/test"


def _demo_kbs() -> tuple[Any, Any]:
    bench = heta_nb.demo.load_benchmark()
    evidence: dict[str, list[str]] = {}
    for case in bench.cases:
        docs = evidence.setdefault(case.query, [])
        docs.extend(e.reference_id for e in case.expected.evidence if e.reference_id not in docs)
    all_docs = sorted({d.document_id for d in bench.documents})

    def hit(doc: str, rank: int) -> dict[str, Any]:
        return {
            "id": f"{doc}-{rank}",
            "text": doc,
            "score": 1.0 / (rank + 1),
            "source": {"object_key": f"{DEMO_PREFIX}/{doc}/x.txt"},
        }

    def distractors(query: str, count: int) -> list[str]:
        wrong = [d for d in all_docs if d not in evidence[query]]
        start = zlib.crc32(query.encode()) % len(wrong)
        return [wrong[(start + i) % len(wrong)] for i in range(count)]

    def good_kb(query: str, *, mode: str, top_k: int) -> dict[str, Any]:
        docs = (evidence[query] + distractors(query, 5))[:5]
        return {"mode": mode, "results": [hit(d, r) for r, d in enumerate(docs)]}

    def poor_kb(query: str, *, mode: str, top_k: int) -> dict[str, Any]:
        # Finds the evidence (ranked last) for about one query in three, else only distractors.
        docs = distractors(query, 4) + (evidence[query][:1] if zlib.crc32(query.encode()) % 3 == 0 else [])
        return {"mode": mode, "results": [hit(d, r) for r, d in enumerate(docs)]}

    return good_kb, poor_kb


@pytest.fixture(scope="module")
def demo_reports() -> tuple[EvaluationReport, EvaluationReport]:
    """(poor, good): two real runs of the runner on the demo benchmark."""
    good_kb, poor_kb = _demo_kbs()
    out = []
    for name, kb in (("poor", poor_kb), ("good", good_kb)):
        out.append(
            heta_nb.evaluate(
                heta_nb.demo.load_benchmark(),
                kb=kb,
                query_modes=["m"],
                store=None,
                progress=False,
                evaluators=["recall@5", "ndcg@5"],
                knowledge_base_name=name,
                report_id=name,
            )
        )
    return out[0], out[1]


@pytest.fixture(scope="module")
def normal_report() -> EvaluationReport:
    return heta_nb.load_report(FIXTURES / "report-normal.json")


@pytest.fixture(scope="module")
def errors_report() -> EvaluationReport:
    return heta_nb.load_report(FIXTURES / "report-errors.json")


def test_better_kb_is_better(demo_reports: tuple[EvaluationReport, EvaluationReport]) -> None:
    poor, good = demo_reports
    c = strict_compare(poor, good, resamples=5000)  # same benchmark, settings, corpus: no warning
    assert c.systems == ("poor", "good") and c.baseline == "poor"
    assert c.metrics == ("recall@5", "ndcg@5")
    assert c.warnings == []
    scored = sum(1 for r in good.case_results if not r.score("recall@5").skipped)  # cases without evidence skip
    assert 80 < scored < 95 and c.overlap.aligned == {"recall@5": scored, "ndcg@5": scored}
    for metric in c.metrics:
        t = c.test("good", metric)
        assert t.mean_diff > 0.3 and t.ci_low > 0
        assert t.p_value_adjusted < 0.05 and t.p_value_adjusted >= t.p_value
        assert c.significant("good", metric)
        assert c.verdict("good", metric).startswith("better (p")
    frame = c.summary_frame()
    assert list(frame.columns) == list(SUMMARY_COLUMNS)
    assert frame["verdict"].str.startswith("better").all() and frame["significant"].all()
    assert "better" in repr(c) and "poor" in repr(c)

    reverse = strict_compare(poor, good, baseline="good", resamples=5000)
    assert [v.split(" ")[0] for v in reverse.summary_frame()["verdict"]] == ["worse", "worse"]
    assert reverse.test("poor", "recall@5").mean_diff == pytest.approx(-c.test("good", "recall@5").mean_diff)


def test_matches_paired_test_on_independently_aligned_arrays() -> None:
    a = synthetic_report(150, modes=("m",), seed=11, error_rate=0.05, report_id="a")
    b = synthetic_report(150, modes=("m",), seed=12, error_rate=0.05, report_id="b")
    c = quiet_compare(a, b, resamples=2000, seed=7)
    for metric in SYNTH_METRICS:
        ids, (x, y) = aligned_by_hand([a, b], "m", metric)
        assert c.overlap.aligned[metric] == len(ids)
        assert list(c.cases_frame(metric)["case_id"]) == ids
        expected = paired_test(x, y, resamples=2000, seed=7, tie_tolerance=1e-9)
        got = c.test("b", metric)
        assert got == PairedTest(**{**expected.__dict__, "p_value_adjusted": got.p_value_adjusted})
        np.testing.assert_array_equal(c.deltas(metric), y - x)


def test_agrees_with_scipy_resampling() -> None:
    base = fast_report_dict(400, metrics=("s",), seed=1, report_id="base")
    cand = fast_report_dict(400, metrics=("s",), seed=2, shift=0.02, report_id="cand")
    c = strict_compare(heta_nb.load_report(base), heta_nb.load_report(cand), resamples=20_000, seed=3)
    t = c.test("cand", "s")
    values = c.aligned_values("s")
    d = values["cand"] - values["base"]

    perm = stats.permutation_test(
        (d,), lambda x, axis: np.mean(x, axis=axis), permutation_type="samples", n_resamples=20_000, rng=5
    )
    # Both Monte Carlo with 20k resamples: each standard error <= 0.0036.
    assert 0.02 < t.p_value < 0.98
    assert t.p_value == pytest.approx(perm.pvalue, abs=0.02)

    boot = stats.bootstrap((d,), np.mean, method="percentile", n_resamples=20_000, rng=5)
    se = float(np.std(d, ddof=1) / math.sqrt(d.size))
    assert t.ci_low == pytest.approx(boot.confidence_interval.low, abs=0.05 * se)
    assert t.ci_high == pytest.approx(boot.confidence_interval.high, abs=0.05 * se)
    assert t.mean_diff == pytest.approx(float(np.mean(d)))


# --- within one report -----------------------------------------------------------------------


def test_modes_within_one_report(normal_report: EvaluationReport) -> None:
    c = strict_compare(normal_report, resamples=2000)
    assert c.systems == ("full_text_search", "extractive_answer", "sql_text_search")
    assert c.baseline == "full_text_search"
    assert {s.report_id for s in c.system_info} == {"fixture-normal"}
    assert c.metrics == normal_report.metric_names
    assert c.family_size == 2 * len(c.metrics)
    # Skipped scores are left out by default (a note, not a warning), counted per system.
    assert c.overlap.aligned["evidence_recall@3"] == 9 and c.overlap.aligned["beir_ndcg@3"] == 8
    assert all(s.metrics["beir_ndcg@3"].skipped == 2 for s in c.overlap.systems)
    assert any("skipped" in note for note in c.notes)

    t = c.test("extractive_answer", "answer_contains")
    assert (t.n, t.wins, t.ties, t.losses) == (9, 7, 2, 0)
    assert t.p_value == pytest.approx(2 / 2**7)  # exact: 7 non-zero differences
    assert t.p_value_adjusted == pytest.approx(min(1.0, holm([x.p_value for x in _tests(c)])[1]))
    worse = c.test("sql_text_search", "beir_ndcg@3")
    assert worse.mean_diff < 0 and worse.losses > 0

    two = strict_compare(normal_report, modes=["full_text_search", "sql_text_search"], resamples=2000)
    assert two.systems == ("full_text_search", "sql_text_search")
    assert two.family_size == len(two.metrics)

    included = strict_compare(normal_report, modes=["full_text_search", "sql_text_search"], include_skipped=True)
    assert set(included.overlap.aligned.values()) == {10}
    assert any("counted as the 0" in note for note in included.notes)


def _tests(c: Comparison) -> list[PairedTest]:
    return [c.test(s, m) for s in c.systems if s != c.baseline for m in c.metrics]


def test_one_report_needs_two_modes(errors_report: EvaluationReport) -> None:
    single = heta_nb.load_report(FIXTURES / "report-beir-local.json")
    with pytest.raises(ValueError, match="two or more modes"):
        compare(single)
    with pytest.raises(ValueError, match="no mode"):
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


# --- alignment edge cases --------------------------------------------------------------------


def test_identical_reports_are_ties() -> None:
    r = synthetic_report(80, modes=("m",), seed=41)
    c = strict_compare(r, r, resamples=1000)
    assert c.systems == ("synthetic", "synthetic#2")
    for row in c.summary_rows():
        assert row["wins"] == row["losses"] == 0 and row["ties"] == row["n"] > 0
        assert row["p_value"] == row["p_adjusted"] == 1.0
        assert row["mean_diff"] == row["ci_low"] == row["ci_high"] == 0.0
        assert row["verdict"].startswith("no detectable difference") and not row["significant"]
    assert c.most_improved("beir_ndcg@5").empty and c.most_regressed("beir_ndcg@5").empty


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


def test_different_benchmark_version_warns() -> None:
    first = synthetic_report_dict(40, modes=("m",), seed=51, error_rate=0.0, report_id="v1")
    second = synthetic_report_dict(40, modes=("m",), seed=52, error_rate=0.0, report_id="v2")
    second["benchmark"]["version"] = "2"
    with pytest.warns(HetaComparisonWarning, match="benchmarks differ in version") as caught:
        c = compare(first, second, resamples=500)  # dicts go through load_report
    assert len(caught) == len(c.warnings) == 1
    assert "synthetic:1:test" in c.warnings[0] and "synthetic:2:test" in c.warnings[0]
    assert c.overlap.common == 40 and c.test("v2", "beir_ndcg@5").n > 0


def test_run_units_differ_falls_back_to_case_id() -> None:
    first = synthetic_report_dict(30, modes=("m",), seed=61, error_rate=0.0, report_id="x")
    second = synthetic_report_dict(30, modes=("m",), seed=62, error_rate=0.0, report_id="y")
    for result in second["case_results"]:
        result["metadata"]["benchmark_run_unit"] = "everything"
    with pytest.warns(HetaComparisonWarning, match="run units differ"):
        c = compare(first, second, resamples=500)
    assert c.overlap.key == "case_id" and c.overlap.common == 30


def test_query_modes_differ() -> None:
    a = heta_nb.load_report(fast_report_dict(20, modes=("x", "y"), seed=1, report_id="a"))
    b = heta_nb.load_report(fast_report_dict(20, modes=("y",), seed=2, report_id="b"))
    with pytest.warns(HetaComparisonWarning, match="different query modes"):
        c = compare(a, b, resamples=500)
    assert c.systems == ("a", "b") and {s.mode for s in c.system_info} == {"y"}

    only_x = heta_nb.load_report(fast_report_dict(20, modes=("x",), seed=3, report_id="c"))
    with pytest.warns(HetaComparisonWarning, match="mix the recipe and the mode"):
        mixed = compare(only_x, b, resamples=500)
    assert [s.mode for s in mixed.system_info] == ["x", "y"]
    with pytest.raises(ValueError, match="share no query mode"):
        compare(a, heta_nb.load_report(fast_report_dict(5, modes=("z", "w"), report_id="d")))

    both = strict_compare(a, a, modes=["x", "y"], names=["one", "two"], resamples=500)
    assert both.systems == ("one/x", "one/y", "two/x", "two/y")


def test_evaluator_settings_and_incomplete_runs_warn(demo_reports: tuple[EvaluationReport, EvaluationReport]) -> None:
    poor, good = demo_reports
    changed = good.to_dict()
    changed["metadata"]["heta_nb"]["top_k"] = 5
    changed["metadata"]["heta_nb"]["status"] = "cancelled"
    with pytest.warns(HetaComparisonWarning) as caught:
        c = compare(poor, changed, resamples=500)
    text = " | ".join(c.warnings)
    assert "top_k" in text and "'poor': 10" in text and "'good': 5" in text
    assert "is cancelled" in text
    assert len(caught) == len(c.warnings)


def test_metric_only_in_some_systems_is_not_compared() -> None:
    a = heta_nb.load_report(fast_report_dict(20, metrics=("m1", "m2"), seed=1, report_id="a"))
    b = heta_nb.load_report(fast_report_dict(20, metrics=("m1",), seed=2, report_id="b"))
    with pytest.warns(HetaComparisonWarning, match="'m2' has numeric scores only in"):
        c = compare(a, b, resamples=500)
    assert c.metrics == ("m1",)
    with pytest.raises(ValueError, match="'m2'"):
        compare(a, b, metrics=["m2"])
    chosen = quiet_compare(a, b, metrics="m1")
    assert chosen.metrics == ("m1",)


def test_names_and_baseline() -> None:
    reports = [heta_nb.load_report(fast_report_dict(30, seed=i, shift=0.1 * i, report_id=f"r{i}")) for i in range(3)]
    c = strict_compare(*reports, names=["base", "mid", "top"], baseline="mid", metrics=["m1"], resamples=500)
    assert c.systems == ("base", "mid", "top") and c.baseline == "mid"
    assert [row["system"] for row in c.summary_rows()] == ["base", "top"]
    assert strict_compare(reports, resamples=200).systems == ("r0", "r1", "r2")  # a list of reports
    assert strict_compare(*reports, baseline=-1, resamples=200).baseline == "r2"
    with pytest.raises(ValueError, match="unique"):
        compare(*reports, names=["a", "a", "b"])
    with pytest.raises(ValueError, match="expected 3 names"):
        compare(*reports, names=["a", "b"])
    with pytest.raises(ValueError, match="baseline"):
        compare(*reports, baseline="nope")
    with pytest.raises(ValueError, match="is the baseline"):
        c.test("mid", "m1")
    with pytest.raises(ValueError, match="not compared"):
        c.test("top", "m9")


# --- statistics ------------------------------------------------------------------------------


def test_holm_over_every_system_and_metric() -> None:
    reports = [synthetic_report(150, modes=("m",), seed=70 + i, report_id=f"s{i}") for i in range(4)]
    c = quiet_compare(*reports, resamples=2000)
    tests = _tests(c)
    assert c.family_size == len(tests) == 3 * len(SYNTH_METRICS)
    raw = [t.p_value for t in tests]
    adjusted = [t.p_value_adjusted for t in tests]
    assert adjusted == pytest.approx(holm(raw))
    assert all(adj >= p for p, adj in zip(raw, adjusted))
    ordered = [adj for _, adj in sorted(zip(raw, adjusted))]
    assert ordered == sorted(ordered)  # monotone in the raw p-values
    frame = c.summary_frame()
    assert (frame["significant"] == (frame["p_adjusted"] < 0.05)).all()

    uncorrected = quiet_compare(*reports, resamples=2000, correction="none")
    assert [t.p_value_adjusted for t in _tests(uncorrected)] == raw


def test_reproducible_with_a_seed() -> None:
    a = synthetic_report(100, modes=("m",), seed=81, error_rate=0.0, report_id="a")
    b = synthetic_report(100, modes=("m",), seed=82, error_rate=0.0, report_id="b")
    first = quiet_compare(a, b, resamples=3000, seed=123)
    again = quiet_compare(a, b, resamples=3000, seed=123)
    pd.testing.assert_frame_equal(first.summary_frame(), again.summary_frame())
    fresh = quiet_compare(a, b, resamples=3000, seed=None)
    replay = quiet_compare(a, b, resamples=3000, seed=fresh.seed)
    pd.testing.assert_frame_equal(fresh.summary_frame(), replay.summary_frame())
    # On the same aligned cases, a pair gives the same test whatever else is compared.
    c = synthetic_report(100, modes=("m",), seed=83, error_rate=0.0, report_id="c")
    wider = quiet_compare(a, b, c, resamples=3000, seed=123)
    narrow, wide = first.test("b", "beir_ndcg@5"), wider.test("b", "beir_ndcg@5")
    assert wide == replace(narrow, p_value_adjusted=wide.p_value_adjusted)


# --- views -----------------------------------------------------------------------------------


def test_frames_and_extremes(demo_reports: tuple[EvaluationReport, EvaluationReport]) -> None:
    poor, good = demo_reports
    c = strict_compare(poor, good, resamples=1000)
    cases = c.cases_frame("recall@5")
    assert list(cases.columns) == ["unit", "case_id", "query", "poor", "good", "delta good"]
    scored = [r.case_id for r in poor.case_results if not r.score("recall@5").skipped]
    assert list(cases["case_id"]) == scored
    np.testing.assert_allclose(cases["delta good"], cases["good"] - cases["poor"])
    assert cases["query"].iloc[0] == poor.case_results[0].query
    stacked = c.cases_frame()
    assert list(stacked["metric"].unique()) == ["recall@5", "ndcg@5"] and len(stacked) == 2 * len(scored)

    best = c.most_improved("ndcg@5", n=5)
    assert len(best) == 5 and (best["delta"] > 0).all()
    assert list(best["delta"]) == sorted(best["delta"], reverse=True)
    assert best["delta"].iloc[0] == pytest.approx(c.deltas("ndcg@5").max())
    worst = c.most_regressed("ndcg@5", n=5)
    assert worst.empty or (worst["delta"] < 0).all()
    flipped = strict_compare(good, poor, resamples=1000).most_regressed("ndcg@5", n=200)
    assert len(flipped) == c.test("good", "ndcg@5").wins
    assert list(flipped["delta"]) == sorted(flipped["delta"])


def test_plain_data_for_templates(normal_report: EvaluationReport) -> None:
    c = strict_compare(normal_report, resamples=500)
    rows = c.summary_rows()
    assert len(rows) == 2 * len(c.metrics) and all(list(r) == list(SUMMARY_COLUMNS) for r in rows)
    assert all(type(r["n"]) is int and type(r["significant"]) is bool for r in rows)
    context = c.to_context()
    assert json.loads(json.dumps(context))["baseline"] == "full_text_search"
    assert [s["is_baseline"] for s in context["systems"]] == [True, False, False]
    assert context["overlap"]["aligned"]["beir_ndcg@3"] == 8
    assert context["settings"]["family_size"] == c.family_size


def test_plots() -> None:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

    a = synthetic_report(60, modes=("m",), seed=91, report_id="a")
    b = synthetic_report(60, modes=("m",), seed=92, report_id="b")
    c = quiet_compare(a, b, resamples=500)
    ax = c.plot_paired("answer_contains")  # booleans: jittered
    assert isinstance(ax, Axes) and isinstance(ax.figure, Figure)
    offsets = ax.collections[0].get_offsets()
    assert len(offsets) == c.test("b", "answer_contains").n
    assert not np.isin(np.asarray(offsets)[:, 0], [0.0, 1.0]).all()
    assert len(ax.lines) == 1  # the diagonal

    own = Figure().subplots()
    assert c.plot_deltas("beir_ndcg@5", system="b", ax=own) is own
    t = c.test("b", "beir_ndcg@5")
    assert any(line.get_xdata()[0] == pytest.approx(t.mean_diff) for line in own.lines)
    assert c.plot_deltas("answer_contains").patches  # discrete deltas drawn as bars


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
    assert any("left out for every system ('b' 3 of 20)" in m for m in messages)
    sb = c.overlap.systems[1]
    assert sb.metrics["m1"].unscored == 3 and sb.duplicates == 1 and sb.cases == 20
    assert c.overlap.aligned["m1"] == 17 and math.isfinite(c.test("b", "m1").p_value)
