"""``history(store, kb=...)``: a recipe's stored reports in time order, every number from the
report's own summary or from ``compare`` of the pair, real changes marked, n/a kept."""

from __future__ import annotations

import copy
import math
from pathlib import Path
from typing import Any

import gate_pairs as gp
import pytest

import heta_nb
from heta_nb import ReportStore
from heta_nb.comparison import HISTORY_COLUMNS, HetaComparisonWarning, History, compare, history
from heta_nb.model.report import EvaluationReport

RESAMPLES = 2_000
"""Fewer resamples than the default keep the tests quick; the same go to ``compare`` below."""
DROPPED = ("full_text_search", "beir_ndcg@5")
"""The mode and metric the ``drop`` report loses 0.15 on, every case."""
NO_ANSWERS = ("full_text_search", "answer_contains")
"""n/a in every report: full_text_search returns no answers and every score of it is False."""
TIMES = {
    "base": "2026-12-01T07:00:00+00:00",
    "noise": "2026-12-02T09:00:00+09:00",  # 00:00 UTC on Dec 2: before "drop", though its text sorts after
    "drop": "2026-12-02T01:00:00+00:00",
    "v2": "2026-12-03T07:00:00+00:00",
}
ORDER = ("base", "noise", "drop", "v2")
"""Time order: neither the report ids' alphabetical order nor the start times' text order."""


def without_answers(raw: dict[str, Any]) -> dict[str, Any]:
    """Every full_text_search ``answer_contains`` False: the metric is n/a in that mode."""
    for result in raw["case_results"]:
        if result["query_mode"] == NO_ANSWERS[0]:
            for score in result["scores"]:
                if score["name"] == NO_ANSWERS[1]:
                    score["value"] = score["passed"] = False
    return raw


def stamped(raw: dict[str, Any], report_id: str, started_at: str, **benchmark: str) -> EvaluationReport:
    out = copy.deepcopy(raw)
    out["report_id"] = report_id
    out["knowledge_base_name"] = "kb"
    out["started_at"] = out["finished_at"] = started_at
    out["benchmark"].update(benchmark)
    return gp.as_report(without_answers(out))


def history_reports() -> dict[str, EvaluationReport]:
    """base; noise (the same means, scores moved both ways); drop (-0.15 on one metric of
    one mode, every case); v2 (drop's scores on version 2 of the benchmark)."""
    base = gp.base_dict(200, report_id="base")
    noise = gp.jittered(base, by=0.05, report_id="noise")
    drop = gp.degraded(noise, by=0.15, report_id="drop", metrics=(DROPPED[1],), modes=(DROPPED[0],))
    named = copy.deepcopy(base)
    named["metadata"]["name"] = "chunks-120"
    return {
        "base": stamped(named, "base", TIMES["base"]),
        "noise": stamped(noise, "noise", TIMES["noise"]),
        "drop": stamped(drop, "drop", TIMES["drop"]),
        "v2": stamped(drop, "v2", TIMES["v2"], version="2"),
    }


@pytest.fixture(scope="module")
def reports() -> dict[str, EvaluationReport]:
    return history_reports()


@pytest.fixture(scope="module")
def store_path(tmp_path_factory: pytest.TempPathFactory, reports: dict[str, EvaluationReport]) -> Path:
    root = tmp_path_factory.mktemp("history-store")
    store = ReportStore(root)
    for name in ("v2", "drop", "base", "noise"):  # saved out of order
        store.save(reports[name])
    return root


@pytest.fixture(scope="module")
def lined_up(store_path: Path) -> History:
    return history(store_path, kb="kb", resamples=RESAMPLES)


def row_of(h: History, report_id: str, mode: str, metric: str) -> dict[str, Any]:
    (row,) = [r for r in h.rows() if (r["report_id"], r["mode"], r["metric"]) == (report_id, mode, metric)]
    return row


def same(a: float, b: float) -> bool:
    """Equal, NaN equal to NaN (the numbers must be the very same, not close)."""
    return (math.isnan(a) and math.isnan(b)) or a == b


# -- order and selection ---------------------------------------------------------------------


def test_reports_are_in_time_order_as_moments(lined_up: History) -> None:
    assert lined_up.reports == ORDER
    assert [r["report_id"] for r in lined_up.rows()][::6] == list(ORDER)  # 2 modes x 3 metrics each


