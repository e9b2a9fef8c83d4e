"""Distribution tables of reports: score quantiles, per-label breakdowns, worst cases, latency.

Everything here returns a pandas DataFrame; pandas is imported when a function is called.

Conventions shared by every table (and by :mod:`heta_nb.plots`):

* Skipped scores (the evaluator had no gold data; Heta records 0.0/False and averages
  it in) are left out of the statistics by default and counted in a ``skipped`` column.
  Pass ``include_skipped=True`` for Heta's semantics.
* Errored case results have no scores at all; they are counted (``errors``), never
  averaged.
* Quantiles use linear interpolation (numpy's and pandas' default); standard deviations
  are sample ones (ddof=1); intervals are Wilson for booleans and for numbers that are
  all 0 or 1, else Student-t (clipped to [0, 1] when every value lies there), exactly as in
  :func:`heta_nb.model.summary.summarize_metrics`.
"""

from __future__ import annotations

import json
import math
from collections.abc import Hashable, Iterable, Sequence
from typing import TYPE_CHECKING, Any

from heta_nb import stats
from heta_nb._util.frames import frame as frame_of
from heta_nb._util.frames import with_python_strings_if_refused
from heta_nb._util.text import shorten
from heta_nb.model.report import EvaluationReport
from heta_nb.model.summary import as_float, numeric_value
from heta_nb.tables.report import cases_frame

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd

    from heta_nb.benchmark.types import Benchmark

__all__ = [
    "ANSWER_CHARS",
    "DEFAULT_QUANTILES",
    "LATENCY_COLUMNS",
    "MISSING_LABEL",
    "interval",
    "label_breakdown",
    "latency_quantiles",
    "metric_kind",
    "numeric_metrics",
    "quantile_column",
    "score_quantiles",
    "select_metrics",
    "select_modes",
    "worst_cases",
]

DEFAULT_QUANTILES: tuple[float, ...] = (0.0, 0.1, 0.25, 0.5, 0.75, 0.9, 1.0)
LATENCY_COLUMNS = ("n", "errors", "mean", "p50", "p90", "p95", "p99", "max")
MISSING_LABEL = "(none)"
"""Label value used for benchmark cases that do not carry the label at all."""

ANSWER_CHARS = 200
"""Answers and error messages in :func:`worst_cases` are cut to this many characters."""


# -- helpers ------------------------------------------------------------------------------
def quantile_column(q: float) -> str:
    """Column name of quantile ``q``: ``0.5 -> "p50"``, ``0.025 -> "p2.5"``."""
    return f"p{round(q * 100, 6):g}"


def numeric_metrics(report: EvaluationReport) -> tuple[str, ...]:
    """Metric names that have at least one numeric (number or bool) value."""
    seen: dict[str, None] = {}
    for result in report.raw["case_results"]:
        for score in result["scores"]:
            value = score["value"]
            if isinstance(value, (bool, int, float)):
                seen.setdefault(score["name"], None)
    return tuple(name for name in report.metric_names if name in seen)


def select_metrics(report: EvaluationReport, metrics: str | Iterable[str] | None) -> tuple[str, ...]:
    """Validate ``metrics`` against the report (default: every numeric metric).

    Raises:
        KeyError: a metric the report does not have (the message lists those it has).
        ValueError: a metric whose scores are all text (no statistics exist).
    """
    numeric = numeric_metrics(report)
    if metrics is None:
        return numeric
    chosen = (metrics,) if isinstance(metrics, str) else tuple(metrics)
    for name in chosen:
        if name not in report.metric_names:
            raise KeyError(f"report {report.report_id!r} has no metric {name!r}; metrics: {list(report.metric_names)}")
        if name not in numeric:
            raise ValueError(f"metric {name!r} has only text values; numeric metrics: {list(numeric)}")
    return tuple(dict.fromkeys(chosen))


