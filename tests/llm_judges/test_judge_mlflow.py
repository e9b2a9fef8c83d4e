"""MLflow logs each judge's calls, tokens and cost from ``judge_totals`` (the widget's and the
report header's numbers); an unknown cost is a status tag, never 0."""

from __future__ import annotations

from typing import Any

import pytest
from llm_judges.conftest import capital_kb, capitals

import heta_nb
from heta_nb.llm_judges import JudgeModel
from heta_nb.llm_judges.standin import standin_answer
from heta_nb.llm_judges.totals import judge_totals


def model(name: str) -> JudgeModel:
    return JudgeModel(
        lambda prompt, system: {"text": standin_answer(system, prompt), "tokens_in": 50, "tokens_out": 5}, name=name
    )


@pytest.mark.slow
def test_mlflow_logs_the_judges_usage_as_judge_totals_says(tmp_path: Any) -> None:
    mlflow = pytest.importorskip("mlflow")
    previous = mlflow.get_tracking_uri()
    mlflow.set_tracking_uri(f"sqlite:///{tmp_path / 'mlflow.db'}")  # a store of its own, artifacts beside it
    try:
        experiment = mlflow.create_experiment("judges", artifact_location=(tmp_path / "artifacts").as_uri())
        mlflow.set_experiment(experiment_id=experiment)
        check_logged(mlflow)
    finally:
        mlflow.set_tracking_uri(previous)


def check_logged(mlflow: Any) -> None:
    from heta_nb.integrations import mlflow as hm

    report = heta_nb.evaluate(
        capitals(4),
        kb=capital_kb,
        evaluators=["answer_relevance", "faithfulness"],
        judge_model=model("priced"),
        judge_prices={"priced": (1.0, 1.0)},
        judge_cache=None,
        store=None,
        progress=False,
    )
    run = mlflow.MlflowClient().get_run(hm.log_report(report, html=False, table=False))
    totals = judge_totals(report)
    for name, total in totals.items():
        assert run.data.metrics[f"judge/{name}/calls"] == total.calls == 4
        assert run.data.metrics[f"judge/{name}/tokens_in"] == total.tokens_in == 200
        assert run.data.metrics[f"judge/{name}/cost"] == pytest.approx(total.cost) == pytest.approx(220e-6)
    unpriced = heta_nb.evaluate(
        capitals(2),
        kb=capital_kb,
        evaluators=["answer_relevance"],
        judge_model=model("nobody-prices-me"),
        judge_cache=None,
        store=None,
        progress=False,
    )
    run = mlflow.MlflowClient().get_run(hm.log_report(unpriced, html=False, table=False))
    assert "judge/answer_relevance/cost" not in run.data.metrics
    assert run.data.tags["heta_nb.status/judge/answer_relevance/cost"] == "cost unknown"
