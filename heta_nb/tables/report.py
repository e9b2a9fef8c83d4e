"""pandas tables of one report: its cases, its tidy scores, its mode × metric summary.

pandas is imported when a function here is called, never by the model.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

from heta_nb.model.report import EvaluationReport
from heta_nb.model.summary import as_float, is_evaluator_error, numeric_value

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd

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
    Text columns have pandas' string dtype even when empty or all missing.

    Args:
        report: the evaluation report.

    Returns:
        The DataFrame described above.
    """
    import pandas as pd

    metrics = report.metric_names
    columns: dict[str, list[Any]] = {name: [] for name in CASE_COLUMNS}
    score_columns: dict[str, list[Any]] = {name: [] for name in metrics}
    for result in report.raw["case_results"]:
        response = result["response"]
        error = result["error"]
        columns["case_id"].append(result["case_id"])
        columns["query_mode"].append(result["query_mode"])
        columns["query"].append(result["query"])
        columns["status"].append("ok" if error is None else "error")
        columns["latency_ms"].append(result["latency_ms"])
        columns["error_type"].append(error["error_type"] if error else None)
        columns["error"].append(error["message"] if error else None)
        columns["n_results"].append(len(response["results"]) if response else 0)
        columns["answer"].append(response["answer"] if response else None)
        unit = result["metadata"].get("benchmark_run_unit")
        columns["unit"].append(unit if isinstance(unit, str) else None)
        values = {score["name"]: _cell_value(score) for score in result["scores"]}
        for name in metrics:
            score_columns[name].append(values.get(name))
    frame = pd.DataFrame(columns)
    text = _text_dtype(pd)
    for name in _TEXT_CASE_COLUMNS:  # the same dtype with or without rows, with or without values
        frame[name] = pd.Series(columns[name], dtype=text, index=frame.index)
    frame["latency_ms"] = pd.to_numeric(frame["latency_ms"], errors="coerce").astype("float64")
    frame["n_results"] = frame["n_results"].astype("int64")
    frame["status"] = pd.Categorical(frame["status"], categories=["ok", "error"])
    for name in metrics:
        frame[name] = _score_series(score_columns[name], pd)
    return frame


_TEXT_CASE_COLUMNS = ("case_id", "query_mode", "query", "error_type", "error", "answer", "unit")


def _text_dtype(pd: Any) -> Any:
    """The dtype pandas gives a column of strings (``str`` in pandas 3, ``object`` before)."""
    return pd.Series(["x"]).dtype


def _cell_value(score: Any) -> Any:
    """A score's value for a table cell: an evaluator that raised (value ``"error"`` with
    ``metadata.error``) has no value, so it does not turn a numeric column into text."""
    return None if is_evaluator_error(score) else score["value"]


def _score_series(values: list[Any], pd: Any) -> Any:
    present = [v for v in values if v is not None]
    if present and all(isinstance(v, bool) for v in present):
        return pd.array(values, dtype="boolean")
    if present and all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in present):
        return pd.array([math.nan if v is None else as_float(v) for v in values], dtype="float64")
    return pd.array(values, dtype="object")


