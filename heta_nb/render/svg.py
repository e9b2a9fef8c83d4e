"""Tiny inline-SVG charts as plain data (bars with coordinates and an accessible label).

Nothing here writes markup: ``macros.html.j2`` turns the dicts into ``<svg>`` through
the autoescaping template, so a metric name in a label can never become markup.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence
from typing import Any

from heta_nb.render.env import format_number

__all__ = ["histogram"]

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
    values: Sequence[float],
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
    if not all_finite:
        finite: Sequence[float] = [v for v in values if math.isfinite(v)]
    else:
        finite = values
    dropped = len(values) - len(finite)
    if not finite:
        return None
    if kind == "bool":
        ones = int(sum(finite))
        counts = [len(finite) - ones, ones]
        description = f"{counts[0]:,} false, {counts[1]:,} true"
    else:
        low = min(finite) if minimum is None else float(minimum)
        high = max(finite) if maximum is None else float(maximum)
        if 0.0 <= low and high <= 1.0:
            low, high = 0.0, 1.0
        if high > low:
            scale = bins / (high - low)
            if math.isfinite(scale) and scale > 0.0:
                # int() truncates toward zero: with offsets >= 0 that is the bin index.
                if low == 0.0:
                    found = Counter(map(int, map(scale.__mul__, finite)))
                else:
                    found = Counter(map(int, map(scale.__mul__, map((-low).__add__, finite))))
            else:  # a span too wide for a float (1e308 - -1e308) or too narrow to divide by
                found = Counter(_bin_of(v, low, high, bins) for v in finite)
            counts = [found.get(i, 0) for i in range(bins)]
            counts[-1] += found.get(bins, 0)
        else:
            counts = [len(finite)]
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
