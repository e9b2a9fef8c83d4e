"""The explorer on a comparison: rows per case, deltas, quick filters and their order,
both results of a case, and another system against the baseline."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import heta_nb
from heta_nb.explorer import explore
from heta_nb.testing import synthetic_report


def _deltas(comparison, metric: str) -> dict[str, float]:
    frame = comparison.cases_frame(metric)
    return dict(zip(frame["case_id"], frame[f"delta {comparison.systems[1]}"]))


@pytest.mark.parametrize("metric", ["evidence_recall@5", "answer_contains", "beir_ndcg@5"])
def test_quick_filters_agree_with_the_comparison(comparison, metric) -> None:
    deltas = _deltas(comparison, metric)
    tolerance = comparison.tie_tolerance
    explorer = explore(comparison, quick="regressions", metric=metric)
    regressions = list(explorer.selection["case_id"])
    assert set(regressions) == {c for c, d in deltas.items() if d < -tolerance}
    assert [deltas[c] for c in regressions] == sorted(deltas[c] for c in regressions)  # worst first
    explorer.filter(quick="improvements")
    improvements = list(explorer.selection["case_id"])
    assert set(improvements) == {c for c, d in deltas.items() if d > tolerance}
    assert [deltas[c] for c in improvements] == sorted((deltas[c] for c in improvements), reverse=True)
    explorer.filter(quick="differing")
    assert set(explorer.selection["case_id"]) >= set(regressions) | set(improvements)


def test_rows_hold_every_case_of_either_system(comparison) -> None:
    explorer = explore(comparison)
    assert explorer.total == 300
    frame = explorer.selection
    base, other = comparison.systems
    assert list(frame.columns[:5]) == ["unit", "case_id", "query", f"status {base}", f"status {other}"]
    errors = frame[(frame[f"status {base}"] == "error") | (frame[f"status {other}"] == "error")]
    assert len(errors) > 0
    explorer.filter(status="error")
    assert set(explorer.selection["case_id"]) == set(errors["case_id"])
    delta = frame["delta beir_ndcg@5"]
    np.testing.assert_allclose(delta, frame[f"beir_ndcg@5 {other}"] - frame[f"beir_ndcg@5 {base}"])


def test_the_delta_cells_are_coloured_by_direction(comparison) -> None:
    explorer = explore(comparison, quick="regressions", metric="beir_ndcg@5")
    columns = [c["key"] for c in explorer.widget.columns]
    # the chosen metric's delta column names its metric: the page shows it right after the pinned ones
    assert {c["key"]: c["metric"] for c in explorer.widget.columns}["delta beir_ndcg@5"] == "beir_ndcg@5"
    assert explorer.widget.metric == "beir_ndcg@5"
    cell = explorer.page_rows()[0]["cells"][columns.index("delta beir_ndcg@5")]
    assert cell[1] == "hx-down" and " → " in cell[0] and "(-" in cell[0]
    explorer.filter(quick="improvements")
    assert explorer.page_rows()[0]["cells"][columns.index("delta beir_ndcg@5")][1] == "hx-up"


def test_the_open_case_is_both_results(comparison) -> None:
    explorer = explore(comparison, quick="regressions", metric="answer_contains")
    case = explorer.open(0)
    assert list(case) == list(comparison.systems)
    base, other = case.values()
    assert base.case_id == other.case_id == explorer.selection["case_id"].iloc[0]
    assert base.score("answer_contains").value is True and other.score("answer_contains").value is False
    opened = explorer.widget.case
    assert opened["kind"] == "comparison" and opened["id"] == base.case_id
    data = opened["data"]
    assert [side[0] for side in data["s"]] == list(comparison.systems)
    assert data["s"][0][1]["a"] == base.response.answer and data["s"][1][1]["a"] == other.response.answer
    row = next(m for m in data["m"] if m[0] == "answer_contains")
    assert row == ["answer_contains", "✓", "✗", "-1.000", "hx-down"]


def test_a_system_missing_a_case_shows_it_alone() -> None:
    a = synthetic_report(30, seed=1, report_id="a", error_rate=0.0)
    data = synthetic_report(40, seed=2, report_id="b", error_rate=0.0).raw
    b = heta_nb.EvaluationReport.from_raw({**data, "case_results": data["case_results"][30:]})  # q00010..q00039
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        comparison = heta_nb.compare(a, b, modes="full_text_search")
    explorer = explore(comparison)
    assert explorer.total == 30 + 10
    explorer.filter(status="n/a")
    assert set(explorer.selection["case_id"]) == {f"q{i:05d}" for i in (*range(10), *range(30, 40))}
    explorer.filter(status=None, quick="differing")
    assert explorer.matched >= 20
    case = explorer.open(case_id="q00035")
    assert case[comparison.baseline] is None and case[comparison.systems[1]].case_id == "q00035"
    sides = explorer.widget.case["data"]["s"]
    assert sides[0] == [comparison.baseline, None] and sides[1][1]["q"]  # the panel: "no result for this case"


def test_choosing_another_system_of_a_multi_system_comparison() -> None:
    report = synthetic_report(60, seed=4)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        comparison = heta_nb.compare(report)  # its three modes: the first is the baseline
    explorer = explore(comparison, quick="improvements", metric="beir_ndcg@5")
    assert explorer.options()["systems"] == list(comparison.systems[1:])
    first = explorer.table.other_name
    explorer.widget.system = comparison.systems[2]  # as the browser sets it
    assert explorer.table.other_name == comparison.systems[2] != first
    assert explorer.filters.quick == "improvements"  # filters survive the switch
    with pytest.raises(ValueError, match="system: 'nope' is not one of the compared systems"):
        explorer.choose_system("nope")