def scores_frame(report: EvaluationReport) -> pd.DataFrame:
    """Tidy scores: one row per score of every case result.

    Columns: ``case_id, query_mode, metric, value`` (the raw value: number, bool or
    text), ``numeric`` (as Heta's summary counts it: bool -> 1.0/0.0, text -> NaN),
    ``kind`` (``bool``/``number``/``text``), ``passed`` (nullable boolean) and
    ``skipped`` (the evaluator had no gold data; Heta still averages it in as 0).

    Args:
        report: the evaluation report.

    Returns:
        The DataFrame described above.
    """
    import pandas as pd

    rows: dict[str, list[Any]] = {
        k: [] for k in ("case_id", "query_mode", "metric", "value", "numeric", "kind", "passed", "skipped")
    }
    for result in report.raw["case_results"]:
        for score in result["scores"]:
            value = score["value"]
            numeric = numeric_value(value)
            rows["case_id"].append(result["case_id"])
            rows["query_mode"].append(result["query_mode"])
            rows["metric"].append(score["name"])
            rows["value"].append(value)
            rows["numeric"].append(math.nan if numeric is None else numeric)
            rows["kind"].append("bool" if isinstance(value, bool) else "text" if numeric is None else "number")
            rows["passed"].append(score["passed"])
            rows["skipped"].append(score["metadata"].get("skipped") is True)
    frame = pd.DataFrame(rows)
    text = _text_dtype(pd)
    for name in ("case_id", "query_mode", "metric"):
        frame[name] = pd.Series(rows[name], dtype=text, index=frame.index)
    frame["value"] = pd.Series(rows["value"], dtype="object", index=frame.index)
    frame["numeric"] = frame["numeric"].astype("float64")
    frame["kind"] = pd.Categorical(frame["kind"], categories=["bool", "number", "text"])
    frame["passed"] = pd.array(rows["passed"], dtype="boolean")
    frame["skipped"] = frame["skipped"].astype("bool")
    return frame


SUMMARY_COLUMNS = (
    "query_mode",
    "metric",
    "kind",
    "mean",
    "n",
    "cases",
    "errors",
    "evaluator_errors",
    "skipped",
    "mean_scored",
    "std",
    "ci_low",
    "ci_high",
    "min",
    "max",
    "heta_summary",
    "note",
)


def summary_frame(report: EvaluationReport, *, confidence: float = 0.95) -> pd.DataFrame:
    """Mode × metric statistics, one row each, in mode then evaluator order.

    ``mean`` uses Heta's semantics, so it equals the report's ``score_summary`` entry
    (shown beside it as ``heta_summary``). What that number hides is made visible:
    ``n`` values averaged, ``cases`` of the mode, ``errors`` (dropped by Heta), ``evaluator_errors``
    (scores whose evaluator raised, left out of ``n``),
    ``skipped`` (averaged in by Heta as 0), ``mean_scored`` (skipped left out),
    ``std``, the ``ci_low``/``ci_high`` interval (Wilson for booleans and 0/1 numbers,
    else Student-t)
    and a plain-words ``note`` wherever Heta's number would mislead.

    Args:
        report: the evaluation report.
        confidence: level of the intervals (also in ``frame.attrs["confidence"]``).

    Returns:
        The DataFrame described above, columns :data:`SUMMARY_COLUMNS`.
    """
    import pandas as pd

    stored = report.score_summary
    rows = []
    for item in report.metric_summaries(confidence=confidence):
        rows.append(
            {
                "query_mode": item.mode,
                "metric": item.metric,
                "kind": item.kind,
                "mean": item.mean,
                "n": item.n,
                "cases": item.cases,
                "errors": item.errors,
                "evaluator_errors": item.evaluator_errors,
                "skipped": item.skipped,
                "mean_scored": item.mean_scored,
                "std": item.std,
                "ci_low": item.ci_low,
                "ci_high": item.ci_high,
                "min": item.minimum,
                "max": item.maximum,
                "heta_summary": stored.get(item.key, math.nan),
                "note": item.note,
            }
        )
    frame = pd.DataFrame(rows, columns=list(SUMMARY_COLUMNS))
    for name in ("n", "cases", "errors", "evaluator_errors", "skipped"):
        frame[name] = frame[name].astype("int64")
    for name in ("mean", "mean_scored", "std", "ci_low", "ci_high", "min", "max", "heta_summary"):
        frame[name] = frame[name].astype("float64")
    text = _text_dtype(pd)
    for name in ("query_mode", "metric", "kind", "note"):
        frame[name] = pd.Series(list(frame[name]), dtype=text, index=frame.index)
    frame.attrs["confidence"] = confidence
    return frame
