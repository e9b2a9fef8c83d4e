"""Per-metric score arrays of a report (values, skipped, evaluator errors) and the table
columns the explorer pages: how each sorts and how each cell reads."""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from functools import partial
from typing import Any

import numpy as np

from heta_nb._util.text import shorten
from heta_nb.model.summary import is_evaluator_error, numeric_value
from heta_nb.render.env import format_number

__all__ = [
    "STATUSES",
    "Cell",
    "Column",
    "MetricArrays",
    "metric_arrays",
    "metric_arrays_of_columns",
    "metric_cell",
    "metric_cells",
    "number_cell",
    "row_column",
    "text_cell",
    "text_cells",
    "text_column",
]

STATUSES = ("ok", "error", "skipped", "n/a")
"""Row statuses, in the order of their codes (0 to 3) in :meth:`MetricArrays.status`."""
OK, ERROR, SKIPPED, NA = range(4)

Cell = tuple[str, str, str]
"""One table cell: ``(text, css class, title)``; all plain text (the browser writes it as text)."""


@dataclass(frozen=True)
class Column:
    """One column of the explorer's table.

    Attributes:
        key: the name sorting and :class:`~heta_nb.explorer.filters.Filters` use.
        label: the header text.
        numeric: sorts as numbers (missing last) rather than as text.
        values: one sort key per table row (float64, or objects for text).
        cell: the cell of table row ``i``.
        many: the cells of many rows at once (the page embeds every row's); None: one
            :attr:`cell` call per row. Both give the same cells.
        metric: the metric the column shows (a metric column, or a comparison's delta).
    """

    key: str
    label: str
    numeric: bool
    values: Callable[[], np.ndarray]
    cell: Callable[[int], Cell]
    many: Callable[[np.ndarray], list[Cell]] | None = None
    metric: str = ""

    def cells(self, rows: np.ndarray) -> list[Cell]:
        """The cells of ``rows`` (table rows), in order."""
        if self.many is not None:
            return self.many(rows)
        return [self.cell(int(i)) for i in rows.tolist()]


@dataclass
class MetricArrays:
    """Every score of one metric across the rows of a table (one pass over the report).

    ``values`` holds the number Heta's summary counts (bools as 1.0/0.0; NaN for a missing
    score, a text value or an evaluator that raised), ``text`` the value of a text score.
    """

    name: str
    values: np.ndarray
    present: np.ndarray
    skipped: np.ndarray
    errors: np.ndarray
    kind: str = "number"
    text: dict[int, str] | None = None
    not_applicable: np.ndarray | None = None
    """Per row, why its mode cannot produce the metric ("" where it can; None: no row is
    n/a), from :meth:`~heta_nb.model.columns.ReportColumns.not_applicable`."""

    def status(self, case_error: np.ndarray) -> np.ndarray:
        """Per row, the code of ``ok``, ``error`` (the case or this evaluator), ``skipped``, ``n/a``
        (no score, or one its mode cannot produce)."""
        codes = np.full(case_error.shape, NA, dtype=np.uint8)
        codes[self.present] = OK
        codes[self.skipped] = SKIPPED
        if self.not_applicable is not None:
            codes[self.not_applicable != ""] = NA
        codes[self.errors | case_error] = ERROR
        return codes

    def mark_not_applicable(self, modes: np.ndarray, reasons: Mapping[str, str]) -> None:
        """Mark the rows of the modes in ``reasons`` (mode -> why) n/a: their value leaves
        sorting and range filters (NaN), their cell reads "n/a" with the reason."""
        if not reasons:
            return
        marks = np.full(modes.shape, "", dtype=object)
        for mode, reason in reasons.items():
            marks[modes == mode] = reason
        self.not_applicable = marks
        self.values = np.where(marks != "", math.nan, self.values)


def metric_arrays(results: Sequence[Mapping[str, Any] | None], metrics: Sequence[str]) -> dict[str, MetricArrays]:
    """One :class:`MetricArrays` per metric over ``results`` (case results' JSON, in row order).

    Args:
        results: the rows' case results (``raw`` dicts); None for a row with no result.
        metrics: the metric names to collect.

    Returns:
        Metric name -> its arrays.
    """
    n = len(results)
    index = {name: j for j, name in enumerate(metrics)}
    values = np.full((len(metrics), n), math.nan)
    present = np.zeros((len(metrics), n), dtype=bool)
    skipped = np.zeros((len(metrics), n), dtype=bool)
    errors = np.zeros((len(metrics), n), dtype=bool)
    bools = [True] * len(metrics)
    texts: list[dict[int, str]] = [{} for _ in metrics]
    for i, result in enumerate(results):
        if result is None:
            continue
        for score in result["scores"]:
            j = index.get(score["name"])
            if j is None:
                continue
            if score["metadata"].get("skipped") is True:
                skipped[j, i] = True
            if is_evaluator_error(score):
                errors[j, i] = True
                continue
            value = score["value"]
            present[j, i] = True
            number = numeric_value(value)
            if number is None:
                texts[j][i] = str(value)
                bools[j] = False
                continue
            values[j, i] = number
            if not isinstance(value, bool):
                bools[j] = False
    found = {}
    for name, j in index.items():
        kind = "text" if texts[j] and not np.isfinite(values[j]).any() else "bool" if bools[j] else "number"
        if not present[j].any():
            kind = "number"
        found[name] = MetricArrays(name, values[j], present[j], skipped[j], errors[j], kind=kind, text=texts[j] or None)
    return found


