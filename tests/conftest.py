"""Shared fixtures: the real Heta 0.1.2 reports (constants live in ``helpers``)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from helpers import FIXTURES, REPORT_FILES


def pytest_configure(config: pytest.Config) -> None:
    """Text in pandas frames is stored in Python, as without pyarrow.

    With pyarrow installed (the [mlflow] and [parquet] extras bring it) pandas 3 stores ``str``
    columns in Arrow, which cannot hold a lone surrogate: frames of the hostile reports fail
    (a known limitation of heta_nb's frames with pyarrow, to be fixed where they are built).
    """
    try:
        import pandas as pd
    except ImportError:  # pragma: no cover - pandas is a core dependency
        return
    pd.set_option("mode.string_storage", "python")


@pytest.fixture(params=REPORT_FILES, ids=lambda p: p.stem)
def fixture_path(request: pytest.FixtureRequest) -> Path:
    """Each report.json heta-framework 0.1.2 wrote."""
    return request.param


@pytest.fixture
def normal_report_dict() -> dict:
    return json.loads((FIXTURES / "report-normal.json").read_bytes())


@pytest.fixture
def errors_report_dict() -> dict:
    return json.loads((FIXTURES / "report-errors.json").read_bytes())
