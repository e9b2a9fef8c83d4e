"""plot_scores: the distribution of one metric per query mode (bars, ECDF, histogram or box)."""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from heta_nb import stats
from heta_nb._util.text import shorten
from heta_nb.model.report import EvaluationReport
from heta_nb.model.summary import as_float
from heta_nb.plots.ecdf import ecdf_xy
from heta_nb.plots.style import (
    MUTED,
    add_legend,
    count_noun,
    ink,
    legend_entry,
    mode_colors,
    mode_hatches,
    mode_linestyles,
    new_axes,
    paper,
    record_info,
    set_title,
    short_number,
    style_axes,
)
from heta_nb.tables.distributions import metric_kind, select_modes

if TYPE_CHECKING:  # pragma: no cover
    from matplotlib.axes import Axes

__all__ = ["MAX_BAR_VALUES", "MAX_FREQUENCY_BARS", "SCORE_KINDS", "plot_scores"]

SCORE_KINDS = ("auto", "bar", "hist", "ecdf", "box")
"""The ``kind=`` values :func:`plot_scores` accepts."""

MAX_BAR_VALUES = 12
"""``kind="auto"`` draws [0, 1] scores with at most this many distinct values as bars."""

MAX_FREQUENCY_BARS = 40
"""An explicit ``kind="bar"`` refuses numbers with more distinct values than this."""


@dataclass
class _ModeScores:
    """The scores of one metric in one mode, split into what is plotted and what is not."""

    mode: str
    values: list[float] = field(default_factory=list)
    texts: list[str] = field(default_factory=list)
    skipped: int = 0
    excluded: int = 0
    errors: int = 0
    missing: int = 0

    @property
    def n(self) -> int:
        return len(self.values) if self.values or not self.texts else len(self.texts)

    def label(self, include_skipped: bool) -> str:
        parts = [f"n={self.n}"]
        if self.skipped:
            parts.append(f"{self.skipped} skipped {'as 0' if include_skipped else 'excluded'}")
        if self.errors:
            parts.append(count_noun(self.errors, "error"))
        if self.missing:
            parts.append(f"{self.missing} without score")
        return legend_entry(self.mode, parts)


def _collect(
    report: EvaluationReport, metric: str, modes: Sequence[str], include_skipped: bool
) -> dict[str, _ModeScores]:
    found = {mode: _ModeScores(mode) for mode in modes}
    for result in report.raw["case_results"]:
        entry = found.get(result["query_mode"])
        if entry is None:
            continue
        if result["error"] is not None:
            entry.errors += 1
            continue
        score = next((s for s in result["scores"] if s["name"] == metric), None)
        if score is None:
            entry.missing += 1
            continue
        skipped = score["metadata"].get("skipped") is True
        entry.skipped += skipped
        if skipped and not include_skipped:
            entry.excluded += 1
            continue
        value = score["value"]
        if isinstance(value, str):
            entry.texts.append(value)
        else:
            entry.values.append(as_float(value))
    return found


def _counts_line(scores: Sequence[_ModeScores], include_skipped: bool, what: str = "scores") -> str:
    total = sum(s.n for s in scores)
    parts = [f"n={total} {what}"]
    skipped = sum(s.skipped for s in scores)
    if skipped:
        parts.append(
            f"{skipped} skipped included as 0 (as Heta does)" if include_skipped else f"{skipped} skipped excluded"
        )
    errors = sum(s.errors for s in scores)
    if errors:
        parts.append(f"{count_noun(errors, 'errored case')} (no score)")
    return "; ".join(parts)


def _choose_kind(data_kind: str, values: Sequence[float]) -> str:
    if data_kind in ("bool", "text"):
        return "bar"
    bounded = all(0.0 <= v <= 1.0 for v in values)
    if not bounded:
        return "box"
    distinct = {round(v, 9) for v in values}
    return "bar" if len(distinct) <= MAX_BAR_VALUES else "ecdf"


