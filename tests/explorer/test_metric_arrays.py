"""The explorer's score arrays from a report's column table equal those of a walk over its results."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import heta_nb
from heta_nb.explorer.columns import metric_arrays, metric_arrays_of_columns
from heta_nb.testing import synthetic_report_dict

FIXTURES = sorted((Path(__file__).resolve().parents[1] / "fixtures").rglob("report-*.json"))


def _mixed() -> dict:
    data = synthetic_report_dict(40, seed=4, error_rate=0.1)
    for i, result in enumerate(data["case_results"]):
        if result["error"] is not None:
            continue
        if i % 5 == 0:  # a label, an evaluator error, a name twice in one result
            result["scores"].append({"name": "label", "value": "good", "passed": None, "metadata": {}})
            error = {"name": "judge", "value": "error", "passed": None, "metadata": {"error": {"type": "E"}}}
            result["scores"].append(error)
            result["scores"].append({**result["scores"][0], "value": 0.25})
        else:
            result["scores"].append({"name": "judge", "value": True, "passed": True, "metadata": {}})
    return data


@pytest.mark.parametrize("source", [*FIXTURES, "mixed"], ids=lambda p: getattr(p, "stem", p))
def test_the_same_arrays_either_way(source: object) -> None:
    report = heta_nb.load_report(_mixed() if source == "mixed" else source)
    metrics = report.metric_names
    walked = metric_arrays(report.raw["case_results"], metrics)
    columnar = metric_arrays_of_columns(report.columns, metrics)
    for name in metrics:
        a, b = walked[name], columnar[name]
        np.testing.assert_array_equal(a.values, b.values)
        for field in ("present", "skipped", "errors"):
            np.testing.assert_array_equal(getattr(a, field), getattr(b, field), err_msg=f"{name} {field}")
        assert (a.kind, a.text) == (b.kind, b.text), name
