"""plot_by_label: one metric per value of a benchmark case label, per mode, with intervals."""

from __future__ import annotations

import math
from collections.abc import Iterable
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
from heta_nb.tables.distributions import MISSING_LABEL, label_breakdown, select_modes

if TYPE_CHECKING:  # pragma: no cover
    from matplotlib.axes import Axes

    from heta_nb.benchmark.types import Benchmark

__all__ = ["plot_by_label"]


def plot_by_label(
    report: EvaluationReport,
    benchmark: Benchmark,
    metric: str,
    label: str,
    *,
    modes: str | Iterable[str] | None = None,
    ax: Axes | None = None,
    confidence: float = 0.95,
    include_skipped: bool = False,
) -> Axes:
    """Mean of one metric per value of a case label, per mode, with confidence intervals.

    Labels come from the benchmark (reports do not store them); the numbers are those of
    :func:`heta_nb.tables.label_breakdown` (skipped scores left out by default).

    Args:
        report: the evaluation report.
        benchmark: the benchmark the report was run on.
        metric: a numeric or bool metric.
        label: a case label, e.g. ``"difficulty"``.
        modes: query modes to show (default: all).
        ax: draw on this Axes instead of a new figure.
        confidence: level of the intervals.
        include_skipped: count skipped scores (as 0) like Heta does.

    Returns:
        The Axes drawn on.
    """
    import numpy as np

    chosen = select_modes(report, modes)
    table = label_breakdown(
        report, benchmark, label, metrics=[metric], confidence=confidence, include_skipped=include_skipped
    )
    kind = table.attrs["kinds"][metric]
    colors = mode_colors(report.modes)
    values = list(dict.fromkeys(table.index.get_level_values(0)))
    rows = {key[:2]: row for key, row in zip(table.index, table.to_dict("records"))}
    has_missing = "cases_missing_from_report" in table.columns
    hatches = mode_hatches(chosen, colors)
    width = 0.8 / max(1, len(chosen))
    positions = np.arange(len(values), dtype=float)
    ax = new_axes(ax, (max(7.5, 4.5 + 0.35 * len(values) * max(1, len(chosen))), 4.4))
    style_axes(ax, "y")
    bounded = True
    totals = {"n": 0, "skipped": 0, "errors": 0, "missing": 0}
    per_mode_n: dict[str, int] = {}
    for index, mode in enumerate(chosen):
        entries = [rows[(value, mode)] for value in values]
        means = [r["mean"] for r in entries]
        lows = [r["mean"] - r["ci_low"] if math.isfinite(r["ci_low"]) else math.nan for r in entries]
        highs = [r["ci_high"] - r["mean"] if math.isfinite(r["ci_high"]) else math.nan for r in entries]
        per_mode_n[mode] = sum(r["n"] for r in entries)
        skipped = sum(r["skipped"] for r in entries)
        errors = sum(r["errors"] for r in entries)
        missing = sum(r["cases_missing_from_report"] for r in entries) if has_missing else 0
        for key, count in (("n", per_mode_n[mode]), ("skipped", skipped), ("errors", errors), ("missing", missing)):
            totals[key] += count
        parts = [f"n={per_mode_n[mode]}"]
        if skipped:
            parts.append(f"{skipped} skipped {'as 0' if include_skipped else 'excluded'}")
        if errors:
            parts.append(count_noun(errors, "error"))
        if missing:
            parts.append(f"{missing} not in report")
        xs = positions + (index - (len(chosen) - 1) / 2) * width
        ax.bar(
            xs,
            means,
            width=width * 0.92,
            color=colors[mode],
            hatch=hatches[mode],
            label=legend_entry(mode, parts),
            yerr=[lows, highs],
            error_kw={"ecolor": ink(), "elinewidth": 1.0, "capsize": 3},
        )
        for x, r in zip(xs, entries):
            if r["n"] == 0:
                ax.text(x, 0.01, "n=0", ha="center", va="bottom", fontsize="x-small", color=ink(), rotation=90)
            elif not 0.0 <= r["mean"] <= 1.0:
                bounded = False
    cases = [rows[(value, chosen[0])]["cases"] for value in values] if chosen else [0] * len(values)
    tick_labels = [
        f"{'(no label)' if v == MISSING_LABEL else v}\n{count_noun(c, 'case')}" for v, c in zip(values, cases)
    ]
    ax.set_xticks(positions, tick_labels, rotation=30 if len(values) > 6 else 0, parse_math=False)
    ax.set_xlabel(label, parse_math=False)
    ax.set_ylabel("proportion true" if kind == "bool" else f"mean {metric}", parse_math=False)
    if bounded:
        ax.set_ylim(0.0, 1.05)
    what = "proportion true" if kind == "bool" else "mean"
    ci_name = "Wilson" if kind == "bool" else "Student-t"
    notes = [f"n={totals['n']} scores"]
    if totals["skipped"]:
        notes.append(f"{totals['skipped']} skipped {'included as 0' if include_skipped else 'excluded'}")
    if totals["errors"]:
        notes.append(f"{count_noun(totals['errors'], 'errored case')} (no score)")
    if totals["missing"]:
        notes.append(f"{totals['missing']} case results missing from the report")
    set_title(ax, f"{metric} by {label}: {what} per mode ({confidence:.0%} {ci_name} CI)", "; ".join(notes))
    add_legend(ax)
    record_info(
        ax,
        plot="by_label",
        kind="bar",
        metric=metric,
        label=label,
        values=values,
        modes=list(chosen),
        n=per_mode_n,
        include_skipped=include_skipped,
    )
    return ax
