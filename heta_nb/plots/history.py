"""plot_history: one metric over a recipe's reports in time order, with intervals and real changes.

It takes the rows of ``History.rows()`` (keys ``report_id``, ``started_at``, ``mode``,
``metric``, ``n``, ``mean``, ``ci_low``, ``ci_high``, ``status``, ``reason``, ``change``,
``verdict``, ``real``), draws on ``ax=`` or a new standalone figure and returns the Axes.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from heta_nb._util.text import shorten
from heta_nb._util.times import minute_utc
from heta_nb.plots.style import (
    MUTED,
    add_legend,
    count_noun,
    ink,
    legend_entry,
    mode_colors,
    new_axes,
    record_info,
    set_title,
    style_axes,
)

if TYPE_CHECKING:  # pragma: no cover
    from matplotlib.axes import Axes

__all__ = ["date_labels", "plot_history"]

NOT_COMPARABLE = "not comparable: benchmark"
"""How the verdict of a change across two benchmark versions or splits begins."""


def date_labels(report_ids: Sequence[str], started: Mapping[str, str]) -> list[str]:
    """A tick label per report: its start date, to the minute where two share a day, then
    ``#2``, ``#3`` where two share a minute; the report id where the time is not readable."""
    minutes = [minute_utc(started.get(r)) for r in report_ids]
    days = [m[:10] if m else None for m in minutes]
    labels = days if len(set(days)) == len(days) else minutes
    out: list[str] = []
    seen: dict[str, int] = {}
    for report_id, label in zip(report_ids, labels):
        text = label or shorten(report_id, 24)
        seen[text] = seen.get(text, 0) + 1
        out.append(text if seen[text] == 1 else f"{text} #{seen[text]}")
    return out


