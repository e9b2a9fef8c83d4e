"""Logging into the same run again replaces (one copy of each table row, the same metric values,
one dataset input); logging something else under the same keys is refused before anything is logged."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest
from helpers import FIXTURES

import heta_nb
from heta_nb.integrations import mlflow as hm
from heta_nb.model.report import EvaluationReport

pytestmark = pytest.mark.slow


def _snapshot(tracking: Any, run_id: str) -> dict[str, Any]:
    """Everything a run holds that logging could change."""
    run = tracking.client.get_run(run_id)
    artifacts = sorted(a.path for a in tracking.client.list_artifacts(run_id, "heta_nb"))
    datasets = [(d.dataset.name, d.dataset.digest) for d in run.inputs.dataset_inputs]
    return {
        "params": run.data.params,
        "metrics": run.data.metrics,
        "tags": run.data.tags,
        "a": artifacts,
        "d": datasets,
    }


def _count(tracking: Any, table: str) -> int:
    with sqlite3.connect(tracking.database) as db:
        return int(db.execute(f"SELECT count(*) FROM {table}").fetchone()[0])  # noqa: S608 - a fixed name


def test_logging_the_same_report_twice_replaces(tracking: Any, mixed_report: EvaluationReport) -> None:
    run_id = tracking.new_run()
    datasets_before = _count(tracking, "datasets")
    assert hm.log_report(mixed_report, run_id=run_id) == run_id
    first = _snapshot(tracking, run_id)
    assert hm.log_report(mixed_report, run_id=run_id) == run_id
    second = _snapshot(tracking, run_id)
    assert second["metrics"] == first["metrics"] and second["params"] == first["params"]
    assert second["tags"] == first["tags"] and second["a"] == first["a"]
    headline = "evidence_recall_at_3/full_text_search"
    history = tracking.client.get_metric_history(run_id, headline)
    assert {m.value for m in history} == {mixed_report.metric_summaries()[0].shown} and {m.step for m in history} == {0}
    cases = tracking.mlflow.load_table("heta_nb/cases.json", run_ids=[run_id])
    assert len(cases) == mixed_report.case_count  # log_table would have appended: 2 × 30
    assert list(cases["case_id"]) == [r.case_id for r in mixed_report.case_results]
    summary = tracking.mlflow.load_table("heta_nb/summary.json", run_ids=[run_id])
    assert len(summary) == len(mixed_report.metric_summaries())
    listed = json.loads(second["tags"]["mlflow.loggedArtifacts"])  # how the UI knows they are tables
    for path in ("heta_nb/cases.json", "heta_nb/summary.json"):
        assert listed.count({"path": path, "type": "table"}) == 1
    # the benchmark is the run's one dataset input, as mlflow.evaluate logs it
    inputs = tracking.client.get_run(run_id).inputs.dataset_inputs
    assert len(inputs) == 1
    dataset = inputs[0].dataset
    expected = hm.benchmark_dataset(mixed_report)
    assert dataset.name == mixed_report.benchmark.name == "lighthouse_mini"
    assert dataset.digest == expected["digest"] and dataset.source_type == "code"
    assert json.loads(dataset.profile) == {"version": "1", "split": "test", "task_type": "multihop_qa", "cases": 10}
    assert json.loads(dataset.source)["tags"]["heta_nb.benchmark"] == mixed_report.benchmark.key
    assert {t.key: t.value for t in inputs[0].tags} == {"mlflow.data.context": "evaluation"}
    assert _count(tracking, "datasets") - datasets_before <= 1  # one entry, not one per call
    # a second run on the same benchmark cases links the same dataset entry
    other = hm.log_report(mixed_report, prefix="again")
    assert [d.dataset.digest for d in tracking.client.get_run(other).inputs.dataset_inputs] == [dataset.digest]
    with sqlite3.connect(tracking.database) as db:
        rows = db.execute("SELECT count(*) FROM datasets WHERE digest = ?", (dataset.digest,)).fetchone()[0]
    assert rows == 1


def test_a_comparison_and_a_check_logged_twice_replace_too(tracking: Any) -> None:
    report = heta_nb.load_report(FIXTURES / "report-normal.json")
    run_id = tracking.new_run()
    comparison = heta_nb.compare(report, modes=["extractive_answer", "full_text_search"], resamples=200)
    result = heta_nb.check(report, report, resamples=200)
    for _ in range(2):
        hm.log_comparison(comparison, run_id=run_id, html=False)
        hm.log_check(result, run_id=run_id)
    table = tracking.mlflow.load_table("heta_nb/comparison.json", run_ids=[run_id])
    assert len(table) == len(comparison.summary_rows())
    rows = tracking.mlflow.load_table("heta_nb/check_rows.json", run_ids=[run_id])
    assert len(rows) == len(result.rows)


def test_another_report_under_the_same_prefix_is_refused_before_anything_is_logged(
    tracking: Any, mixed_report: EvaluationReport, make_mixed: Any
) -> None:
    run_id = tracking.new_run()
    hm.log_report(mixed_report, run_id=run_id, prefix="main")
    before = _snapshot(tracking, run_id)
    other = make_mixed(report_id="another")
    with pytest.raises(ValueError, match=r"another prefix=") as caught:
        hm.log_report(other, run_id=run_id, prefix="main")
    assert "main/report_id" in str(caught.value)
    assert _snapshot(tracking, run_id) == before  # nothing half-logged

    # same params, other numbers (a case scored differently): the metric would change, refused too
    def lower(data: dict[str, Any]) -> None:
        first = next(r for r in data["case_results"] if r["query_mode"] == "sql_text_search")
        score = next(s for s in first["scores"] if s["name"] == "evidence_recall@3")
        score["value"] = 1.0 - score["value"]

    with pytest.raises(ValueError, match="evidence_recall_at_3/sql_text_search"):
        hm.log_report(make_mixed(lower), run_id=run_id, prefix="main")
    assert _snapshot(tracking, run_id) == before
    # under its own prefix it goes in beside the first
    assert hm.log_report(other, run_id=run_id, prefix="other", html=False) == run_id
    params = tracking.client.get_run(run_id).data.params
    assert params["main/report_id"] == "mixed" and params["other/report_id"] == "another"


def test_the_digest_is_the_benchmark_cases(make_mixed: Any, mixed_report: EvaluationReport) -> None:
    digest = hm.benchmark_dataset(mixed_report)["digest"]
    assert hm.benchmark_dataset(make_mixed(report_id="rerun"))["digest"] == digest  # deterministic, not the report id
    assert len(digest) <= 36  # MLflow's limit

    def one_mode(data: dict[str, Any]) -> None:
        data["case_results"] = [r for r in data["case_results"] if r["query_mode"] == "full_text_search"]
        data["query_modes"] = ["full_text_search"]

    assert hm.benchmark_dataset(make_mixed(one_mode))["digest"] == digest  # same cases, fewer modes

    def new_query(data: dict[str, Any]) -> None:
        for result in data["case_results"]:
            if result["case_id"] == data["case_results"][0]["case_id"]:
                result["query"] += " (reworded)"

    def new_split(data: dict[str, Any]) -> None:
        data["benchmark"]["split"] = "dev"

    assert hm.benchmark_dataset(make_mixed(new_query))["digest"] != digest
    assert hm.benchmark_dataset(make_mixed(new_split))["digest"] != digest


def test_a_table_is_written_whole(tracking: Any, mixed_report: EvaluationReport, tmp_path: Path) -> None:
    run_id = tracking.new_run()
    hm.log_report(mixed_report, run_id=run_id, html=False)
    data = json.loads(tracking.text(run_id, "heta_nb/cases.json", tmp_path))
    assert set(data) == {"columns", "data"}  # log_table's format (DataFrame.to_json(orient="split"))
    assert data["columns"] == list(mixed_report.cases_frame().columns) and len(data["data"]) == mixed_report.case_count
