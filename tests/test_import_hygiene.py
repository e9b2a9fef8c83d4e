"""The model layer stays pure, and ``import heta_nb`` stays light."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
HEAVY = ("IPython", "ipywidgets", "pandas", "matplotlib", "jinja2", "numpy", "heta_framework", "fsspec")


@pytest.mark.parametrize(
    "statement",
    [
        "import heta_nb",
        "import heta_nb.model",
        "import heta_nb.store",
        "from heta_nb import load_report, ReportStore, EvaluationReport; "
        "load_report('tests/fixtures/heta-0.1.2/report-normal.json')",
    ],
)
def test_no_heavy_imports(statement: str) -> None:
    code = f"import sys; {statement}; print(','.join(m for m in {HEAVY!r} if m in sys.modules))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT)
    assert out.stdout.strip() == "", f"{statement!r} imported {out.stdout.strip()}"


def test_views_import_pandas_only_when_called() -> None:
    code = (
        "import sys, heta_nb; r = heta_nb.load_report('tests/fixtures/heta-0.1.2/report-errors.json');"
        "r.metric_summaries(); assert 'pandas' not in sys.modules;"
        "r.cases_frame(); assert 'pandas' in sys.modules"
    )
    subprocess.run([sys.executable, "-c", code], check=True, cwd=ROOT)
