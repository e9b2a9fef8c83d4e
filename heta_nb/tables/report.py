"""pandas tables of one report: its cases, its tidy scores, its mode × metric summary.

pandas is imported when a function here is called, never by the model.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

from heta_nb._util.frames import frame as frame_of
from heta_nb._util.frames import text_array
from heta_nb.model.collect import BOOL, ERROR, FLOAT, INT, PASSED, PASSED_TRUE, SKIPPED
from heta_nb.model.report import EvaluationReport
from heta_nb.model.summary import RECORD_KEYS

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd

    from heta_nb.model.columns import MetricColumn

__all__ = ["CASE_COLUMNS", "SUMMARY_COLUMNS", "cases_frame", "scores_frame", "summary_frame"]

CASE_COLUMNS = (
    "case_id",
    "query_mode",
    "query",
    "status",
    "latency_ms",
    "error_type",
    "error",
    "n_results",
    "answer",
    "unit",
)


def cases_frame(report: EvaluationReport) -> pd.DataFrame:
    """One row per case × mode, in report order.

    Columns: ``case_id, query_mode, query, status`` (``ok``/``error``), ``latency_ms,
    error_type, error`` (message), ``n_results, answer, unit`` (benchmark run unit),
    then one column per score name holding the score's value (float for numbers,
    nullable boolean for bools, text for string scores; missing for errors, and for a
    score whose evaluator raised, whose ``"error"`` value is in :func:`scores_frame`).
    A number column never rounds: one holding an integer beyond 2**53 (which a float64
    cannot hold) is nullable ``Int64`` when all its values are integers within int64, else
    Python objects holding the exact numbers (beyond int64, or ints mixed with floats).
    Text columns have pandas' string dtype even when empty or all missing; text that
    UTF-8 cannot hold (a lone surrogate) reads U+FFFD there.

    Built from ``report.columns`` (numpy), without a loop over the rows.

    Args:
        report: the evaluation report.

    Returns:
        The DataFrame described above.
    """
    import numpy as np
    import pandas as pd

    columns = report.columns
    text = _text_dtype(pd)
    modes = np.array(columns.modes, dtype=object)
    units = np.array(columns.units + (None,), dtype=object)
    error_types = np.array((*columns.error_types, None), dtype=object)
    data: dict[str, Any] = {
        "case_id": _text(columns.case_ids[columns.case], text, pd),
        "query_mode": _text(modes[columns.mode], text, pd),
        "query": _text(columns.queries, text, pd),
        "status": pd.Categorical.from_codes((~columns.ok).astype(np.int8), categories=["ok", "error"]),
        "latency_ms": columns.latency,
        "error_type": _text(error_types[columns.error], text, pd),
        "error": _text(columns.messages, text, pd),
        "n_results": columns.n_results,
        "answer": _text(columns.answers, text, pd),
        "unit": _text(units[columns.unit], text, pd),
    }
    for name in columns.metrics:
        data[name] = _score_column(report, name, pd, np)
    return frame_of(data, copy=False)


def _text_dtype(pd: Any) -> Any:
    """The dtype pandas gives a column of strings (``str`` in pandas 3, ``object`` before)."""
    return pd.Series(["x"]).dtype


def _text(values: Any, dtype: Any, pd: Any) -> Any:
    """A text column, Python-stored if it holds a lone surrogate (Arrow-backed strings cannot)."""
    return text_array(values, dtype)


_EXACT = 2**53
"""Integers up to this size are exact as float64; a larger one is read back from the report."""
_INT64 = (-(2**63), 2**63 - 1)


def _raw_values(report: EvaluationReport, column: MetricColumn, entries: Any, np: Any) -> Any:
    """``column.raw_values(entries)``, with every integer a float64 cannot hold (beyond 2**53) read
    from the report itself, so it is the exact integer the report holds, never a rounded one."""
    out = column.raw_values(entries)
    big = np.flatnonzero((column.kinds[entries] == INT) & ~(np.abs(column.values[entries]) < _EXACT))
    results = report.case_results
    for at in big.tolist():
        entry = int(entries[at])
        value = results[int(column.rows[entry])].scores[int(column.positions[entry])].value
        if isinstance(value, int) and not isinstance(value, bool):
            out[at] = value
    return out


def _big_int_column(report: EvaluationReport, column: MetricColumn, keep: Any, n: int, pd: Any, np: Any) -> Any:
    """A numeric score column holding an integer beyond 2**53 (a float64 would round it): nullable
    ``Int64`` when every value is an integer within int64, else Python objects (the exact ints and
    floats; Parquet stores such a column as JSON text, read back exact)."""
    values = _raw_values(report, column, keep, np)
    rows = column.rows[keep]
    ints = all(isinstance(v, int) for v in values)
    if ints and all(_INT64[0] <= v <= _INT64[1] for v in values):
        dense = np.zeros(n, dtype=np.int64)
        dense[rows] = np.array(values.tolist(), dtype=np.int64)
        mask = np.ones(n, dtype=bool)
        mask[rows] = False
        return pd.arrays.IntegerArray(dense, mask)
    cells = np.full(n, None, dtype=object)
    cells[rows] = values
    return pd.Series(cells, dtype=object)  # (an array: pandas 2.0's DataFrame tries floats, and overflows)


def _score_column(report: EvaluationReport, name: str, pd: Any, np: Any) -> Any:
    """A metric's column of :func:`cases_frame`: each row's last score of that name; an
    evaluator that raised has no value, so it does not turn a numeric column into text."""
    columns = report.columns
    column = columns.metric(name)
    last = column.last()
    kinds = column.kinds[last]
    keep = last[kinds != ERROR]
    rows = column.rows[keep]
    kept = column.kinds[keep]
    if keep.size and bool(np.all(kept == BOOL)):
        values = np.zeros(columns.n, dtype=bool)
        values[rows] = column.values[keep] == 1.0
        mask = np.ones(columns.n, dtype=bool)
        mask[rows] = False
        return pd.arrays.BooleanArray(values, mask)
    if keep.size and bool(np.all((kept == FLOAT) | (kept == INT))):
        if not bool(np.all((kept != INT) | (np.abs(column.values[keep]) < _EXACT))):
            return _big_int_column(report, column, keep, columns.n, pd, np)
        dense = np.full(columns.n, np.nan)
        dense[rows] = column.values[keep]
        return dense
    cells = np.full(columns.n, None, dtype=object)
    cells[rows] = _raw_values(report, column, keep, np)
    return pd.array(cells, dtype="object")


def scores_frame(report: EvaluationReport) -> pd.DataFrame:
    """Tidy scores: one row per score of every case result.

    Columns: ``case_id, query_mode, metric, value`` (the raw value: number, bool or
    text; an integer exactly as the report holds it, however large), ``numeric`` (as
    Heta's summary counts it, a float64: bool -> 1.0/0.0, text -> NaN, an integer beyond
    2**53 the nearest float, as Heta's mean adds it),
    ``kind`` (``bool``/``number``/``text``), ``passed`` (nullable boolean) and
    ``skipped`` (the evaluator had no gold data; Heta still averages it in as 0).

    Args:
        report: the evaluation report.

    Returns:
        The DataFrame described above.
    """
    import numpy as np
    import pandas as pd

    columns = report.columns
    parts = [columns.metric(name) for name in columns.metrics]
    rows = _concat(np, [part.rows for part in parts], np.int32)
    order = np.lexsort((_concat(np, [part.positions for part in parts], np.int32), rows))
    rows = rows[order]
    metric_ids = np.repeat(np.arange(len(parts), dtype=np.int32), [part.rows.size for part in parts])[order]
    kinds = _concat(np, [part.kinds for part in parts], np.int8)[order]
    flags = _concat(np, [part.flags for part in parts], np.int8)[order]
    values = _concat(np, [_raw_values(report, part, np.arange(part.rows.size), np) for part in parts], object)[order]
    numeric = _concat(np, [part.values for part in parts], np.float64)[order]
    text = _text_dtype(pd)
    modes = np.array(columns.modes, dtype=object)
    names = np.array(columns.metrics, dtype=object)
    passed = (flags & PASSED) != 0
    kind_codes = np.where(kinds == BOOL, 0, np.where((kinds == FLOAT) | (kinds == INT), 1, 2)).astype(np.int8)
    frame = frame_of(
        {
            "case_id": _text(columns.case_ids[columns.case[rows]], text, pd),
            "query_mode": _text(modes[columns.mode[rows]], text, pd),
            "metric": _text(names[metric_ids], text, pd),
            "value": pd.array(values, dtype="object"),
            "numeric": numeric,
            "kind": pd.Categorical.from_codes(kind_codes, categories=["bool", "number", "text"]),
            "passed": pd.arrays.BooleanArray((flags & PASSED_TRUE) != 0, ~passed),
            "skipped": (flags & SKIPPED) != 0,
        },
        copy=False,
    )
    return frame


def _concat(np: Any, arrays: list[Any], dtype: Any) -> Any:
    return np.concatenate(arrays).astype(dtype, copy=False) if arrays else np.zeros(0, dtype=dtype)


SUMMARY_COLUMNS = (*RECORD_KEYS, "heta_summary", "std", "min", "max", "note")
"""Columns of :func:`summary_frame`: :data:`~heta_nb.model.summary.RECORD_KEYS` (the one
summary every output reads), then Heta's stored number, the spread and a note."""


def summary_frame(report: EvaluationReport, *, confidence: float = 0.95) -> pd.DataFrame:
    """Mode × metric statistics, one row each, in mode then evaluator order.

    The columns are the one summary every view and export reads
    (:meth:`~heta_nb.model.summary.MetricSummary.record`): ``mean`` is the mean of the
    scored values (skipped scores, which have no gold data, left out), over ``n`` values,
    with its interval ``ci_low``/``ci_high`` (Wilson for booleans and 0/1 numbers, else
    Student-t). ``status`` is ``"scored"`` when there is a number; otherwise ``mean`` and
    the interval are NaN, ``n`` is 0 and ``reason`` says why: ``"n/a"`` (the mode cannot
    produce the metric: ``"full_text_search returns no answers"``), ``"errored"`` (every
    score was an evaluator error), ``"skipped"`` (no gold data anywhere) or ``"labels"``.
    ``cases`` of the mode, ``errors`` (cases that errored, so have no score),
    ``evaluator_errors`` (scores whose evaluator raised) and ``skipped`` say what the mean
    leaves out. Heta's own number (skipped scores averaged in as 0) is ``heta_mean``
    over ``heta_n``; ``heta_summary`` is what the report file stores for it. ``std``,
    ``min`` and ``max`` are of the scored values; ``note`` says in words where Heta's
    number would mislead.

    Args:
        report: the evaluation report.
        confidence: level of the intervals (also in ``frame.attrs["confidence"]``).

    Returns:
        The DataFrame described above, columns :data:`SUMMARY_COLUMNS`.
    """
    import pandas as pd

    stored = report.score_summary
    rows = []
    nan = math.nan
    for item in report.metric_summaries(confidence=confidence):
        scored = item.scored
        rows.append(
            {
                **item.record(),
                "heta_summary": stored.get(item.key, nan),
                "std": item.std if scored else nan,
                "min": item.minimum if scored else nan,
                "max": item.maximum if scored else nan,
                "note": item.note,
            }
        )
    frame = frame_of(rows, columns=list(SUMMARY_COLUMNS))
    for name in ("n", "cases", "errors", "evaluator_errors", "skipped", "heta_n"):
        frame[name] = frame[name].astype("int64")
    for name in ("mean", "ci_low", "ci_high", "confidence", "heta_mean", "heta_summary", "std", "min", "max"):
        frame[name] = frame[name].astype("float64")
    text = _text_dtype(pd)
    for name in ("query_mode", "metric", "status", "reason", "kind", "note"):
        frame[name] = pd.Series(text_array(list(frame[name]), text), index=frame.index)
    frame.attrs["confidence"] = confidence
    return frame
