"""Parquet files of many reports read by DuckDB and polars: every row says which report it is of,
and what they compute per report equals each report's own summary (``summary_frame``)."""

from __future__ import annotations

import json
import math
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
from helpers import FIXTURES

import heta_nb
from heta_nb.testing import synthetic_report_dict

pytest.importorskip("pyarrow")

IDENTITY = ["report_id", "knowledge_base_name", "benchmark"]


def _with_unusable_metrics() -> heta_nb.EvaluationReport:
    """Heta's normal fixture (n/a answer metrics in the search modes), one metric of one mode all evaluator errors."""
    raw = json.loads((FIXTURES / "report-normal.json").read_bytes())
    raw["report_id"] = "normal-with-evaluator-errors"
    for result in raw["case_results"]:
        if result["query_mode"] != "sql_text_search":
            continue
        for score in result["scores"]:
            if score["name"] == "beir_mrr@3":
                score.update(value="error", passed=None, metadata={"error": {"type": "ZeroDivision", "message": "x"}})
    return heta_nb.load_report(raw)


def _synthetic() -> heta_nb.EvaluationReport:
    """Errored cases, skipped scores and a few evaluator errors among numbers."""
    raw = synthetic_report_dict(40, error_rate=0.1, seed=11, report_id="synthetic-glob", knowledge_base_name="kb two")
    scored = [r for r in raw["case_results"] if r["scores"]]
    for result in scored[:5]:
        result["scores"][2].update(value="error", passed=None, metadata={"error": {"type": "KeyError", "message": "x"}})
    return heta_nb.load_report(raw)


@pytest.fixture(scope="module")
def reports() -> list[heta_nb.EvaluationReport]:
    loaded = [
        _with_unusable_metrics(),
        heta_nb.load_report(FIXTURES / "report-errors.json"),
        heta_nb.load_report(FIXTURES / "report-multi-unit.json"),
        _synthetic(),
    ]
    assert len({r.report_id for r in loaded}) == len(loaded)
    return loaded


