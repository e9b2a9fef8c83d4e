"""matplotlib plots of evaluation reports: score distributions, latency, summaries, labels.

Every function takes an optional ``ax=`` and returns the Axes it drew on. Without one it
creates a standalone :class:`matplotlib.figure.Figure` (never a pyplot figure), so
plotting here never changes pyplot's state or ``rcParams``; all styling is per call.
Save a figure with :func:`figure_to_svg` / :func:`figure_to_png` (deterministic bytes;
the SVG helper fixes ``svg.hashsalt`` inside an ``rc_context`` for that call only).

Each mode keeps one colour in every plot (a colour-blind-safe Okabe-Ito palette, see
:func:`mode_colors`). Skipped scores are left out of distributions by default, errored
cases never are scores; titles and legends say how many of each there were.

Each returned Axes carries a ``heta_nb_info`` dict describing what was drawn (``plot``,
``kind``, ``metric``, ``modes`` and per-mode ``n``/``skipped``/``errors``).

matplotlib (and pandas, for :func:`plot_by_label`) is imported when a function is called.
"""

from __future__ import annotations

import io
import math
import warnings
import zlib
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

from heta_nb import stats
from heta_nb.model.report import EvaluationReport
from heta_nb.model.summary import as_float
from heta_nb.tables.distributions import MISSING_LABEL, metric_kind, select_metrics, select_modes

if TYPE_CHECKING:  # pragma: no cover
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure, SubFigure

    from heta_nb.benchmark.types import Benchmark

__all__ = [
    "PALETTE",
    "SCORE_KINDS",
    "draw_svg",
    "figure_to_png",
    "figure_to_svg",
    "mode_colors",
    "plot_by_label",
    "plot_latency",
    "plot_metric_summary",
    "plot_scores",
]

PALETTE: tuple[str, ...] = ("#0072B2", "#E69F00", "#009E73", "#D55E00", "#CC79A7", "#56B4E9", "#000000")
"""Okabe-Ito colours (yellow left out: too faint on white), safe for colour-blind readers."""

_FIXED_MODES = {
    "full_text_search": 0,
    "extractive_answer": 1,
    "sql_text_search": 2,
    "vector_search": 3,
    "hybrid_search": 4,
}
"""Heta's common modes always get the same colour; other modes a stable hashed one."""

SCORE_KINDS = ("auto", "bar", "hist", "ecdf", "box")
MAX_BAR_VALUES = 12
"""``kind="auto"`` draws [0, 1] scores with at most this many distinct values as bars."""

MAX_FREQUENCY_BARS = 40
"""An explicit ``kind="bar"`` refuses numbers with more distinct values than this."""

_INK = "#333333"
_GRID = "#dddddd"
_LINESTYLES = ("-", "--", ":", "-.")
_HATCHES = ("", "//", "xx", "..")


# -- colours ------------------------------------------------------------------------------
def mode_colors(modes: Iterable[str]) -> dict[str, str]:
    """A colour per mode: fixed for Heta's common modes, hashed (stable) for the others.

    Colours are unique among ``modes`` as long as there are no more modes than colours;
    pass every mode of a report (as the plots do), not a subset, to keep them stable.
    """
    modes = list(dict.fromkeys(modes))
    colors: dict[str, str] = {}
    used: set[int] = set()
    for mode in modes:
        if mode in _FIXED_MODES:
            colors[mode] = PALETTE[_FIXED_MODES[mode]]
            used.add(_FIXED_MODES[mode])
    for mode in sorted(m for m in modes if m not in colors):
        start = zlib.crc32(mode.encode()) % len(PALETTE)
        slot = next(
            (s % len(PALETTE) for s in range(start, start + len(PALETTE)) if s % len(PALETTE) not in used), None
        )
        slot = start if slot is None else slot
        used.add(slot)
        colors[mode] = PALETTE[slot]
    return {mode: colors[mode] for mode in modes}


def _linestyles(modes: Sequence[str], colors: dict[str, str]) -> dict[str, str]:
    """Solid lines, then dashed ones once colours repeat (more modes than colours)."""
    seen: dict[str, int] = {}
    styles = {}
    for mode in modes:
        count = seen.get(colors[mode], 0)
        seen[colors[mode]] = count + 1
        styles[mode] = _LINESTYLES[count % len(_LINESTYLES)]
    return styles


