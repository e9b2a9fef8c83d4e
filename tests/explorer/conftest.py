"""Fixtures of the explorer tests: small synthetic reports, a comparison of two, and a
benchmark whose case labels match the synthetic case ids."""

from __future__ import annotations

import warnings

import pytest

from heta_nb.benchmark import Benchmark, BenchmarkCase
from heta_nb.testing import synthetic_report


@pytest.fixture(scope="package")
def report():
    """300 cases × 3 modes: errors, skipped scores, bool and number metrics, answers in one mode."""
    return synthetic_report(300, seed=3)


@pytest.fixture(scope="package")
def labelled_benchmark(report):
    """A benchmark over the report's cases: ``difficulty`` hard on every third case, ``topic`` on some."""
    cases = []
    for i, case_id in enumerate(dict.fromkeys(r.case_id for r in report.case_results)):
        labels = {"difficulty": "hard" if i % 3 == 0 else "easy"}
        if i % 5 == 0:
            labels["topic"] = ["sea", "light"]
        cases.append(BenchmarkCase(case_id=case_id, query=f"q {i}", labels=labels))
    return Benchmark({"name": "synthetic", "version": "1", "split": "test", "task_type": "qa"}, (), cases)


@pytest.fixture(scope="package")
def comparison():
    """Two synthetic recipes compared on one mode (300 cases each)."""
    import heta_nb

    a = synthetic_report(300, seed=1, report_id="recipe-a", error_rate=0.05)
    b = synthetic_report(300, seed=2, report_id="recipe-b", error_rate=0.05)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return heta_nb.compare(a, b, modes="extractive_answer")
