"""Arrow tables and Parquet files of a report: typed and identity columns, a file or a folder, a lossless round trip."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pandas as pd
import pytest
from helpers import FIXTURES

import heta_nb
from heta_nb._util.fs import NotARegularFileError
from heta_nb.errors import MissingDependencyError
from heta_nb.testing import synthetic_report, synthetic_report_dict

pa = pytest.importorskip("pyarrow")

REPORTS = [FIXTURES / "report-normal.json", FIXTURES / "report-errors.json", FIXTURES / "report-multi-unit.json"]
IDENTITY = ["report_id", "knowledge_base_name", "benchmark"]


def _same(back: pd.DataFrame, frame: pd.DataFrame, report: heta_nb.EvaluationReport) -> None:
    """``back`` is ``frame`` after the report's identity columns (one-category categoricals)."""
    attrs = back.attrs.pop("heta_nb")
    assert attrs["table"] in ("cases", "scores", "summary")
    identity = {"report_id": report.report_id, "knowledge_base_name": report.knowledge_base_name}
    identity["benchmark"] = report.benchmark.key
    assert {k: attrs[k] for k in IDENTITY} == identity
    assert list(back.columns[:3]) == IDENTITY
    for name in IDENTITY:
        assert isinstance(back[name].dtype, pd.CategoricalDtype)
        assert list(back[name].cat.categories) == [identity[name]] and back[name].notna().all()
    if attrs["table"] == "summary":
        assert back.attrs.pop("confidence") == frame.attrs["confidence"]
    pd.testing.assert_frame_equal(back.drop(columns=IDENTITY), frame, check_exact=True)


@pytest.mark.parametrize("path", REPORTS, ids=lambda p: p.stem)
def test_round_trip_of_heta_reports(path: Path, tmp_path: Path) -> None:
    report = heta_nb.load_report(path)
    written = report.to_parquet(tmp_path / "out")
    assert [p.name for p in written] == ["cases.parquet", "scores.parquet", "summary.parquet"]
    back = heta_nb.read_parquet(tmp_path / "out")
    assert list(back) == ["cases", "scores", "summary"]
    _same(back["cases"], report.cases_frame(), report)
    _same(back["scores"], report.scores_frame(), report)
    _same(back["summary"], report.summary_frame(), report)


def test_round_trip_of_a_report_with_errors_skips_and_unusable_metrics(tmp_path: Path) -> None:
    raw = synthetic_report_dict(30, error_rate=0.15, seed=4)
    for result in raw["case_results"]:
        if result["scores"] and result["query_mode"] == "full_text_search":
            result["scores"][2].update(value="error", passed=None, metadata={"error": {"type": "E", "message": "m"}})
    report = heta_nb.load_report(raw)
    summary = report.summary_frame()
    assert "errored" in set(summary["status"]) and summary["skipped"].sum() > 0
    report.to_parquet(tmp_path / "out")
    for table, frame in (("cases", report.cases_frame()), ("scores", report.scores_frame()), ("summary", summary)):
        _same(heta_nb.read_parquet(tmp_path / "out", table=table), frame, report)
    one = tmp_path / "summary-only.parquet"
    assert report.to_parquet(one, table="summary") == [one]
    _same(heta_nb.read_parquet(one), summary, report)


def test_the_summary_table_stores_no_number_as_null() -> None:
    report = heta_nb.load_report(FIXTURES / "report-normal.json")
    summary, table = report.summary_frame(), report.to_arrow("summary")
    assert table.column_names == IDENTITY + list(summary.columns)
    assert table.num_rows == len(summary) and table.schema.metadata[b"heta_nb"].decode().count('"summary"') == 1
    scored = [status == "scored" for status in table.column("status").to_pylist()]
    assert not all(scored)
    for name in ("mean", "ci_low", "ci_high"):
        values = table.column(name).to_pylist()
        assert all((v is None) == (not s) for v, s in zip(values, scored) if name == "mean")
        assert not any(isinstance(v, float) and v != v for v in values)  # null, never NaN
    assert None not in table.column("reason").to_pylist() and None not in table.column("status").to_pylist()
    types = {f.name: f.type for f in table.schema}
    assert types["n"] == pa.int64() and types["mean"] == pa.float64() and pa.types.is_dictionary(types["benchmark"])


def test_columns_are_typed(tmp_path: Path) -> None:
    report = synthetic_report(40, seed=3)
    cases = report.to_arrow()
    types = {f.name: f.type for f in cases.schema}
    assert cases.column_names[:4] == [*IDENTITY, "case_id"]
    for name in IDENTITY:
        assert pa.types.is_dictionary(types[name]) and pa.types.is_integer(types[name].index_type)
        assert cases.column(name).to_pylist() == [cases.column(name)[0].as_py()] * cases.num_rows
    assert cases.column("benchmark")[0].as_py() == "synthetic:1:test"
    assert pa.types.is_string(types["case_id"]) or pa.types.is_large_string(types["case_id"])
    assert pa.types.is_dictionary(types["status"])
    assert types["latency_ms"] == pa.float64() and types["n_results"] == pa.int64()
    assert types["beir_ndcg@5"] == pa.float64() and types["answer_contains"] == pa.bool_()
    scores = report.to_arrow("scores")
    assert {f.name: str(f.type) for f in scores.schema}["passed"] == "bool"
    meta = scores.schema.metadata[b"heta_nb"].decode()
    assert '"report_id": "synthetic"' in meta and '"json_columns": ["value"]' in meta
    assert scores.num_rows == len(report.scores_frame())