def select_modes(report: EvaluationReport, modes: str | Iterable[str] | None) -> tuple[str, ...]:
    """Validate ``modes`` against the report (default: all, in report order)."""
    if modes is None:
        return report.modes
    chosen = (modes,) if isinstance(modes, str) else tuple(modes)
    for mode in chosen:
        if mode not in report.modes:
            raise KeyError(f"report {report.report_id!r} has no mode {mode!r}; modes: {list(report.modes)}")
    return tuple(dict.fromkeys(chosen))


def metric_kind(report: EvaluationReport, metric: str) -> str:
    """``"bool"`` when every numeric value of ``metric`` is a bool, ``"number"`` when some
    numeric value is a number, ``"text"`` when it has no numeric value (or ``""`` if absent)."""
    kinds = set()
    for result in report.raw["case_results"]:
        for score in result["scores"]:
            if score["name"] == metric:
                value = score["value"]
                kinds.add("bool" if isinstance(value, bool) else "text" if isinstance(value, str) else "number")
    if "number" in kinds:
        return "number"
    if "bool" in kinds:
        return "bool"
    return "text" if kinds else ""


def interval(values: Sequence[float], kind: str, confidence: float) -> tuple[float, float]:
    """The confidence interval of the mean of ``values``: Wilson for bools and for numbers
    that are all 0 or 1, else Student-t (clipped to [0, 1] when every value lies there)."""
    if kind == "bool" or (values and stats.is_binary(values)):
        return stats.wilson_interval(int(round(sum(values))), len(values), confidence)
    low, high = stats.t_interval(values, confidence)
    if values and all(0.0 <= v <= 1.0 for v in values):
        low, high = max(0.0, low), min(1.0, high)
    return low, high


