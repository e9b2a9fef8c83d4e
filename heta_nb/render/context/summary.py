"""The report view's score summary: one row per mode with its mean, confidence interval,
distribution sparkline and latency percentiles per metric, and footnotes on what differs."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from heta_nb._util.text import clip, clip_label, plural, shorten
from heta_nb.model import EvaluationReport
from heta_nb.render.context.formatting import clip_name, format_ms, percent
from heta_nb.render.context.scan import ReportScan
from heta_nb.render.env import format_count, format_number
from heta_nb.render.limits import RenderLimits
from heta_nb.render.svg import histogram

__all__ = ["summary_context"]

_NONE = np.zeros(0)


def _quantile(sorted_values: np.ndarray, q: float) -> float:
    """The ``q`` quantile of sorted values, interpolated linearly (NaN when there are none)."""
    if not sorted_values.size:
        return math.nan
    position = q * (sorted_values.size - 1)
    low = int(position)
    high = min(low + 1, sorted_values.size - 1)
    below, above, fraction = float(sorted_values[low]), float(sorted_values[high]), position - low
    if not fraction:
        return below
    step = above - below
    if math.isfinite(step):
        return below + step * fraction
    return below * (1 - fraction) + above * fraction  # 1e308 and -1e308: their gap is not a float


def summary_context(
    report: EvaluationReport,
    scan: ReportScan,
    modes: Sequence[str],
    metrics: Sequence[str],
    limits: RenderLimits,
) -> dict[str, Any]:
    """The summary table of the report view.

    Args:
        report: the report (its stored ``score_summary`` is compared with the means).
        scan: the report's summaries, counts and latencies.
        modes: the modes shown (rows).
        metrics: the metrics shown (columns).
        limits: what to show at most.

    Returns:
        Plain data: metric names, one row per mode with a cell per metric, footnotes.
    """
    summaries = scan.summaries
    by_key = {(s.mode, s.metric): s for s in summaries}
    stored = report.score_summary
    best: dict[str, float] = {}
    for metric in metrics:
        means = [
            s.mean
            for mode in modes
            if (s := by_key.get((mode, metric))) is not None and s.kind != "text" and math.isfinite(s.mean)
        ]
        if len(means) >= 2 and max(means) > min(means):
            best[metric] = max(means)
    footnotes: dict[str, str] = {}

    def footnote(text: str) -> str:
        if not text:
            return ""
        if text not in footnotes:
            footnotes[text] = str(len(footnotes) + 1)
        return footnotes[text]

    rows = []
    for mode in modes:
        cases = scan.cases.get(mode, 0)
        errors = scan.errors.get(mode, 0)
        latencies = scan.latencies.get(mode, _NONE)
        cells: list[dict[str, Any] | None] = []
        skipped = 0
        for metric in metrics:
            s = by_key.get((mode, metric))
            if s is None:
                cells.append(None)
                continue
            skipped += s.skipped
            label = f"{shorten(metric, 40)} in {shorten(mode, 40)}"
            if s.kind == "text":
                failed = s.evaluator_errors
                title = f"{failed:,} evaluator error{'s' if failed != 1 else ''}, no mean" if failed else ""
                cells.append({"text": True, "title": title or "text values, no mean"})
                continue
            note = s.note
            heta = stored.get(s.key)
            if heta is None:
                note = "; ".join(filter(None, [note, "missing from the stored score_summary"]))
            elif not (heta == s.mean or (heta != heta and s.mean != s.mean)):
                note = "; ".join(filter(None, [note, f"stored score_summary says {format_number(heta, 4)}"]))
            ci = (
                f"[{format_number(s.ci_low)}, {format_number(s.ci_high)}]"
                if math.isfinite(s.ci_low) and math.isfinite(s.ci_high)
                else "[—]"
            )
            cells.append(
                {
                    "text": False,
                    "mean": format_number(s.mean),
                    "ci": ci,
                    "n": format_count(s.n),
                    "best": metric in best and s.mean == best[metric],
                    "note": footnote(note),
                    "spark": histogram(
                        scan.values(mode, metric),
                        label=label,
                        kind=s.kind,
                        width=44,
                        height=14,
                        minimum=s.minimum,
                        maximum=s.maximum,
                        all_finite=math.isfinite(s.mean),
                    ),
                    "title": (
                        f"mean {format_number(s.mean, 4)}, {s.confidence:.0%} CI {ci}, n={s.n:,}, "
                        f"std {format_number(s.std, 4)}, min {format_number(s.minimum)}, "
                        f"max {format_number(s.maximum)}"
                    ),
                }
            )
        rows.append(
            {
                "mode": clip_label(mode, limits.max_name_chars),
                "cases": format_count(cases),
                "errors": plural(errors, "error"),
                "error_count": format_count(errors),
                "errors_pct": percent(errors, cases),
                "has_errors": errors > 0,
                "skipped": format_count(skipped),
                "all_errored": cases > 0 and errors == cases,
                "p50": format_ms(_quantile(latencies, 0.5)),
                "p95": format_ms(_quantile(latencies, 0.95)),
                "cells": cells,
            }
        )
    confidence = summaries[0].confidence if summaries else 0.95
    return {
        "metrics": [{"name": clip_name(m, limits.max_name_chars)} for m in metrics],
        "metrics_more": max(0, len(scan.metrics) - len(metrics)),
        "modes_more": max(0, len(scan.modes) - len(modes)),
        "rows": rows,
        "footnotes": [{"marker": marker, "text": clip(text, 600)} for text, marker in footnotes.items()],
        "has_best": bool(best),
        "confidence": f"{confidence:.0%}",
    }
