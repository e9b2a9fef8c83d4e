"""A metric a mode cannot produce reads "n/a" in the explorer's table (not a ✗ or a 0.000), with
the reason in the cell's title and in the case panel; it sorts last and leaves range filters."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import heta_nb
from heta_nb.explorer.case_data import CaseDataLimits, case_data
from heta_nb.explorer.columns import STATUSES
from heta_nb.explorer.table import ReportTable

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "heta-0.1.2" / "report-normal.json"


@pytest.fixture(scope="module")
def table() -> ReportTable:
    return ReportTable(heta_nb.load_report(FIXTURE))


def _cells(table: ReportTable, metric: str, mode: str) -> list[tuple[str, str, str]]:
    column = next(c for c in table.columns if c.key == metric)
    return [column.cell(i) for i in np.flatnonzero(table.modes_column == mode).tolist()]


def test_n_a_cells_read_n_a_with_the_reason(table: ReportTable) -> None:
    assert table.not_applicable[("full_text_search", "answer_contains")] == "full_text_search returns no answers"
    cells = _cells(table, "answer_contains", "full_text_search")
    assert cells and all(c[0] == "n/a" and c[2] == "n/a: full_text_search returns no answers" for c in cells)
    assert not any(c[0] in ("✗", "0.000") for c in cells)
    answered = _cells(table, "answer_contains", "extractive_answer")
    assert {c[0] for c in answered} <= {"✓", "✗", "skipped"} and any(c[0] in ("✓", "✗") for c in answered)


def test_n_a_rows_have_no_value_and_the_n_a_status(table: ReportTable) -> None:
    rows = table.modes_column == "full_text_search"
    values = table.range_values("answer_contains")
    assert (
        np.isnan(values[rows]).all() and not np.isnan(values[~rows & (table.modes_column == "extractive_answer")]).all()
    )
    codes = table.status_codes("answer_contains")
    assert set(codes[rows].tolist()) <= {STATUSES.index("n/a"), STATUSES.index("error")}


def test_the_case_panel_gives_the_reason_and_heta_s_value(table: ReportTable) -> None:
    row = int(np.flatnonzero(table.modes_column == "full_text_search")[0])
    reasons = table.not_applicable_of(row)
    assert reasons["answer_contains"] == "full_text_search returns no answers"
    scores = {s[0]: s for s in case_data(table.case_json(row), None, CaseDataLimits(), not_applicable=reasons)["s"]}
    name, text, cls, _, reason = scores["answer_contains"]
    assert (text, cls) == ("n/a", "n")
    assert reason == "full_text_search returns no answers (Heta scores it false)"
    other = int(np.flatnonzero(table.modes_column == "extractive_answer")[0])
    assert "answer_contains" not in table.not_applicable_of(other)
