"""Comparison and check rows that were not tested (n/a) or have no number are logged as a tag
with their verdict, never as numbers (not even their n)."""

from __future__ import annotations

import math
from types import SimpleNamespace
from typing import Any

import pandas as pd
import pytest
from helpers import FIXTURES

import heta_nb
from heta_nb.integrations import mlflow as hm
from heta_nb.integrations.names import status_key, tracker_key

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def normal() -> Any:
    return heta_nb.load_report(FIXTURES / "report-normal.json")


def _numbers_under(metrics: dict[str, float], base: str) -> list[str]:
    return [key for key in metrics if key == base or key.startswith(f"{base}/")]


def test_comparison_rows_not_tested_are_tags(tracking: Any, normal: Any) -> None:
    comparison = heta_nb.compare(normal, modes=["extractive_answer", "full_text_search"], resamples=200)
    rows = comparison.summary_rows()
    untested = [r for r in rows if str(r["verdict"]).startswith("n/a")]
    tested = [r for r in rows if not str(r["verdict"]).startswith("n/a")]
    assert untested and tested
    run_id = hm.log_comparison(comparison, html=False)
    data = tracking.client.get_run(run_id).data
    for row in untested:
        base = tracker_key("compare", row["metric"], row["system"])
        assert _numbers_under(data.metrics, base) == [], row["metric"]  # no n, no wins, nothing
        assert data.tags[status_key(base)] == row["verdict"]
    for row in tested:
        base = tracker_key("compare", row["metric"], row["system"])
        assert data.metrics[f"{base}/diff"] == row["mean_diff"] and data.metrics[f"{base}/n"] == row["n"]
        assert status_key(base) not in data.tags


def test_check_rows_not_tested_are_tags(tracking: Any, normal: Any) -> None:
    result = heta_nb.check(normal, normal, resamples=200)
    untested = [r for r in result.rows if not math.isfinite(r.diff) or r.verdict.startswith("n/a")]
    assert untested and len(untested) < len(result.rows)
    run_id = hm.log_check(result)
    data = tracking.client.get_run(run_id).data
    for row in result.rows:
        base = tracker_key("check", row.metric, row.mode)
        if row in untested:
            assert _numbers_under(data.metrics, base) == [], (row.mode, row.metric)
            assert "n/a" in data.tags[status_key(base)] and "returns no answers" in data.tags[status_key(base)]
        else:
            assert data.metrics[f"{base}/diff"] == row.diff and data.metrics[f"{base}/n"] == row.n
            assert status_key(base) not in data.tags


def _row(metric: str, verdict: str, diff: float, n: int) -> dict[str, Any]:
    nan = math.nan
    numbers = {"mean": 0.5, "baseline_mean": 0.5 - diff if math.isfinite(diff) else nan, "mean_diff": diff}
    return {
        "system": "b",
        "metric": metric,
        "baseline": "a",
        "n": n,
        **numbers,
        "ci_low": diff - 0.1,
        "ci_high": diff + 0.1,
        "p_value": 0.5 if math.isfinite(diff) else nan,
        "p_adjusted": 0.5 if math.isfinite(diff) else nan,
        "wins": n,
        "ties": 0,
        "losses": 0,
        "significant": False,
        "verdict": verdict,
    }


def test_verdicts_it_does_not_know_are_judged_by_their_numbers(tracking: Any) -> None:
    """A verdict heta_nb may add later ("unverified drop"): numbers when there is a difference, else the tag."""
    rows = [
        _row("new_kind", "unverified drop (p=0.50)", -0.2, 7),
        _row("no_numbers", "unverified drop", math.nan, 3),
        _row("na_metric", "n/a: b returns no answers", math.nan, 4),
    ]
    fake = SimpleNamespace(
        baseline="a",
        systems=("a", "b"),
        metrics=tuple(r["metric"] for r in rows),
        resamples=10,
        confidence=0.95,
        seed=0,
        alpha=0.05,
        correction="holm",
        include_skipped=False,
        warnings=(),
        notes=(),
        summary_rows=lambda: rows,
        summary_frame=lambda: pd.DataFrame(rows),
    )
    run_id = hm.log_comparison(fake, html=False)  # type: ignore[arg-type]
    data = tracking.client.get_run(run_id).data
    assert data.metrics["compare/new_kind/b/diff"] == -0.2 and data.metrics["compare/new_kind/b/n"] == 7
    assert _numbers_under(data.metrics, "compare/no_numbers/b") == []
    assert data.tags["heta_nb.status/compare/no_numbers/b"] == "unverified drop"
    assert _numbers_under(data.metrics, "compare/na_metric/b") == []
    assert data.tags["heta_nb.status/compare/na_metric/b"] == "n/a: b returns no answers"
