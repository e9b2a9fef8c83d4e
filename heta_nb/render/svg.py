"""SVG charts: sparklines as plain data, and the standalone export's figures as SVG documents.

:func:`histogram` writes no markup: ``macros.html.j2`` turns its dicts into ``<svg>``
through the autoescaping template. The export's figures (:func:`summary_chart`,
:func:`distribution_chart`) are built as an element tree by :mod:`xml.etree.ElementTree`,
which escapes every text and attribute, so a metric or mode name never becomes markup.
They draw in milliseconds, where matplotlib takes most of a second to start.
"""

from __future__ import annotations

import math
import re
import xml.etree.ElementTree as ET
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from heta_nb._util.text import plural, shorten
from heta_nb.render.env import format_number

__all__ = ["ModeValues", "distribution_chart", "histogram", "summary_chart"]

MAX_BINS = 12


def _bin_of(value: float, low: float, high: float, bins: int) -> int:
    """The bin of ``value`` in ``[low, high]`` when ``bins / (high - low)`` is not a finite float.

    A span too narrow (subnormal) is divided by directly; one too wide for a float
    (``1e308 - -1e308``) is halved first, which keeps every difference finite.
    """
    span = high - low
    if math.isfinite(span):
        fraction = (value - low) / span
    else:
        fraction = (value / 2 - low / 2) / (high / 2 - low / 2)
    return min(bins, max(0, int(fraction * bins)))


def _coord(value: float) -> str:
    """An SVG coordinate with at most two decimals (``3``, ``2.5``, ``0.67``)."""
    text = f"{value:.2f}".rstrip("0").rstrip(".")
    return text or "0"


def histogram(
    values: Sequence[float] | np.ndarray,
    *,
    label: str,
    kind: str = "number",
    bins: int = MAX_BINS,
    width: int = 64,
    height: int = 16,
    minimum: float | None = None,
    maximum: float | None = None,
    all_finite: bool = False,
) -> dict[str, Any] | None:
    """A histogram of ``values`` as ``{width, height, label, bars: [{x, y, w, h}]}``.

    Scores that all lie in [0, 1] are binned over [0, 1], so modes compare at a glance;
    other scores over their own range. ``kind="bool"`` draws two bars (false, true).
    Non-finite values are left out (their count is in the label). Returns None when
    there is nothing to draw.

    Args:
        values: the scores, as floats.
        label: what is shown, e.g. ``"ndcg@10 in full_text_search"``; the
            ``aria-label`` reads ``"distribution of <label>: ..."``.
        kind: ``"bool"`` or ``"number"``.
        bins: at most :data:`MAX_BINS` bars.
        width: in CSS pixels.
        height: in CSS pixels.
        minimum: the smallest finite value, when the caller knows it (saves a pass).
        maximum: the largest finite value, likewise.
        all_finite: the caller checked that no value is NaN or infinite.
    """
    bins = max(1, min(bins, MAX_BINS))
    array = np.asarray(values, dtype=np.float64)
    finite = array if all_finite else array[np.isfinite(array)]
    dropped = array.size - finite.size
    if not finite.size:
        return None
    if kind == "bool":
        ones = int(np.count_nonzero(finite))
        counts = [int(finite.size) - ones, ones]
        description = f"{counts[0]:,} false, {counts[1]:,} true"
    else:
        low = float(finite.min()) if minimum is None else float(minimum)
        high = float(finite.max()) if maximum is None else float(maximum)
        if 0.0 <= low and high <= 1.0:
            low, high = 0.0, 1.0
        if high > low:
            scale = bins / (high - low)
            if math.isfinite(scale) and scale > 0.0:
                # Truncation toward zero: with offsets >= 0 that is the bin index.
                offsets = finite if low == 0.0 else finite + (-low)
                found = np.bincount((offsets * scale).astype(np.int64), minlength=bins + 1).tolist()
            else:  # a span too wide for a float (1e308 - -1e308) or too narrow to divide by
                found = [0] * (bins + 1)
                for value in finite.tolist():
                    found[_bin_of(value, low, high, bins)] += 1
            counts = found[:bins]
            counts[-1] += found[bins]
        else:
            counts = [int(finite.size)]
        description = (
            f"{len(counts)} bin{'s' if len(counts) > 1 else ''} from {format_number(low)} to {format_number(high)}, "
            f"counts {', '.join(str(c) for c in counts)}"
        )
    if dropped:
        description += f"; {dropped:,} non-finite left out"
    peak = max(counts)
    slot = width / len(counts)
    gap = 1.0 if slot >= 3 else 0.0
    bars = []
    for index, count in enumerate(counts):
        if not count:
            continue
        bar = max(1.0, (height - 1) * count / peak)
        bars.append(
            {
                "x": _coord(index * slot),
                "y": _coord(height - bar),
                "w": _coord(slot - gap),
                "h": _coord(bar),
            }
        )
    return {
        "width": width,
        "height": height,
        "label": f"distribution of {label}: {description}",
        "bars": bars,
    }