def plot_history(
    rows: Sequence[Mapping[str, Any]],
    metric: str,
    *,
    mode: str | None = None,
    confidence: float = 0.95,
    alpha: float = 0.05,
    ax: Axes | None = None,
) -> Axes:
    """``metric``'s mean per report (x: the reports in time order, labelled by date) with its
    interval as error bars, one line per mode; a real change from the previous report is a
    large ▲/▼ marker, a point without a number (n/a, skipped...) is left out and said.

    Args:
        rows: ``History.rows()``.
        metric: the metric to draw.
        mode: one query mode (default: every mode that has the metric).
        confidence: the level of the intervals (for the axis label).
        alpha: the significance level of the changes (for the title).
        ax: draw here (default: a new standalone figure).

    Returns:
        The Axes; ``ax.heta_nb_info`` holds the plotted numbers per mode (``series``) and the
        points left out (``missing``).

    Raises:
        ValueError: an unknown metric or mode.
    """
    from matplotlib.lines import Line2D

    metrics = list(dict.fromkeys(row["metric"] for row in rows))
    if metric not in metrics:
        raise ValueError(f"metric {metric!r} is not in the history; metrics: {metrics}")
    mine = [row for row in rows if row["metric"] == metric]
    modes = list(dict.fromkeys(row["mode"] for row in mine))
    if mode is not None and mode not in modes:
        raise ValueError(f"mode {mode!r} has no {metric!r} in the history; modes: {modes}")
    chosen = [mode] if mode is not None else modes
    reports = list(dict.fromkeys(row["report_id"] for row in rows))
    started = {row["report_id"]: row["started_at"] for row in rows}
    colors = mode_colors(dict.fromkeys(row["mode"] for row in rows))
    x_of = {report_id: index for index, report_id in enumerate(reports)}
    ax = new_axes(ax, (max(5.5, min(12.0, 2.8 + 0.75 * len(reports))), 4.0))
    style_axes(ax, "y")

    series: dict[str, dict[str, list[Any]]] = {}
    missing: list[dict[str, str]] = []
    real_up = real_down = 0
    width = min(0.12, 0.5 / max(1, len(chosen)))
    for k, name in enumerate(chosen):
        offset = (k - (len(chosen) - 1) / 2) * width
        points = [row for row in mine if row["mode"] == name]
        numbered = [_has_number(row) for row in points]
        drawn = [row for row, has in zip(points, numbered) if has]
        missing.extend(
            {"report_id": row["report_id"], "mode": name, "status": row["status"], "reason": row["reason"]}
            for row, has in zip(points, numbered)
            if not has
        )
        xs = [x_of[row["report_id"]] + offset for row in points]
        ys = [row["mean"] if has else math.nan for row, has in zip(points, numbered)]
        below = [_reach(row["mean"], row["ci_low"]) if has else math.nan for row, has in zip(points, numbered)]
        above = [_reach(row["ci_high"], row["mean"]) if has else math.nan for row, has in zip(points, numbered)]
        ns = [row["n"] for row in drawn]
        label = legend_entry(
            name, [f"n={min(ns)}–{max(ns)}" if ns and min(ns) != max(ns) else f"n={ns[0] if ns else 0}"]
        )
        ax.errorbar(
            xs,
            ys,
            yerr=[below, above],
            fmt="-o",
            color=colors[name],
            ecolor=colors[name],
            elinewidth=1.0,
            capsize=3,
            markersize=5,
            linewidth=1.4,
            label=label,
        )
        for row in drawn:
            if row["real"] and math.isfinite(row["change"]):
                up = row["change"] > 0
                real_up += up
                real_down += not up
                ax.scatter(
                    [x_of[row["report_id"]] + offset],
                    [row["mean"]],
                    marker="^" if up else "v",
                    s=120,
                    color=colors[name],
                    edgecolors=ink(),
                    linewidths=1.2,
                    zorder=4,
                )
        series[name] = {
            "report_id": [row["report_id"] for row in drawn],
            "mean": [row["mean"] for row in drawn],
            "ci_low": [row["ci_low"] for row in drawn],
            "ci_high": [row["ci_high"] for row in drawn],
            "n": ns,
            "change": [row["change"] for row in drawn],
            "real": [bool(row["real"]) for row in drawn],
        }
    for item in missing:
        ax.text(
            x_of[item["report_id"]],
            0.02,
            item["status"],
            transform=ax.get_xaxis_transform(),
            ha="center",
            va="bottom",
            fontsize="x-small",
            color=MUTED,
            parse_math=False,
        )
    breaks = list(dict.fromkeys(row["report_id"] for row in mine if str(row["verdict"]).startswith(NOT_COMPARABLE)))
    for report_id in breaks:
        ax.axvline(x_of[report_id] - 0.5, color=MUTED, linestyle=":", linewidth=1.2)
    labels = date_labels(reports, started)
    ax.set_xticks(
        range(len(reports)),
        labels,
        rotation=30 if len(reports) > 4 else 0,
        ha="right" if len(reports) > 4 else "center",
    )
    ax.set_xlim(-0.5, len(reports) - 0.5)
    if not any(series[name]["mean"] for name in series):
        ax.set_ylim(0.0, 1.0)
    ax.set_ylabel(f"{shorten(metric, 60)}\nmean, {confidence:.0%} CI", parse_math=False)
    notes = [f"{count_noun(len(reports), 'report')} in time order"]
    if real_up or real_down:
        notes.append(f"real changes from the previous report: {real_up} ▲, {real_down} ▼ (Holm-adjusted p < {alpha:g})")
    else:
        notes.append("no real change from one report to the next")
    if missing:
        notes.append(f"{count_noun(len(missing), 'point')} without a number (n/a...) not drawn")
    if breaks:
        notes.append(
            f"dotted line: another benchmark version or split ({count_noun(len(breaks), 'change')} not comparable)"
        )
    set_title(ax, f"{shorten(metric, 60)} over time", "; ".join(notes))
    handles = list(ax.get_legend_handles_labels()[0])
    if real_up or real_down:
        handles.append(
            Line2D(
                [],
                [],
                marker="^",
                linestyle="none",
                color=MUTED,
                markeredgecolor=ink(),
                markersize=9,
                label="real change ▲/▼",
            )
        )
    add_legend(ax, handles)
    record_info(
        ax,
        plot="history",
        kind="errorbar",
        metric=metric,
        modes=chosen,
        reports=reports,
        labels=labels,
        confidence=confidence,
        alpha=alpha,
        series=series,
        missing=missing,
        not_comparable=breaks,
    )
    return ax


def _has_number(row: Mapping[str, Any]) -> bool:
    """Whether the row has a mean to draw (status ``"scored"`` and a finite mean)."""
    return row["status"] == "scored" and math.isfinite(row["mean"])


def _reach(far: float, near: float) -> float:
    """The length of an error bar from ``near`` to ``far`` (NaN where a bound is not finite)."""
    return max(0.0, far - near) if math.isfinite(far) and math.isfinite(near) else math.nan
