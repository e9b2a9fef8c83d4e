"""The case × system grid of a comparison (``explorer.grid``): one row per aligned case, a cell per
system that reads pass / fail, the score, n/a, error, missing, skipped or no score (never a 0 for
those), each system's answer for the hover, the rows where the systems disagree, and the page's
embedded grid, which decodes to the kernel's own cells. Three recipes, the modes of one real Heta
report, a sweep's comparison and six systems."""

from __future__ import annotations

import json
import math
import warnings
from typing import Any

import numpy as np
import pandas as pd
import pytest
from explorer.grid_cases import ERROR_CASE, HOSTILE, MISSING_CASE, recipe_comparison, recipe_reports

import heta_nb
from heta_nb.explorer import explore
from heta_nb.explorer.case_data import CaseDataLimits
from heta_nb.explorer.grid import ANSWER_CHARS, GridData
from heta_nb.explorer.grid_view import GridView, grid_page_data
from heta_nb.explorer.page import comparison_page_data
from heta_nb.explorer.widget import ASSETS
from heta_nb.render.env import format_number
from heta_nb.testing import synthetic_report


@pytest.fixture(scope="module")
def comparison() -> Any:
    return recipe_comparison()


@pytest.fixture(scope="module")
def reports() -> list[Any]:
    return recipe_reports()


def _every_row(view: GridView, metric: str, *, disagree: bool = False) -> list[dict[str, Any]]:
    """Every row of the grid on ``metric``, page after page, as the widget gets them."""
    view.show(metric, disagree=disagree, page=0)
    rows = []
    for page in range(view.pages):
        view.show(page=page)
        rows.extend(view.output()["rows"])
    return rows


def answer_of(cell: list[Any]) -> str | None:
    """A cell's answer: its hover when ``answered`` is 1, ``""`` when 2, None when 0."""
    return cell[2] if cell[3] == 1 else "" if cell[3] == 2 else None


def _result(report: Any, case_id: str) -> Any:
    return next((r for r in report.case_results if r.case_id == case_id), None)


def test_rows_are_the_aligned_cases_and_columns_the_systems(comparison) -> None:
    view = GridView(comparison)
    rows = _every_row(view, "beir_ndcg@5")
    assert [r["id"] for r in rows] == [f"q{i:05d}" for i in range(40)]
    out = view.output()
    assert [s[0] for s in out["systems"]] == ["recipe-a", "recipe-b", "recipe-c"]
    assert out["total"] == 40 and out["pages"] == 1 and all(len(r["c"]) == 3 for r in rows)
    assert rows[0]["q"] == comparison.cases_frame("beir_ndcg@5")["query"].iloc[0]
    assert "baseline" in out["systems"][0][1] and "compared with recipe-a" in out["systems"][1][1]


def test_error_missing_and_n_a_cells_say_so(comparison, reports) -> None:
    view = GridView(comparison)
    for metric in comparison.metrics:
        rows = {r["id"]: r for r in _every_row(view, metric)}
        error = rows[ERROR_CASE]["c"][0]
        assert error == ["error", "hx-g-error", "RuntimeError: boom", 0]
        missing = rows[MISSING_CASE]["c"][1]
        assert missing == ["missing", "hx-g-missing", "no result for this case", 0]
        for row in rows.values():  # none of these reads as a number, let alone 0
            for text, cls, _, _ in row["c"]:
                if cls in ("hx-g-error", "hx-g-missing", "hx-g-na", "hx-g-skip", "hx-g-none"):
                    assert text in ("error", "missing", "n/a", "skipped", "no score")
    rows = _every_row(view, "answer_contains")
    assert {r["c"][2][0] for r in rows} == {"n/a"}  # C only retrieves: the answer metric is n/a there
    assert "answer_contains n/a: full_text_search returns no answers" in view.output()["systems"][2][1]
    assert {r["c"][0][0] for r in rows if r["id"] != ERROR_CASE} <= {"✓ pass", "✗ fail"}
    assert view.output()["binary"] is True
    legend = dict((cls, text) for cls, text in view.output()["legend"])
    assert legend["hx-g-pass"] == "✓ pass" and legend["hx-g-na"] == "n/a" and legend["hx-g-missing"] == "missing"


