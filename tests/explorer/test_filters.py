"""The explorer's filters, sort, paging and selection on a report, each checked against the
same question asked of the report's own pandas frames."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from heta_nb.explorer import Filters, explore


def _texts(frame: pd.DataFrame) -> pd.Series:
    parts = [frame[c].fillna("").astype(str) for c in ("case_id", "query", "answer", "error_type", "error")]
    return parts[0].str.cat(parts[1:], sep="\n").str.casefold()


def _rows(explorer) -> list[int]:
    return [int(i) for i in explorer.rows]


def test_search_needs_every_word_and_honours_quoted_phrases(report) -> None:
    frame = report.cases_frame()
    texts = _texts(frame)
    explorer = explore(report, search="LIGHTHOUSE  keeper")
    expected = texts.str.contains("lighthouse", regex=False) & texts.str.contains("keeper", regex=False)
    assert _rows(explorer) == list(np.flatnonzero(expected))
    assert 0 < explorer.matched < explorer.total
    explorer.filter(search='"keeper granite"')
    assert _rows(explorer) == list(np.flatnonzero(texts.str.contains("keeper granite", regex=False)))
    explorer.filter(search="LookupError")  # errors are searchable too
    assert set(frame.loc[explorer.rows, "error_type"]) == {"LookupError"}


_STATUS_CACHE: dict[tuple[int, str | None], pd.Series] = {}


def _reference_status(report, metric: str | None) -> pd.Series:
    key = (id(report), metric)
    if key not in _STATUS_CACHE:
        _STATUS_CACHE[key] = _compute_status(report, metric)
    return _STATUS_CACHE[key]


def _compute_status(report, metric: str | None) -> pd.Series:
    frame = report.cases_frame()
    scores = report.scores_frame()
    if metric is not None:
        scores = scores[scores["metric"] == metric]
    raw = [s for r in report.raw["case_results"] for s in r["scores"] if metric is None or s["name"] == metric]
    scores = scores.assign(evaluator_error=[s["value"] == "error" and "error" in s["metadata"] for s in raw])
    keyed = scores.groupby(["case_id", "query_mode"]).agg(
        skipped=("skipped", "any"), evaluator_error=("evaluator_error", "any"), n=("metric", "size")
    )
    joined = frame.join(keyed, on=["case_id", "query_mode"])
    status = pd.Series("ok", index=frame.index)
    status[joined["n"].isna()] = "n/a"
    status[joined["skipped"].fillna(False).astype(bool)] = "skipped"
    status[(frame["status"] == "error") | joined["evaluator_error"].fillna(False).astype(bool)] = "error"
    return status


@pytest.mark.parametrize("metric", [None, "evidence_recall@5", "answer_contains"])
@pytest.mark.parametrize("status", ["ok", "error", "skipped", "n/a"])
def test_status_of_any_score_or_of_one_metric(report, metric, status) -> None:
    reference = _reference_status(report, metric)
    explorer = explore(report, metric=metric, status=status)
    assert _rows(explorer) == list(np.flatnonzero(reference == status))
    assert explorer.status_counts[status] == explorer.matched


def test_status_counts_cover_the_matches(report) -> None:
    explorer = explore(report, mode="full_text_search")
    counts = explorer.status_counts
    assert (
        sum(counts.values())
        == explorer.matched
        == int((report.cases_frame()["query_mode"] == "full_text_search").sum())
    )
    assert counts["error"] > 0 and counts["skipped"] > 0
    assert explorer.info()["count_text"].startswith(f"{explorer.matched:,} of {explorer.total:,} match · ok ")


def test_mode_and_metric_range_are_inclusive(report) -> None:
    frame = report.cases_frame()
    explorer = explore(report, mode="sql_text_search", metric="beir_ndcg@5", low=0.25, high="0.75")
    values = frame["beir_ndcg@5"]
    expected = (frame["query_mode"] == "sql_text_search") & (values >= 0.25) & (values <= 0.75)
    assert _rows(explorer) == list(np.flatnonzero(expected))
    explorer.filter(low=None)
    assert _rows(explorer) == list(np.flatnonzero((frame["query_mode"] == "sql_text_search") & (values <= 0.75)))


@pytest.mark.parametrize("descending", [False, True])
@pytest.mark.parametrize("column", ["evidence_recall@5", "latency_ms", "query", "answer_contains"])
def test_sort_is_stable_with_missing_values_last(report, column, descending) -> None:
    frame = report.cases_frame()
    explorer = explore(report).sort(column, descending=descending)
    if column == "query":
        key = frame["query"].str.casefold().rank(method="dense")
    else:
        key = frame[column].astype("float64")
    expected = (-key if descending else key).sort_values(kind="stable", na_position="last").index
    assert _rows(explorer) == list(expected)
    explorer.sort(None)
    assert _rows(explorer) == list(range(report.case_count))


def test_pages_hold_at_most_page_size_rows(report) -> None:
    explorer = explore(report, page_size=50)
    assert explorer.pages == -(-report.case_count // 50)
    assert len(explorer.page_rows()) == 50
    explorer.go(explorer.pages - 1)
    assert len(explorer.page_rows()) == report.case_count - 50 * (explorer.pages - 1)
    assert explorer.info()["page_text"].startswith(f"{50 * (explorer.pages - 1) + 1:,}–{report.case_count:,}")
    explorer.go(10_000)
    assert explorer.page == explorer.pages - 1
    explorer.filter(status="error")  # a filter goes back to the first page
    assert explorer.page == 0


def test_selection_is_the_report_frame_in_display_order(report) -> None:
    explorer = explore(report, status="ok", mode="extractive_answer").sort("beir_ndcg@5", descending=True)
    selection = explorer.selection
    pd.testing.assert_frame_equal(selection, report.cases_frame().iloc[explorer.rows])
    assert selection["beir_ndcg@5"].is_monotonic_decreasing
    assert (selection["status"] == "ok").all()


def test_opening_cases_and_stepping_across_pages(report) -> None:
    explorer = explore(report, mode="extractive_answer")
    assert explorer.case is None
    case = explorer.open(49)
    assert case.raw is report.raw["case_results"][explorer.rows[49]]
    assert explorer.page == 0
    after = explorer.next()  # the 51st match lives on page 2
    assert after.raw is report.raw["case_results"][explorer.rows[50]] and explorer.page == 1
    assert explorer.previous().raw is case.raw and explorer.page == 0
    explorer.open(0)
    assert explorer.previous().raw is report.raw["case_results"][explorer.rows[0]]  # stays at the first
    found = explorer.open(case_id="q00007", mode="sql_text_search")
    assert (found.case_id, found.query_mode) == ("q00007", "sql_text_search")
    assert explorer.info()["case_text"].endswith("not in the current selection")
    assert explorer.next().raw is report.raw["case_results"][explorer.rows[0]]
    explorer.close()
    assert explorer.case is None
    with pytest.raises(IndexError, match="outside the"):
        explorer.open(10_000)
    with pytest.raises(KeyError, match="no case 'nope'"):
        explorer.open(case_id="nope")


def test_label_filter_reads_the_benchmark(report, labelled_benchmark) -> None:
    explorer = explore(report, benchmark=labelled_benchmark)
    choices = explorer.options()["labels"]
    assert choices[:2] == ["difficulty = easy", "difficulty = hard"]
    assert 'topic = ["sea", "light"]' in choices and "topic = (none)" in choices
    explorer.filter(label="difficulty = hard")
    hard = {c.case_id for c in labelled_benchmark.cases if c.labels["difficulty"] == "hard"}
    assert set(explorer.selection["case_id"]) == hard
    assert explorer.matched == 3 * len(hard)
    with pytest.raises(ValueError, match="label: 'colour=red' is not 'key = value' with a known key"):
        explorer.filter(label="colour=red")
    with pytest.raises(ValueError, match="pass benchmark="):
        explore(report, label="difficulty = hard")


def test_empty_state_says_which_filter_to_drop(report) -> None:
    explorer = explore(report, search="no such words", status="error", mode="full_text_search")
    assert explorer.matched == 0
    frame = report.cases_frame()
    without_search = int(((frame["status"] == "error") & (frame["query_mode"] == "full_text_search")).sum())
    advice = explorer.info()["empty"]
    assert advice.startswith("No case matches the search “no such words”, mode full_text_search, status error.")
    assert advice.endswith(f"Without the search “no such words”, {without_search:,} would match.")
    assert explorer.page_rows() == [] and explorer.info()["page_text"] == ""
    assert explorer.reset().matched == 0  # back to the filters it opened with
    explorer.reset(clear=True)
    assert explorer.matched == report.case_count and explorer.filters == Filters()


@pytest.mark.hostile
@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"status": "okk"}, "status: 'okk' is not one of ['ok', 'error', 'skipped', 'n/a']"),
        ({"mode": "vector"}, "mode: 'vector' is not one of"),
        ({"metric": "ndgc@5"}, "metric: 'ndgc@5' is not one of"),
        ({"metric": "beir_ndcg@5", "low": 0.9, "high": 0.1}, "low/high: the range is empty (0.9 > 0.1)"),
        ({"low": 0.5}, "low/high: choose the metric the range applies to"),
        ({"metric": "beir_ndcg@5", "low": "half"}, "low: 'half' is not a number"),
        ({"metric": "beir_ndcg@5", "high": float("nan")}, "high: nan is not a number"),
        ({"quick": "regressions"}, "quick: 'regressions' is not one of none"),
        ({"sort": "<script>"}, "sort: no column '<script>'"),
    ],
)
def test_bad_filters_are_refused_naming_the_field(report, changes, message) -> None:
    explorer = explore(report, search="lighthouse")
    before = (explorer.filters, _rows(explorer))
    with pytest.raises(ValueError) as info:
        explorer.filter(**changes)
    assert message in str(info.value) and "\n" not in str(info.value)
    assert (explorer.filters, _rows(explorer)) == before  # nothing changed


def test_unknown_filter_names_are_a_type_error(report) -> None:
    with pytest.raises(TypeError, match=r"unknown filter\(s\) \['colour'\]"):
        explore(report, colour="red")
    with pytest.raises(ValueError, match="page_size"):
        explore(report, page_size=0)


@pytest.mark.hostile
def test_text_ranks_order_long_texts_with_shared_prefixes_exactly() -> None:
    from heta_nb.explorer.filters import text_ranks

    prefix = "the same opening words for more than forty-eight characters, then "
    values = [prefix + "zebra", "B", None, prefix + "apple", "b", prefix + "Apple", "a" * 48, "a" * 48 + "b", ""]
    ranks = text_ranks(values)
    present = [i for i, v in enumerate(values) if v is not None]
    expected = sorted(present, key=lambda i: values[i].casefold())
    assert sorted(present, key=lambda i: ranks[i]) == expected
    assert ranks[1] == ranks[4] and ranks[3] == ranks[5]  # equal when case-folded
    assert np.isnan(ranks[2])
    words = pd.Series(["x" * 60 + w for w in ("b", "a", "c", "a")] * 3)
    assert list(text_ranks(words).argsort(kind="stable")) == list(words.rank(method="dense").argsort(kind="stable"))