# -- the standalone export's figures (SVG documents) -----------------------------------------

_WIDTH = 720
_LEFT = 178
_RIGHT = 64
_FONT = "system-ui, -apple-system, 'Segoe UI', sans-serif"
_INK = "#1f2328"
_MUTED = "#59636e"
_GRID = "#d0d7de"
_NOT_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff\ud800-\udfff]")


def _label(value: Any, limit: int) -> str:
    """Text for a chart: cut to ``limit`` characters, without what XML cannot hold."""
    return _NOT_XML.sub("\ufffd", shorten(value, limit))


@dataclass(frozen=True)
class ModeValues:
    """One mode's scores of one metric, as a distribution chart draws them."""

    mode: str
    values: np.ndarray
    """The numeric values drawn (bools as 1/0)."""
    left_out: int = 0
    """Skipped scores left out."""
    errors: int = 0
    """Errored results of the mode (no score)."""


class _Chart:
    """An SVG document under construction: a title, a subtitle, then what the caller adds."""

    def __init__(self, height: float, title: str, subtitle: str, description: str) -> None:
        self.root = ET.Element(
            "svg",
            {
                "xmlns": "http://www.w3.org/2000/svg",
                "width": str(_WIDTH),
                "height": _coord(height),
                "viewBox": f"0 0 {_WIDTH} {_coord(height)}",
                "role": "img",
                "font-family": _FONT,
                "font-size": "11",
            },
        )
        ET.SubElement(self.root, "title").text = title
        ET.SubElement(self.root, "desc").text = description
        ET.SubElement(self.root, "rect", {"width": "100%", "height": "100%", "fill": "#ffffff"})
        self.text(12, 18, title, size=14, weight="600")
        self.text(12, 34, subtitle, fill=_MUTED)

    def text(self, x: float, y: float, text: str, *, anchor: str = "start", fill: str = _INK, **style: Any) -> None:
        attrs = {"x": _coord(x), "y": _coord(y), "text-anchor": anchor, "fill": fill}
        if "size" in style:
            attrs["font-size"] = str(style["size"])
        if "weight" in style:
            attrs["font-weight"] = str(style["weight"])
        ET.SubElement(self.root, "text", attrs).text = text

    def rect(self, x: float, y: float, width: float, height: float, fill: str, **extra: str) -> None:
        attrs = {"x": _coord(x), "y": _coord(y), "width": _coord(max(width, 0.0)), "height": _coord(height)}
        ET.SubElement(self.root, "rect", {**attrs, "fill": fill, **extra})

    def line(self, x1: float, y1: float, x2: float, y2: float, stroke: str, width: float = 1.0) -> None:
        attrs = {"x1": _coord(x1), "y1": _coord(y1), "x2": _coord(x2), "y2": _coord(y2)}
        ET.SubElement(self.root, "line", {**attrs, "stroke": stroke, "stroke-width": _coord(width)})

    def axis(self, low: float, high: float, top: float, bottom: float, label: str) -> Callable[[float], float]:
        """Vertical grid lines with tick labels from ``low`` to ``high``; returns the x scale."""
        span = _WIDTH - _LEFT - _RIGHT

        def scale(value: float) -> float:
            return _LEFT + span * (value - low) / (high - low)

        for tick in np.linspace(low, high, 5).tolist():
            x = scale(tick)
            self.line(x, top, x, bottom, _GRID)
            self.text(x, bottom + 13, format_number(tick, 2), anchor="middle", fill=_MUTED)
        self.text(_LEFT + span / 2, bottom + 28, label, anchor="middle", fill=_MUTED)
        return scale

    def legend(self, y: float, entries: Sequence[tuple[str, str]]) -> None:
        x = 12.0
        for color, text in entries:
            width = 20 + 6.2 * len(text)
            if x + width > _WIDTH - 12 and x > 12:
                x, y = 12.0, y + 16
            self.rect(x, y - 9, 10, 10, color)
            self.text(x + 14, y, text)
            x += width + 12

    def svg(self) -> str:
        """The document; what XML cannot hold (a lone surrogate, a control character) in any
        text or attribute, labelled or not, reads as U+FFFD (markup never holds one)."""
        return _NOT_XML.sub("\ufffd", ET.tostring(self.root, encoding="unicode"))


