"""The explorer's table of one report: one row per case × mode, its columns, search text,
statuses, labels, and the case behind each row (the paging itself is the explorer's)."""

from __future__ import annotations

import math
from collections.abc import Mapping
from functools import cached_property, partial
from typing import TYPE_CHECKING, Any, cast

import numpy as np

from heta_nb.explorer.columns import (
    STATUSES,
    Cell,
    Column,
    MetricArrays,
    metric_arrays_of_columns,
    metric_cell,
    metric_cells,
    row_column,
    text_column,
)
from heta_nb.explorer.judge_data import UNSTABLE
from heta_nb.explorer.labels import LabelIndex
from heta_nb.model import EvaluationCaseResult, EvaluationReport
from heta_nb.render.context.formatting import format_ms
from heta_nb.render.context.judges import judge_scan

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd

__all__ = ["ReportTable"]


class ReportTable:
    """The rows of one report the explorer filters, sorts and pages (row ``i`` = ``case_results[i]``).

    Args:
        report: the report.
        benchmark: the benchmark it was run on (case labels, expected answers and evidence), or None.
    """

    kind = "report"

    def __init__(self, report: EvaluationReport, benchmark: Any = None) -> None:
        self.report = report
        self.benchmark = benchmark
        columns = report.columns  # every array from the report's column table: no case result is opened
        self.n = columns.n
        self.case_ids = columns.case_ids[columns.case] if self.n else np.zeros(0, dtype=object)
        self.modes_column = np.array(columns.modes, dtype=object)[columns.mode] if self.n else np.zeros(0, object)
        self.queries = np.array(["" if q is None else q for q in columns.queries.tolist()], dtype=object)
        self.answers = columns.answers
        error_types = np.array([*columns.error_types, None], dtype=object)
        self.error_types = error_types[np.where(columns.error >= 0, columns.error, len(columns.error_types))]
        self.messages = columns.messages
        self.latency = np.where(columns.latency_null, np.nan, columns.latency).astype("float64")
        self.case_error = ~columns.ok
        self.metrics: tuple[str, ...] = tuple(report.metric_names)
        self.arrays: dict[str, MetricArrays] = metric_arrays_of_columns(columns, self.metrics)
        self.not_applicable: dict[tuple[str, str], str] = columns.not_applicable()
        """``{(mode, metric): reason}``: what each mode cannot produce (the report's n/a)."""
        by_metric: dict[str, dict[str, str]] = {}
        for (mode, metric), reason in self.not_applicable.items():
            by_metric.setdefault(metric, {})[mode] = reason
        for metric, reasons in by_metric.items():
            if metric in self.arrays:
                self.arrays[metric].mark_not_applicable(self.modes_column, reasons)
        self.modes: tuple[str, ...] = tuple(report.modes)
        self.labels = LabelIndex(benchmark, self.case_ids)
        self.systems: tuple[str, ...] = ()
        unstable = judge_scan(report).unstable
        self.unstable = np.zeros(self.n, dtype=bool)
        """Rows with an LLM judge score whose repeats disagreed (the ``judges disagree`` filter)."""
        self.unstable[: min(len(unstable), self.n)] = unstable[: self.n]
        self.quick_filters: tuple[str, ...] = (UNSTABLE,) if self.unstable.any() else ()
        self.title = f"{report.report_id} · {report.benchmark.key}"

    @cached_property
    def _frame(self) -> pd.DataFrame:
        return self.report.cases_frame()

    # -- what the filters read -------------------------------------------------------------
    @cached_property
    def search_text(self) -> list[str]:
        """One case-folded text per row: case id, query, answer, error type and message."""
        return [
            f"{c}\n{q}\n{a or ''}\n{t or ''}\n{m or ''}".casefold()
            for c, q, a, t, m in zip(self.case_ids, self.queries, self.answers, self.error_types, self.messages)
        ]

    def mode_mask(self, mode: str) -> np.ndarray:
        """Rows of one query mode."""
        return np.asarray(self.modes_column == mode)

    def status_codes(self, metric: str | None) -> np.ndarray:
        """Per row, the index in :data:`STATUSES`, for ``metric`` or (None) over every score.

        Over every score: ``error`` (the case or any evaluator), else ``skipped`` (any
        score), else ``n/a`` (no score at all), else ``ok``.
        """
        if metric is not None:
            return self.arrays[metric].status(self.case_error)
        if not self.metrics:
            return np.where(self.case_error, 1, 3).astype(np.uint8)
        arrays = list(self.arrays.values())
        errors = self.case_error | np.logical_or.reduce([a.errors for a in arrays])
        skipped = np.logical_or.reduce([a.skipped for a in arrays])
        present = np.logical_or.reduce([a.present for a in arrays])
        codes = np.full(self.n, STATUSES.index("n/a"), dtype=np.uint8)
        codes[present] = STATUSES.index("ok")
        codes[skipped] = STATUSES.index("skipped")
        codes[errors] = STATUSES.index("error")
        return codes

    def range_values(self, metric: str) -> np.ndarray:
        """The numbers a metric range filters on (NaN: no usable score)."""
        return self.arrays[metric].values

    def quick_mask(self, name: str, metric: str | None) -> np.ndarray:
        """Rows of a quick filter: a report's one is ``judges disagree`` (when some judge's repeats did)."""
        if name == UNSTABLE and UNSTABLE in self.quick_filters:
            return self.unstable.copy()
        raise ValueError(f"a report has no quick filter {name!r}")  # pragma: no cover - validated before

    # -- columns -------------------------------------------------------------------------
    @cached_property
    def columns(self) -> list[Column]:
        """The table's columns, in display order."""
        columns = [row_column(self.n), text_column("case_id", "case", self.case_ids, 40, "hx-id")]
        if len(self.modes) > 1:
            columns.append(text_column("query_mode", "mode", self.modes_column, 28))
        columns.append(Column("status", "status", False, self._status_keys, self._status_cell, self._status_cells))
        columns.append(text_column("query", "query", self.queries, 90))
        for name in self.metrics:
            arrays = self.arrays[name]
            columns.append(
                Column(
                    name,
                    name,
                    True,
                    partial(_values, arrays),
                    partial(metric_cell, arrays),
                    partial(metric_cells, arrays),
                    metric=name,
                )
            )
        columns.append(
            Column("latency_ms", "latency ms", True, lambda: self.latency, self._latency_cell, self._latency_cells)
        )
        if any(a is not None for a in self.answers[:1000]) or any(a is not None for a in self.answers):
            columns.append(text_column("answer", "answer", self.answers, 60))
        return columns

    def _status_keys(self) -> np.ndarray:
        # object arrays: `str + <U array` has a ufunc loop only from numpy 2 (we support 1.24)
        labels = np.array(["error "], dtype=object) + self.error_types.astype(str).astype(object)
        return np.where(self.case_error, labels, "ok").astype(object)

    def _status_cell(self, i: int) -> Cell:
        if self.case_error[i]:
            return ("✗ " + str(self.error_types[i] or "error"), "hx-bad", str(self.messages[i] or "")[:400])
        return ("✓ ok", "hx-ok", "")

    def _status_cells(self, rows: np.ndarray) -> list[Cell]:
        ok: Cell = ("✓ ok", "hx-ok", "")
        return [self._status_cell(i) if failed else ok for i, failed in zip(rows.tolist(), self.case_error[rows])]

    def _latency_cell(self, i: int) -> Cell:
        value = self.latency[i]
        return (format_ms(float(value)), "hx-n", "") if np.isfinite(value) else ("—", "hx-na", "")

    def _latency_cells(self, rows: np.ndarray) -> list[Cell]:
        return [
            (format_ms(value), "hx-n", "") if math.isfinite(value) else ("—", "hx-na", "")
            for value in self.latency[rows].tolist()
        ]

    # -- what a user takes away ------------------------------------------------------------
    def frame(self, rows: np.ndarray) -> pd.DataFrame:
        """The report's ``cases_frame()`` rows ``rows``, in that order (index: report position)."""
        return self._frame.iloc[rows]

    def case(self, row: int) -> EvaluationCaseResult:
        """The case result of table row ``row``."""
        return EvaluationCaseResult.from_raw(cast("dict[str, Any]", self.report.case_result_json(row)))

    def case_json(self, row: int) -> Mapping[str, Any]:
        """Table row ``row``'s case result as its JSON object (read only)."""
        return self.report.case_result_json(row)

    def not_applicable_of(self, row: int) -> dict[str, str]:
        """``{metric: reason}`` of the metrics row ``row``'s mode cannot produce."""
        mode = self.modes_column[row]
        return {metric: reason for (m, metric), reason in self.not_applicable.items() if m == mode}

    def describe_row(self, row: int) -> str:
        """``case_id · mode`` of a row, for headers and messages."""
        return f"{self.case_ids[row]} · {self.modes_column[row]}"


def _values(arrays: MetricArrays) -> np.ndarray:
    return arrays.values