def test_reports_that_start_together_are_ordered_by_report_id(tmp_path: Path, reports: dict[str, Any]) -> None:
    store = ReportStore(tmp_path)
    raw = reports["base"].to_dict()
    for report_id in ("zeta", "alpha", "mid"):
        store.save(gp.as_report({**raw, "report_id": report_id}))
    assert history(store, kb="kb", resamples=200).reports == ("alpha", "mid", "zeta")


def test_a_store_given_as_a_path_or_a_store_gives_the_same_history(store_path: Path, lined_up: History) -> None:
    again = history(ReportStore(store_path), kb="kb", resamples=RESAMPLES)
    assert again.reports == lined_up.reports
    assert again.frame().equals(lined_up.frame())


def test_several_benchmarks_need_a_benchmark(tmp_path: Path, reports: dict[str, EvaluationReport]) -> None:
    store = ReportStore(tmp_path)
    store.save(reports["base"])
    store.save(stamped(reports["noise"].to_dict(), "other-run", TIMES["noise"], name="other-bench"))
    with pytest.raises(ValueError, match="2 benchmarks") as caught:
        history(store, kb="kb")
    assert "'synthetic'" in str(caught.value) and "'other-bench'" in str(caught.value)
    assert history(store, kb="kb", benchmark="other-bench", resamples=200).reports == ("other-run",)
    assert history(store, kb="kb", benchmark="synthetic:1:test", resamples=200).reports == ("base",)


def test_no_report_is_an_error_naming_the_kb_and_the_store(tmp_path: Path, store_path: Path) -> None:
    with pytest.raises(ValueError, match="nobody") as caught:
        history(tmp_path / "empty", kb="nobody")
    assert str(tmp_path / "empty") in str(caught.value)
    with pytest.raises(ValueError, match="'kb' on benchmark 'missing'") as caught:
        history(store_path, kb="kb", benchmark="missing")
    assert str(store_path) in str(caught.value) and "'synthetic'" in str(caught.value)


def test_unknown_modes_and_metrics_are_refused(store_path: Path) -> None:
    with pytest.raises(ValueError, match="unknown mode 'vector_search'"):
        history(store_path, kb="kb", modes=["vector_search"])
    with pytest.raises(ValueError, match="unknown metric 'ndcg@10'"):
        history(store_path, kb="kb", metrics="ndcg@10")


# -- one truth: the report's summary, compare's change ---------------------------------------


def test_each_row_is_the_reports_own_summary(lined_up: History, reports: dict[str, EvaluationReport]) -> None:
    rows = lined_up.rows()
    expected = [(name, s) for name in ORDER for s in reports[name].metric_summaries()]
    assert len(rows) == len(expected) == 4 * 6
    for row, (name, summary) in zip(rows, expected):
        low, high = summary.shown_ci
        assert (row["report_id"], row["mode"], row["metric"]) == (name, summary.mode, summary.metric)
        assert row["started_at"] == TIMES[name]
        assert row["n"] == summary.shown_n
        assert same(row["mean"], summary.shown) and same(row["ci_low"], low) and same(row["ci_high"], high)
        assert (row["status"], row["reason"]) == (summary.status, summary.reason)


def test_each_change_is_compare_of_the_pair(lined_up: History, reports: dict[str, EvaluationReport]) -> None:
    checked = 0
    for before, after in (("base", "noise"), ("noise", "drop")):
        for expected in compare(reports[before], reports[after], resamples=RESAMPLES).summary_rows():
            row = row_of(lined_up, after, expected["mode"], expected["metric"])
            assert row["previous"] == before
            assert same(row["change"], expected["mean_diff"])
            assert same(row["change_ci_low"], expected["ci_low"]) and same(row["change_ci_high"], expected["ci_high"])
            assert same(row["p_adjusted"], expected["p_adjusted"])
            assert row["change_n"] == expected["n"]
            assert row["verdict"] == expected["verdict"]
            assert row["real"] is expected["significant"]
            checked += 1
    assert checked == 12
    assert [c is None for c in lined_up.comparisons] == [True, False, False, True]


def test_chosen_metrics_are_the_family_compare_tests(store_path: Path, reports: dict[str, EvaluationReport]) -> None:
    """One metric alone is a family of one: its p-value is compare's with metrics=[that one]."""
    alone = history(store_path, kb="kb", metrics=[DROPPED[1]], modes=DROPPED[0], resamples=RESAMPLES)
    (expected,) = compare(
        reports["noise"], reports["drop"], metrics=[DROPPED[1]], modes=[DROPPED[0]], resamples=RESAMPLES
    ).summary_rows()
    row = row_of(alone, "drop", *DROPPED)
    assert {(r["mode"], r["metric"]) for r in alone.rows()} == {DROPPED}
    assert same(row["p_adjusted"], expected["p_adjusted"]) and row["verdict"] == expected["verdict"]
    wide = row_of(history(store_path, kb="kb", resamples=RESAMPLES), "noise", "extractive_answer", "beir_ndcg@5")
    assert wide["p_adjusted"] != expected["p_adjusted"]


