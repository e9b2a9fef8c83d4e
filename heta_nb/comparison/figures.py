"""A comparison's two figures, drawn on given arrays: the paired scatter and the histogram of deltas."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

import numpy as np

from heta_nb.stats.paired import PairedTest

if TYPE_CHECKING:  # pragma: no cover
    from matplotlib.axes import Axes


__all__ = ["delta_histogram", "paired_scatter", "plot_deltas", "plot_paired"]


def plot_paired(comparison: Any, j: int, k: int, ax: Axes | None) -> Axes:
    """:meth:`Comparison.plot_paired` of metric ``j`` and tested system ``k``."""
    aligned, base = comparison._aligned, comparison.base_of[k]
    mask = aligned.mask[k, j]
    t = comparison._tests[(k, j)]
    metric = comparison.metrics[j]
    names = (comparison.systems[base], comparison.systems[k])
    ax, jittered = paired_scatter(
        aligned.values[base, j, mask], aligned.values[k, j, mask], t, metric, names, seed=comparison.seed, ax=ax
    )
    ax.heta_nb_info = _plot_info(comparison, "paired", metric, k, t, jittered=jittered)  # type: ignore[attr-defined]
    return ax


def plot_deltas(comparison: Any, j: int, k: int, ax: Axes | None) -> Axes:
    """:meth:`Comparison.plot_deltas` of metric ``j`` and tested system ``k``."""
    from heta_nb.comparison.significance import verdict_text

    t = comparison._tests[(k, j)]
    metric = comparison.metrics[j]
    names = (comparison.systems[comparison.base_of[k]], comparison.systems[k])
    ax = delta_histogram(
        comparison.deltas(metric, k),
        t,
        metric,
        names,
        confidence=comparison.confidence,
        verdict=verdict_text(t, comparison.alpha, comparison._mdd((k, j))),
        ax=ax,
    )
    ax.heta_nb_info = _plot_info(comparison, "deltas", metric, k, t)  # type: ignore[attr-defined]
    return ax


def _plot_info(comparison: Any, plot: str, metric: str, k: int, t: PairedTest, **extra: Any) -> dict[str, Any]:
    """What a figure shows, as data (tests read it)."""
    return {
        "plot": plot,
        "metric": metric,
        "system": comparison.systems[k],
        "baseline": comparison.systems[comparison.base_of[k]],
        "n": t.n,
        "mean_diff": t.mean_diff,
        "ci": (t.ci_low, t.ci_high),
        "wins": t.wins,
        "ties": t.ties,
        "losses": t.losses,
        **extra,
    }


def _axes(ax: Axes | None, size: tuple[float, float]) -> tuple[Axes, tuple[str, ...]]:
    """``ax`` (or the axes of a new pyplot-free figure) and the package's colour palette."""
    from heta_nb.plots import PALETTE
    from heta_nb.plots.style import new_axes

    # a PlotFigure, as in heta_nb.plots: no layout engine, and it displays as an image by itself
    return new_axes(ax, size), PALETTE


def paired_scatter(
    x: np.ndarray, y: np.ndarray, t: PairedTest, metric: str, names: tuple[str, str], *, seed: int, ax: Axes | None
) -> tuple[Axes, bool]:
    """Baseline scores ``x`` against the system's ``y``, one point per case, with the diagonal.

    Returns:
        The axes, and whether the points were jittered (discrete scores, seeded by ``seed``).
    """
    ax, palette = _axes(ax, (4.8, 4.6))
    jittered = False
    if x.size:
        both = np.concatenate([x, y])
        lo, hi = float(both.min()), float(both.max())
        span = hi - lo or 1.0
        if np.unique(both).size <= 12:
            jittered = True
            rng = np.random.default_rng(seed)
            width = 0.025 * span
            x = x + rng.uniform(-width, width, x.size)
            y = y + rng.uniform(-width, width, y.size)
        ax.scatter(x, y, s=14, alpha=0.45, linewidths=0, color=palette[0])
        pad = 0.06 * span
        ax.plot([lo - pad, hi + pad], [lo - pad, hi + pad], color="#888888", linestyle="--", linewidth=1)
        ax.set_xlim(lo - pad, hi + pad)
        ax.set_ylim(lo - pad, hi + pad)
    else:
        ax.text(0.5, 0.5, "no aligned cases", ha="center", va="center", transform=ax.transAxes)
    ax.set_xlabel(f"{names[0]} (baseline)", parse_math=False)
    ax.set_ylabel(names[1], parse_math=False)
    note = f"{t.wins} better, {t.ties} tied, {t.losses} worse" + (" (jittered)" if jittered else "")
    ax.set_title(f"{metric}, {t.n} cases\n{note}", fontsize="medium", parse_math=False)
    return ax, jittered


def delta_histogram(
    d: np.ndarray,
    t: PairedTest,
    metric: str,
    names: tuple[str, str],
    *,
    confidence: float,
    verdict: str,
    ax: Axes | None,
) -> Axes:
    """The per-case differences ``d`` (system − baseline) with their mean and its CI marked."""
    ax, palette = _axes(ax, (5.6, 3.6))
    if d.size:
        levels, counts = np.unique(d, return_counts=True)
        if levels.size <= 25:
            step = float(np.min(np.diff(levels))) if levels.size > 1 else 1.0
            ax.bar(levels, counts, width=0.8 * step, color=palette[0], alpha=0.75)
        else:
            ax.hist(d, bins="auto", color=palette[0], alpha=0.75)
        ax.axvline(0.0, color="#888888", linewidth=1, linestyle=":")
        pct = f"{confidence * 100:g}%"
        if math.isfinite(t.ci_low) and math.isfinite(t.ci_high):
            ax.axvspan(t.ci_low, t.ci_high, color=palette[1], alpha=0.25, label=f"{pct} CI of the mean")
        ax.axvline(t.mean_diff, color=palette[3], linewidth=2, label=f"mean {t.mean_diff:+.3g}")
        ax.legend(fontsize="small", frameon=False)
    else:
        ax.text(0.5, 0.5, "no aligned cases", ha="center", va="center", transform=ax.transAxes)
    ax.set_xlabel(f"{metric}: {names[1]} − {names[0]}", parse_math=False)
    ax.set_ylabel("cases")
    ax.set_title(f"{metric}, {t.n} cases: {verdict}", fontsize="medium", parse_math=False)
    return ax
