"""A leaderboard as a figure: systems × benchmarks heatmap of one metric, or dots with their CIs.

Both take the tidy rows of ``Leaderboard.frame()`` (a DataFrame with ``benchmark``,
``system``, ``metric``, ``mean``, ``ci_low``, ``ci_high``, ``best``, ``significant``,
``mean_diff``, ``is_baseline``), take ``ax=`` and return the Axes.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any, Literal

from heta_nb.plots.style import PALETTE, add_legend, new_axes, record_info, style_axes

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd
    from matplotlib.axes import Axes

__all__ = ["plot_leaderboard"]


def _marker(row: Any) -> str:
    if not bool(row["significant"]) or not math.isfinite(float(row["mean_diff"])):
        return ""
    return "▲" if float(row["mean_diff"]) > 0 else "▼"


def plot_leaderboard(
    frame: pd.DataFrame,
    metric: str | None = None,
    *,
    kind: Literal["heatmap", "dots"] = "heatmap",
    ax: Axes | None = None,
) -> Axes:
    """Draw one metric of a leaderboard.

    Args:
        frame: ``Leaderboard.frame()`` (its tidy rows).
        metric: the metric (default: the first).
        kind: ``"heatmap"`` (systems × benchmarks, each cell's mean written in it, ★ the
            best of a benchmark, ▲/▼ a real difference from the baseline) or ``"dots"``
            (each mean with its confidence interval, one colour per benchmark).
        ax: draw here (default: a new standalone figure).

    Returns:
        The Axes; ``ax.heta_nb_info`` says what was drawn.

    Raises:
        ValueError: an unknown metric or kind, or no rows.
    """
    if frame.empty:
        raise ValueError("the leaderboard has no rows to plot")
    metrics = list(dict.fromkeys(frame["metric"]))
    metric = metric or metrics[0]
    if metric not in metrics:
        raise ValueError(f"metric {metric!r} is not on the leaderboard; metrics: {metrics}")
    if kind not in ("heatmap", "dots"):
        raise ValueError(f"kind must be 'heatmap' or 'dots', got {kind!r}")
    rows = frame[frame["metric"] == metric]
    systems = list(dict.fromkeys(rows["system"]))
    benchmarks = list(dict.fromkeys(rows["benchmark"]))
    if kind == "heatmap":
        ax = _heatmap(rows, systems, benchmarks, metric, ax)
    else:
        ax = _dots(rows, systems, benchmarks, metric, ax)
    record_info(
        ax,
        plot="leaderboard",
        kind=kind,
        metric=metric,
        systems=systems,
        benchmarks=benchmarks,
        real=int(rows["significant"].sum()),
    )
    return ax


def colour_range(means: list[float]) -> tuple[float, float]:
    """The colour scale of a heatmap: the means' own range with a margin, not always 0-1.

    On a fixed 0-1 scale, boards whose means all sit in 0.56-0.83 got colours a reader cannot
    tell apart; spread over the data (the colour bar says the scale), each step is visible.
    Scores stay inside 0-1; a flat board gets a 0.1-wide band so one value is not an extreme.
    """
    if not means:
        return 0.0, 1.0
    lowest, highest = min(means), max(means)
    margin = max(0.1 * (highest - lowest), 0.05)
    low, high = lowest - margin, highest + margin
    if lowest >= 0.0 and highest <= 1.0:
        low, high = max(0.0, low), min(1.0, high)
    return low, high


def _heatmap(rows: pd.DataFrame, systems: list[str], benchmarks: list[str], metric: str, ax: Axes | None) -> Axes:
    import numpy as np

    ax = new_axes(ax, (1.6 + 1.5 * len(benchmarks), 0.9 + 0.45 * len(systems)))
    values = np.full((len(systems), len(benchmarks)), np.nan)
    labels = [["" for _ in benchmarks] for _ in systems]
    for _, row in rows.iterrows():
        i, j = systems.index(row["system"]), benchmarks.index(row["benchmark"])
        mean = float(row["mean"])
        if math.isfinite(mean):
            values[i, j] = mean
            labels[i][j] = f"{mean:.3f}{'★' if bool(row['best']) else ''}{_marker(row)}"
    low, high = colour_range([float(v) for v in values[np.isfinite(values)]])
    image = ax.imshow(np.ma.masked_invalid(values), cmap="cividis", vmin=low, vmax=high, aspect="auto")
    cmap = image.get_cmap()
    for i in range(len(systems)):
        for j in range(len(benchmarks)):
            if not labels[i][j]:
                ax.text(j, i, "—", ha="center", va="center", fontsize="small", alpha=0.6)
                continue
            r, g, b, _ = cmap(image.norm(values[i, j]))
            light = 0.299 * r + 0.587 * g + 0.114 * b > 0.55
            ax.text(j, i, labels[i][j], ha="center", va="center", fontsize="small", color="black" if light else "white")
    ax.set_xticks(range(len(benchmarks)), benchmarks)
    ax.set_yticks(range(len(systems)), systems)
    for label in (*ax.get_xticklabels(), *ax.get_yticklabels()):
        label.set_parse_math(False)
    ax.tick_params(labelsize="small", length=0)
    for spine in ax.spines.values():
        spine.set_visible(False)
    ax.set_title(
        f"{metric}: mean per system and benchmark (★ best, ▲▼ vs baseline)", fontsize="medium", parse_math=False
    )
    ax.figure.colorbar(image, ax=ax, fraction=0.05, pad=0.02).ax.tick_params(labelsize="small")
    return ax


def _dots(rows: pd.DataFrame, systems: list[str], benchmarks: list[str], metric: str, ax: Axes | None) -> Axes:
    ax = new_axes(ax, (6.4, 0.9 + 0.5 * len(systems)))
    style_axes(ax, grid="x")
    width = 0.7 / max(1, len(benchmarks))
    for j, benchmark in enumerate(benchmarks):
        color = PALETTE[j % len(PALETTE)]
        part = rows[rows["benchmark"] == benchmark]
        ys, xs, lows, highs = [], [], [], []
        for _, row in part.iterrows():
            mean = float(row["mean"])
            if not math.isfinite(mean):
                continue
            y = systems.index(row["system"]) - 0.35 + width * (j + 0.5)
            ys.append(y)
            xs.append(mean)
            lo, hi = float(row["ci_low"]), float(row["ci_high"])
            # the interval is of the scored values; Heta's mean may sit outside it (skipped as 0)
            lows.append(max(0.0, mean - lo) if math.isfinite(lo) else 0.0)
            highs.append(max(0.0, hi - mean) if math.isfinite(hi) else 0.0)
            mark = _marker(row) + ("★" if bool(row["best"]) else "")
            if mark:
                ax.annotate(mark, (mean, y), xytext=(6, 0), textcoords="offset points", va="center", fontsize="small")
        ax.errorbar(xs, ys, xerr=[lows, highs], fmt="o", color=color, markersize=5, capsize=2, label=benchmark)
    ax.set_yticks(range(len(systems)), systems)
    for label in ax.get_yticklabels():
        label.set_parse_math(False)
    ax.invert_yaxis()
    ax.set_xlabel(f"{metric} (mean, 95 % CI)", parse_math=False)
    ax.set_title(f"{metric} per system (★ best, ▲▼ vs baseline)", fontsize="medium", parse_math=False)
    add_legend(ax)
    return ax