def metric_arrays_of_columns(columns: Any, metrics: Sequence[str]) -> dict[str, MetricArrays]:
    """:func:`metric_arrays` of a whole report from its column table (no case result opened).

    Args:
        columns: the report's :class:`~heta_nb.model.columns.ReportColumns` (row ``i`` = case result ``i``).
        metrics: the metric names to collect.

    Returns:
        Metric name -> its arrays, equal to :func:`metric_arrays` of the report's results.
    """
    from heta_nb.model.collect import BOOL, ERROR, FLOAT, INT, SKIPPED, TEXT

    n = columns.n
    found = {}
    for name in metrics:
        values = np.full(n, math.nan)
        present = np.zeros(n, dtype=bool)
        skipped = np.zeros(n, dtype=bool)
        errors = np.zeros(n, dtype=bool)
        texts: dict[int, str] = {}
        if name not in columns.metrics:
            found[name] = MetricArrays(name, values, present, skipped, errors)
            continue
        column = columns.metric(name)
        kinds, rows = column.kinds, column.rows
        skipped[rows[(column.flags & SKIPPED) != 0]] = True
        failed = kinds == ERROR
        errors[rows[failed]] = True
        present[rows[~failed]] = True
        numeric = (kinds == BOOL) | (kinds == FLOAT) | (kinds == INT)
        values[rows[numeric]] = column.values[numeric]  # a name twice in one result: the last one, as the loop
        for entry in np.flatnonzero(kinds == TEXT).tolist():
            texts[int(rows[entry])] = str(column.value(entry))
        bools = not texts and bool(np.all(kinds[numeric] == BOOL))
        kind = "text" if texts and not np.isfinite(values).any() else "bool" if bools else "number"
        if not present.any():
            kind = "number"
        found[name] = MetricArrays(name, values, present, skipped, errors, kind=kind, text=texts or None)
    return found


def metric_cells(arrays: MetricArrays, rows: np.ndarray) -> list[Cell]:
    """:func:`metric_cell` of many rows: the common number cells formatted at once."""
    out: list[Cell | None] = [None] * rows.size
    plain = arrays.present[rows] & ~arrays.errors[rows] & ~arrays.skipped[rows] & np.isfinite(arrays.values[rows])
    if arrays.not_applicable is not None:
        plain &= arrays.not_applicable[rows] == ""
    if arrays.text:
        plain &= np.array([int(r) not in arrays.text for r in rows.tolist()], dtype=bool)
    if arrays.kind != "bool":
        chosen = np.flatnonzero(plain & (np.abs(arrays.values[rows]) < 1e6))
        for at, text in zip(chosen.tolist(), np.char.mod("%.3f", arrays.values[rows[chosen]]).tolist()):
            out[at] = (("0.000" if text == "-0.000" else text), "hx-num", "")
    for at in range(rows.size):
        if out[at] is None:
            out[at] = metric_cell(arrays, int(rows[at]))
    return out  # type: ignore[return-value]


def metric_cell(arrays: MetricArrays, i: int) -> Cell:
    """The cell of row ``i`` of a metric column: a number, ✓/✗, ``skipped``, ``n/a`` (the reason
    in its title), ``error`` or ``—``."""
    if arrays.errors[i]:
        return ("error", "hx-bad", "the evaluator raised (see the case)")
    if not arrays.present[i]:
        return ("—", "hx-na", "no score")
    if arrays.not_applicable is not None and arrays.not_applicable[i]:
        return ("n/a", "hx-na", f"n/a: {arrays.not_applicable[i]}")
    value = float(arrays.values[i])
    if arrays.skipped[i]:
        return ("skipped", "hx-skip", f"skipped (Heta counts it as {format_number(value)})")
    if arrays.text and i in arrays.text:
        return (shorten(arrays.text[i], 24), "hx-text", shorten(arrays.text[i], 200))
    if arrays.kind == "bool":
        return ("✓", "hx-true", "true") if value == 1.0 else ("✗", "hx-false", "false")
    return (format_number(value), "hx-num", "")


def number_cell(value: float, *, delta: bool = False, tolerance: float = 0.0) -> Cell:
    """A number (``—`` when NaN); a delta is signed and coloured up / down / level."""
    if math.isnan(value):
        return ("—", "hx-na", "")
    if not delta:
        return (format_number(value), "hx-num", "")
    if value > tolerance:
        return ("+" + format_number(value), "hx-up", "better than the baseline")
    if value < -tolerance:
        return (format_number(value), "hx-down", "worse than the baseline")
    return ("±" + format_number(abs(value)), "hx-level", "tied")


def text_cell(value: Any, limit: int, cls: str = "") -> Cell:
    """A text cell, shortened to ``limit`` characters (the title holds up to 400)."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return ("", "hx-na", "")
    text = str(value)
    return (shorten(text, limit), cls, shorten(text, 400) if len(text) > limit else "")


def text_cells(values: np.ndarray, limit: int, cls: str, rows: np.ndarray) -> list[Cell]:
    """:func:`text_cell` of many rows (a short text, the common case, inline)."""
    return [
        (value, cls, "") if type(value) is str and len(value) <= limit else text_cell(value, limit, cls)
        for value in values[rows].tolist()
    ]


def text_column(key: str, label: str, values: np.ndarray, limit: int, cls: str = "") -> Column:
    """A column of texts (one per row), sorted as text, each cell cut to ``limit`` characters."""
    return Column(
        key,
        label,
        False,
        lambda: values,
        lambda i: text_cell(values[i], limit, cls),
        partial(text_cells, values, limit, cls),
    )


def row_column(n: int) -> Column:
    """The ``#`` column: each row's position in the report (1-based)."""
    return Column(
        "row",
        "#",
        True,
        lambda: np.arange(n, dtype="float64"),
        lambda i: (f"{i + 1:,}", "hx-n", ""),
        lambda rows: [(f"{i + 1:,}", "hx-n", "") for i in rows.tolist()],
    )
