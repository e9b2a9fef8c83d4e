"""Integers a float64 cannot hold stay exact in cases_frame, scores_frame, Arrow and Parquet; a 0-case
report's Parquet has the schema of a 1-case one."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
from helpers import FIXTURES

import heta_nb
from heta_nb.tables import cases_frame, scores_frame
from heta_nb.tables.arrow import read_parquet, to_arrow, to_parquet

pq = pytest.importorskip("pyarrow.parquet")
pytestmark = pytest.mark.hostile

BIG = [2**53 + 1, -(2**53 + 1), 2**63 - 1, -(2**63), 2**64, -(2**70) - 1]
IN_INT64 = [v for v in BIG if -(2**63) <= v < 2**63]


def _report(values: list[Any], name: str = "big") -> heta_nb.EvaluationReport:
    """report-normal.json with the score ``name`` on the first len(values) case results."""
    data = json.loads((FIXTURES / "report-normal.json").read_bytes())
    for result, value in zip(data["case_results"], values):
        result["scores"].append({"name": name, "value": value, "passed": None, "metadata": {}})
    data["score_summary"] = {}
    return heta_nb.load_report(data)


def _same(got: Any, want: Any) -> bool:
    """Exactly the same number: an int compares as an int, never through a float."""
    if isinstance(want, int):
        return type(got) is int and got == want
    return isinstance(got, float) and (got == want or (math.isnan(got) and math.isnan(want)))


@pytest.mark.parametrize("value", BIG)
def test_one_big_integer_is_exact_in_both_frames(value: int) -> None:
    report = _report([value, 1, 2])
    column = cases_frame(report)["big"]
    assert _same(int(column[0]) if not isinstance(column[0], int) else column[0], value)
    assert str(column[0]) == str(value)  # not a float's text
    scores = scores_frame(report)
    got = scores.loc[scores["metric"] == "big", "value"].tolist()
    assert all(_same(g, w) for g, w in zip(got, [value, 1, 2])), got


@pytest.mark.parametrize("value", BIG)
def test_one_big_integer_is_exact_in_parquet(value: int, tmp_path: Path) -> None:
    report = _report([value, 1])
    to_parquet(report, tmp_path / "out")
    cases = pq.read_table(tmp_path / "out" / "cases.parquet").column("big").to_pylist()
    raw = cases[0]
    assert (raw == value and isinstance(raw, int)) or json.loads(raw) == value, raw  # int64, or exact JSON text
    scores = pq.read_table(tmp_path / "out" / "scores.parquet")
    texts = [v for m, v in zip(scores.column("metric").to_pylist(), scores.column("value").to_pylist()) if m == "big"]
    assert json.loads(texts[0]) == value and type(json.loads(texts[0])) is int
    back = read_parquet(tmp_path / "out")
    assert isinstance(back, dict)
    first = back["cases"]["big"][0]
    assert str(first) == str(value)
    assert back["scores"].loc[back["scores"]["metric"] == "big", "value"].tolist()[0] == value


def test_integers_within_int64_are_a_nullable_int64_column(tmp_path: Path) -> None:
    report = _report(IN_INT64)
    column = cases_frame(report)["big"]
    assert str(column.dtype) == "Int64"
    assert column[: len(IN_INT64)].tolist() == IN_INT64 and column[len(IN_INT64) :].isna().all()
    table = to_arrow(report, "cases")
    assert str(table.schema.field("big").type) == "int64"
    assert table.column("big").to_pylist()[: len(IN_INT64)] == IN_INT64
    to_parquet(report, tmp_path / "c.parquet")
    back = read_parquet(tmp_path / "c.parquet")
    assert back["big"].tolist()[: len(IN_INT64)] == IN_INT64


@pytest.mark.parametrize(
    "values", [[2**53 + 1, 0.5], [0.25, 2**64], [2**53 + 1, 2**64, 3], [float("nan"), 2**53 + 1]], ids=str
)
def test_ints_mixed_with_floats_or_beyond_int64_keep_every_value(values: list[Any], tmp_path: Path) -> None:
    report = _report(values)
    column = cases_frame(report)["big"]
    assert column.dtype == object
    assert all(_same(g, w) for g, w in zip(column.tolist(), values)), column.tolist()
    to_parquet(report, tmp_path / "c.parquet")
    back = read_parquet(tmp_path / "c.parquet")["big"].tolist()
    assert all(_same(g, w) for g, w in zip(back, values)), back


def test_small_numbers_keep_their_float64_column() -> None:
    report = _report([2**53 - 1, 3, 0.5])
    assert cases_frame(report)["big"].dtype == "float64"
    assert cases_frame(report)["big"].tolist()[:3] == [2**53 - 1, 3.0, 0.5]


def _schemas(report: heta_nb.EvaluationReport, folder: Path) -> dict[str, Any]:
    to_parquet(report, folder)
    return {name: pq.read_schema(folder / f"{name}.parquet") for name in ("cases", "scores", "summary")}


def test_a_0_case_report_has_the_parquet_schema_of_a_1_case_report(tmp_path: Path) -> None:
    data = json.loads((FIXTURES / "report-normal.json").read_bytes())
    one = heta_nb.load_report({**data, "case_results": data["case_results"][:1], "score_summary": {}})
    zero = heta_nb.load_report({**data, "case_results": [], "score_summary": {}})
    full, empty = _schemas(one, tmp_path / "one"), _schemas(zero, tmp_path / "zero")
    for name in ("scores", "summary"):
        assert empty[name].remove_metadata().equals(full[name].remove_metadata()), name
    # cases: a report without scores has no score columns; every column it has is typed alike
    fields = {f.name: f.type for f in full["cases"]}
    assert all(fields[f.name] == f.type for f in empty["cases"]), empty["cases"]
    assert [f.name for f in empty["cases"]] == [f.name for f in full["cases"]][: len(empty["cases"])]
    for schema in (*full.values(), *empty.values()):
        for column in ("report_id", "knowledge_base_name", "benchmark"):
            assert str(schema.field(column).type).startswith("dictionary<"), (column, schema)
    assert str(empty["scores"].field("kind").type).startswith("dictionary<")
    assert str(empty["cases"].field("status").type).startswith("dictionary<")
    frames = read_parquet(tmp_path / "zero")
    assert isinstance(frames, dict)
    assert isinstance(frames["scores"]["kind"].dtype, pd.CategoricalDtype)