def _hatches(modes: Sequence[str], colors: dict[str, str]) -> dict[str, str]:
    """No hatch, then hatched bars once colours repeat (more modes than colours)."""
    return {mode: _HATCHES[_LINESTYLES.index(style)] for mode, style in _linestyles(modes, colors).items()}


# -- shared helpers -----------------------------------------------------------------------
def _new_axes(ax: Axes | None, figsize: tuple[float, float]) -> Axes:
    if ax is not None:
        return ax
    from matplotlib.figure import Figure

    # No layout engine: positions are fixed, so saving twice gives the same bytes; the
    # outside legend and long labels are kept by cropping to content when saving.
    fig = Figure(figsize=figsize)
    return fig.subplots()


def _style(ax: Axes, grid: Literal["both", "x", "y"] = "y") -> None:
    for side in ("top", "right"):
        ax.spines[side].set_visible(False)
    for side in ("left", "bottom"):
        ax.spines[side].set_color("#888888")
    ax.tick_params(colors=_INK, labelsize="small")
    ax.set_axisbelow(True)
    ax.grid(True, axis=grid, color=_GRID, linewidth=0.8)


def _legend(ax: Axes, handles: Sequence[Any] | None = None) -> None:
    kwargs: dict[str, Any] = {"handles": list(handles)} if handles is not None else {}
    legend = ax.legend(
        **kwargs,
        loc="upper left",
        bbox_to_anchor=(1.01, 1.0),
        fontsize="small",
        frameon=False,
        borderaxespad=0.0,
        handlelength=1.6,
    )
    for text in legend.get_texts():  # mode names are data, not TeX
        text.set_parse_math(False)


def _plural(count: int, word: str) -> str:
    return f"{count} {word}{'' if count == 1 else 's'}"


def _fmt(value: float) -> str:
    """A short number: ``0.3333 -> "0.333"``, ``12.0 -> "12"``."""
    return f"{value:.3g}"


def _title(ax: Axes, main: str, note: str) -> None:
    """A two-part title: what is shown, then the counts (wrapped so it never outgrows the plot)."""
    import textwrap

    lines = textwrap.wrap(note, width=max(72, len(main)), break_on_hyphens=False)
    ax.set_title("\n".join([main, *lines]), fontsize="medium", color=_INK, parse_math=False)


def _entry(mode: str, parts: Sequence[str], width: int = 34) -> str:
    """A legend entry: the mode, then its counts wrapped to short lines."""
    lines: list[str] = []
    for part in parts:
        if lines and len(lines[-1]) + 2 + len(part) <= width:
            lines[-1] += ", " + part
        else:
            lines.append(part)
    return "\n".join([mode, *lines])


def _info(ax: Axes, **info: Any) -> None:
    ax.heta_nb_info = info  # type: ignore[attr-defined]


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
            parts.append(_plural(self.errors, "error"))
        if self.missing:
            parts.append(f"{self.missing} without score")
        return _entry(self.mode, parts)


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
        parts.append(f"{_plural(errors, 'errored case')} (no score)")
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
    ax = _new_axes(ax, (8.0, max(3.6, 3.2 + 0.25 * n_modes)))
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
    _title(ax, title, _counts_line(scores, include_skipped))
    _info(
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
    _style(ax, "y")
    hatches = _hatches([s.mode for s in scores], colors)
    for index, entry in enumerate(scores):
        n = len(entry.values)
        if n == 0:
            ax.bar(index, 0.0, color=colors[entry.mode], hatch=hatches[entry.mode], label=entry.label(include_skipped))
            ax.text(index, 0.02, "no scores", ha="center", va="bottom", fontsize="small", color=_INK)
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
            error_kw={"ecolor": _INK, "elinewidth": 1.2, "capthick": 1.2},
        )
        ax.text(index, high + 0.02, f"{p:.2f}\n({successes}/{n})", ha="center", va="bottom", fontsize="small")
    ax.set_xticks(range(len(scores)), [s.mode for s in scores], parse_math=False)
    ax.set_ylim(0.0, 1.18)
    ax.set_yticks([0.0, 0.25, 0.5, 0.75, 1.0])
    ax.set_ylabel("proportion true")
    _legend(ax)


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

    _style(ax, "y")
    if text:
        totals: dict[str, int] = {}
        for entry in scores:
            for item in entry.texts:
                totals[item] = totals.get(item, 0) + 1
        ranked = sorted(totals, key=lambda t: (-totals[t], t))
        keys: list[Any] = ranked[:MAX_BAR_VALUES]
        rest = set(ranked[MAX_BAR_VALUES:])
        labels = [k if len(k) <= 18 else k[:17] + "…" for k in keys] + (["other"] if rest else [])
    else:
        keys = sorted({round(v, 9) for entry in scores for v in entry.values})
        rest = set()
        labels = [_fmt(k) for k in keys]
    width = 0.8 / max(1, len(scores))
    positions = np.arange(len(labels), dtype=float)
    hatches = _hatches([s.mode for s in scores], colors)
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
    _legend(ax)


