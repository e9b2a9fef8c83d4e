"""Score quantiles, per-label breakdowns, worst cases, latency quantiles."""

from __future__ import annotations

import math
from dataclasses import replace
from typing import Any

import numpy as np
import pandas as pd
import pytest
from helpers import FIXTURES

import heta_nb
import heta_nb.demo
from heta_nb.model.io import decode_report
from heta_nb.model.json import dumps_compact
from heta_nb.tables import distributions as dist
from heta_nb.testing import synthetic_report, synthetic_report_dict

scipy_stats = pytest.importorskip("scipy.stats")


@pytest.fixture(scope="module")
def synthetic() -> heta_nb.EvaluationReport:
    return synthetic_report(250, seed=7)


@pytest.fixture(scope="module")
def errors() -> heta_nb.EvaluationReport:
    return heta_nb.load_report(FIXTURES / "report-errors.json")


@pytest.fixture(scope="module")
def benchmark() -> heta_nb.Benchmark:
    return heta_nb.demo.load_benchmark()


@pytest.fixture(scope="module")
def partial_demo_report(benchmark: heta_nb.Benchmark) -> heta_nb.EvaluationReport:
    """A synthetic report over the demo's first 90 case ids (the last 5 cases absent)."""
    ids = [case.case_id for case in benchmark.cases]
    raw = synthetic_report_dict(90, modes=("full_text_search", "extractive_answer"), seed=2)
    for result in raw["case_results"]:
        result["case_id"] = ids[int(result["case_id"][1:])]
    return decode_report(dumps_compact(raw), source="<test>")


@pytest.fixture(scope="module")
def evaluated_demo(benchmark: heta_nb.Benchmark) -> heta_nb.EvaluationReport:
    """The whole demo benchmark, evaluated with a small deterministic function KB."""
    docs = [d.document_id for d in benchmark.documents]
    prefix = f"raw/benchmarks/{benchmark.manifest.name}/{benchmark.manifest.split}"

    def kb(query: str, *, mode: str, top_k: int) -> dict[str, Any]:
        h = sum(map(ord, query))
        if mode == "flaky" and h % 9 == 0:
            raise LookupError("flaky mode found nothing")
        picks = [docs[(h + step * (3 if mode == "flaky" else 1)) % len(docs)] for step in range(3)]
        results = [
            {
                "id": f"r{h}-{rank}",
                "text": query,
                "score": 1.0 / (rank + 1),
                "source": {"object_key": f"{prefix}/{d}/x"},
            }
            for rank, d in enumerate(picks[:top_k])
        ]
        return {"results": results, "answer": query if h % 2 else None}

    return heta_nb.evaluate(
        benchmark,
        kb=kb,
        query_modes=["steady", "flaky"],
        store=None,
        progress=False,
        evaluators=["evidence_recall@3", "answer_contains"],
        knowledge_base_name="t",
    )


def _frame(report: heta_nb.EvaluationReport, *, skipped: bool = False) -> pd.DataFrame:
    frame = report.scores_frame()
    frame = frame[frame.kind != "text"]
    return frame if skipped else frame[~frame.skipped]


# -- label_breakdown ----------------------------------------------------------------------
def _check_breakdown(report: heta_nb.EvaluationReport, benchmark: heta_nb.Benchmark, label: str) -> pd.DataFrame:
    """label_breakdown against pandas groupby and SciPy intervals, row by row."""
    table = dist.label_breakdown(report, benchmark, label)
    labels = benchmark.labels_frame()[["case_id", label]]
    merged = _frame(report, skipped=True).merge(labels, on="case_id")
    kinds = table.attrs["kinds"]
    for (value, mode, metric), row in table.iterrows():
        group = merged[(merged[label] == value) & (merged.query_mode == mode) & (merged.metric == metric)]
        values = group[~group.skipped]["numeric"].to_numpy()
        assert row["n"] == len(values)
        assert row["skipped"] == group.skipped.sum()
        assert row["cases"] == (labels[label] == value).sum()
        if len(values) == 0:
            assert math.isnan(row["mean"]) and math.isnan(row["ci_low"])
            continue
        assert row["mean"] == pytest.approx(values.mean())
        if kinds[metric] == "bool":
            ci = scipy_stats.binomtest(int(values.sum()), len(values)).proportion_ci(method="wilson")
            assert (row["ci_low"], row["ci_high"]) == pytest.approx((ci.low, ci.high), abs=1e-9)
        elif len(values) >= 2 and values.std() > 0:
            low, high = scipy_stats.t.interval(0.95, len(values) - 1, loc=values.mean(), scale=scipy_stats.sem(values))
            assert (row["ci_low"], row["ci_high"]) == pytest.approx((max(0.0, low), min(1.0, high)), abs=1e-9)
    return table


