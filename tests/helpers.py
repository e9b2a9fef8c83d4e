"""Shared constants and markers for the tests (imported as ``helpers``)."""

from __future__ import annotations

from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
FIXTURES = HERE / "fixtures" / "heta-0.1.2"
REPORT_FILES = sorted(FIXTURES.glob("report-*.json"))


def heta_available() -> bool:
    """Whether the [heta] extra (heta-framework) is installed."""
    try:
        import heta_framework  # noqa: F401
    except ImportError:
        return False
    return True


requires_heta = pytest.mark.skipif(not heta_available(), reason="needs the [heta] extra (heta-framework)")