MAX_ECDF_STEPS = 400
"""An ECDF is drawn with at most this many steps (evenly spaced in rank): beyond that the
difference is invisible, and big reports would otherwise make huge, slow figures."""


def _ecdf_xy(values: Sequence[float], start: float | None) -> tuple[list[float], list[float]]:
    ordered = sorted(values)
    n = len(ordered)
    xs: list[float] = []
    ys: list[float] = []
    for index, value in enumerate(ordered):  # one step per distinct value
        if xs and xs[-1] == value:
            ys[-1] = (index + 1) / n
        else:
            xs.append(value)
            ys.append((index + 1) / n)
    if len(xs) > MAX_ECDF_STEPS:
        last = len(xs) - 1
        keep = sorted({round(i * last / (MAX_ECDF_STEPS - 1)) for i in range(MAX_ECDF_STEPS)})
        xs = [xs[i] for i in keep]
        ys = [ys[i] for i in keep]
    return [ordered[0] if start is None else start, *xs], [0.0, *ys]


def _draw_score_ecdf(
    ax: Axes,
    scores: Sequence[_ModeScores],
    colors: dict[str, str],
    include_skipped: bool,
    metric: str,
    bounded: bool,
) -> None:
    _style(ax, "both")
    styles = _linestyles([s.mode for s in scores], colors)
    for entry in scores:
        if not entry.values:
            ax.plot([], [], color=colors[entry.mode], label=entry.label(include_skipped))
            continue
        xs, ys = _ecdf_xy(entry.values, 0.0 if bounded else None)
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
    _legend(ax)


def _draw_hist(
    ax: Axes,
    scores: Sequence[_ModeScores],
    colors: dict[str, str],
    include_skipped: bool,
    metric: str,
    bounded: bool,
) -> None:
    import numpy as np

    _style(ax, "y")
    values = [v for s in scores for v in s.values if math.isfinite(v)]
    if bounded:
        bins = np.linspace(0.0, 1.0, 11)
    elif values:
        bins = np.histogram_bin_edges(values, bins="auto")
        if len(bins) > 41:
            bins = np.linspace(min(values), max(values), 41)
    else:
        bins = np.linspace(0.0, 1.0, 11)
    styles = _linestyles([s.mode for s in scores], colors)
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
    _legend(ax)


def _draw_box(
    ax: Axes, scores: Sequence[_ModeScores], colors: dict[str, str], include_skipped: bool, metric: str
) -> None:
    from matplotlib.patches import Patch

    _style(ax, "y")
    present = [(i, s) for i, s in enumerate(scores) if s.values]
    if present:
        parts = ax.boxplot(
            [s.values for _, s in present],
            positions=[i for i, _ in present],
            widths=0.5,
            patch_artist=True,
            showmeans=True,
            medianprops={"color": _INK, "linewidth": 1.5},
            meanprops={"marker": "D", "markerfacecolor": "white", "markeredgecolor": _INK, "markersize": 5},
            flierprops={"marker": "o", "markersize": 3, "markerfacecolor": "none", "markeredgecolor": "#777777"},
            whiskerprops={"color": _INK},
            capprops={"color": _INK},
        )
        for box, (_, entry) in zip(parts["boxes"], present):
            box.set_facecolor(colors[entry.mode])
            box.set_alpha(0.75)
            box.set_edgecolor(_INK)
    ax.set_xticks(range(len(scores)), [f"{s.mode}\nn={s.n}" for s in scores], parse_math=False)
    ax.set_xlim(-0.6, len(scores) - 0.4)
    ax.set_ylabel(metric, parse_math=False)
    handles = [Patch(facecolor=colors[s.mode], alpha=0.75, label=s.label(include_skipped)) for s in scores]
    _legend(ax, handles)