def test_scores_skips_and_colours_follow_the_report(comparison, reports) -> None:
    view = GridView(comparison)
    rows = _every_row(view, "evidence_recall@5")
    skipped = 0
    for row in rows:
        for k, report in enumerate(reports):
            result = _result(report, row["id"])
            text, cls, _, _ = row["c"][k]
            if result is None or result.error is not None:
                continue
            score = result.score("evidence_recall@5")
            if score.metadata.get("skipped"):
                skipped += 1
                assert (text, cls) == ("skipped", "hx-g-skip")
            else:
                assert text == format_number(float(score.value))
                assert cls == f"hx-g-b{min(4, int(float(score.value) * 5))}"
    assert skipped > 0


def test_each_cell_hovers_its_answer(comparison, reports) -> None:
    view = GridView(comparison)
    rows = _every_row(view, "beir_ndcg@5")
    answered = 0
    for row in rows:
        for k, report in enumerate(reports):
            result = _result(report, row["id"])
            hover, answer = row["c"][k][2], answer_of(row["c"][k])
            if result is None or result.error is not None:
                continue
            if result.response.answer is None:
                assert answer is None and hover == "no answer (this mode returns results only)"
            else:
                answered += 1
                assert answer == hover == result.response.answer[:ANSWER_CHARS]
    assert answered == 40 + 39 - 1  # A (one error) and B (one missing); C returns no answers


def test_disagree_flags_and_count_match_the_scores(comparison, reports) -> None:
    view = GridView(comparison)
    for metric in comparison.metrics:
        expected = set()
        for i in range(40):
            case_id = f"q{i:05d}"
            values, errored = [], False
            for k, report in enumerate(reports):
                result = _result(report, case_id)
                if result is None or (metric == "answer_contains" and k == 2):  # missing; n/a
                    continue
                if result.error is not None:
                    errored = True
                    continue
                score = result.score(metric)
                if not score.metadata.get("skipped"):
                    values.append(float(score.value))
            if (len(values) > 1 and max(values) - min(values) > comparison.tie_tolerance) or (errored and values):
                expected.add(case_id)
        rows = _every_row(view, metric)
        assert {r["id"] for r in rows if r["d"]} == expected, metric
        assert view.output()["disagreeing"] == len(expected)
        only = _every_row(view, metric, disagree=True)
        assert [r["id"] for r in only] == [r["id"] for r in rows if r["d"]]
        out = view.output()
        assert out["matched"] == len(expected) and out["total"] == 40
        assert out["count_text"] == f"{len(expected)} of 40 cases · the systems disagree on {len(expected)} ({metric})"
    assert 0 < view.data.metric("answer_contains").disagreeing < 40


def test_the_frame_reads_back_values_statuses_answers(comparison) -> None:
    view = GridView(comparison).show("answer_contains", disagree=True)
    frame = view.frame()
    assert list(frame.columns[:3]) == ["unit", "case_id", "query"]
    assert list(frame["case_id"]) == [r["id"] for r in view.output()["rows"]]
    assert frame["disagree"].all()
    assert set(frame["recipe-c status"]) == {"n/a"} and frame["recipe-c"].isna().all()
    every = view.frame("answer_contains")
    assert len(every) == 40
    row = every.set_index("case_id").loc[ERROR_CASE]
    assert row["recipe-a status"] == "error" and math.isnan(row["recipe-a"]) and pd.isna(row["recipe-a answer"])
    assert every.set_index("case_id").loc[MISSING_CASE, "recipe-b status"] == "missing"
    assert set(every["recipe-a status"]) == {"pass", "fail", "error"}