# -- what the changes say --------------------------------------------------------------------


def test_a_real_drop_is_marked_and_noise_is_not(lined_up: History) -> None:
    drop = row_of(lined_up, "drop", *DROPPED)
    assert drop["real"] and drop["change"] < -0.1 and drop["verdict"].startswith("worse")
    assert [(r["report_id"], r["mode"], r["metric"]) for r in lined_up.real_changes()] == [("drop", *DROPPED)]
    noise = [r for r in lined_up.rows() if r["report_id"] == "noise"]
    assert not any(r["real"] for r in noise)
    assert any(math.isfinite(r["change"]) and r["change"] != 0.0 for r in noise)  # it moved, not really
    text = repr(lined_up)
    marked = [line for line in text.splitlines() if "▼" in line or "▲" in line]
    assert len(marked) == 3  # the header's legend, the real change's line and its table row
    assert "1 real change:" in text and "▼" in [line for line in marked if line.startswith("2026-12-02 01:00")][0]


def test_not_applicable_stays_not_applicable(lined_up: History) -> None:
    for name in ORDER:
        row = row_of(lined_up, name, *NO_ANSWERS)
        assert row["status"] == "n/a" and "answers" in row["reason"]
        assert math.isnan(row["mean"]) and row["n"] == 0
    assert row_of(lined_up, "noise", *NO_ANSWERS)["verdict"].startswith("n/a")
    frame = lined_up.frame()
    na = frame[(frame["mode"] == NO_ANSWERS[0]) & (frame["metric"] == NO_ANSWERS[1])]
    assert na["mean"].isna().all() and not (na["mean"] == 0).any()
    lines = [line for line in repr(lined_up).splitlines() if NO_ANSWERS[0] in line and NO_ANSWERS[1] in line]
    assert len(lines) == 4 and all(" n/a " in line and "0.000" not in line for line in lines)


def test_another_benchmark_version_is_not_comparable(lined_up: History) -> None:
    rows = [r for r in lined_up.rows() if r["report_id"] == "v2"]
    assert {r["verdict"] for r in rows} == {"not comparable: benchmark version differs (1 → 2)"}
    assert all(math.isnan(r["change"]) and not r["real"] for r in rows)
    assert all(r["benchmark"] == "synthetic:2:test" for r in rows)


def test_the_first_report_has_no_change(lined_up: History, tmp_path: Path, reports: dict[str, Any]) -> None:
    first = [r for r in lined_up.rows() if r["report_id"] == "base"]
    assert {r["verdict"] for r in first} == {"first report"}
    assert all(math.isnan(r["change"]) and r["previous"] == "" for r in first)
    store = ReportStore(tmp_path)
    store.save(reports["drop"])
    single = history(store, kb="kb")
    assert single.reports == ("drop",) and single.comparisons == (None,)
    assert {r["verdict"] for r in single.rows()} == {"first report"}
    assert "▼" not in repr(single) and "no change before a second report" in repr(single)
    assert "(first report)" in single._repr_html_()


def test_a_mode_the_previous_report_lacks_is_not_compared(tmp_path: Path, reports: dict[str, Any]) -> None:
    store = ReportStore(tmp_path)
    raw = reports["base"].to_dict()
    raw["case_results"] = [r for r in raw["case_results"] if r["query_mode"] == "full_text_search"]
    raw["query_modes"] = ["full_text_search"]
    store.save(gp.as_report({**raw, "report_id": "one-mode"}))
    store.save(reports["noise"])
    h = history(store, kb="kb", resamples=RESAMPLES)
    added = [r for r in h.rows() if r["report_id"] == "noise" and r["mode"] == "extractive_answer"]
    assert len(added) == 3 and all(math.isfinite(r["mean"]) for r in added)
    assert {r["verdict"] for r in added} == {"not compared: the previous report has no mode 'extractive_answer'"}
    with pytest.warns(HetaComparisonWarning, match="different query modes"):
        pair = compare(h.loaded_reports[0], reports["noise"], resamples=RESAMPLES)
    for expected in pair.summary_rows():
        assert row_of(h, "noise", expected["mode"], expected["metric"])["verdict"] == expected["verdict"]
    assert [w for w in h.warnings if "different query modes" in w][0].startswith("one-mode → noise: ")


