"""A comparison's per-case tables: every aligned case with each system's value and delta, and the
cases that moved most."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from heta_nb._util.frames import frame as frame_of

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd


__all__ = ["cases_frame", "extremes"]


def cases_frame(comparison: Any, metric: str | None) -> pd.DataFrame:
    """:meth:`Comparison.cases_frame`: per case every pair compares, values and deltas."""
    import pandas as pd

    if metric is None:
        frames = [cases_frame(comparison, m) for m in comparison.metrics]
        for m, frame in zip(comparison.metrics, frames):
            frame.insert(0, "metric", m)
        return pd.concat(frames, ignore_index=True)
    aligned, base_of = comparison._aligned, comparison.base_of
    j = comparison._metric(metric)
    where = np.flatnonzero(comparison._common_mask(j))
    columns: dict[str, Any] = {
        "unit": [aligned.units[i] for i in where],
        "case_id": [aligned.case_ids[i] for i in where],
        "query": [aligned.queries[i] for i in where],
    }
    for k, name in enumerate(comparison.systems):
        columns[name] = aligned.values[k, j, where]
    for k, name in enumerate(comparison.systems):
        if k in base_of:
            columns[f"delta {name}"] = aligned.values[k, j, where] - aligned.values[base_of[k], j, where]
    frame = frame_of(columns)
    frame.attrs.update(metric=metric, baseline=comparison.baseline)
    return frame


def extremes(comparison: Any, j: int, k: int, n: int, *, improved: bool) -> pd.DataFrame:
    """The ``n`` cases where system ``k`` beats (``improved``) or falls below its baseline most on metric ``j``."""
    aligned, base = comparison._aligned, comparison.base_of[k]
    tol = comparison.tie_tolerance
    where = np.flatnonzero(aligned.mask[k, j])
    a = aligned.values[base, j, where]
    b = aligned.values[k, j, where]
    d = b - a
    keep = np.flatnonzero(d > tol if improved else d < -tol)
    order = keep[np.argsort(-d[keep] if improved else d[keep], kind="stable")][: max(0, int(n))]
    name, base_name = comparison.systems[k], comparison.systems[base]
    frame = frame_of(
        {
            "unit": [aligned.units[where[i]] for i in order],
            "case_id": [aligned.case_ids[where[i]] for i in order],
            "query": [aligned.queries[where[i]] for i in order],
            base_name: a[order],
            name: b[order],
            "delta": d[order],
        }
    )
    frame.attrs.update(metric=comparison.metrics[j], baseline=base_name, system=name)
    return frame