# -- plot_scores --------------------------------------------------------------------------
def plot_scores(
    report: EvaluationReport,
    metric: str,
    *,
    modes: str | Iterable[str] | None = None,
    kind: str = "auto",
    include_skipped: bool = False,
    ax: Axes | None = None,
) -> Axes:
    """The distribution of one metric's scores, per query mode.

    ``kind="auto"`` picks: bool metrics -> bars of the proportion true with 95% Wilson
    intervals; [0, 1] scores with at most 12 distinct values -> grouped bars of value
    frequencies; other [0, 1] scores -> ECDF; unbounded scores -> box plots; text
    scores -> bars of the most frequent values.

    Args:
        report: the evaluation report.
        metric: a score name, e.g. ``"evidence_recall@5"``.
        modes: query modes to show (default: all).
        kind: ``"auto"``, ``"bar"``, ``"hist"``, ``"ecdf"`` or ``"box"``.
        include_skipped: plot skipped scores (as 0) like Heta's mean does.
        ax: draw on this Axes instead of a new figure.

    Returns:
        The Axes drawn on.

    Raises:
        KeyError: unknown metric or mode. ValueError: unknown kind, or a numeric kind for text scores.
    """
    if kind not in SCORE_KINDS:
        raise ValueError(f"kind must be one of {list(SCORE_KINDS)}, got {kind!r}")
    if metric not in report.metric_names:
        raise KeyError(f"report {report.report_id!r} has no metric {metric!r}; metrics: {list(report.metric_names)}")
    chosen = select_modes(report, modes)
    colors = mode_colors(report.modes)
    found = _collect(report, metric, report.modes, include_skipped)
    scores = [found[m] for m in chosen]
    # the kind and the axis range depend on every mode's scores, so a subset of modes
    # is drawn the same way as the whole report
    values = [v for s in found.values() for v in s.values]
    # the kind of the metric itself (all modes, skipped scores too), not of what is left
    data_kind = metric_kind(report, metric)
    if data_kind == "text" and kind not in ("auto", "bar"):
        raise ValueError(f"metric {metric!r} has text scores; only kind='bar' (value counts) can show them")
    drawn = _choose_kind(data_kind, values) if kind == "auto" else kind
    distinct = len({round(v, 9) for v in values})
    if drawn == "bar" and data_kind == "number" and distinct > MAX_FREQUENCY_BARS:
        raise ValueError(
            f"metric {metric!r} has {distinct} distinct values, too many for bars; use kind='ecdf', 'hist' or 'box'"
        )
    bounded = bool(values) and all(0.0 <= v <= 1.0 for v in values)
    n_modes = len(chosen)
    ax = new_axes(ax, (8.0, max(3.6, 3.2 + 0.25 * n_modes)))
    if drawn == "bar" and data_kind == "bool":
        style = "proportion"
        title = f"{metric}: proportion true per mode (95% Wilson CI)"
        _draw_proportions(ax, scores, colors, include_skipped)
    elif drawn == "bar":
        style = "frequency"
        title = f"{metric}: share of scores per value"
        _draw_frequencies(ax, scores, colors, include_skipped, metric, text=data_kind == "text")
    elif drawn == "ecdf":
        style = "ecdf"
        title = f"{metric}: cumulative distribution per mode"
        _draw_score_ecdf(ax, scores, colors, include_skipped, metric, bounded)
    elif drawn == "hist":
        style = "hist"
        title = f"{metric}: distribution per mode"
        _draw_hist(ax, scores, colors, include_skipped, metric, bounded)
    else:
        style = "box"
        title = f"{metric}: distribution per mode (box: quartiles, line: median, diamond: mean)"
        _draw_box(ax, scores, colors, include_skipped, metric)
    set_title(ax, title, _counts_line(scores, include_skipped))
    record_info(
        ax,
        plot="scores",
        kind=drawn,
        style=style,
        data_kind=data_kind,
        metric=metric,
        modes=list(chosen),
        include_skipped=include_skipped,
        n={s.mode: s.n for s in scores},
        skipped={s.mode: s.skipped for s in scores},
        excluded={s.mode: s.excluded for s in scores},
        errors={s.mode: s.errors for s in scores},
    )
    return ax


def _draw_proportions(ax: Axes, scores: Sequence[_ModeScores], colors: dict[str, str], include_skipped: bool) -> None:
    style_axes(ax, "y")
    hatches = mode_hatches([s.mode for s in scores], colors)
    for index, entry in enumerate(scores):
        n = len(entry.values)
        if n == 0:
            ax.bar(index, 0.0, color=colors[entry.mode], hatch=hatches[entry.mode], label=entry.label(include_skipped))
            ax.text(index, 0.02, "no scores", ha="center", va="bottom", fontsize="small", color=ink())
            continue
        successes = int(round(sum(entry.values)))
        p = successes / n
        low, high = stats.wilson_interval(successes, n)
        ax.bar(
            index,
            p,
            width=0.6,
            color=colors[entry.mode],
            hatch=hatches[entry.mode],
            label=entry.label(include_skipped),
            yerr=[[p - low], [high - p]],
            capsize=6,
            error_kw={"ecolor": ink(), "elinewidth": 1.2, "capthick": 1.2},
        )
        ax.text(index, high + 0.02, f"{p:.2f}\n({successes}/{n})", ha="center", va="bottom", fontsize="small")
    ax.set_xticks(range(len(scores)), [s.mode for s in scores], parse_math=False)
    ax.set_ylim(0.0, 1.18)
    ax.set_yticks([0.0, 0.25, 0.5, 0.75, 1.0])
    ax.set_ylabel("proportion true")
    add_legend(ax)


