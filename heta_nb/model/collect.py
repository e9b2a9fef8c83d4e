"""What every view needs of a report's case results, collected in one pass into compact
Python arrays (:class:`RowCollector`); :mod:`heta_nb.model.columns` turns it into numpy columns.
"""

from __future__ import annotations

import math
from array import array
from collections.abc import Iterable, Mapping
from typing import Any

__all__ = [
    "BOOL",
    "ERROR",
    "FLOAT",
    "INT",
    "PASSED",
    "PASSED_TRUE",
    "SKIPPED",
    "TEXT",
    "MetricRows",
    "RowCollector",
    "collect_rows",
]

# Kinds of a score value (``MetricRows.kinds``).
BOOL, FLOAT, INT, TEXT, ERROR = 1, 2, 3, 4, 5
"""``bool``, ``float``, ``int`` (not bool), text, and an evaluator error (value ``"error"``
with ``metadata.error``): the first three are numeric as Heta's summary counts them."""

# Bits of ``MetricRows.flags``.
SKIPPED, PASSED, PASSED_TRUE = 1, 2, 4
"""``metadata.skipped is True``; ``passed`` is not null; ``passed`` is true."""

_EXACT = 2**53
"""Integers beyond this lose digits as floats: their exact value is kept in ``raw``."""


class MetricRows:
    """Every score of one metric, in report order (rows non-decreasing; a case result
    that has the metric twice has two entries, as Heta's summary counts both)."""

    __slots__ = ("flags", "kinds", "positions", "raw", "rows", "values")

    def __init__(self) -> None:
        self.rows: array[int] = array("i")
        """The row (case result) of each score."""
        self.values: array[float] = array("d")
        """The value as Heta's summary counts it (bool 1.0/0.0); NaN for text and errors."""
        self.kinds: array[int] = array("b")
        """:data:`BOOL`, :data:`FLOAT`, :data:`INT`, :data:`TEXT` or :data:`ERROR`."""
        self.flags: array[int] = array("b")
        """:data:`SKIPPED`, :data:`PASSED` and :data:`PASSED_TRUE` bits."""
        self.positions: array[int] = array("i")
        """The score's index in its case result's ``scores``."""
        self.raw: dict[int, Any] = {}
        """Entry -> the value as stored, where ``values`` cannot give it back (text, errors,
        integers beyond 2**53)."""

    def __reduce__(self) -> tuple[Any, ...]:
        return (_metric_rows, (self.rows, self.values, self.kinds, self.flags, self.positions, self.raw))

    def __len__(self) -> int:
        return len(self.rows)

    def value(self, entry: int) -> Any:
        """The value of one entry as stored (number, bool or text)."""
        kind = self.kinds[entry]
        if kind == FLOAT:
            return self.values[entry]
        if kind == BOOL:
            return self.values[entry] == 1.0
        found = self.raw.get(entry, _ABSENT)
        if found is not _ABSENT:
            return found
        return int(self.values[entry])  # an integer that is exactly a float


_ABSENT = object()


def _metric_rows(*parts: Any) -> MetricRows:
    rows = MetricRows()
    rows.rows, rows.values, rows.kinds, rows.flags, rows.positions, rows.raw = parts
    return rows