def test_the_explorer_widget_shows_the_grid_on_request(comparison) -> None:
    explorer = explore(comparison, view="grid", metric="beir_ndcg@5")
    widget = explorer.widget
    assert widget.view == "grid" and widget.grid_metric == "beir_ndcg@5" and len(widget.grid["rows"]) == 40
    assert explorer.filters.metric == "beir_ndcg@5"  # (the pair table's filter too)
    widget.grid_disagree = True  # as the browser sets it
    assert widget.grid["matched"] == widget.grid["disagreeing"] == explorer.grid.data.metric("beir_ndcg@5").disagreeing
    widget.grid_metric = "answer_contains"
    assert widget.grid["metric"] == "answer_contains" and widget.grid["binary"] is True
    widget.grid_metric = "no such metric"
    assert "not compared" in widget.grid["error"] and widget.grid["metric"] == "answer_contains"
    widget.view = ""  # back to the pair table: the grid sends its choices only
    assert widget.grid["available"] is True and widget.grid["rows"] == []
    plain = explore(comparison)
    assert plain.widget.view == "" and plain.widget.grid["rows"] == [] and plain.widget.grid["metrics"]
    report_explorer = explore(synthetic_report(10))
    assert report_explorer.grid is None and report_explorer.widget.grid == {}
    with pytest.raises(ValueError, match="only a comparison"):
        explore(synthetic_report(10), view="grid")
    with pytest.raises(ValueError, match="view"):
        explorer.grid.show(view="table")


def test_pages_hold_fifty_rows_and_stay_small() -> None:
    comparison = recipe_comparison(130)
    view = GridView(comparison).show("beir_ndcg@5")
    assert view.pages == 3 and len(view.output()["rows"]) == 50
    view.show(page=99)
    out = view.output()
    assert out["page"] == 2 and len(out["rows"]) == 30 and out["page_text"] == "101–130 · page 3 of 3"
    assert len(json.dumps(out).encode()) < 200_000


def _decode(data: dict[str, Any], metric: str, system: int, row: int) -> list[Any]:
    """One cell of the page's grid, read as engine.js's PageGrid reads it."""
    m = next(m for m in data["metrics"] if m["name"] == metric)
    text, cls = m["cells"][system][m["codes"][system][row]]
    hover = data["texts"][data["hovers"][system][row]]
    flag = data["answered"][system][row]
    return [text, cls, hover, int(flag)]


def test_the_page_embeds_the_kernel_s_cells(comparison) -> None:
    data = grid_page_data(comparison)
    assert data is not None and data["n"] == 40 and data["size"] == 50
    view = GridView(comparison)
    for metric in comparison.metrics:
        m = next(m for m in data["metrics"] if m["name"] == metric)
        rows = _every_row(view, metric)
        assert m["count"] == view.output()["disagreeing"]
        assert m["d"] == "".join("1" if r["d"] else "0" for r in rows)
        assert m["legend"] == view.output()["legend"]
        assert m["heads"] == [s[1] for s in view.output()["systems"]]
        for row in rows:
            assert [_decode(data, metric, k, row["row"]) for k in range(3)] == row["c"]
    page = comparison_page_data(comparison, CaseDataLimits())
    assert page["grid"] == data
    assert comparison_page_data(
        heta_nb.compare(synthetic_report(5, seed=1), synthetic_report(5, seed=2)), CaseDataLimits()
    )


