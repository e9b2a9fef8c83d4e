"""A history as plain text: its real changes first, then one line per report × mode × metric."""

from __future__ import annotations

import math
from typing import Any

from heta_nb._util.text import plural, shorten
from heta_nb._util.times import minute_utc
from heta_nb.stats.format import p_text

__all__ = ["change_marker", "history_text", "real_change_lines", "when"]

NAME_CHARS = 40
"""Report ids, recipe labels, modes and metrics are shortened to this in the table."""
MAX_REAL_LINES = 8


def change_marker(row: Any) -> str:
    """``"▲"`` / ``"▼"`` for a real rise / drop (the row's ``real`` and ``change``), else ``""``."""
    change = row["change"]
    if not row["real"] or not isinstance(change, float) or not math.isfinite(change):
        return ""
    return "▲" if change > 0 else "▼"


def _num(value: float, *, sign: bool = False) -> str:
    if not isinstance(value, (int, float)) or math.isnan(value):
        return ""
    return f"{value:+.3f}" if sign else f"{value:.3f}"


def _interval(low: float, high: float, *, sign: bool = False) -> str:
    if not (math.isfinite(low) and math.isfinite(high)):
        return ""
    return f"[{_num(low, sign=sign)}, {_num(high, sign=sign)}]"


def when(started_at: str) -> str:
    """A report's start as people read it (``2026-12-02 15:54 UTC``), or the text as stored."""
    return minute_utc(started_at) or str(started_at)


def real_change_lines(rows: list[dict[str, Any]], limit: int = MAX_REAL_LINES) -> list[str]:
    """``"r3 (2026-12-03 07:00 UTC) full_text_search evidence_recall@5 ▼ -0.200 [-0.25, -0.15]"``
    per real change (at most ``limit``, then how many more)."""
    real = [row for row in rows if row["real"]]
    lines = [
        f"{shorten(row['report_id'], NAME_CHARS)} ({when(row['started_at'])}) {shorten(row['mode'], NAME_CHARS)} "
        f"{shorten(row['metric'], NAME_CHARS)} {change_marker(row)} {_num(row['change'], sign=True)} "
        f"{_interval(row['change_ci_low'], row['change_ci_high'], sign=True)}".rstrip()
        for row in real[:limit]
    ]
    if len(real) > limit:
        lines.append(f"... and {len(real) - limit} more")
    return lines


def history_text(history: Any) -> str:
    """The :class:`~heta_nb.comparison.History`'s ``repr``: a header, its real changes, then a
    table with each report's mean and interval per mode × metric and its change from the report
    before (verdicts as ``compare`` gives them), then the comparisons' warnings."""
    h = history
    rows = h.rows()
    pct = f"{h.confidence * 100:g}%"
    first, last = h.loaded_reports[0], h.loaded_reports[-1]
    span = when(first.started_at) if len(h.reports) == 1 else f"{when(first.started_at)} → {when(last.started_at)}"
    lines = [
        f"History of {h.knowledge_base!r} on {h.benchmark!r}: {plural(len(h.reports), 'report')}, "
        f"{span} ({h.location})",
        f"mean: each report's mean of the scored values, {pct} CI; change: paired difference from the previous "
        f"report (compare: {pct} bootstrap CI, Holm over each mode's metrics, alpha={h.alpha:g}); ▲/▼ a real change"
        if len(h.reports) > 1
        else f"mean: the report's mean of the scored values, {pct} CI; no change before a second report",
    ]
    real = real_change_lines(rows)
    if real:
        lines.append(f"{plural(sum(1 for row in rows if row['real']), 'real change')}:")
        lines.extend(f"  {line}" for line in real)
    elif len(h.reports) > 1:
        lines.append("no real change between consecutive reports")
    labelled = any(row["recipe"] != row["report_id"] for row in rows)
    header = ("started", "report", *(("recipe",) if labelled else ()), "mode", "metric", "n", "mean", f"{pct} CI")
    table = [(*header, "change", f"{pct} CI", "p_adj", "verdict")]
    for row in rows:
        scored = row["status"] == "scored"
        table.append(
            (
                when(row["started_at"]),
                shorten(row["report_id"], NAME_CHARS),
                *((shorten(row["recipe"], NAME_CHARS),) if labelled else ()),
                shorten(row["mode"], NAME_CHARS),
                shorten(row["metric"], NAME_CHARS),
                f"{row['n']:,}",
                _num(row["mean"]) if scored else row["status"],
                _interval(row["ci_low"], row["ci_high"]),
                f"{_num(row['change'], sign=True)} {change_marker(row)}".rstrip(),
                _interval(row["change_ci_low"], row["change_ci_high"], sign=True),
                p_text(row["p_adjusted"], h.alpha) if math.isfinite(row["p_adjusted"]) else "",
                row["verdict"],
            )
        )
    widths = [max(len(r[i]) for r in table) for i in range(len(table[0]))]
    numbers = len(header) - 3
    right = {numbers, numbers + 1, numbers + 3, numbers + 5}
    for r in table:
        cells = [cell.rjust(w) if i in right else cell.ljust(w) for i, (cell, w) in enumerate(zip(r, widths))]
        lines.append("  ".join(cells).rstrip())
    if h.warnings:
        lines.append(f"{plural(len(h.warnings), 'warning')}:")
        lines.extend(f"  - {w}" for w in h.warnings)
    return "\n".join(lines)