def wide_n(report: heta_nb.EvaluationReport, benchmark: heta_nb.Benchmark) -> pd.Series:
    """n per (difficulty, mode, metric) counting skipped scores too."""
    merged = _frame(report, skipped=True).merge(benchmark.labels_frame(), on="case_id")
    counts = merged.groupby(["difficulty", "query_mode", "metric"]).size()
    table = dist.label_breakdown(report, benchmark, "difficulty", include_skipped=True)
    return pd.Series([counts.get(key, 0) for key in table.index], index=table.index)


# -- score_quantiles ----------------------------------------------------------------------
def test_score_quantiles_match_numpy(synthetic: heta_nb.EvaluationReport) -> None:
    table = dist.score_quantiles(synthetic)
    assert table.index.names == ["mode", "metric"]
    assert list(table.columns) == [
        "kind",
        "n",
        "skipped",
        "errors",
        "mean",
        "std",
        "p0",
        "p10",
        "p25",
        "p50",
        "p75",
        "p90",
        "p100",
    ]
    assert list(table.index) == [(m, n) for m in synthetic.modes for n in synthetic.metric_names]
    every = synthetic.scores_frame()
    counts = synthetic.mode_counts()
    for (mode, metric), row in table.iterrows():
        rows = every[(every.query_mode == mode) & (every.metric == metric)]
        values = rows[~rows.skipped]["numeric"].to_numpy()
        assert row["n"] == len(values) and row["skipped"] == rows.skipped.sum()
        assert row["errors"] == counts[mode].errors
        assert row["mean"] == pytest.approx(values.mean())
        assert row["std"] == pytest.approx(values.std(ddof=1))
        expected = np.quantile(values, [0, 0.1, 0.25, 0.5, 0.75, 0.9, 1])
        assert row[["p0", "p10", "p25", "p50", "p75", "p90", "p100"]].to_numpy(float) == pytest.approx(expected)
        assert row["kind"] == ("bool" if metric == "answer_contains" else "number")
    assert table.loc[("full_text_search", "evidence_recall@5"), "skipped"] > 0


def test_score_quantiles_with_skipped_is_hetas_mean(synthetic: heta_nb.EvaluationReport) -> None:
    table = dist.score_quantiles(synthetic, include_skipped=True, quantiles=(0.025, 0.5))
    assert list(table.columns[-2:]) == ["p2.5", "p50"]
    for (mode, metric), row in table.iterrows():
        assert row["mean"] == synthetic.score_summary[f"{mode}.{metric}"]  # bit for bit


def test_score_quantiles_options(errors: heta_nb.EvaluationReport) -> None:
    table = dist.score_quantiles(errors, metrics="evidence_recall@3")
    assert list(table.index) == [("full_text_search", "evidence_recall@3")]  # failed modes have no scores
    row = table.iloc[0]
    assert (row["n"], row["skipped"], row["errors"]) == (8, 1, 1)
    with pytest.raises(ValueError, match="quantiles must lie in"):
        dist.score_quantiles(errors, quantiles=(0.5, 2))
    with pytest.raises(KeyError, match="no metric 'nope'"):
        dist.score_quantiles(errors, metrics=["nope"])


def test_label_breakdown_on_the_demo_benchmark(
    partial_demo_report: heta_nb.EvaluationReport, benchmark: heta_nb.Benchmark
) -> None:
    table = _check_breakdown(partial_demo_report, benchmark, "difficulty")
    assert table.index.names == ["difficulty", "mode", "metric"]
    assert sorted(set(table.index.get_level_values(0))) == ["easy", "hard"]
    assert len(table) == 2 * 2 * 3  # every value × mode × metric
    # the last five demo cases are not in the report: counted per label value and mode
    absent = benchmark.labels_frame().iloc[90:]
    for value, count in absent["difficulty"].value_counts().items():
        assert (table.xs(value, level=0)["cases_missing_from_report"] == count).all()
    errors = partial_demo_report.cases_frame().merge(benchmark.labels_frame(), on="case_id")
    for (value, mode), group in errors.groupby(["difficulty", "query_mode"]):
        assert (table.xs((value, mode), level=[0, 1])["errors"] == (group.status == "error").sum()).all()
    assert table.attrs["cases_not_in_benchmark"] == []