def test_the_recipe_label_is_the_reports_name_else_its_id(lined_up: History) -> None:
    labels = {r["report_id"]: r["recipe"] for r in lined_up.rows()}
    assert labels == {"base": "chunks-120", "noise": "noise", "drop": "drop", "v2": "v2"}
    assert "chunks-120" in repr(lined_up)


# -- views -----------------------------------------------------------------------------------


def test_the_frame_holds_the_rows(lined_up: History) -> None:
    frame = lined_up.frame()
    assert tuple(frame.columns) == HISTORY_COLUMNS
    assert frame["real"].dtype == bool and frame["n"].dtype == "int64"
    assert frame.to_dict("records")[5]["metric"] == lined_up.rows()[5]["metric"]
    assert int(frame["real"].sum()) == 1


def test_the_plot_draws_the_frames_numbers(lined_up: History) -> None:
    frame = lined_up.frame()
    ax = lined_up.plot(DROPPED[1])
    info = ax.heta_nb_info
    assert info["plot"] == "history" and info["reports"] == list(ORDER)
    for mode in ("full_text_search", "extractive_answer"):
        rows = frame[(frame["mode"] == mode) & (frame["metric"] == DROPPED[1])]
        series = info["series"][mode]
        assert series["report_id"] == list(rows["report_id"])
        assert series["mean"] == list(rows["mean"]) and series["n"] == list(rows["n"])
        assert series["ci_low"] == list(rows["ci_low"]) and series["ci_high"] == list(rows["ci_high"])
        assert series["real"] == list(rows["real"])
    assert info["not_comparable"] == ["v2"]
    na = lined_up.plot(NO_ANSWERS[1], mode=NO_ANSWERS[0]).heta_nb_info
    assert na["modes"] == [NO_ANSWERS[0]] and na["series"][NO_ANSWERS[0]]["mean"] == []
    assert [(m["report_id"], m["status"]) for m in na["missing"]] == [(name, "n/a") for name in ORDER]
    with pytest.raises(ValueError, match="not in the history"):
        lined_up.plot("ndcg@10")


def test_the_plot_labels_reports_by_date(lined_up: History) -> None:
    labels = lined_up.plot(DROPPED[1]).heta_nb_info["labels"]
    assert labels == ["2026-12-01 07:00 UTC", "2026-12-02 00:00 UTC", "2026-12-02 01:00 UTC", "2026-12-03 07:00 UTC"]
    ticks = [t.get_text() for t in lined_up.plot(DROPPED[1]).get_xticklabels()]
    assert ticks == labels


def test_the_html_view_shows_the_changes(lined_up: History) -> None:
    html = lined_up._repr_html_()
    assert html is not None and 'data-testid="heta-history-table"' in html
    assert html.count("heta-hist-change heta-worse") == 1 and "-0.1" in html
    assert "not comparable" in html and "n/a" in html


@pytest.mark.hostile
def test_hostile_names_are_escaped(tmp_path: Path, reports: dict[str, EvaluationReport]) -> None:
    hostile = "<img src=x onerror=alert(1)>"
    raw = reports["base"].to_dict()
    for result in raw["case_results"]:
        result["query_mode"] = "<b>mode</b>" if result["query_mode"] == "extractive_answer" else result["query_mode"]
        for score in result["scores"]:
            if score["name"] == "beir_ndcg@5":
                score["name"] = "<svg onload=alert(2)>"
    raw["query_modes"] = ["<b>mode</b>" if m == "extractive_answer" else m for m in raw["query_modes"]]
    raw["metadata"]["name"] = "<script>alert(3)</script>"
    store = ReportStore(tmp_path)
    store.save(gp.as_report({**raw, "report_id": hostile}))
    store.save(gp.as_report({**raw, "report_id": "<i>later", "started_at": TIMES["v2"]}))
    h = history(store, kb="kb", resamples=200)
    html = h._repr_html_()
    assert html is not None and 'data-testid="heta-history"' in html
    for raw_text in ("<img", "<svg", "<b>", "<script", "<i>"):
        assert raw_text not in html
    assert "&lt;img src=x onerror=alert(1)&gt;" in html and "&lt;svg onload=alert(2)&gt;" in html
    assert h.plot("<svg onload=alert(2)>").heta_nb_info["modes"] == ["full_text_search", "<b>mode</b>"]


def test_the_package_root_exports_history() -> None:
    assert heta_nb.history is history and heta_nb.History is History
    assert {"history", "History"} <= set(heta_nb.__all__)