def _range(lows: Sequence[float], highs: Sequence[float]) -> tuple[float, float]:
    """The x range of a chart: [0, 1] for scores in it, else the data's (within floats)."""
    finite = [v for v in (*lows, *highs) if math.isfinite(v)]
    if not finite:
        return 0.0, 1.0
    low, high = min(0.0, *finite), max(finite)
    if low >= 0.0 and high <= 1.0:
        return 0.0, 1.0
    if not high > low or not math.isfinite(high - low):
        return (low - 1.0, low + 1.0) if not high > low else (low / 2, high / 2)
    return low, high


def summary_chart(summaries: Sequence[Any], modes: Sequence[str], colors: dict[str, str], confidence: float) -> str:
    """Mean of each metric per mode with confidence intervals, as grouped horizontal bars.

    Args:
        summaries: ``MetricSummary`` objects of the metrics shown (text ones are skipped).
        modes: the modes, in report order.
        colors: a colour per mode.
        confidence: the intervals' level (for the axis label).

    Returns:
        An SVG document.
    """
    table = {(s.mode, s.metric): s for s in summaries if s.kind != "text" and s.n}
    metrics = list(dict.fromkeys(s.metric for s in summaries if (s.mode, s.metric) in table))
    bar, group = 12.0, len(modes) * 14.0 + 10.0
    top = 52.0
    bottom = top + max(1, len(metrics)) * group
    # the mean shown first everywhere: of the scored values (skipped left out); n/a: no bar
    drawn = [s for s in table.values() if math.isfinite(s.shown)]
    low, high = _range([s.shown_ci[0] for s in drawn] + [s.shown for s in drawn], [s.shown_ci[1] for s in drawn])
    errors = {s.mode: s.errors for s in summaries}
    skipped = sum(s.skipped for s in table.values() if s.applicable)
    notes = [f"{plural(sum(errors.values()), 'errored case', grouping=False)} left out"] if any(errors.values()) else []
    if skipped:
        notes.append(f"{skipped} skipped scores left out")
    description = "; ".join(
        f"{s.metric} in {s.mode}: "
        + (
            f"mean {format_number(s.shown)} [{format_number(s.shown_ci[0])}, {format_number(s.shown_ci[1])}]"
            if s.applicable
            else "n/a"
        )
        for s in table.values()
    )
    chart = _Chart(
        bottom + 70, "Mean per metric and mode", "; ".join(notes) or "means of the scored values", description
    )
    scale = chart.axis(low, high, top - 6, bottom, f"mean of the scored values; error bars: {confidence:.0%} CI")
    for i, metric in enumerate(metrics):
        y0 = top + i * group
        chart.text(_LEFT - 8, y0 + group / 2, _label(metric, 26), anchor="end")
        for k, mode in enumerate(modes):
            s = table.get((mode, metric))
            y = y0 + k * 14.0
            if s is not None and not s.applicable:
                chart.text(scale(max(low, 0.0)) + 4, y + bar - 2, "n/a", size=11)
                continue
            if s is None or not math.isfinite(s.shown):
                continue
            mean, (ci_low, ci_high) = s.shown, s.shown_ci
            start = scale(max(low, 0.0)) if low < 0.0 < high else scale(low)
            chart.rect(min(start, scale(mean)), y, abs(scale(mean) - start), bar, colors[mode])
            if math.isfinite(ci_low) and math.isfinite(ci_high):
                chart.line(scale(ci_low), y + bar / 2, scale(ci_high), y + bar / 2, _INK)
            end = scale(ci_high) if math.isfinite(ci_high) else scale(mean)
            chart.text(min(end + 4, _WIDTH - _RIGHT + 4), y + bar - 2, format_number(mean, 2), size=11)
    legend = [(colors[m], _label(f"{m} ({plural(errors.get(m, 0), 'error')} left out)", 60)) for m in modes]
    chart.legend(bottom + 48, legend)
    return chart.svg()