def test_the_modes_of_one_heta_report(normal_report_dict) -> None:
    data = normal_report_dict
    data["case_results"] = [
        r for r in data["case_results"] if not (r["case_id"] == "c04" and r["query_mode"] == "extractive_answer")
    ]
    errored = next(r for r in data["case_results"] if r["case_id"] == "c03" and r["query_mode"] == "sql_text_search")
    errored.update(
        scores=[], response=None, error={"message": "x", "error_type": "E", "retryable": False, "metadata": {}}
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        comparison = heta_nb.compare(heta_nb.load_report(data))
    view = GridView(comparison)
    rows = {r["id"]: r for r in _every_row(view, "answer_contains")}
    assert [s[0] for s in view.output()["systems"]] == ["full_text_search", "extractive_answer", "sql_text_search"]
    assert rows["c01"]["c"][0][0] == rows["c01"]["c"][2][0] == "n/a"
    assert rows["c01"]["c"][1][0] in ("✓ pass", "✗ fail", "skipped")
    assert rows["c04"]["c"][1][0] == "missing" and rows["c03"]["c"][2][0] == "error"
    assert rows["c03"]["c"][2][2] == "E: x"
    assert answer_of(rows["c01"]["c"][1]) and answer_of(rows["c01"]["c"][0]) is None


def test_a_sweep_s_comparison_and_six_systems() -> None:
    from heta_nb.sweeps import Leaderboard

    reports = [
        synthetic_report(30, seed=s, report_id=f"r{s}", knowledge_base_name=f"recipe-{s}", modes=("extractive_answer",))
        for s in range(3)
    ]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        board = Leaderboard.from_reports(reports, resamples=200)
        pair = board.comparison("synthetic", "recipe-1")
        view = GridView.of(explore(pair).source)
        assert view is not None
        assert [s[0] for s in view.show().output()["systems"]] == ["recipe-0", "recipe-1"]
        every = heta_nb.compare(*board.reports, names=["recipe-0", "recipe-1", "recipe-2"], resamples=200)
        assert len(GridView(every).show().output()["rows"][0]["c"]) == 3
        six = heta_nb.compare(synthetic_report(30, seed=1, report_id="a"), synthetic_report(30, seed=2, report_id="b"))
    assert len(six.systems) == 6
    view = GridView(six).show("answer_contains")
    out = view.output()
    assert [s[0] for s in out["systems"]] == list(six.systems) and len(out["rows"][0]["c"]) == 6


@pytest.mark.hostile
def test_hostile_names_and_answers_stay_data() -> None:
    comparison = recipe_comparison(hostile=True)
    view = GridView(comparison)
    rows = {r["id"]: r for r in _every_row(view, "beir_ndcg@5")}
    assert [s[0] for s in view.output()["systems"]] == [HOSTILE["system"], HOSTILE["proto"], HOSTILE["constructor"]]
    assert rows[HOSTILE["case"]]["c"][0][0]  # the case "toString" is a row like any other
    assert answer_of(rows["q00002"]["c"][0]) == HOSTILE["answer"] + " 0"
    assert rows[ERROR_CASE]["c"][0][2] == "RuntimeError: " + HOSTILE["answer"]
    frame = view.frame()
    assert f"{HOSTILE['proto']} answer" in frame.columns
    data = grid_page_data(comparison)
    assert data is not None and data["systems"][1] == "__proto__"


def test_a_comparison_without_reports_has_no_grid(comparison) -> None:
    class Bare:
        kind = "comparison"

        def __init__(self) -> None:
            self.comparison = type("C", (), {"reports": (), "metrics": ("m",)})()

    assert GridView.of(Bare()) is None
    with pytest.raises(ValueError, match="holds? its reports|does not hold"):
        GridData(type("C", (), {"reports": ()})())  # type: ignore[arg-type]


@pytest.mark.hostile
def test_the_grid_script_writes_text_only() -> None:
    source = (ASSETS / "grid.js").read_text()
    for forbidden in ("innerHTML", "outerHTML", "insertAdjacentHTML", "document.write", "eval(", "new Function"):
        assert forbidden not in source
    for forbidden in ("http://", "https://", "import(", "fetch("):
        assert forbidden not in source
    assert "export " not in source  # (inlined before explorer.js, in the widget and on the page)


def test_long_answers_are_cut() -> None:
    reports = recipe_reports(6)
    data = reports[0].to_dict()
    for result in data["case_results"]:
        if result["response"] is not None:
            result["response"]["answer"] = "word " * 5000
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        comparison = heta_nb.compare(heta_nb.load_report(data), reports[1], resamples=200)
    out = GridView(comparison).show().output()
    assert all(len(cell[2]) <= ANSWER_CHARS for row in out["rows"] for cell in row["c"])
    assert np.all([len(json.dumps(row)) < 4 * ANSWER_CHARS for row in out["rows"]])


@pytest.mark.parametrize("pair", [("report-multi-unit", "report-normal"), ("report-errors", "report-normal")])
def test_rows_follow_compare_s_alignment(pair) -> None:
    """Cases match as compare() matches them (by case id alone when the run units differ), in its order."""
    from helpers import FIXTURES

    reports = [heta_nb.load_report(FIXTURES / f"{name}.json") for name in pair]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        comparison = heta_nb.compare(*reports, modes=["full_text_search"], resamples=200)
    data = GridData(comparison)
    assert data.n == comparison.overlap.cases
    for metric in comparison.metrics:
        common = list(comparison.cases_frame(metric)["case_id"])
        assert [c for c in data.case_ids if c in set(common)] == common
    for k, report in enumerate(reports):
        results = [r for r in report.case_results if r.query_mode == "full_text_search"]
        assert int((data.rows[k] >= 0).sum()) == len({r.case_id for r in results})
