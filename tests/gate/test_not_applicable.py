"""The gate and n/a metrics: not tested when n/a in both reports ("n/a" instead of a p-value),
a regression when the new report stopped producing what the baseline had."""

from __future__ import annotations

import json
import math
from typing import Any

import pytest
from runner_support import exact_kb, toy_benchmark

import heta_nb


def _silent_kb(query: str, *, mode: str, top_k: int) -> dict[str, Any]:
    """Like exact_kb's 'good', but it stopped answering."""
    out = exact_kb(query, mode="good", top_k=top_k)
    return {**out, "mode": mode, "answer": None}


def _run(kb: Any, modes: list[str]) -> Any:
    return heta_nb.evaluate(toy_benchmark(20), kb=kb, query_modes=modes, store=None, progress=False, report_id="r")


def test_a_metric_n_a_in_both_reports_is_not_tested() -> None:
    base, new = _run(exact_kb, ["good", "poor"]), _run(exact_kb, ["good", "poor"])
    result = heta_nb.check(new, baseline=base)
    row = next(r for r in result.rows if (r.mode, r.metric) == ("poor", "answer_contains"))
    assert row.reason == "poor returns no answers (not tested)" and row.verdict == "n/a"
    assert math.isnan(row.p_adjusted) and math.isnan(row.diff) and not row.significant
    assert row.n == 0 and row.family == "" and row.family_size == 0  # no n beside an untested row
    tested = {r.metric for r in result.rows if r.mode == "poor" and r.verdict != "n/a"}
    assert result.settings["family_sizes"]["poor"] == len(tested)
    assert result.settings["families"]["poor"].endswith("n/a not tested")
    line = next(x for x in result.to_text().splitlines() if x.split()[:2] == ["poor", "answer_contains"])
    assert "n/a: poor returns no answers" in line and "p=" not in line
    assert json.loads(result.format("json"))  # NaN written as valid JSON
    assert result.ok and "n/a (not tested)" in result.headline


def test_a_mode_that_stopped_answering_is_a_regression() -> None:
    base, new = _run(exact_kb, ["good"]), _run(_silent_kb, ["good"])
    result = heta_nb.check(new, baseline=base)
    row = next(r for r in result.rows if r.metric == "answer_contains")
    assert row.verdict == "regression" and row.reason.startswith("n/a in the new report (good returns no answers)")
    assert row.diff == pytest.approx(-1.0)  # measured: every case lost its answer
    assert result.verdict == "regression"