def test_label_breakdown_by_hops_and_question_type(
    partial_demo_report: heta_nb.EvaluationReport, benchmark: heta_nb.Benchmark
) -> None:
    hops = _check_breakdown(partial_demo_report, benchmark, "hops")
    assert list(dict.fromkeys(hops.index.get_level_values(0))) == [0, 1, 2, 3]  # numeric order
    types = _check_breakdown(partial_demo_report, benchmark, "question_type")
    assert set(types.index.get_level_values(0)) == {"bridge", "comparison", "factoid", "temporal", "unanswerable"}


def test_label_breakdown_of_a_full_evaluation(
    evaluated_demo: heta_nb.EvaluationReport, benchmark: heta_nb.Benchmark
) -> None:
    assert len(evaluated_demo.case_results) == 2 * len(benchmark)
    assert evaluated_demo.mode_counts()["flaky"].errors > 0
    table = _check_breakdown(evaluated_demo, benchmark, "question_type")
    assert "cases_missing_from_report" not in table.columns  # every case has a result
    flaky = table.xs("flaky", level="mode")
    assert flaky.groupby(level=0)["errors"].first().sum() == evaluated_demo.mode_counts()["flaky"].errors
    narrow = dist.label_breakdown(evaluated_demo, benchmark, "difficulty", metrics=["answer_contains"], confidence=0.8)
    wide = dist.label_breakdown(evaluated_demo, benchmark, "difficulty", metrics=["answer_contains"])
    assert ((narrow["ci_high"] - narrow["ci_low"]) <= (wide["ci_high"] - wide["ci_low"])).all()
    with_skipped = dist.label_breakdown(evaluated_demo, benchmark, "difficulty", include_skipped=True)
    assert (with_skipped["n"] == wide_n(evaluated_demo, benchmark)).all()


def test_label_breakdown_missing_and_list_labels(
    partial_demo_report: heta_nb.EvaluationReport, benchmark: heta_nb.Benchmark
) -> None:
    cases = []
    for index, case in enumerate(benchmark.cases):
        labels = dict(case.labels)
        if index % 10 == 0:
            del labels["difficulty"]
        labels["tags"] = ["a", "b"] if index % 2 else ["a"]
        cases.append(replace(case, labels=labels))
    relabelled = heta_nb.Benchmark(benchmark.manifest, benchmark.documents, cases)
    table = dist.label_breakdown(partial_demo_report, relabelled, "difficulty", metrics="answer_contains")
    assert list(dict.fromkeys(table.index.get_level_values(0))) == ["easy", "hard", dist.MISSING_LABEL]
    assert table.loc[(dist.MISSING_LABEL, "full_text_search", "answer_contains"), "cases"] == 10
    tags = dist.label_breakdown(partial_demo_report, relabelled, "tags", metrics="answer_contains")
    assert list(dict.fromkeys(tags.index.get_level_values(0))) == ['["a", "b"]', '["a"]']
    assert tags.xs("full_text_search", level="mode")["cases"].tolist() == [47, 48]


def test_label_breakdown_errors(partial_demo_report: heta_nb.EvaluationReport, benchmark: heta_nb.Benchmark) -> None:
    with pytest.raises(KeyError, match=r"no label 'colour'; labels: \['difficulty', 'hops', 'question_type'\]"):
        dist.label_breakdown(partial_demo_report, benchmark, "colour")
    with pytest.raises(ValueError, match="share no case id"):
        dist.label_breakdown(synthetic_report(5), benchmark, "hops")
    with pytest.raises(KeyError, match="no metric"):
        dist.label_breakdown(partial_demo_report, benchmark, "hops", metrics=["nope"])


# -- worst_cases --------------------------------------------------------------------------
def test_worst_cases_orders_errors_then_lowest(errors: heta_nb.EvaluationReport) -> None:
    table = dist.worst_cases(errors, "evidence_recall@3", n=None)
    assert list(table.columns[:8]) == [
        "case_id",
        "mode",
        "status",
        "error_type",
        "error",
        "evidence_recall@3",
        "query",
        "answer",
    ]
    assert [c for c in table.columns[8:]] == [m for m in errors.metric_names if m != "evidence_recall@3"]
    n_errors = errors.error_count
    head = table.iloc[:n_errors]
    assert (head.status == "error").all() and head["evidence_recall@3"].isna().all()
    order = {m: i for i, m in enumerate(errors.modes)}
    assert list(zip(head.case_id, head["mode"].map(order))) == sorted(zip(head.case_id, head["mode"].map(order)))
    assert set(head.error_type) == {"LookupError", "RuntimeError"}
    tail = table.iloc[n_errors:]
    assert (tail.status == "ok").all()
    assert list(zip(tail["evidence_recall@3"], tail.case_id)) == sorted(zip(tail["evidence_recall@3"], tail.case_id))
    assert len(tail) == 8  # 9 scored cases, one skipped left out
    assert len(dist.worst_cases(errors, "evidence_recall@3", n=None, include_skipped=True)) == n_errors + 9
    no_errors = dist.worst_cases(errors, "evidence_recall@3", include_errors=False)
    assert (no_errors.status == "ok").all()


