"""plot_latency: the latency of each query mode as an ECDF, median and p95 marked."""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any

from heta_nb.model.report import EvaluationReport
from heta_nb.plots.ecdf import ecdf_xy
from heta_nb.plots.style import (
    MUTED,
    add_legend,
    count_noun,
    legend_entry,
    mode_colors,
    mode_linestyles,
    new_axes,
    paper,
    record_info,
    set_title,
    short_number,
    style_axes,
)
from heta_nb.tables.distributions import select_modes

if TYPE_CHECKING:  # pragma: no cover
    from matplotlib.axes import Axes

__all__ = ["plot_latency"]


def plot_latency(
    report: EvaluationReport,
    *,
    modes: str | Iterable[str] | None = None,
    ax: Axes | None = None,
    log: bool = True,
    include_errors: bool = False,
) -> Axes:
    """Latency (query plus evaluation time) per mode as an ECDF, median and p95 marked.

    Args:
        report: the evaluation report.
        modes: query modes to show (default: all).
        ax: draw on this Axes instead of a new figure.
        log: log-scaled x axis (default), as latencies are skewed.
        include_errors: also plot errored results (usually fast failures).

    Returns:
        The Axes drawn on.
    """
    import numpy as np
    from matplotlib.lines import Line2D

    chosen = select_modes(report, modes)
    colors = mode_colors(report.modes)
    styles = mode_linestyles(chosen, colors)
    latencies: dict[str, list[float]] = {m: [] for m in chosen}
    errors = dict.fromkeys(chosen, 0)
    for result in report.raw["case_results"]:
        mode = result["query_mode"]
        if mode not in latencies:
            continue
        failed = result["error"] is not None
        errors[mode] += failed
        if result["latency_ms"] is not None and (include_errors or not failed):
            latencies[mode].append(float(result["latency_ms"]))
    ax = new_axes(ax, (8.0, max(3.6, 3.2 + 0.25 * len(chosen))))
    style_axes(ax, "both")
    positive = [v for vs in latencies.values() for v in vs if v > 0]
    floor = min(positive) if positive else 1e-3
    handles: list[Any] = []
    quantiles: dict[str, tuple[float, float]] = {}
    for mode in chosen:
        values = latencies[mode]
        color = colors[mode]
        if not values:
            handles.append(Line2D([], [], color=color, label=f"{mode}\nno latencies"))
            continue
        shown = [max(v, floor) for v in values] if log else values
        p50, p95 = (float(q) for q in np.quantile(np.asarray(values, dtype=float), (0.5, 0.95)))
        quantiles[mode] = (p50, p95)
        xs, ys = ecdf_xy(shown, None)
        (line,) = ax.step(xs, ys, where="post", color=color, linestyle=styles[mode], linewidth=1.8)
        marks = (max(p50, floor), max(p95, floor)) if log else (p50, p95)
        ax.plot([marks[0]], [0.5], marker="o", color=color, markeredgecolor=paper(), markersize=7, linestyle="none")
        ax.plot([marks[1]], [0.95], marker="D", color=color, markeredgecolor=paper(), markersize=6, linestyle="none")
        counted = f"n={len(values)}"
        if errors[mode]:
            counted += f", {count_noun(errors[mode], 'error')} {'included' if include_errors else 'excluded'}"
        line.set_label(
            legend_entry(mode, [counted, f"p50={short_number(p50)} ms, p95={short_number(p95)} ms"], width=0)
        )
        handles.append(line)
    for level in (0.5, 0.95):
        ax.axhline(level, color=MUTED, linewidth=0.8, linestyle=":", zorder=0)
    handles.append(Line2D([], [], marker="o", color=MUTED, linestyle="none", label="median (p50)"))
    handles.append(Line2D([], [], marker="D", color=MUTED, linestyle="none", label="p95"))
    if log:
        ax.set_xscale("log")
        _plain_log_ticks(ax, positive)
    ax.set_ylim(-0.02, 1.02)
    ax.set_yticks([0.0, 0.25, 0.5, 0.75, 0.95, 1.0])
    ax.set_xlabel("latency per query, ms (query + evaluation)" + (", log scale" if log else ""))
    ax.set_ylabel("share of queries ≤ x")
    total = sum(len(v) for v in latencies.values())
    n_failed = sum(errors.values())
    note = f"n={total} queries"
    if n_failed:
        note += f"; {count_noun(n_failed, 'errored result')} {'included' if include_errors else 'excluded'}"
    set_title(ax, "Latency per mode", note)
    add_legend(ax, handles)
    record_info(
        ax,
        plot="latency",
        kind="ecdf",
        log=log,
        modes=list(chosen),
        n={m: len(v) for m, v in latencies.items()},
        errors=errors,
        quantiles=quantiles,
    )
    return ax


def _plain_log_ticks(ax: Axes, values: Sequence[float]) -> None:
    """Plain numbers (0.3, 1, 20) on a log axis; minor ticks labelled when it spans few decades,
    and 1-2-5 steps labelled up to three decades (a single labelled power of ten says too little)."""
    from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter

    formatter = FuncFormatter(lambda value, _pos: short_number(value))
    span = math.log10(max(values) / min(values)) if values else 0.0
    if 1.2 <= span < 3.0:
        ax.xaxis.set_major_locator(LogLocator(base=10.0, subs=(1.0, 2.0, 5.0)))
    ax.xaxis.set_major_formatter(formatter)
    ax.xaxis.set_minor_formatter(formatter if span < 1.2 else NullFormatter())
    if span < 1.2:
        ax.tick_params(axis="x", which="minor", labelsize="x-small")
