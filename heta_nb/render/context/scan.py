"""What the report view reads of a report's columns (:func:`scan_report`: summaries, counts,
latencies and error groups) and the choice of the worst results of each mode
(:func:`worst_rows`), with numpy: no loop over the rows in Python."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from heta_nb.model import EvaluationReport
from heta_nb.model.columns import ReportColumns
from heta_nb.model.summary import MetricSummary
from heta_nb.render.limits import RenderLimits

__all__ = ["ErrorGroup", "ReportScan", "scan_report", "smallest_rows", "worst_rows"]


@dataclass(frozen=True)
class ErrorGroup:
    """The results of one mode that failed with one error type."""

    mode: str
    error_type: str
    count: int
    first: int
    """The row of the first such result (its message is shown)."""
    case_ids: list[str]
    """The first case ids (at most ``RenderLimits.max_error_ids``)."""


@dataclass
class ReportScan:
    """What the report view shows of a report, computed from ``report.columns``."""

    columns: ReportColumns
    summaries: list[MetricSummary]
    modes: list[str]
    """Every mode, in report order."""
    metrics: list[str]
    """Every metric, in first-seen order."""
    cases: dict[str, int]
    """Results per mode."""
    errors: dict[str, int]
    """Errored results per mode."""
    groups: list[ErrorGroup]
    """Every (mode, error type) group, largest first (then first seen)."""
    latencies: dict[str, np.ndarray] = field(default_factory=dict)
    """Per mode, its finite latencies, sorted."""

    def values(self, mode: str, metric: str) -> np.ndarray:
        """The numeric values of ``metric`` in ``mode`` (Heta's: bools as 1/0), in report order."""
        column = self.columns.metric(metric)
        chosen = column.numeric & (self.columns.mode[column.rows] == self.modes.index(mode))
        values: np.ndarray = column.values[chosen]
        return values


def scan_report(report: EvaluationReport, limits: RenderLimits) -> ReportScan:
    """Summaries, per-mode counts, latencies and error groups of ``report``.

    Args:
        report: the report (its :attr:`~heta_nb.model.EvaluationReport.columns` are read).
        limits: what the view shows at most (the case ids listed per error group).

    Returns:
        The :class:`ReportScan`.
    """
    columns = report.columns
    modes = list(columns.modes)
    count = len(modes)
    cases = np.bincount(columns.mode, minlength=count) if columns.n else np.zeros(count, np.int64)
    errors = np.bincount(columns.mode[~columns.ok], minlength=count) if columns.n else cases
    latencies = {}
    finite = np.isfinite(columns.latency)
    for index, mode in enumerate(modes):
        latencies[mode] = np.sort(columns.latency[finite & (columns.mode == index)])
    return ReportScan(
        columns=columns,
        summaries=report.metric_summaries(),
        modes=modes,
        metrics=list(columns.metrics),
        cases={mode: int(cases[i]) for i, mode in enumerate(modes)},
        errors={mode: int(errors[i]) for i, mode in enumerate(modes)},
        groups=_error_groups(columns, limits.max_error_ids),
        latencies=latencies,
    )


def _error_groups(columns: ReportColumns, max_ids: int) -> list[ErrorGroup]:
    failed = np.flatnonzero(~columns.ok)
    if not failed.size:
        return []
    kinds = len(columns.error_types)
    keys = columns.mode[failed].astype(np.int64) * kinds + columns.error[failed]
    unique, first, counts = np.unique(keys, return_index=True, return_counts=True)
    order = np.lexsort((failed[first], -counts))
    groups = []
    for slot in order.tolist():
        key = int(unique[slot])
        members = failed[keys == key][:max_ids] if max_ids > 0 else failed[:0]
        groups.append(
            ErrorGroup(
                mode=columns.modes[key // kinds],
                error_type=columns.error_types[key % kinds],
                count=int(counts[slot]),
                first=int(failed[first[slot]]),
                case_ids=columns.case_ids[columns.case[members]].tolist(),
            )
        )
    return groups


def smallest_rows(keys: np.ndarray, rows: np.ndarray, count: int) -> np.ndarray:
    """The ``count`` rows with the smallest keys, ties in row order (``rows`` increasing).

    Selects with ``np.partition`` (linear time), then orders only the few selected.
    """
    if count <= 0 or not rows.size:
        return rows[:0]
    if count < rows.size:
        bound = np.partition(keys, count - 1)[count - 1]
        below = np.flatnonzero(keys < bound)
        tied = np.flatnonzero(keys == bound)[: count - below.size]
        chosen = np.concatenate([below, tied])
    else:
        chosen = np.arange(rows.size)
    order = np.lexsort((rows[chosen], keys[chosen]))
    picked: np.ndarray = rows[chosen[order]]
    return picked


def worst_rows(columns: ReportColumns, mode: str, metric: str | None, count: int) -> list[int]:
    """The rows of the ``count`` worst results of ``mode``, in display order.

    Errors come first (report order), then results without a usable value of
    ``metric`` (missing, text or NaN), then the lowest values, then skipped scores
    (nothing to score: not a failure); ties keep report order. A result's value is its
    first score named ``metric``.
    """
    here = columns.mode == columns.modes.index(mode)
    chosen = np.flatnonzero(here & ~columns.ok)[:count]
    wanted = count - chosen.size
    ok = np.flatnonzero(here & columns.ok)
    if wanted <= 0:
        return chosen.tolist()  # type: ignore[no-any-return]
    if metric is None:
        return [*chosen.tolist(), *ok[:wanted].tolist()]
    column = columns.metric(metric)
    first = column.first()
    value = np.full(columns.n, np.nan)
    skipped = np.zeros(columns.n, dtype=bool)
    numeric = column.numeric[first]
    value[column.rows[first[numeric]]] = column.values[first[numeric]]
    skipped[column.rows[first]] = column.skipped[first]
    values = value[ok]
    usable = ~np.isnan(values)
    missing = ok[~usable][:wanted]
    keys: Any = np.where(skipped[ok], np.inf, values)[usable]
    lowest = smallest_rows(keys, ok[usable], wanted - missing.size)
    return [*chosen.tolist(), *missing.tolist(), *lowest.tolist()]