def test_worst_cases_values_ties_and_labels(
    partial_demo_report: heta_nb.EvaluationReport, benchmark: heta_nb.Benchmark
) -> None:
    table = dist.worst_cases(
        partial_demo_report, "beir_ndcg@5", mode="extractive_answer", n=15, benchmark=benchmark, include_errors=False
    )
    assert len(table) == 15 and set(table["mode"]) == {"extractive_answer"}
    frame = partial_demo_report.cases_frame()
    expected = frame[(frame.query_mode == "extractive_answer") & (frame.status == "ok")]
    expected = expected.sort_values(["beir_ndcg@5", "case_id"]).head(15)
    assert list(table.case_id) == list(expected.case_id)
    assert table["beir_ndcg@5"].tolist() == expected["beir_ndcg@5"].tolist()
    assert table["evidence_recall@5"].tolist() == pytest.approx(expected["evidence_recall@5"].tolist(), nan_ok=True)
    labels = benchmark.labels_frame().set_index("case_id")
    for name in ("hops", "question_type", "difficulty"):
        assert table[f"label.{name}"].tolist() == [labels.loc[case_id, name] for case_id in table.case_id]
    assert {"label.hops", "label.question_type", "label.difficulty"} <= set(table.columns)


def test_worst_cases_truncates_answers_and_breaks_ties_by_case_id() -> None:
    raw = synthetic_report_dict(6, modes=("extractive_answer",), error_rate=0.0, seed=1)
    for index, result in enumerate(reversed(raw["case_results"])):
        result["response"]["answer"] = "x" * 500
        for score in result["scores"]:
            if score["name"] == "beir_ndcg@5":
                score["value"] = 0.5 if index % 2 else 0.25
    report = decode_report(dumps_compact(raw), source="<test>")
    table = dist.worst_cases(report, "beir_ndcg@5")
    assert table["beir_ndcg@5"].tolist() == [0.25, 0.25, 0.25, 0.5, 0.5, 0.5]
    for value in (0.25, 0.5):
        ids = table[table["beir_ndcg@5"] == value].case_id.tolist()
        assert ids == sorted(ids)
    assert (table.answer.str.len() == 200).all() and table.answer.str.endswith("…").all()
    bools = dist.worst_cases(report, "answer_contains", n=3)
    assert bools["answer_contains"].tolist() == sorted(bools["answer_contains"].tolist())


def test_worst_cases_bad_arguments(errors: heta_nb.EvaluationReport, synthetic: heta_nb.EvaluationReport) -> None:
    with pytest.raises(KeyError, match="no metric 'nope'"):
        dist.worst_cases(errors, "nope")
    with pytest.raises(KeyError, match="no mode 'nope'"):
        dist.worst_cases(errors, "answer_contains", mode="nope")
    text = heta_nb.load_report(
        synthetic.to_json()
        .replace('"name":"answer_contains","value":false', '"name":"answer_contains","value":"no"')
        .replace('"name":"answer_contains","value":true', '"name":"answer_contains","value":"yes"')
    )
    with pytest.raises(ValueError, match="only text values"):
        dist.worst_cases(text, "answer_contains")


# -- latency_quantiles --------------------------------------------------------------------
def test_latency_quantiles_match_numpy(synthetic: heta_nb.EvaluationReport, errors: heta_nb.EvaluationReport) -> None:
    for report in (synthetic, errors):
        table = dist.latency_quantiles(report)
        assert tuple(table.columns) == dist.LATENCY_COLUMNS and table.index.name == "mode"
        assert list(table.index) == list(report.modes)
        frame = report.cases_frame()
        for mode, row in table.iterrows():
            rows = frame[frame.query_mode == mode]
            values = rows[rows.status == "ok"]["latency_ms"].to_numpy()
            assert row["n"] == len(values) and row["errors"] == (rows.status == "error").sum()
            if len(values) == 0:
                assert row[["mean", "p50", "max"]].isna().all()
                continue
            assert row["mean"] == pytest.approx(values.mean())
            assert row[["p50", "p90", "p95", "p99"]].to_numpy(float) == pytest.approx(
                np.quantile(values, [0.5, 0.9, 0.95, 0.99])
            )
            assert row["max"] == values.max()
    with_errors = dist.latency_quantiles(errors, include_errors=True)
    assert with_errors.loc["vector_search", "n"] == 10
    assert with_errors.attrs == {"unit": "ms", "include_errors": True}