def _draw_frequencies(
    ax: Axes,
    scores: Sequence[_ModeScores],
    colors: dict[str, str],
    include_skipped: bool,
    metric: str,
    *,
    text: bool,
) -> None:
    import numpy as np

    style_axes(ax, "y")
    if text:
        totals: dict[str, int] = {}
        for entry in scores:
            for item in entry.texts:
                totals[item] = totals.get(item, 0) + 1
        ranked = sorted(totals, key=lambda t: (-totals[t], t))
        keys: list[Any] = ranked[:MAX_BAR_VALUES]
        rest = set(ranked[MAX_BAR_VALUES:])
        labels = [shorten(k, 18) for k in keys] + (["other"] if rest else [])
    else:
        keys = sorted({round(v, 9) for entry in scores for v in entry.values})
        rest = set()
        labels = [short_number(k) for k in keys]
    width = 0.8 / max(1, len(scores))
    positions = np.arange(len(labels), dtype=float)
    hatches = mode_hatches([s.mode for s in scores], colors)
    for index, entry in enumerate(scores):
        items: list[Any] = entry.texts if text else [round(v, 9) for v in entry.values]
        n = len(items)
        counts = [sum(1 for x in items if x == key) for key in keys]
        if rest:
            counts.append(sum(1 for x in items if x in rest))
        shares = [c / n if n else 0.0 for c in counts]
        offset = (index - (len(scores) - 1) / 2) * width
        ax.bar(
            positions + offset,
            shares,
            width=width * 0.92,
            color=colors[entry.mode],
            hatch=hatches[entry.mode],
            label=entry.label(include_skipped),
        )
    ax.set_xticks(positions, labels, rotation=30 if text and len(labels) > 5 else 0, parse_math=False)
    ax.set_xlabel(f"{metric} value", parse_math=False)
    ax.set_ylabel("share of the mode's scores")
    ax.set_ylim(0.0, 1.0)
    add_legend(ax)


def _draw_score_ecdf(
    ax: Axes,
    scores: Sequence[_ModeScores],
    colors: dict[str, str],
    include_skipped: bool,
    metric: str,
    bounded: bool,
) -> None:
    style_axes(ax, "both")
    styles = mode_linestyles([s.mode for s in scores], colors)
    for entry in scores:
        if not entry.values:
            ax.plot([], [], color=colors[entry.mode], label=entry.label(include_skipped))
            continue
        xs, ys = ecdf_xy(entry.values, 0.0 if bounded else None)
        if bounded:
            xs.append(1.0)
            ys.append(1.0)
        ax.step(
            xs,
            ys,
            where="post",
            color=colors[entry.mode],
            linestyle=styles[entry.mode],
            linewidth=1.8,
            label=entry.label(include_skipped),
        )
    if bounded:
        ax.set_xlim(-0.02, 1.02)
    ax.set_ylim(-0.02, 1.02)
    ax.set_xlabel(f"{metric} score", parse_math=False)
    ax.set_ylabel("share of scores ≤ x")
    add_legend(ax)


def _draw_hist(
    ax: Axes,
    scores: Sequence[_ModeScores],
    colors: dict[str, str],
    include_skipped: bool,
    metric: str,
    bounded: bool,
) -> None:
    import numpy as np

    style_axes(ax, "y")
    values = [v for s in scores for v in s.values if math.isfinite(v)]
    if bounded:
        bins = np.linspace(0.0, 1.0, 11)
    elif values:
        bins = np.histogram_bin_edges(values, bins="auto")
        if len(bins) > 41:
            bins = np.linspace(min(values), max(values), 41)
    else:
        bins = np.linspace(0.0, 1.0, 11)
    styles = mode_linestyles([s.mode for s in scores], colors)
    for entry in scores:
        data = [v for v in entry.values if math.isfinite(v)]
        weights = [1.0 / len(data)] * len(data) if data else None
        ax.hist(
            data,
            bins=[float(edge) for edge in bins],
            weights=weights,
            histtype="step",
            linewidth=1.8,
            color=colors[entry.mode],
            linestyle=styles[entry.mode],
            label=entry.label(include_skipped),
        )
    ax.set_xlabel(f"{metric} score", parse_math=False)
    ax.set_ylabel("share of the mode's scores")
    add_legend(ax)


def _draw_box(
    ax: Axes, scores: Sequence[_ModeScores], colors: dict[str, str], include_skipped: bool, metric: str
) -> None:
    from matplotlib.patches import Patch

    style_axes(ax, "y")
    present = [(i, s) for i, s in enumerate(scores) if s.values]
    if present:
        parts = ax.boxplot(
            [s.values for _, s in present],
            positions=[i for i, _ in present],
            widths=0.5,
            patch_artist=True,
            showmeans=True,
            medianprops={"color": ink(), "linewidth": 1.5},
            meanprops={"marker": "D", "markerfacecolor": paper(), "markeredgecolor": ink(), "markersize": 5},
            flierprops={"marker": "o", "markersize": 3, "markerfacecolor": "none", "markeredgecolor": MUTED},
            whiskerprops={"color": ink()},
            capprops={"color": ink()},
        )
        for box, (_, entry) in zip(parts["boxes"], present):
            box.set_facecolor(colors[entry.mode])
            box.set_alpha(0.75)
            box.set_edgecolor(ink())
    ax.set_xticks(range(len(scores)), [f"{s.mode}\nn={s.n}" for s in scores], parse_math=False)
    ax.set_xlim(-0.6, len(scores) - 0.4)
    ax.set_ylabel(metric, parse_math=False)
    handles = [Patch(facecolor=colors[s.mode], alpha=0.75, label=s.label(include_skipped)) for s in scores]
    add_legend(ax, handles)