class RowCollector:
    """Per case result (row, in report order): codes of its case id, mode, benchmark run unit
    and error type, its latency, query, answer, result count and top result, and per metric
    every score (:class:`MetricRows`). Pure Python (no numpy), so the loader can fill it
    while it reads a file; :class:`~heta_nb.model.columns.ReportColumns` wraps it in numpy.
    """

    __slots__ = (
        "answers",
        "case_code",
        "case_index",
        "error_code",
        "error_index",
        "latency",
        "latency_ints",
        "latency_null",
        "messages",
        "metric_index",
        "metrics",
        "mode_code",
        "mode_index",
        "n",
        "n_results",
        "queries",
        "top_texts",
        "unit_code",
        "unit_index",
    )

    def __init__(self) -> None:
        self.n = 0
        self.case_index: dict[str, int] = {}
        """Case id -> code, in first-seen order."""
        self.case_code: array[int] = array("i")
        self.mode_index: dict[str, int] = {}
        """Query mode -> code, in first-seen order."""
        self.mode_code: array[int] = array("i")
        self.unit_index: dict[str | None, int] = {}
        """``metadata.benchmark_run_unit`` (None when absent or not text) -> code."""
        self.unit_code: array[int] = array("i")
        self.error_index: dict[str, int] = {}
        """Error type -> code, in first-seen order."""
        self.error_code: array[int] = array("i")
        """-1 for a result without error."""
        self.messages: dict[int, str] = {}
        """Row -> error message, for the rows with an error."""
        self.latency: array[float] = array("d")
        """``latency_ms`` as a float (NaN when null)."""
        self.latency_null: list[int] = []
        """The rows whose ``latency_ms`` is null."""
        self.latency_ints: dict[int, int] = {}
        """Row -> ``latency_ms``, where it is an integer (``latency`` holds it as a float)."""
        self.queries: list[str] = []
        self.answers: list[str | None] = []
        self.n_results: array[int] = array("i")
        """Results in the response (0 without a response)."""
        self.top_texts: list[str | None] = []
        """The text of the first result (None without results)."""
        self.metric_index: dict[str, int] = {}
        """Score name -> position in :attr:`metrics`, in first-seen order."""
        self.metrics: list[MetricRows] = []

    def __reduce__(self) -> tuple[Any, ...]:
        return (_collector, tuple(getattr(self, name) for name in self.__slots__))

    def add(self, result: Mapping[str, Any]) -> None:
        """Collect one valid case result's JSON object (its response, if any, as a dict)."""
        row = self.n
        self.n = row + 1
        code = self.case_index.get(case_id := result["case_id"])
        if code is None:
            code = self.case_index[case_id] = len(self.case_index)
        self.case_code.append(code)
        code = self.mode_index.get(mode := result["query_mode"])
        if code is None:
            code = self.mode_index[mode] = len(self.mode_index)
        self.mode_code.append(code)
        unit = result["metadata"].get("benchmark_run_unit")
        if type(unit) is not str:
            unit = None
        code = self.unit_index.get(unit)
        if code is None:
            code = self.unit_index[unit] = len(self.unit_index)
        self.unit_code.append(code)
        error = result["error"]
        if error is None:
            self.error_code.append(-1)
        else:
            code = self.error_index.get(kind := error["error_type"])
            if code is None:
                code = self.error_index[kind] = len(self.error_index)
            self.error_code.append(code)
            self.messages[row] = error["message"]
        latency = result["latency_ms"]
        if latency is None:
            self.latency.append(math.nan)
            self.latency_null.append(row)
        elif type(latency) is float:
            self.latency.append(latency)
        else:
            self.latency.append(_as_float(latency))
            self.latency_ints[row] = latency
        self.queries.append(result["query"])
        response = result["response"]
        if response is None:
            self.answers.append(None)
            self.n_results.append(0)
            self.top_texts.append(None)
        else:
            results = response["results"]
            self.answers.append(response["answer"])
            self.n_results.append(len(results))
            self.top_texts.append(results[0]["text"] if results else None)
        index = self.metric_index
        for position, score in enumerate(result["scores"]):
            slot = index.get(name := score["name"])
            if slot is None:
                slot = index[name] = len(self.metrics)
                self.metrics.append(MetricRows())
            self._add_score(self.metrics[slot], row, position, score)

    @staticmethod
    def _add_score(entries: MetricRows, row: int, position: int, score: Mapping[str, Any]) -> None:
        value = score["value"]
        kind = type(value)
        metadata = score["metadata"]
        passed = score["passed"]
        flags = SKIPPED if metadata.get("skipped") is True else 0
        if passed is not None:
            flags |= PASSED | PASSED_TRUE if passed else PASSED
        entry = len(entries.rows)
        if kind is float:
            entries.kinds.append(FLOAT)
        elif kind is bool:
            entries.kinds.append(BOOL)
            value = 1.0 if value else 0.0
        elif kind is int:
            entries.kinds.append(INT)
            number = _as_float(value)
            if not -_EXACT <= value <= _EXACT:  # the int itself: 2**53 + 1 rounds to 2**53 as a float
                entries.raw[entry] = value
            value = number
        else:  # text
            error = value == "error" and isinstance(metadata.get("error"), Mapping)
            entries.kinds.append(ERROR if error else TEXT)
            entries.raw[entry] = value
            value = math.nan
        entries.rows.append(row)
        entries.values.append(value)
        entries.flags.append(flags)
        entries.positions.append(position)

    # -- what the model reads of it (pure Python) ----------------------------------------
    def modes(self, query_modes: Iterable[str]) -> tuple[str, ...]:
        """``query_modes`` de-duplicated, then the modes only seen in results."""
        seen = dict.fromkeys(query_modes)
        seen.update(dict.fromkeys(self.mode_index))
        return tuple(seen)

    def error_count(self) -> int:
        """Rows with an error."""
        return len(self.messages)


def _as_float(value: int | float) -> float:
    try:
        return float(value)
    except OverflowError:
        return math.inf if value > 0 else -math.inf


def _collector(*parts: Any) -> RowCollector:
    collector = RowCollector()
    for name, value in zip(RowCollector.__slots__, parts):
        setattr(collector, name, value)
    return collector


def collect_rows(results: Iterable[Mapping[str, Any]]) -> RowCollector:
    """A :class:`RowCollector` of valid case results' JSON objects, in order."""
    collector = RowCollector()
    add = collector.add
    for result in results:
        add(result)
    return collector