# -- plot_latency -------------------------------------------------------------------------
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
    styles = _linestyles(chosen, colors)
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
    ax = _new_axes(ax, (8.0, max(3.6, 3.2 + 0.25 * len(chosen))))
    _style(ax, "both")
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
        xs, ys = _ecdf_xy(shown, None)
        (line,) = ax.step(xs, ys, where="post", color=color, linestyle=styles[mode], linewidth=1.8)
        marks = (max(p50, floor), max(p95, floor)) if log else (p50, p95)
        ax.plot([marks[0]], [0.5], marker="o", color=color, markeredgecolor="white", markersize=7, linestyle="none")
        ax.plot([marks[1]], [0.95], marker="D", color=color, markeredgecolor="white", markersize=6, linestyle="none")
        counted = f"n={len(values)}"
        if errors[mode]:
            counted += f", {_plural(errors[mode], 'error')} {'included' if include_errors else 'excluded'}"
        line.set_label(_entry(mode, [counted, f"p50={_fmt(p50)} ms, p95={_fmt(p95)} ms"], width=0))
        handles.append(line)
    for level in (0.5, 0.95):
        ax.axhline(level, color="#999999", linewidth=0.8, linestyle=":", zorder=0)
    handles.append(Line2D([], [], marker="o", color="#777777", linestyle="none", label="median (p50)"))
    handles.append(Line2D([], [], marker="D", color="#777777", linestyle="none", label="p95"))
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
        note += f"; {_plural(n_failed, 'errored result')} {'included' if include_errors else 'excluded'}"
    _title(ax, "Latency per mode", note)
    _legend(ax, handles)
    _info(
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
    """Plain numbers (0.3, 1, 20) on a log axis; minor ticks labelled when it spans few decades."""
    from matplotlib.ticker import FuncFormatter, NullFormatter

    formatter = FuncFormatter(lambda value, _pos: _fmt(value))
    ax.xaxis.set_major_formatter(formatter)
    span = math.log10(max(values) / min(values)) if values else 0.0
    ax.xaxis.set_minor_formatter(formatter if span < 1.2 else NullFormatter())
    if span < 1.2:
        ax.tick_params(axis="x", which="minor", labelsize="x-small", colors=_INK)


# -- plot_metric_summary ------------------------------------------------------------------
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
    ax = _new_axes(ax, (8.0, min(14.0, max(3.2, 1.6 + 0.17 * n_bars + 0.1 * len(names)))))
    _style(ax, "x")
    height = 0.8 / max(1, len(chosen))
    hatches = _hatches(chosen, colors)
    centres = np.arange(len(names), dtype=float)
    top = 1.0
    bottom = 0.0
    bounded = True
    unplotted = 0
    all_n: list[int] = []
    skipped = 0
    for index, mode in enumerate(chosen):
        means, lows, highs, ns = [], [], [], []
        for metric in names:
            item = table.get((mode, metric))
            if item is None or item.kind == "text" or item.n == 0:
                means.append(math.nan)
                lows.append(math.nan)
                highs.append(math.nan)
                continue
            ns.append(item.n)
            skipped += item.skipped
            if not math.isfinite(item.mean):  # NaN or infinite scores: no bar can show it
                unplotted += 1
                means.append(math.nan)
                lows.append(math.nan)
                highs.append(math.nan)
                continue
            means.append(item.mean)
            lows.append(item.mean - item.ci_low if math.isfinite(item.ci_low) else math.nan)
            highs.append(item.ci_high - item.mean if math.isfinite(item.ci_high) else math.nan)
            bounded = bounded and 0.0 <= item.minimum and item.maximum <= 1.0
            top = max(top, item.ci_high if math.isfinite(item.ci_high) else item.mean)
            bottom = min(bottom, item.ci_low if math.isfinite(item.ci_low) else item.mean)
        all_n.extend(ns)
        errors = counts[mode].errors
        label = _entry(mode, [_n_range(ns), *([f"{_plural(errors, 'error')} left out"] if errors else [])])
        positions = centres + (index - (len(chosen) - 1) / 2) * height
        ax.barh(
            positions,
            means,
            height=height * 0.9,
            color=colors[mode],
            hatch=hatches[mode],
            label=label,
            xerr=[lows, highs],
            error_kw={"ecolor": _INK, "elinewidth": 1.0, "capsize": 3},
        )
        for y, mean, high in zip(positions, means, highs):
            if math.isfinite(mean):
                end = mean + (high if math.isfinite(high) else 0.0)
                ax.text(end + 0.01 * top, y, f"{mean:.2f}", va="center", ha="left", fontsize="x-small", color=_INK)
    ax.set_yticks(centres, list(names), parse_math=False)
    ax.set_ylim(len(names) - 0.5, -0.5)
    if bounded:
        ax.set_xlim(0.0, 1.1)
    else:  # room for the value labels, within the float range (scores of 1e308 exist)
        margin = 0.12 * (top / 2 - bottom / 2) * 2
        right = top + margin if math.isfinite(top + margin) else top
        left = bottom - margin if bottom < 0.0 and math.isfinite(bottom - margin) else bottom
        ax.set_xlim(left, right if right > left else left + 1.0)
    ax.set_xlabel(f"mean score (Heta's: skipped scores count as 0); error bars: {confidence:.0%} CI")
    errors_total = sum(counts[m].errors for m in chosen)
    notes = [f"{_n_range(all_n)} scores per mode and metric"]
    if errors_total:
        notes.append(f"{_plural(errors_total, 'errored case')} left out")
    if skipped:
        notes.append(f"{skipped} skipped scores averaged in as 0")
    if unplotted:
        notes.append(f"{_plural(unplotted, 'mean')} not finite (NaN or infinite scores), not drawn")
    _title(ax, "Mean per metric and mode", "; ".join(notes))
    _legend(ax)
    _info(
        ax,
        plot="metric_summary",
        kind="barh",
        metrics=list(names),
        modes=list(chosen),
        confidence=confidence,
        errors={m: counts[m].errors for m in chosen},
    )
    return ax


def _n_range(ns: Sequence[int]) -> str:
    if not ns:
        return "n=0"
    return f"n={ns[0]}" if min(ns) == max(ns) else f"n={min(ns)}–{max(ns)}"


# -- plot_by_label ------------------------------------------------------------------------
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
    :func:`heta_nb.tables.distributions.label_breakdown` (skipped scores left out by default).

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

    from heta_nb.tables.distributions import label_breakdown

    chosen = select_modes(report, modes)
    table = label_breakdown(
        report, benchmark, label, metrics=[metric], confidence=confidence, include_skipped=include_skipped
    )
    kind = table.attrs["kinds"][metric]
    colors = mode_colors(report.modes)
    values = list(dict.fromkeys(table.index.get_level_values(0)))
    rows = {key[:2]: row for key, row in zip(table.index, table.to_dict("records"))}
    has_missing = "cases_missing_from_report" in table.columns
    hatches = _hatches(chosen, colors)
    width = 0.8 / max(1, len(chosen))
    positions = np.arange(len(values), dtype=float)
    ax = _new_axes(ax, (max(7.5, 4.5 + 0.35 * len(values) * max(1, len(chosen))), 4.4))
    _style(ax, "y")
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
            parts.append(_plural(errors, "error"))
        if missing:
            parts.append(f"{missing} not in report")
        xs = positions + (index - (len(chosen) - 1) / 2) * width
        ax.bar(
            xs,
            means,
            width=width * 0.92,
            color=colors[mode],
            hatch=hatches[mode],
            label=_entry(mode, parts),
            yerr=[lows, highs],
            error_kw={"ecolor": _INK, "elinewidth": 1.0, "capsize": 3},
        )
        for x, r in zip(xs, entries):
            if r["n"] == 0:
                ax.text(x, 0.01, "n=0", ha="center", va="bottom", fontsize="x-small", color=_INK, rotation=90)
            elif not 0.0 <= r["mean"] <= 1.0:
                bounded = False
    cases = [rows[(value, chosen[0])]["cases"] for value in values] if chosen else [0] * len(values)
    tick_labels = [f"{'(no label)' if v == MISSING_LABEL else v}\n{_plural(c, 'case')}" for v, c in zip(values, cases)]
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
        notes.append(f"{_plural(totals['errors'], 'errored case')} (no score)")
    if totals["missing"]:
        notes.append(f"{totals['missing']} case results missing from the report")
    _title(ax, f"{metric} by {label}: {what} per mode ({confidence:.0%} {ci_name} CI)", "; ".join(notes))
    _legend(ax)
    _info(
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


# -- saving -------------------------------------------------------------------------------
def _root(fig: Figure | SubFigure) -> Figure:
    """The top-level Figure (``ax.figure`` may be a SubFigure)."""
    return fig.figure  # a Figure's ``figure`` is itself, a SubFigure's the root (matplotlib >= 3.7)


@contextmanager
def _settled(fig: Figure) -> Iterator[None]:
    """Hold a figure with a layout engine (e.g. constrained) still while saving.

    Each layout pass moves things by a few ULPs, so the layout runs only when the figure
    changed since it was last drawn; saving an unchanged figure again gives the same bytes.
    """
    engine = fig.get_layout_engine()
    if engine is None:
        yield
        return
    if fig.stale:  # changed since it was last drawn: lay it out again
        fig.draw_without_rendering()
    fig.set_layout_engine("none")
    try:
        yield
    finally:
        fig.set_layout_engine(engine)
        fig.stale = False  # it was just drawn as it is; a later change marks it stale again


def figure_to_svg(fig: Figure | SubFigure) -> str:
    """The figure (``ax.figure``; a subfigure saves its whole figure) as a self-contained
    SVG document; the same figure gives the same text.

    Cropped to its content (``bbox_inches="tight"``, like Jupyter's inline display).
    Dates, creator links and random element ids are left out (the id salt is fixed for
    this call only), so the SVG has no external reference. Text stays text, drawn by
    the browser's fonts, so matplotlib's "Glyph ... missing from font" warnings (a
    name in a script DejaVu Sans lacks, or with a control character) do not apply and
    are not shown.
    """
    import matplotlib

    root = _root(fig)
    buffer = io.StringIO()
    # Text stays text (svg.fonttype "none"): a fifth of the size of glyph outlines.
    with (
        _settled(root),
        matplotlib.rc_context({"svg.hashsalt": "heta_nb", "svg.fonttype": "none"}),
        warnings.catch_warnings(),
    ):
        warnings.filterwarnings("ignore", r"Glyph \d+ .*missing from (current )?font", UserWarning)
        root.savefig(
            buffer,
            format="svg",
            bbox_inches="tight",
            pad_inches=0.1,
            metadata={"Date": None, "Creator": None, "Type": None, "Format": None},
        )
    return buffer.getvalue()


def draw_svg(draw: Callable[[], Axes]) -> tuple[str | None, str | None]:
    """``(svg, None)`` of the figure ``draw()`` plots, or ``(None, why)`` if it cannot be drawn.

    For exports, where one figure must not cost the whole file: matplotlib refuses some
    valid reports (scores from -1e308 to 1e308 span more than a float holds, so no
    tick can be placed); ``why`` names the error.
    """
    try:
        return figure_to_svg(draw().figure), None
    except (ValueError, OverflowError, FloatingPointError) as exc:
        lines = str(exc).strip().splitlines()
        return None, f"{type(exc).__name__}: {lines[0]}" if lines else type(exc).__name__


def figure_to_png(fig: Figure | SubFigure, dpi: int = 100) -> bytes:
    """The figure as PNG bytes, cropped to its content, without software metadata."""
    root = _root(fig)
    buffer = io.BytesIO()
    with _settled(root):
        root.savefig(buffer, format="png", dpi=dpi, bbox_inches="tight", pad_inches=0.1, metadata={"Software": None})
    return buffer.getvalue()
