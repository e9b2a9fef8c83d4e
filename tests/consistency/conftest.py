"""Fixtures of the consistency tests: real runs (see :mod:`consistency.support`)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from consistency.support import run, worse_kb

import heta_nb


@pytest.fixture(scope="module")
def truth_report() -> heta_nb.EvaluationReport:
    return run()


@pytest.fixture(scope="module")
def worse_report() -> heta_nb.EvaluationReport:
    return run(worse_kb, report_id="worse", knowledge_base_name="worse kb")


@pytest.fixture
def mlflow_run(tmp_path: Path) -> Iterator[tuple[Any, str]]:
    """``(client, run_id)``: a fresh run in a local MLflow store (sqlite, in ``tmp_path``)."""
    mlflow = pytest.importorskip("mlflow")
    previous = mlflow.get_tracking_uri()
    mlflow.set_tracking_uri(f"sqlite:///{tmp_path / 'mlflow.db'}")
    try:
        experiment = mlflow.create_experiment("consistency", artifact_location=(tmp_path / "artifacts").as_uri())
        client = mlflow.MlflowClient()
        yield client, client.create_run(experiment).info.run_id
    finally:
        mlflow.set_tracking_uri(previous)