@pytest.fixture(scope="module")
def folder(reports: list[heta_nb.EvaluationReport], tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("reports")
    for index, report in enumerate(reports):
        report.to_parquet(root / f"run-{index}")
    return root


def _rows(frame: pd.DataFrame) -> list[tuple[Any, ...]]:
    """The rows as tuples, NaN and pandas' missing values as None (how Parquet stores "no number")."""

    def plain(value: Any) -> Any:
        if value is None or value is pd.NA or (isinstance(value, float) and math.isnan(value)):
            return None
        return value.item() if hasattr(value, "item") else value

    return [tuple(plain(v) for v in row) for row in frame.itertuples(index=False, name=None)]


def _scored_figures_by_report(reports: list[heta_nb.EvaluationReport]) -> dict[tuple[str, str, str], dict[str, Any]]:
    """``{(report_id, mode, metric): summary row}`` of each report's own ``summary_frame``."""
    found = {}
    for report in reports:
        for row in report.summary_frame().to_dict("records"):
            found[(report.report_id, row["query_mode"], row["metric"])] = row
    return found


# -- DuckDB -----------------------------------------------------------------------------------

PER_METRIC = """
    SELECT report_id, query_mode, metric,
           avg(numeric) FILTER (WHERE kind <> 'text' AND NOT skipped) AS mean_scored,
           count(*) FILTER (WHERE kind <> 'text' AND NOT skipped) AS n_scored,
           avg(numeric) FILTER (WHERE kind <> 'text') AS heta_mean,
           count(*) FILTER (WHERE kind <> 'text') AS heta_n,
           count(*) FILTER (WHERE skipped) AS skipped
    FROM read_parquet($glob)
    GROUP BY report_id, query_mode, metric
"""


def test_duckdb_groups_a_glob_of_reports_by_report_id_and_matches_each_summary(
    reports: list[heta_nb.EvaluationReport], folder: Path
) -> None:
    duckdb = pytest.importorskip("duckdb")
    expected = _scored_figures_by_report(reports)
    got = duckdb.execute(PER_METRIC, {"glob": str(folder / "*" / "scores.parquet")}).df()
    assert set(got["report_id"]) == {r.report_id for r in reports}
    by_key = {(r.report_id, r.query_mode, r.metric): r for r in got.itertuples()}
    assert set(by_key) == set(expected)
    checked = 0
    for key, summary in expected.items():
        row = by_key[key]
        assert row.heta_n == summary["heta_n"], key
        assert row.skipped == summary["skipped"], key
        if summary["heta_n"]:
            assert row.heta_mean == pytest.approx(summary["heta_mean"], rel=1e-12, abs=1e-15), key
        if summary["status"] == "scored":  # the headline: the mean of the scored values, over n
            assert row.n_scored == summary["n"], key
            assert row.mean_scored == pytest.approx(summary["mean"], rel=1e-12, abs=1e-15), key
            checked += 1
        else:  # no number: the summary says why, the raw scores cannot
            assert summary["n"] == 0 and math.isnan(summary["mean"]), key
    assert checked >= 20

    # without report_id in GROUP BY the reports of one benchmark would be averaged together
    mixed = duckdb.execute(
        "SELECT count(DISTINCT report_id) FROM read_parquet($glob) WHERE benchmark = 'lighthouse_mini:1:test'",
        {"glob": str(folder / "*" / "scores.parquet")},
    ).fetchone()
    assert mixed == (3,)


def test_duckdb_counts_cases_and_errors_per_report_and_mode(
    reports: list[heta_nb.EvaluationReport], folder: Path
) -> None:
    duckdb = pytest.importorskip("duckdb")
    got = duckdb.execute(
        """
        SELECT report_id, query_mode, count(*) AS cases, count(*) FILTER (WHERE status = 'error') AS errors,
               any_value(knowledge_base_name) AS kb, any_value(benchmark) AS benchmark
        FROM read_parquet($glob, union_by_name = true)
        GROUP BY report_id, query_mode
        """,
        {"glob": str(folder / "*" / "cases.parquet")},
    ).df()
    by_key = {(r.report_id, r.query_mode): r for r in got.itertuples()}
    assert sum(got["cases"]) == sum(len(r.cases_frame()) for r in reports)
    for report in reports:
        summary = report.summary_frame()
        assert len(summary) > 0
        for row in summary.to_dict("records"):
            found = by_key[(report.report_id, row["query_mode"])]
            assert (found.cases, found.errors) == (row["cases"], row["errors"])
            assert (found.kb, found.benchmark) == (report.knowledge_base_name, report.benchmark.key)
    assert any(row.errors for row in got.itertuples())  # errored cases are among them


def test_duckdb_reads_the_summary_table_as_summary_frame_row_for_row(
    reports: list[heta_nb.EvaluationReport], folder: Path
) -> None:
    duckdb = pytest.importorskip("duckdb")
    glob = str(folder / "*" / "summary.parquet")
    table = duckdb.execute(
        "SELECT * EXCLUDE (file_row_number) FROM read_parquet($glob, file_row_number = true) "
        "ORDER BY report_id, file_row_number",
        {"glob": glob},
    ).df()
    assert list(table.columns) == IDENTITY + list(reports[0].summary_frame().columns)
    for report in reports:
        mine = table[table["report_id"] == report.report_id]
        assert set(mine["knowledge_base_name"]) == {report.knowledge_base_name}
        assert set(mine["benchmark"]) == {report.benchmark.key}
        assert _rows(mine.drop(columns=IDENTITY)) == _rows(report.summary_frame())
    # "no number" is SQL null, never NaN (avg() and count() leave null out; NaN would poison a sum)
    nan = duckdb.execute(
        "SELECT count(*) FILTER (WHERE isnan(mean)), count(*) FILTER (WHERE mean IS NULL), "
        "count(*) FILTER (WHERE status <> 'scored') FROM read_parquet($glob)",
        {"glob": glob},
    ).fetchone()
    assert nan is not None and nan[0] == 0 and nan[1] == nan[2] > 0


def test_unusable_metrics_have_a_null_mean_a_status_and_a_reason(folder: Path) -> None:
    duckdb = pytest.importorskip("duckdb")
    rows = duckdb.execute(
        """
        SELECT query_mode, metric, status, mean, n, ci_low, ci_high, reason, evaluator_errors
        FROM read_parquet($glob)
        WHERE report_id = 'normal-with-evaluator-errors' AND status <> 'scored'
        ORDER BY query_mode, metric
        """,
        {"glob": str(folder / "*" / "summary.parquet")},
    ).fetchall()
    search, sql = "full_text_search", "sql_text_search"
    no_number = (None, 0, None, None)  # mean, n, ci_low, ci_high
    assert rows == [
        (search, "answer_contains", "n/a", *no_number, f"{search} returns no answers", 0),
        (search, "answer_exact_match", "n/a", *no_number, f"{search} returns no answers", 0),
        (sql, "answer_contains", "n/a", *no_number, f"{sql} returns no answers", 0),
        (sql, "answer_exact_match", "n/a", *no_number, f"{sql} returns no answers", 0),
        (sql, "beir_mrr@3", "errored", *no_number, "every score is an evaluator error (10)", 10),
    ]


# -- polars -------------------------------------------------------------------------------


def test_polars_reads_the_same_files(reports: list[heta_nb.EvaluationReport], folder: Path) -> None:
    pl = pytest.importorskip("polars")
    summary = pl.read_parquet(folder / "*" / "summary.parquet")
    assert summary.columns == IDENTITY + list(reports[0].summary_frame().columns)
    scores = pl.read_parquet(folder / "*" / "scores.parquet").with_columns(pl.col("report_id", "kind").cast(pl.String))
    per_metric = (
        scores.filter((pl.col("kind") != "text") & ~pl.col("skipped"))
        .group_by("report_id", "query_mode", "metric")
        .agg(pl.col("numeric").mean().alias("mean"), pl.len().alias("n"))
    )
    means = {(r["report_id"], r["query_mode"], r["metric"]): r for r in per_metric.to_dicts()}
    for report in reports:
        mine = summary.filter(pl.col("report_id").cast(pl.String) == report.report_id).drop(IDENTITY)
        frame = report.summary_frame()
        assert [tuple(row) for row in mine.rows()] == _rows(frame)
        for row in frame[frame["status"] == "scored"].to_dict("records"):
            got = means[(report.report_id, row["query_mode"], row["metric"])]
            assert got["n"] == row["n"] and got["mean"] == pytest.approx(row["mean"], rel=1e-12, abs=1e-15)
    cases = pl.concat(
        [pl.read_parquet(path) for path in sorted(folder.glob("*/cases.parquet"))], how="diagonal_relaxed"
    )
    counts = dict(cases.group_by(pl.col("report_id").cast(pl.String)).len().iter_rows())
    assert counts == {r.report_id: len(r.cases_frame()) for r in reports}


# -- fsspec URLs --------------------------------------------------------------------------


@pytest.fixture
def memory_root() -> Iterator[str]:
    fsspec = pytest.importorskip("fsspec")
    name = f"heta-parquet-{uuid.uuid4().hex[:8]}"
    yield f"memory://{name}"
    fs = fsspec.filesystem("memory")
    if fs.exists(f"/{name}"):
        fs.rm(f"/{name}", recursive=True)


def test_memory_urls_round_trip_like_local_paths(memory_root: str, tmp_path: Path) -> None:
    report = _with_unusable_metrics()
    written = report.to_parquet(f"{memory_root}/out")
    assert written == [f"{memory_root}/out/{name}.parquet" for name in ("cases", "scores", "summary")]
    report.to_parquet(tmp_path / "out")
    remote, disk = heta_nb.read_parquet(f"{memory_root}/out"), heta_nb.read_parquet(tmp_path / "out")
    assert set(remote) == {"cases", "scores", "summary"}
    for name in remote:
        assert remote[name].attrs == disk[name].attrs
        pd.testing.assert_frame_equal(remote[name], disk[name], check_exact=True)
    pd.testing.assert_frame_equal(
        heta_nb.read_parquet(f"{memory_root}/out", table="summary").drop(columns=IDENTITY), report.summary_frame()
    )
    # the same overwrite rules: nothing replaced without overwrite=True, and nothing half written
    with pytest.raises(FileExistsError, match=r"memory://.*/out/cases\.parquet: already exists; pass overwrite=True"):
        report.to_parquet(f"{memory_root}/out")
    assert len(report.to_parquet(f"{memory_root}/out", overwrite=True)) == 3
    assert report.to_parquet(f"{memory_root}/one/summary.parquet", table="summary") == [
        f"{memory_root}/one/summary.parquet"
    ]
    with pytest.raises(FileExistsError, match="summary.parquet: already exists"):
        report.to_parquet(f"{memory_root}/one/summary.parquet", table="summary")
    report.to_parquet(f"{memory_root}/partial/summary.parquet", table="summary")
    with pytest.raises(FileExistsError, match="partial/summary.parquet: already exists"):
        report.to_parquet(f"{memory_root}/partial")
    with pytest.raises(FileNotFoundError, match=r"partial: no cases\.parquet in this folder"):
        heta_nb.read_parquet(f"{memory_root}/partial", table="cases")  # not written by the refused call
    one = heta_nb.read_parquet(f"{memory_root}/one/summary.parquet")
    assert one.attrs["heta_nb"]["table"] == "summary" and one.attrs["confidence"] == 0.95
    with pytest.raises(FileNotFoundError, match="no such file or folder"):
        heta_nb.read_parquet(f"{memory_root}/nothing")


def test_file_urls_are_local_files_written_atomically(tmp_path: Path) -> None:
    report = heta_nb.load_report(FIXTURES / "report-errors.json")
    written = report.to_parquet(f"file://{tmp_path}/out")
    assert written == [tmp_path / "out" / f"{name}.parquet" for name in ("cases", "scores", "summary")]
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == [p.name for p in written]
    back = heta_nb.read_parquet(f"file://{tmp_path}/out", table="scores")
    pd.testing.assert_frame_equal(back.drop(columns=IDENTITY), report.scores_frame(), check_exact=True)


@pytest.mark.parametrize("where", ["memory", "local"])
def test_a_file_created_after_the_check_is_not_replaced(
    where: str, memory_root: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Another writer creates the file between the check and the write: without overwrite=True it stays."""
    report = heta_nb.load_report(FIXTURES / "report-errors.json")
    other = heta_nb.load_report(FIXTURES / "report-multi-unit.json")
    target = f"{memory_root}/race.parquet" if where == "memory" else str(tmp_path / "race.parquet")
    other.to_parquet(target, table="summary")
    monkeypatch.setattr("heta_nb.tables.arrow._Place.exists", lambda self: False)  # the check saw nothing
    with pytest.raises(FileExistsError, match="race.parquet: already exists"):
        report.to_parquet(target, table="summary")
    monkeypatch.undo()
    assert heta_nb.read_parquet(target).attrs["heta_nb"]["report_id"] == other.report_id
