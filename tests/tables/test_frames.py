"""cases_frame, scores_frame and summary_frame."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
from helpers import FIXTURES
from runner_support import exact_kb, toy_benchmark

import heta_nb
from heta_nb.tables import CASE_COLUMNS, SUMMARY_COLUMNS, cases_frame, scores_frame, summary_frame
from heta_nb.testing import synthetic_report

EVIL = "<script>alert('x')</script> & \"q\" \ud800"


def _raises(query: str, *, mode: str, top_k: int) -> Any:
    raise ValueError(f"bad {EVIL}")


# -- pandas tables ----------------------------------------------------------------------


def test_empty_and_all_error_frames_have_the_dtypes_of_full_ones() -> None:
    full = heta_nb.evaluate(toy_benchmark(4), kb=exact_kb, query_modes=["good"], store=None, progress=False)
    empty = heta_nb.evaluate(toy_benchmark(0), kb=exact_kb, query_modes=["good"], store=None, progress=False)
    failed = heta_nb.evaluate(toy_benchmark(2), kb=_raises, query_modes=["good"], store=None, progress=False, retries=0)
    for function in (cases_frame, scores_frame, summary_frame):
        expected = function(full).dtypes
        for report in (empty, failed):
            got = function(report).dtypes
            common = [name for name in got.index if name in expected.index]
            # by name: a text column holding a lone surrogate (EVIL) is Python-stored where pyarrow
            # would store it in Arrow; both are pandas' ``str``
            assert {n: str(t) for n, t in got[common].items()} == {n: str(t) for n, t in expected[common].items()}, (
                function.__name__
            )
    text = pd.Series(["x"]).dtype
    assert cases_frame(full)["error_type"].dtype == text  # all missing, still text
    assert summary_frame(empty)["mean"].dtype == "float64"


def test_an_evaluator_that_raised_leaves_its_cases_column_numeric() -> None:
    def flaky(case: Any, response: Any) -> float:
        if case.case_id.endswith(("0", "3")):
            raise RuntimeError("boom")
        return 0.5

    def flag(case: Any, response: Any) -> bool:
        if case.case_id.endswith("1"):
            raise RuntimeError("boom")
        return case.case_id.endswith("2")

    report = heta_nb.evaluate(
        toy_benchmark(6), kb=exact_kb, query_modes=["good"], store=None, progress=False, evaluators=[flaky, flag]
    )
    frame = cases_frame(report)
    assert frame["flaky"].dtype == "float64" and frame["flaky"].mean() == 0.5
    assert frame["flaky"].isna().sum() == 2
    assert frame["flag"].dtype == "boolean" and frame["flag"].isna().sum() == 1
    scores = scores_frame(report)  # the raw "error" value is still there, in the tidy frame
    assert (scores["value"] == "error").sum() == 3


def test_frames_do_not_share_state_with_the_report() -> None:
    report = heta_nb.evaluate(toy_benchmark(3), kb=exact_kb, query_modes=["good"], store=None, progress=False)
    before = report.to_json()
    for function in (cases_frame, scores_frame, summary_frame):
        frame = function(report)
        for column in frame.columns:
            frame[column] = None
    assert report.to_json() == before


def test_cases_frame_shape_and_types(fixture_path: Path) -> None:
    report = heta_nb.load_report(fixture_path)
    frame = report.cases_frame()
    assert len(frame) == len(report.case_results)
    assert tuple(frame.columns[: len(CASE_COLUMNS)]) == CASE_COLUMNS
    assert tuple(frame.columns[len(CASE_COLUMNS) :]) == report.metric_names
    assert frame["latency_ms"].dtype == "float64"
    assert set(frame["status"]) <= {"ok", "error"}
    assert (frame["status"] == "error").sum() == report.error_count
    for row, result in zip(frame.itertuples(index=False), report.case_results):
        assert row.case_id == result.case_id and row.query_mode == result.query_mode
        assert row.n_results == (len(result.response.results) if result.response else 0)


def test_cases_frame_values_for_errors_fixture() -> None:
    report = heta_nb.load_report(FIXTURES / "report-errors.json")
    frame = report.cases_frame().set_index(["case_id", "query_mode"])
    row = frame.loc[("c01", "no_such_mode")]
    assert row["status"] == "error" and row["error_type"] == "LookupError"
    assert row["error"] == "query engine is not registered: no_such_mode"
    assert pd.isna(row["evidence_recall@3"])
    assert frame["answer_contains"].dtype == "boolean"
    assert frame.loc[("c01", "full_text_search"), "evidence_recall@3"] == 1.0
    assert frame.loc[("c05", "full_text_search"), "error_type"] == "RuntimeError"


def test_scores_frame_is_tidy_and_handles_all_kinds() -> None:
    report = heta_nb.load_report(FIXTURES / "report-normal.json")
    frame = report.scores_frame()
    assert list(frame.columns) == [
        "case_id",
        "query_mode",
        "metric",
        "value",
        "numeric",
        "kind",
        "passed",
        "skipped",
    ]
    assert len(frame) == sum(len(r.scores) for r in report.case_results)
    contains = frame[frame.metric == "answer_contains"]
    assert set(contains["kind"]) == {"bool"} and set(contains["numeric"]) <= {0.0, 1.0}
    assert frame["skipped"].sum() == sum(c.skipped_scores for c in report.mode_counts().values())
    text_report = heta_nb.load_report(
        report.to_json().replace(
            '"name":"answer_exact_match","value":false', '"name":"answer_exact_match","value":"n/a"'
        )
    )
    tf = text_report.scores_frame()
    texts = tf[tf.kind == "text"]
    assert len(texts) > 0 and texts["numeric"].isna().all() and (texts["value"] == "n/a").all()


def test_summary_frame_matches_heta_summary(fixture_path: Path) -> None:
    report = heta_nb.load_report(fixture_path)
    frame = report.summary_frame()
    assert tuple(frame.columns) == SUMMARY_COLUMNS
    keys = {f"{m}.{n}" for m, n in zip(frame.query_mode, frame.metric)}
    assert keys == set(report.score_summary)
    summaries = {(s.mode, s.metric): s for s in report.metric_summaries()}
    for row in frame.itertuples(index=False):
        stored = report.score_summary[f"{row.query_mode}.{row.metric}"]
        assert row.heta_summary == stored
        assert row.heta_mean == stored  # Heta's number, bit for bit, under a name that says so
        s = summaries[(row.query_mode, row.metric)]
        assert row.status == s.status and row.reason == s.reason
        if row.status != "scored":  # n/a: NaN, n 0, why in words; Heta's number kept
            assert math.isnan(row.mean) and math.isnan(row.ci_low) and row.n == 0 and row.reason
            continue
        assert row.mean == s.shown and row.n == s.n_scored  # the headline: the mean of the scored values
        assert (row.ci_low, row.ci_high) == s.shown_ci
        assert row.n + row.skipped + row.errors <= row.cases
        if row.n >= 2 and row.std > 0:
            assert row.ci_low <= row.mean <= row.ci_high


def test_summary_frame_notes_where_heta_hides_things() -> None:
    frame = heta_nb.load_report(FIXTURES / "report-errors.json").summary_frame().set_index(["query_mode", "metric"])
    row = frame.loc[("full_text_search", "evidence_recall@3")]
    assert (row["n"], row["heta_n"], row["cases"], row["errors"], row["skipped"]) == (8, 9, 10, 1, 1)
    assert row["note"] == (
        "1 errored case not counted; 1 skipped score (no gold data) left out of the mean; "
        "Heta's score_summary averages them in as 0"
    )
    assert row["mean"] == pytest.approx(7 / 8)  # the headline: skipped left out
    assert row["heta_mean"] == pytest.approx(7 / 9)  # Heta's: skipped averaged in as 0
    # Heta's summary has no key at all for modes that always failed; neither do we
    assert "vector_search" not in set(frame.index.get_level_values(0))


def test_summary_confidence_intervals_match_scipy() -> None:
    scipy_stats = pytest.importorskip("scipy.stats")
    report = synthetic_report(300, seed=3)
    frame = report.summary_frame()
    scores = report.scores_frame()
    for row in frame.itertuples(index=False):
        chosen = (scores.query_mode == row.query_mode) & (scores.metric == row.metric) & ~scores.skipped
        values = scores[chosen]["numeric"].dropna().to_numpy()  # the scored values: the headline's
        assert row.n == len(values) and row.mean == pytest.approx(values.mean(), abs=1e-12)
        if row.kind == "number":
            low, high = scipy_stats.t.interval(0.95, len(values) - 1, loc=values.mean(), scale=scipy_stats.sem(values))
            assert row.ci_low == pytest.approx(max(0.0, low), abs=1e-9)
            assert row.ci_high == pytest.approx(min(1.0, high), abs=1e-9)
        else:
            k, n = int(values.sum()), len(values)
            z = scipy_stats.norm.ppf(0.975)
            p = k / n
            centre = (p + z * z / (2 * n)) / (1 + z * z / n)
            half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
            assert row.ci_low == pytest.approx(centre - half, abs=1e-9)
            assert row.ci_high == pytest.approx(centre + half, abs=1e-9)
