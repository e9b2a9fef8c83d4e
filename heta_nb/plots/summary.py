"""plot_metric_summary: the mean of each metric per mode with confidence intervals."""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING

from heta_nb.model.report import EvaluationReport
from heta_nb.plots.style import (
    add_legend,
    count_noun,
    ink,
    legend_entry,
    mode_colors,
    mode_hatches,
    new_axes,
    record_info,
    set_title,
    style_axes,
)
from heta_nb.tables.distributions import select_metrics, select_modes

if TYPE_CHECKING:  # pragma: no cover
    from matplotlib.axes import Axes

__all__ = ["plot_metric_summary"]


def plot_metric_summary(
    report: EvaluationReport,
    *,
    metrics: str | Iterable[str] | None = None,
    modes: str | Iterable[str] | None = None,
    ax: Axes | None = None,
    confidence: float = 0.95,
) -> Axes:
    """Mean of each metric per mode with confidence intervals, as grouped horizontal bars.

    The means are Heta's (those of ``report.score_summary``: skipped scores count as 0,
    errored cases are left out); intervals are Student-t, or Wilson for bool metrics.

    Args:
        report: the evaluation report.
        metrics: metrics to show (default: every numeric or bool metric).
        modes: query modes to show (default: all).
        ax: draw on this Axes instead of a new figure.
        confidence: level of the intervals.

    Returns:
        The Axes drawn on.
    """
    import numpy as np

    names = select_metrics(report, metrics)
    chosen = select_modes(report, modes)
    colors = mode_colors(report.modes)
    counts = report.mode_counts()
    table = {(s.mode, s.metric): s for s in report.metric_summaries(confidence=confidence)}
    n_bars = len(names) * len(chosen)
    ax = new_axes(ax, (8.0, min(14.0, max(3.2, 1.6 + 0.17 * n_bars + 0.1 * len(names)))))
    style_axes(ax, "x")
    height = 0.8 / max(1, len(chosen))
    hatches = mode_hatches(chosen, colors)
    centres = np.arange(len(names), dtype=float)
    top = 1.0
    bottom = 0.0
    bounded = True
    unplotted = 0
    all_n: list[int] = []
    skipped = 0
    not_applicable: list[tuple[float, str]] = []
    for index, mode in enumerate(chosen):
        means, lows, highs, ns = [], [], [], []
        positions = centres + (index - (len(chosen) - 1) / 2) * height
        for position, metric in zip(positions, names):
            item = table.get((mode, metric))
            if item is None or item.kind == "text" or item.n == 0:
                means.append(math.nan)
                lows.append(math.nan)
                highs.append(math.nan)
                continue
            if not item.applicable:  # the mode cannot produce it: "n/a", no bar
                not_applicable.append((float(position), mode))
                means.append(math.nan)
                lows.append(math.nan)
                highs.append(math.nan)
                continue
            ns.append(item.n_scored)
            skipped += item.skipped
            mean, (low, high) = item.shown, item.shown_ci  # the mean shown first everywhere
            if not math.isfinite(mean):  # NaN or infinite scores: no bar can show it
                unplotted += 1
                means.append(math.nan)
                lows.append(math.nan)
                highs.append(math.nan)
                continue
            means.append(mean)
            lows.append(mean - low if math.isfinite(low) else math.nan)
            highs.append(high - mean if math.isfinite(high) else math.nan)
            bounded = bounded and 0.0 <= item.minimum and item.maximum <= 1.0
            top = max(top, high if math.isfinite(high) else mean)
            bottom = min(bottom, low if math.isfinite(low) else mean)
        all_n.extend(ns)
        errors = counts[mode].errors
        label = legend_entry(mode, [_n_range(ns), *([f"{count_noun(errors, 'error')} left out"] if errors else [])])
        ax.barh(
            positions,
            means,
            height=height * 0.9,
            color=colors[mode],
            hatch=hatches[mode],
            label=label,
            xerr=[lows, highs],
            error_kw={"ecolor": ink(), "elinewidth": 1.0, "capsize": 3},
        )
        for y, mean, high in zip(positions, means, highs):
            if math.isfinite(mean):
                end = mean + (high if math.isfinite(high) else 0.0)
                ax.text(end + 0.01 * top, y, f"{mean:.2f}", va="center", ha="left", fontsize="x-small", color=ink())
    for y, _mode in not_applicable:
        ax.text(0.01 * top, y, "n/a", va="center", ha="left", fontsize="x-small", color=ink())
    ax.set_yticks(centres, list(names), parse_math=False)
    ax.set_ylim(len(names) - 0.5, -0.5)
    if bounded:
        ax.set_xlim(0.0, 1.1)
    else:  # room for the value labels, within the float range (scores of 1e308 exist)
        margin = 0.12 * (top / 2 - bottom / 2) * 2
        right = top + margin if math.isfinite(top + margin) else top
        left = bottom - margin if bottom < 0.0 and math.isfinite(bottom - margin) else bottom
        ax.set_xlim(left, right if right > left else left + 1.0)
    ax.set_xlabel(f"mean of the scored values (skipped scores left out); error bars: {confidence:.0%} CI")
    errors_total = sum(counts[m].errors for m in chosen)
    notes = [f"{_n_range(all_n)} scores per mode and metric"]
    if errors_total:
        notes.append(f"{count_noun(errors_total, 'errored case')} left out")
    if skipped:
        notes.append(f"{skipped} skipped scores left out")
    if not_applicable:
        notes.append(f"n/a: {count_noun(len(not_applicable), 'metric')} a mode cannot produce")
    if unplotted:
        notes.append(f"{count_noun(unplotted, 'mean')} not finite (NaN or infinite scores), not drawn")
    set_title(ax, "Mean per metric and mode", "; ".join(notes))
    add_legend(ax)
    record_info(
        ax,
        plot="metric_summary",
        kind="barh",
        metrics=list(names),
        modes=list(chosen),
        confidence=confidence,
        errors={m: counts[m].errors for m in chosen},
        not_applicable=[(mode, metric) for (mode, metric), item in table.items() if not item.applicable],
    )
    return ax


def _n_range(ns: Sequence[int]) -> str:
    if not ns:
        return "n=0"
    return f"n={ns[0]}" if min(ns) == max(ns) else f"n={min(ns)}–{max(ns)}"
