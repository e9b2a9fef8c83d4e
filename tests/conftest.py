"""Shared fixtures: the real Heta 0.1.2 reports and helpers to build reports."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
FIXTURES = HERE / "fixtures" / "heta-0.1.2"
REPORT_FILES = sorted(FIXTURES.glob("report-*.json"))


def heta_available() -> bool:
    try:
        import heta_framework  # noqa: F401
    except ImportError:
        return False
    return True


requires_heta = pytest.mark.skipif(not heta_available(), reason="needs the [heta] extra (heta-framework)")


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
