"""A real local MLflow tracking store (SQLite, artifacts in a folder) and reports that exercise every status."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from helpers import FIXTURES

import heta_nb
from heta_nb.model.report import EvaluationReport


@dataclass
class Tracking:
    mlflow: Any
    client: Any
    database: Path
    """The SQLite file of the tracking store (to count what MLflow stored)."""

    def text(self, run_id: str, path: str, folder: Path) -> str:
        """An artifact of the run, downloaded, as text."""
        return Path(self.client.download_artifacts(run_id, path, str(folder))).read_text(encoding="utf-8")

    def new_run(self) -> str:
        """A new run of the test experiment (left running: the functions log into ``run_id=``)."""
        experiment = self.mlflow.get_experiment_by_name("heta-nb tests").experiment_id
        return str(self.client.create_run(experiment).info.run_id)


@pytest.fixture(scope="module")
def tracking(tmp_path_factory: pytest.TempPathFactory):
    """MLflow pointed at a fresh SQLite store for the module; restored after."""
    mlflow = pytest.importorskip("mlflow")
    root = tmp_path_factory.mktemp("mlflow")
    patch = pytest.MonkeyPatch()
    patch.setenv("MLFLOW_DISABLE_TELEMETRY", "true")
    patch.setenv("DO_NOT_TRACK", "true")
    previous = mlflow.get_tracking_uri()
    database = root / "mlflow.db"
    mlflow.set_tracking_uri(f"sqlite:///{database}")
    experiment = mlflow.create_experiment("heta-nb tests", artifact_location=(root / "artifacts").as_uri())
    mlflow.set_experiment(experiment_id=experiment)
    yield Tracking(mlflow, mlflow.MlflowClient(), database)
    mlflow.set_tracking_uri(previous)
    patch.undo()


def _error_score(name: str) -> dict[str, Any]:
    """An evaluator that raised, as heta_nb's runner records it (``runner.case.error_score``)."""
    return {
        "name": name,
        "value": "error",
        "passed": None,
        "metadata": {"error": {"type": "RuntimeError", "message": f"{name} evaluator failed"}},
    }


def mixed_report_dict(
    edit: Callable[[dict[str, Any]], None] | None = None, *, report_id: str = "mixed"
) -> dict[str, Any]:
    """Heta 0.1.2's ``report-normal.json`` plus, in ``full_text_search``: ``judge`` (every score an
    evaluator error: "errored"), ``flaky`` (every other score an evaluator error: scored), and
    ``unjudged`` (every score skipped: "skipped"). It already has n/a answer metrics in its
    retrieval modes and skipped scores (so the headline differs from Heta's mean)."""
    data = json.loads((FIXTURES / "report-normal.json").read_bytes())
    data["report_id"] = report_id
    ok = [r for r in data["case_results"] if r["query_mode"] == "full_text_search" and not r.get("error")]
    for index, result in enumerate(ok):
        result["scores"].append(_error_score("judge"))
        flaky = {"name": "flaky", "value": 0.25 * (index % 3), "passed": None, "metadata": {}}
        result["scores"].append(_error_score("flaky") if index % 2 else flaky)
        result["scores"].append({"name": "unjudged", "value": 0.0, "passed": None, "metadata": {"skipped": True}})
    if edit is not None:
        edit(data)
    data["score_summary"] = {}
    data["score_summary"] = heta_nb.load_report(data).recomputed_score_summary()
    return data


@pytest.fixture(scope="module")
def mixed_report() -> EvaluationReport:
    return heta_nb.load_report(mixed_report_dict())


@pytest.fixture
def make_mixed() -> Callable[..., EvaluationReport]:
    """:func:`mixed_report_dict` as a report (``edit`` changes the dict first)."""

    def make(edit: Callable[[dict[str, Any]], None] | None = None, *, report_id: str = "mixed") -> EvaluationReport:
        return heta_nb.load_report(mixed_report_dict(edit, report_id=report_id))

    return make