def distribution_chart(metric: str, kind: str, series: Sequence[ModeValues], colors: dict[str, str]) -> str:
    """The distribution of one metric per mode: a histogram per mode (bools: the share true).

    Args:
        metric: the metric's name.
        kind: ``"bool"`` or ``"number"``.
        series: one :class:`ModeValues` per mode, in report order.
        colors: a colour per mode.

    Returns:
        An SVG document.
    """
    row = 34.0
    top = 52.0
    bottom = top + max(1, len(series)) * row
    values = [v for s in series if s.values.size for v in (float(s.values.min()), float(s.values.max()))]
    low, high = (0.0, 1.0) if kind == "bool" else _range(values, values)
    left_out = sum(s.left_out for s in series)
    subtitle = "share true per mode" if kind == "bool" else "scores per mode, 20 bins"
    if left_out:
        subtitle += f"; {left_out} skipped scores left out"
    parts = []
    for s in series:
        parts.append(
            f"{s.mode}: n={s.values.size}"
            + (f", mean {format_number(float(s.values.mean()))}" if s.values.size else "")
        )
    chart = _Chart(bottom + 44, f"Distribution of {_label(metric, 60)}", subtitle, "; ".join(parts))
    scale = chart.axis(low, high, top - 6, bottom, "share true" if kind == "bool" else _label(metric, 60))
    for k, s in enumerate(series):
        y = top + k * row
        chart.text(_LEFT - 8, y + row / 2, _label(f"{s.mode} (n={s.values.size})", 30), anchor="end")
        if not s.values.size:
            continue
        if kind == "bool":
            share = float(np.count_nonzero(s.values)) / s.values.size
            chart.rect(scale(0.0), y + 8, scale(share) - scale(0.0), row - 16, colors[s.mode])
            chart.text(scale(share) + 4, y + row / 2 + 4, format_number(share, 2), size=11)
            continue
        finite = s.values[np.isfinite(s.values)]
        if not finite.size:
            continue
        counts, edges = np.histogram(np.clip(finite, low, high), bins=20, range=(low, high))
        peak = max(1, int(counts.max()))
        for count, left, right in zip(counts.tolist(), edges[:-1].tolist(), edges[1:].tolist()):
            if count:
                height = (row - 8) * count / peak
                chart.rect(scale(left), y + row - 4 - height, scale(right) - scale(left) - 1, height, colors[s.mode])
        mean = float(finite.mean())
        chart.line(scale(mean), y + 2, scale(mean), y + row - 2, _INK, 1.5)
    return chart.svg()
