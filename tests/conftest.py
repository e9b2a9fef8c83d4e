"""Shared fixtures: the real Heta 0.1.2 reports (constants live in ``helpers``)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from helpers import FIXTURES, REPORT_FILES


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
