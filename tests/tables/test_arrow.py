"""Arrow tables and Parquet files of a report: typed columns, one file or a folder, and a lossless round trip."""

from __future__ import annotations

import sys
from pathlib import Path

import pandas as pd
import pytest
from helpers import FIXTURES

import heta_nb
from heta_nb.errors import MissingDependencyError
from heta_nb.testing import synthetic_report, synthetic_report_dict

pa = pytest.importorskip("pyarrow")

REPORTS = [FIXTURES / "report-normal.json", FIXTURES / "report-errors.json", FIXTURES / "report-multi-unit.json"]


def _same(back: pd.DataFrame, frame: pd.DataFrame) -> None:
    attrs = back.attrs.pop("heta_nb")
    assert attrs["table"] in ("cases", "scores")
    pd.testing.assert_frame_equal(back, frame, check_exact=True)


@pytest.mark.parametrize("path", REPORTS, ids=lambda p: p.stem)
def test_round_trip_of_heta_reports(path: Path, tmp_path: Path) -> None:
    report = heta_nb.load_report(path)
    written = report.to_parquet(tmp_path / "out")
    assert [p.name for p in written] == ["cases.parquet", "scores.parquet"]
    back = heta_nb.read_parquet(tmp_path / "out")
    _same(back["cases"], report.cases_frame())
    _same(back["scores"], report.scores_frame())


def test_columns_are_typed(tmp_path: Path) -> None:
    report = synthetic_report(40, seed=3)
    cases = report.to_arrow()
    types = {f.name: f.type for f in cases.schema}
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
    _same(back, report.scores_frame())
    assert back["value"].tolist()[:3] == [s["value"] for s in raw["case_results"][0]["scores"]]
    report.to_parquet(tmp_path / "c.parquet")
    _same(heta_nb.read_parquet(tmp_path / "c.parquet"), report.cases_frame())


def test_one_table_from_a_folder_and_clear_errors(tmp_path: Path) -> None:
    report = synthetic_report(5)
    report.to_parquet(tmp_path / "f")
    assert list(heta_nb.read_parquet(tmp_path / "f", table="scores").columns)[:3] == ["case_id", "query_mode", "metric"]
    with pytest.raises(FileExistsError, match="cases.parquet: already exists; pass overwrite=True"):
        report.to_parquet(tmp_path / "f")
    assert len(report.to_parquet(tmp_path / "f", overwrite=True)) == 2
    with pytest.raises(FileNotFoundError, match="no such file or folder"):
        heta_nb.read_parquet(tmp_path / "nothing")
    (tmp_path / "empty").mkdir()
    with pytest.raises(FileNotFoundError, match="no cases.parquet or scores.parquet in this folder"):
        heta_nb.read_parquet(tmp_path / "empty")
    with pytest.raises(ValueError, match="table must be one of 'cases', 'scores'"):
        report.to_arrow("answers")


def test_without_pyarrow_the_error_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "pyarrow", None)
    with pytest.raises(MissingDependencyError, match=r"pip install 'heta-nb\[parquet\]'"):
        synthetic_report(2).to_arrow()