def test_mixed_and_text_scores_survive(tmp_path: Path) -> None:
    raw = synthetic_report_dict(12, modes=("m",), error_rate=0.0, seed=1)
    raw["case_results"][0]["scores"][0]["value"] = "error"  # an evaluator that raised...
    raw["case_results"][0]["scores"][0]["metadata"] = {"error": "boom"}
    raw["case_results"][1]["scores"][2].update(value="partly", passed=None)  # ...and a text score among numbers
    report = heta_nb.load_report(raw)
    report.to_parquet(tmp_path / "s.parquet", table="scores")
    back = heta_nb.read_parquet(tmp_path / "s.parquet")
    _same(back, report.scores_frame(), report)
    assert back["value"].tolist()[:3] == [s["value"] for s in raw["case_results"][0]["scores"]]
    report.to_parquet(tmp_path / "c.parquet")
    _same(heta_nb.read_parquet(tmp_path / "c.parquet"), report.cases_frame(), report)


def test_one_table_from_a_folder_and_clear_errors(tmp_path: Path) -> None:
    report = synthetic_report(5)
    report.to_parquet(tmp_path / "f")
    assert list(heta_nb.read_parquet(tmp_path / "f", table="scores").columns)[:6] == [
        *IDENTITY,
        "case_id",
        "query_mode",
        "metric",
    ]
    with pytest.raises(FileExistsError, match="cases.parquet: already exists; pass overwrite=True"):
        report.to_parquet(tmp_path / "f")
    assert len(report.to_parquet(tmp_path / "f", overwrite=True)) == 3
    with pytest.raises(FileNotFoundError, match="no such file or folder"):
        heta_nb.read_parquet(tmp_path / "nothing")
    (tmp_path / "empty").mkdir()
    with pytest.raises(FileNotFoundError, match="no cases.parquet or scores.parquet or summary.parquet in this folder"):
        heta_nb.read_parquet(tmp_path / "empty")
    with pytest.raises(ValueError, match="table must be one of 'cases', 'scores', 'summary'"):
        report.to_arrow("answers")
    with pytest.raises(ValueError, match="table must be one of"):
        report.to_parquet(tmp_path / "g.parquet", table="answers")
    assert not (tmp_path / "g.parquet").exists()


def test_without_pyarrow_the_error_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "pyarrow", None)
    with pytest.raises(MissingDependencyError, match=r"pip install 'heta-nb\[parquet\]'"):
        synthetic_report(2).to_arrow()


def test_a_folder_of_older_files_without_a_summary_still_reads(tmp_path: Path) -> None:
    report = synthetic_report(4)
    report.to_parquet(tmp_path / "f")
    (tmp_path / "f" / "summary.parquet").unlink()
    assert list(heta_nb.read_parquet(tmp_path / "f")) == ["cases", "scores"]


def test_a_score_named_like_an_identity_column_refuses_the_cases_table(tmp_path: Path) -> None:
    raw = synthetic_report_dict(3, modes=("m",), error_rate=0.0)
    for result in raw["case_results"]:
        result["scores"][0]["name"] = "benchmark"
    report = heta_nb.load_report(raw)
    with pytest.raises(ValueError, match="column 'benchmark'.*in the 'scores' table"):
        report.to_arrow("cases")
    with pytest.raises(ValueError, match="column 'benchmark'"):
        report.to_parquet(tmp_path / "out")
    assert not (tmp_path / "out").exists()  # every table is built before any is written
    assert "benchmark" in set(report.to_arrow("scores").column("metric").to_pylist())


@pytest.mark.hostile
@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs here")
def test_fifos_are_refused_not_read(tmp_path: Path) -> None:
    report = synthetic_report(3)
    report.to_parquet(tmp_path / "f")
    os.mkfifo(tmp_path / "pipe.parquet")
    with pytest.raises(NotARegularFileError, match="FIFO"):
        heta_nb.read_parquet(tmp_path / "pipe.parquet")
    (tmp_path / "f" / "summary.parquet").unlink()
    os.mkfifo(tmp_path / "f" / "summary.parquet")
    with pytest.raises(NotARegularFileError, match="FIFO"):
        heta_nb.read_parquet(tmp_path / "f")


@pytest.mark.hostile
@pytest.mark.parametrize("field", ["report_id", "mode", "metric", "query", "error"])
def test_text_parquet_cannot_hold_is_written_with_a_replacement_character_and_said(field: str, tmp_path: Path) -> None:
    """A lone surrogate (valid JSON, no UTF-8) in any text: every table is written, U+FFFD in its
    place, and a warning says how many texts changed (it crashed to_parquet before)."""
    raw = synthetic_report_dict(3, modes=("m",), error_rate=0.0)
    bad = "bad\ud800text"
    if field == "report_id":
        raw["report_id"] = bad
    for result in raw["case_results"]:
        if field == "mode":
            result["query_mode"] = bad
        if field == "metric":
            result["scores"][0]["name"] = bad
        if field == "query":
            result["query"] = bad
        if field == "error":
            result["response"], result["error"] = None, {"error_type": "E", "message": bad, "retryable": False}
            result["scores"] = []
    if field == "mode":
        raw["query_modes"] = [bad]
    report = heta_nb.load_report(raw)
    with pytest.warns(UserWarning, match=r"lone surrogate.*U\+FFFD"):
        report.to_parquet(tmp_path / "out")
    tables = heta_nb.read_parquet(tmp_path / "out")
    shown = json.dumps({name: frame.astype(str).to_dict() for name, frame in tables.items()}, ensure_ascii=False)
    shown += json.dumps([str(c) for frame in tables.values() for c in frame.columns], ensure_ascii=False)
    assert "bad\ufffdtext" in shown and "\ud800" not in shown
