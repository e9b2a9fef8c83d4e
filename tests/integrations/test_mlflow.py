"""heta_nb.integrations.mlflow against a real local MLflow tracking store (SQLite), read back with MlflowClient.

The ``tracking`` fixture is in ``conftest.py``; the numbers are checked in ``test_mlflow_numbers.py``,
logging twice in ``test_mlflow_relog.py``, comparisons and checks in ``test_mlflow_untested.py``.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import gate_pairs as gp
import pytest
from helpers import FIXTURES

import heta_nb
from heta_nb.errors import MissingDependencyError
from heta_nb.integrations import mlflow as hm
from heta_nb.integrations.names import tracker_key


@pytest.mark.slow
def test_log_report_reads_back(tracking, tmp_path: Path) -> None:
    mlflow, client = tracking.mlflow, tracking.client
    report = heta_nb.load_report(FIXTURES / "report-normal.json")
    run_id = hm.log_report(report)
    run = client.get_run(run_id)
    assert run.info.status == "FINISHED" and run.info.run_name == report.report_id  # a new run, ended
    params = run.data.params
    assert params["benchmark.name"] == "lighthouse_mini" and params["benchmark.split"] == "test"
    assert params["query_modes"] == ",".join(report.modes) and params["report_id"] == "fixture-normal"
    assert params["recipe.steps.0.type"] == report.recipe_steps[0]["type"]
    metrics = run.data.metrics
    by_key = {s.key: s for s in report.metric_summaries()}
    summary = by_key["full_text_search.evidence_recall@3"]
    assert metrics["evidence_recall_at_3/full_text_search"] == summary.shown  # the headline: 7 of 9 scored
    assert metrics["evidence_recall_at_3/full_text_search/n"] == summary.shown_n == 9
    assert metrics["evidence_recall_at_3/full_text_search/ci_low"] == summary.shown_ci[0]
    assert metrics["evidence_recall_at_3/full_text_search/heta_mean"] == report.score_summary[summary.key] == 0.7
    assert metrics["cases"] == report.case_count
    artifacts = {a.path for a in client.list_artifacts(run_id, "heta_nb")}
    expected = ("report.json", "report.html", "cases.json", "summary.json", "metric_names.json")
    assert artifacts == {f"heta_nb/{n}" for n in expected}
    assert heta_nb.load_report(tracking.text(run_id, "heta_nb/report.json", tmp_path)) == report
    assert "<!DOCTYPE html>" in tracking.text(run_id, "heta_nb/report.html", tmp_path)
    names = json.loads(tracking.text(run_id, "heta_nb/metric_names.json", tmp_path))
    assert names["evidence_recall_at_3/full_text_search"] == "evidence_recall@3"
    table = mlflow.load_table("heta_nb/cases.json", run_ids=[run_id])
    assert len(table) == report.case_count and list(table.columns[:4]) == ["case_id", "query_mode", "query", "status"]
    # a check logged into the same run keeps its keys apart from the report's
    assert hm.log_check(heta_nb.check(report, report), run_id=run_id) == run_id
    after = client.get_run(run_id).data.metrics
    assert after["evidence_recall_at_3/full_text_search/ci_low"] == summary.shown_ci[0]
    assert after["check/evidence_recall_at_3/full_text_search/diff"] == 0.0


@pytest.mark.slow
def test_two_reports_in_one_active_run_and_a_check_and_a_comparison(tracking, tmp_path: Path) -> None:
    mlflow, client = tracking.mlflow, tracking.client
    base = gp.base_dict(60)
    old, new = gp.as_report(base), gp.as_report(gp.degraded(base))
    with mlflow.start_run(run_name="nightly") as active:
        assert hm.log_report(old, prefix="baseline", html=False) == active.info.run_id
        assert hm.log_report(new, prefix="new", table=False) == active.info.run_id
        result = heta_nb.check(new, old)
        assert hm.log_check(result) == active.info.run_id
    run = client.get_run(active.info.run_id)
    assert run.data.params["baseline/report_id"] == "baseline" and run.data.params["new/report_id"] == "new"
    assert run.data.tags["heta_nb.check.verdict"] == "regression" and run.data.tags["heta_nb.check.ok"] == "false"
    assert run.data.metrics["check/exit_code"] == 1 and run.data.metrics["check/regressions"] == len(result.regressions)
    row = result.rows[0]
    assert run.data.metrics[f"check/{tracker_key(row.metric, row.mode)}/diff"] == pytest.approx(row.diff)
    # the check's CI and the report's CI of the same metric and mode do not overwrite each other
    summary = next(s for s in new.metric_summaries() if (s.mode, s.metric) == (row.mode, row.metric))
    assert run.data.metrics[f"new/{tracker_key(row.metric, row.mode)}/ci_low"] == summary.shown_ci[0]
    paths = {a.path for a in client.list_artifacts(run.info.run_id, "heta_nb")}
    assert {"heta_nb/check.md", "heta_nb/check.json", "heta_nb/check.xml", "heta_nb/check_rows.json"} <= paths
    assert {"heta_nb/baseline", "heta_nb/new"} <= paths
    assert json.loads(tracking.text(run.info.run_id, "heta_nb/check.json", tmp_path))["verdict"] == "regression"
    rows = mlflow.load_table("heta_nb/check_rows.json", run_ids=[run.info.run_id])
    assert len(rows) == len(result.rows) and list(rows["verdict"]) == [r.verdict for r in result.rows]

    comparison = heta_nb.compare(old, new, modes=["full_text_search"])
    given = client.create_run(run.info.experiment_id).info.run_id
    assert hm.log_comparison(comparison, run_id=given) == given
    logged = client.get_run(given).data
    top = comparison.summary_rows()[0]
    key = tracker_key("compare", top["metric"], top["system"])
    assert logged.metrics[f"{key}/diff"] == pytest.approx(top["mean_diff"])
    assert logged.metrics[f"{key}/p_adjusted"] == pytest.approx(top["p_adjusted"])
    assert logged.params["comparison.baseline"] == "baseline"
    assert "heta_nb/comparison.html" in {a.path for a in client.list_artifacts(given, "heta_nb")}


def test_keys_are_valid_for_mlflow() -> None:
    assert tracker_key("ndcg@5", "full_text_search") == "ndcg_at_5/full_text_search"
    assert tracker_key("", "a<b>|c", "") == "a_b__c"
    assert len(tracker_key("x" * 400)) == 250


def test_without_mlflow_the_error_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "mlflow", None)
    with pytest.raises(MissingDependencyError, match=r"pip install 'heta-nb\[mlflow\]'"):
        hm.log_report(FIXTURES / "report-normal.json")
