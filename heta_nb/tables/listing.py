"""A store listing as a pandas table: one row per stored report, without its cases.

pandas is imported when :func:`summaries_frame` is called.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, Protocol

from heta_nb._util.frames import frame as frame_of

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd

__all__ = ["LISTING_COLUMNS", "ListedReport", "summaries_frame"]


class ListedReport(Protocol):
    """What :func:`summaries_frame` reads of a listed report (:class:`heta_nb.store.ReportSummary` has it)."""

    @property
    def key(self) -> str: ...
    @property
    def knowledge_base(self) -> str: ...
    @property
    def knowledge_base_name(self) -> str: ...
    @property
    def report_id(self) -> str: ...
    @property
    def benchmark(self) -> str: ...
    @property
    def benchmark_version(self) -> str: ...
    @property
    def benchmark_split(self) -> str: ...
    @property
    def task_type(self) -> str: ...
    @property
    def query_modes(self) -> Sequence[str]: ...
    @property
    def cases(self) -> int: ...
    @property
    def errors(self) -> int: ...
    @property
    def started_at(self) -> str: ...
    @property
    def finished_at(self) -> str: ...
    @property
    def duration_s(self) -> float | None: ...
    @property
    def status(self) -> str: ...
    @property
    def size_bytes(self) -> int: ...
    @property
    def score_summary(self) -> Mapping[str, float]: ...
    @property
    def means(self) -> Mapping[str, float | None]: ...


LISTING_COLUMNS = (
    "kb",
    "report_id",
    "knowledge_base_name",
    "benchmark",
    "benchmark_version",
    "split",
    "task_type",
    "modes",
    "cases",
    "errors",
    "status",
    "started_at",
    "finished_at",
    "duration_s",
    "size_bytes",
    "key",
)


def summaries_frame(summaries: Sequence[ListedReport]) -> pd.DataFrame:
    """A store listing as a DataFrame (see :meth:`heta_nb.ReportStore.list`).

    Args:
        summaries: one row each, e.g. :class:`heta_nb.store.ReportSummary` objects.

    Returns:
        Columns :data:`LISTING_COLUMNS`, then per ``"mode.metric"`` key (sorted) the headline
        mean every view shows first (the mean of the scored values; NaN where the report has
        no number for it: n/a, or no such metric), then the same keys prefixed ``heta_mean:``
        with Heta's own ``score_summary`` value (skipped scores averaged in as 0).
    """

    metric_keys: dict[str, None] = {}
    for summary in summaries:
        metric_keys.update(dict.fromkeys(summary.score_summary))
        metric_keys.update(dict.fromkeys(summary.means))
    rows = []
    for s in summaries:
        row: dict[str, Any] = {
            "kb": s.knowledge_base,
            "report_id": s.report_id,
            "knowledge_base_name": s.knowledge_base_name,
            "benchmark": s.benchmark,
            "benchmark_version": s.benchmark_version,
            "split": s.benchmark_split,
            "task_type": s.task_type,
            "modes": ", ".join(s.query_modes),
            "cases": s.cases,
            "errors": s.errors,
            "status": s.status,
            "started_at": s.started_at,
            "finished_at": s.finished_at,
            "duration_s": s.duration_s,
            "size_bytes": s.size_bytes,
            "key": s.key,
        }
        for key in metric_keys:
            value = s.means.get(key)
            row[key] = math.nan if value is None else value
        for key in metric_keys:
            row[f"heta_mean:{key}"] = s.score_summary.get(key, math.nan)
        rows.append(row)
    keys = sorted(metric_keys)
    return frame_of(rows, columns=[*LISTING_COLUMNS, *keys, *(f"heta_mean:{k}" for k in keys)])
