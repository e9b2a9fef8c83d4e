"""Fixtures of the consistency tests: real runs (see :mod:`consistency.support`)."""

from __future__ import annotations

import pytest
from consistency.support import run, worse_kb

import heta_nb


@pytest.fixture(scope="module")
def truth_report() -> heta_nb.EvaluationReport:
    return run()


@pytest.fixture(scope="module")
def worse_report() -> heta_nb.EvaluationReport:
    return run(worse_kb, report_id="worse", knowledge_base_name="worse kb")
