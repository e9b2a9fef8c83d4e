"""ECDF step coordinates, shared by the score and the latency plots."""

from __future__ import annotations

from collections.abc import Sequence

__all__ = ["MAX_ECDF_STEPS", "ecdf_xy"]

MAX_ECDF_STEPS = 400
"""An ECDF is drawn with at most this many steps (evenly spaced in rank): beyond that the
difference is invisible, and big reports would otherwise make huge, slow figures."""


def ecdf_xy(values: Sequence[float], start: float | None) -> tuple[list[float], list[float]]:
    """The step coordinates of the ECDF of ``values`` (not empty), for ``ax.step(where="post")``.

    Args:
        values: the values.
        start: where the curve starts at 0 (default: the smallest value).

    Returns:
        ``(xs, ys)``: one step per distinct value, thinned to :data:`MAX_ECDF_STEPS`.
    """
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
