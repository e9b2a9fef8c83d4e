"""The report view's score summary: one row per mode with its mean, confidence interval,
distribution sparkline and latency percentiles per metric, and footnotes on what differs."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from heta_nb._util.text import clip, clip_label, plural, shorten
from heta_nb.model import EvaluationReport
from heta_nb.model.summary import best_modes
from heta_nb.render.context.formatting import clip_name, format_ms, percent
from heta_nb.render.context.scan import ReportScan
from heta_nb.render.env import format_count, format_number
from heta_nb.render.limits import RenderLimits
from heta_nb.render.svg import histogram

__all__ = ["headline", "headline_text", "skipped_cases", "summary_context"]

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


def skipped_cases(report: EvaluationReport, mode: str) -> int:
    """Case results of ``mode`` with at least one skipped score (no gold data): the count a
    mode's row shows (cases, not scores, so it matches the footnotes' per-metric counts)."""
    columns = report.columns
    rows = columns.mode_rows(mode)
    if not rows.size:
        return 0
    hit = np.zeros(columns.n, dtype=bool)
    for name in columns.metrics:
        column = columns.metric(name)
        hit[column.rows[column.skipped]] = True
    return int(np.count_nonzero(hit[rows]))


def headline(
    by_key: dict[tuple[str, str], Any],
    modes: Sequence[str],
    metrics: Sequence[str],
    scan: ReportScan,
    best: dict[str, float],
    *,
    shown: int = 3,
) -> list[dict[str, Any]]:
    """One line per mode, shown first: its best ``shown`` metrics (where it leads the modes
    first, then in evaluator order) with their CIs, the metrics it cannot produce (n/a) and
    its errors."""
    lines = []
    for mode in modes:
        found = [by_key[(mode, m)] for m in metrics if (mode, m) in by_key]
        numbers = [s for s in found if math.isfinite(s.shown)]
        numbers.sort(key=lambda s: 0 if s.metric in best and s.shown == best[s.metric] else 1)
        parts = []
        for s in numbers[:shown]:
            low, high = s.shown_ci
            ci = f" [{format_number(low)}, {format_number(high)}]" if math.isfinite(low) and math.isfinite(high) else ""
            parts.append(
                {
                    "metric": shorten(s.metric, 40),
                    "mean": format_number(s.shown),
                    "ci": ci,
                    "best": s.metric in best and s.shown == best[s.metric],
                }
            )
        errors = scan.errors.get(mode, 0)
        cases = scan.cases.get(mode, 0)
        lines.append(
            {
                "mode": shorten(mode, 40),
                "parts": parts,
                "more": max(0, len(numbers) - shown),
                "na": [shorten(s.metric, 40) for s in found if not s.applicable],
                "evaluator_errors": [f"{shorten(s.metric, 40)}: {s.error_text}" for s in found if s.evaluator_errors],
                "errors": plural(errors, "error") + (f" ({percent(errors, cases)})" if errors else ""),
                "has_errors": errors > 0,
                "all_errored": cases > 0 and errors == cases,
            }
        )
    return lines


def headline_text(line: dict[str, Any]) -> str:
    """A headline line as plain text: ``extractive_answer: ndcg@5 0.668 [0.601, 0.735] ★, … · 0 errors``."""
    parts = [f"{p['metric']} {p['mean']}{p['ci']}{' *' if p['best'] else ''}" for p in line["parts"]]
    if line["more"]:
        parts.append(f"+{line['more']} more")
    text = f"{line['mode']}: " + (", ".join(parts) if parts else "no scores")
    if line["na"]:
        text += f" · n/a: {', '.join(line['na'])}"
    if line["evaluator_errors"]:
        text += f" · {'; '.join(line['evaluator_errors'])}"
    return text + f" · {line['errors']}"


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
    best = best_modes(s for s in summaries if s.mode in modes and s.metric in metrics)
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
        for metric in metrics:
            s = by_key.get((mode, metric))
            if s is None:
                cells.append(None)
                continue
            label = f"{shorten(metric, 40)} in {shorten(mode, 40)}"
            if s.kind == "text":
                cells.append(
                    {
                        "text": True,
                        "status": s.status,
                        "errors_text": s.error_text,
                        "title": f"{s.status}: {s.reason}" + (f"; {s.error_text}" if s.error_text else ""),
                    }
                )
                continue
            note = s.note
            heta = stored.get(s.key)
            if heta is None:
                note = "; ".join(filter(None, [note, "missing from the stored score_summary"]))
            elif not (heta == s.mean or (heta != heta and s.mean != s.mean)):
                note = "; ".join(filter(None, [note, f"stored score_summary says {format_number(heta, 4)}"]))
            heta_text = f"Heta's score_summary: {format_number(s.mean if heta is None else heta, 4)}"
            if not s.scored:
                cells.append(
                    {
                        "text": False,
                        "na": True,
                        "mean": s.status,
                        "errors_text": s.error_text,
                        "best": False,
                        "note": footnote(note),
                        "title": f"{s.status}: {s.reason}; {heta_text} (skipped scores counted as 0)",
                    }
                )
                continue
            low, high = s.shown_ci
            ci = (
                f"[{format_number(low)}, {format_number(high)}]"
                if math.isfinite(low) and math.isfinite(high)
                else "[—]"
            )
            cells.append(
                {
                    "text": False,
                    "na": False,
                    "mean": format_number(s.shown),
                    "ci": ci,
                    "n": format_count(s.shown_n),
                    "errors_text": s.error_text,
                    "best": metric in best and s.shown == best[metric],
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
                        f"{s.label}: {format_number(s.shown, 4)}, {s.confidence:.0%} CI {ci}; "
                        f"{heta_text} over {s.n:,} (skipped scores counted as 0); "
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
                "skipped": format_count(skipped_cases(report, mode)),
                "all_errored": cases > 0 and errors == cases,
                "p50": format_ms(_quantile(latencies, 0.5)),
                "p95": format_ms(_quantile(latencies, 0.95)),
                "cells": cells,
            }
        )
    confidence = summaries[0].confidence if summaries else 0.95
    return {
        "headline": headline(by_key, modes, metrics, scan, best),
        "metrics": [{"name": clip_name(m, limits.max_name_chars)} for m in metrics],
        "metrics_more": max(0, len(scan.metrics) - len(metrics)),
        "modes_more": max(0, len(scan.modes) - len(modes)),
        "rows": rows,
        "footnotes": [{"marker": marker, "text": clip(text, 600)} for text, marker in footnotes.items()],
        "has_best": bool(best),
        "confidence": f"{confidence:.0%}",
    }