def _hashable(value: Any) -> Hashable:
    """A label value usable as a group key (lists and dicts become their JSON text)."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return MISSING_LABEL
    try:
        hash(value)
    except TypeError:
        return json.dumps(value, sort_keys=True, default=str)
    return value  # type: ignore[no-any-return]


def _sort_key(value: Any) -> tuple[int, Any]:
    if value == MISSING_LABEL:
        return (3, "")
    if isinstance(value, bool):
        return (0, int(value))
    if isinstance(value, (int, float)):
        return (1, value)
    return (2, str(value))


def _shorten_text(value: Any) -> Any:
    """Text cut to :data:`ANSWER_CHARS` characters (the last one ``…``); a missing value stays missing."""
    return shorten(value, ANSWER_CHARS) if isinstance(value, str) else value


def _label_map(benchmark: Benchmark, label: str) -> dict[str, Hashable]:
    available = sorted({key for case in benchmark.cases for key in case.labels})
    if label not in available:
        where = f"benchmark {benchmark.manifest.key!r}"
        if not available:
            raise KeyError(f"{where} has no case labels (asked for {label!r})")
        raise KeyError(f"{where} has no label {label!r}; labels: {available}")
    return {case.case_id: _hashable(case.labels.get(label)) for case in benchmark.cases}


# -- tables -------------------------------------------------------------------------------
def score_quantiles(
    report: EvaluationReport,
    *,
    metrics: str | Iterable[str] | None = None,
    quantiles: Sequence[float] = DEFAULT_QUANTILES,
    include_skipped: bool = False,
) -> pd.DataFrame:
    """Distribution of every numeric metric per mode.

    Args:
        report: the evaluation report.
        metrics: metric names (default: every metric with numeric or bool values).
        quantiles: quantiles in [0, 1]; columns are named ``p0, p10, ..., p100``.
        include_skipped: count skipped scores (as 0) like Heta does.

    Returns:
        Indexed by ``(mode, metric)`` in mode then evaluator order. Columns: ``kind``
        (``bool``/``number``), ``n`` (values described), ``skipped`` (left out unless
        ``include_skipped``), ``errors`` (errored cases of the mode, which have no
        score), ``mean``, ``std`` (ddof=1) and one column per quantile. Bools count as 1/0.
    """
    import numpy as np
    import pandas as pd

    qs = tuple(float(q) for q in quantiles)
    if any(not 0.0 <= q <= 1.0 for q in qs):
        raise ValueError(f"quantiles must lie in [0, 1], got {list(quantiles)}")
    names = select_metrics(report, metrics)
    counts = report.mode_counts()
    collected = _numeric_scores(report, set(names))
    rows = []
    index = []
    qcols = [quantile_column(q) for q in qs]
    for mode in report.modes:
        for metric in names:
            entry = collected.get((mode, metric))
            if entry is None:
                continue
            values, skips, kind = entry
            kept = [v for v, s in zip(values, skips) if include_skipped or not s]
            array = np.asarray(kept, dtype=float)
            row: dict[str, Any] = {
                "kind": kind,
                "n": len(kept),
                "skipped": sum(skips),
                "errors": counts[mode].errors,
                "mean": stats.mean(kept),
                "std": stats.sample_std(kept),
            }
            qvalues = np.quantile(array, qs) if len(kept) else [math.nan] * len(qs)
            row.update({col: float(v) for col, v in zip(qcols, qvalues)})
            rows.append(row)
            index.append((mode, metric))
    columns = ["kind", "n", "skipped", "errors", "mean", "std", *qcols]
    frame = frame_of(rows, columns=columns, index=pd.MultiIndex.from_tuples(index, names=["mode", "metric"])).astype(
        {"n": "int64", "skipped": "int64", "errors": "int64"}
    )
    frame.attrs.update({"include_skipped": include_skipped, "quantiles": qs})
    return frame


def _numeric_scores(
    report: EvaluationReport, metrics: set[str]
) -> dict[tuple[str, str], tuple[list[float], list[bool], str]]:
    """``(mode, metric) -> (values, skipped flags, kind)`` for numeric and bool scores."""
    collected: dict[tuple[str, str], tuple[list[float], list[bool], list[bool]]] = {}
    for result in report.raw["case_results"]:
        mode = result["query_mode"]
        for score in result["scores"]:
            value = score["value"]
            if score["name"] not in metrics or isinstance(value, str):
                continue
            values, skips, bools = collected.setdefault((mode, score["name"]), ([], [], []))
            values.append(as_float(value))
            skips.append(score["metadata"].get("skipped") is True)
            bools.append(isinstance(value, bool))
    return {key: (v, s, "bool" if all(b) else "number") for key, (v, s, b) in collected.items()}


def label_breakdown(
    report: EvaluationReport,
    benchmark: Benchmark,
    label: str,
    *,
    metrics: str | Iterable[str] | None = None,
    confidence: float = 0.95,
    include_skipped: bool = False,
) -> pd.DataFrame:
    """Mean and confidence interval of each metric per value of one case label.

    Reports do not store labels, so the benchmark the report was run on supplies them
    (joined on ``case_id``). Every label value × mode × metric gets a row, also when no
    case of that value has a score (``n == 0``, NaN statistics).

    Args:
        report: the evaluation report.
        benchmark: the benchmark whose case labels slice the report.
        label: a case label, e.g. ``"difficulty"``.
        metrics: metric names (default: every numeric or bool metric).
        confidence: level of the intervals.
        include_skipped: count skipped scores (as 0) like Heta does.

    Returns:
        Indexed by ``(<label>, mode, metric)``; label values sorted, cases without the
        label grouped under ``"(none)"``. Columns: ``cases`` (benchmark cases with this
        value), ``n``, ``mean``, ``ci_low``, ``ci_high`` (Wilson for bools and 0/1
        numbers, else Student-t), ``skipped``, ``errors`` (results of the mode that errored), and
        ``cases_missing_from_report`` (cases with no result in the mode) when any are.
        ``attrs["cases_not_in_benchmark"]`` lists report case ids the benchmark lacks.

    Raises:
        KeyError: unknown label (the message lists the benchmark's labels), metric or mode.
        ValueError: the report and the benchmark share no case id.
    """
    import pandas as pd

    labels = _label_map(benchmark, label)
    names = select_metrics(report, metrics)
    kinds = {name: metric_kind(report, name) for name in names}
    present: dict[str, set[str]] = {mode: set() for mode in report.modes}
    errored: dict[str, set[str]] = {mode: set() for mode in report.modes}
    groups: dict[tuple[Hashable, str, str], tuple[list[float], list[bool]]] = {}
    outside: set[str] = set()
    wanted = set(names)
    for result in report.raw["case_results"]:
        case_id, mode = result["case_id"], result["query_mode"]
        if case_id not in labels:
            outside.add(case_id)
            continue
        present[mode].add(case_id)
        if result["error"] is not None:
            errored[mode].add(case_id)
        value = labels[case_id]
        for score in result["scores"]:
            raw = score["value"]
            if score["name"] not in wanted or isinstance(raw, str):
                continue
            values, skips = groups.setdefault((value, mode, score["name"]), ([], []))
            values.append(float(raw))
            skips.append(score["metadata"].get("skipped") is True)
    if not any(present.values()):
        raise ValueError(
            f"report {report.report_id!r} and benchmark {benchmark.manifest.key!r} share no case id "
            f"(report cases look like {sorted(outside)[:3]}, benchmark cases like {list(labels)[:3]})"
        )
    by_value: dict[Hashable, set[str]] = {}
    for case_id, value in labels.items():
        by_value.setdefault(value, set()).add(case_id)
    rows = []
    index = []
    for value in sorted(by_value, key=_sort_key):
        cases = by_value[value]
        for mode in report.modes:
            missing = len(cases - present[mode])
            errors = len(cases & errored[mode])
            for metric in names:
                values, skips = groups.get((value, mode, metric), ([], []))
                kept = [v for v, s in zip(values, skips) if include_skipped or not s]
                low, high = interval(kept, kinds[metric], confidence)
                rows.append(
                    {
                        "cases": len(cases),
                        "n": len(kept),
                        "mean": stats.mean(kept),
                        "ci_low": low,
                        "ci_high": high,
                        "skipped": sum(skips),
                        "errors": errors,
                        "cases_missing_from_report": missing,
                    }
                )
                index.append((value, mode, metric))
    columns = ["cases", "n", "mean", "ci_low", "ci_high", "skipped", "errors", "cases_missing_from_report"]
    frame = frame_of(rows, columns=columns, index=pd.MultiIndex.from_tuples(index, names=[label, "mode", "metric"]))
    ints = ["cases", "n", "skipped", "errors", "cases_missing_from_report"]
    frame = frame.astype(dict.fromkeys(ints, "int64"))
    if not (frame["cases_missing_from_report"] > 0).any():
        frame = frame.drop(columns="cases_missing_from_report")
    frame.attrs.update(
        {
            "label": label,
            "confidence": confidence,
            "include_skipped": include_skipped,
            "kinds": kinds,
            "cases_not_in_benchmark": sorted(outside),
        }
    )
    return frame


@with_python_strings_if_refused  # (a lone surrogate in a mode, metric or text)
def worst_cases(
    report: EvaluationReport,
    metric: str,
    *,
    mode: str | None = None,
    n: int | None = 10,
    benchmark: Benchmark | None = None,
    include_skipped: bool = False,
    include_errors: bool = True,
) -> pd.DataFrame:
    """The case results that did worst on ``metric``: errors first, then lowest scores.

    Errors (which have no score) come first, ordered by case id; then scored results by
    value ascending, ties broken by case id and mode order. Skipped scores are left out
    by default (their 0 is "no gold data", not a failure), as are results that simply
    lack the metric.

    Args:
        report: the evaluation report.
        metric: a numeric or bool metric.
        mode: one query mode (default: every mode, ranked together).
        n: rows to return (None: all).
        benchmark: adds the cases' labels as ``label.<name>`` columns.
        include_skipped: keep skipped scores in the ranking.
        include_errors: list errored results first (default) or leave them out.

    Returns:
        Columns ``case_id, mode, status, error_type, error, <metric>, query, answer``
        (error and answer truncated to 200 characters), the other metrics' values, then
        labels when a benchmark is given.
    """
    import pandas as pd

    if metric not in report.metric_names:
        raise KeyError(f"report {report.report_id!r} has no metric {metric!r}; metrics: {list(report.metric_names)}")
    if metric_kind(report, metric) == "text":
        raise ValueError(f"metric {metric!r} has only text values; worst cases need numbers or bools")
    modes = select_modes(report, mode)
    if n is not None and n < 0:
        raise ValueError(f"n must be >= 0 or None, got {n}")
    skipped = {
        (r["case_id"], r["query_mode"])
        for r in report.raw["case_results"]
        for s in r["scores"]
        if s["name"] == metric and s["metadata"].get("skipped") is True
    }
    frame = cases_frame(report).rename(columns={"query_mode": "mode"})
    frame = frame[frame["mode"].isin(modes)].copy()
    frame["_order"] = frame["mode"].map({m: i for i, m in enumerate(modes)})
    # value by value: pd.to_numeric overflows on an integer of 400 digits (numeric_value: inf)
    values = (numeric_value(v) for v in frame[metric].astype("object"))
    frame["_value"] = pd.Series([math.nan if v is None else v for v in values], index=frame.index, dtype="float64")
    is_error = (frame["status"] == "error").to_numpy()
    keys = list(zip(frame["case_id"], frame["mode"]))
    is_skipped = pd.Series([key in skipped for key in keys], index=frame.index)
    keep = frame["_value"].notna() & (include_skipped | ~is_skipped)
    errors = frame[is_error] if include_errors else frame.iloc[0:0]
    errors = errors.sort_values(["case_id", "_order"], kind="stable")
    scored = frame[~is_error & keep.to_numpy()].sort_values(["_value", "case_id", "_order"], kind="stable")
    result = pd.concat([errors, scored])
    if n is not None:
        result = result.head(n)
    others = [name for name in report.metric_names if name != metric]
    columns = ["case_id", "mode", "status", "error_type", "error", metric, "query", "answer", *others]
    result = result[columns].reset_index(drop=True)
    result["answer"] = result["answer"].map(_shorten_text).astype("object")
    result["error"] = result["error"].map(_shorten_text).astype("object")
    result["status"] = result["status"].astype("str")
    if benchmark is not None:
        labels = benchmark.labels_frame()
        renamed = {name: f"label.{name}" for name in labels.columns if name != "case_id"}
        if renamed:
            result = result.merge(labels.rename(columns=renamed), on="case_id", how="left")
    result.attrs.update({"metric": metric, "include_skipped": include_skipped, "skipped_left_out": len(skipped)})
    return result


def latency_quantiles(report: EvaluationReport, *, include_errors: bool = False) -> pd.DataFrame:
    """Latency (``latency_ms``: query plus evaluation time) per mode.

    Args:
        report: the evaluation report.
        include_errors: also count errored results (usually fast failures, which would
            flatter the distribution); by default they are only counted in ``errors``.

    Returns:
        Indexed by ``mode`` (every mode of the report). Columns: ``n`` (results with a
        latency), ``errors``, ``mean``, ``p50``, ``p90``, ``p95``, ``p99`` (linear
        interpolation) and ``max``, all in milliseconds.
    """
    import numpy as np
    import pandas as pd

    values: dict[str, list[float]] = {mode: [] for mode in report.modes}
    errors = dict.fromkeys(report.modes, 0)
    for result in report.raw["case_results"]:
        mode = result["query_mode"]
        failed = result["error"] is not None
        errors[mode] += failed
        latency = result["latency_ms"]
        if latency is not None and (include_errors or not failed):
            values[mode].append(float(latency))
    rows = []
    for mode in report.modes:
        array = np.asarray(values[mode], dtype=float)
        if len(array):
            p50, p90, p95, p99 = np.quantile(array, (0.5, 0.9, 0.95, 0.99))
            row = [len(array), errors[mode], stats.mean(values[mode]), p50, p90, p95, p99, array.max()]
        else:
            row = [0, errors[mode], *([math.nan] * 6)]
        rows.append(row)
    frame = frame_of(rows, columns=list(LATENCY_COLUMNS), index=pd.Index(report.modes, name="mode"))
    frame = frame.astype({"n": "int64", "errors": "int64", **dict.fromkeys(LATENCY_COLUMNS[2:], "float64")})
    frame.attrs.update({"unit": "ms", "include_errors": include_errors})
    return frame
