"""Numbers and verdict marks as the check's formats show them (3 decimals, signed differences, p-values)."""

from __future__ import annotations

import math

from heta_nb.stats.format import p_text

__all__ = ["ARROWS", "num", "p_shown", "signed"]

ARROWS = {
    "regression": "↓",
    "unverified drop": "⇣",
    "evaluator errors": "!",
    "not comparable": "?",
    "improvement": "↑",
    "within tolerance": "↘",
    "underpowered": "≈",
    "no detectable change": "=",
    "n/a": "·",
}
"""The mark of each verdict, most severe first (the order of :data:`heta_nb.gate.result.VERDICTS`)."""


def num(value: float | None) -> str:
    """``0.686``; ``n/a`` for None or NaN."""
    if value is None or not math.isfinite(value):
        return "n/a"
    return f"{value:.3f}"


def signed(value: float | None) -> str:
    """``+0.054`` / ``-0.174``; ``n/a`` for None or NaN."""
    if value is None or not math.isfinite(value):
        return "n/a"
    text = f"{value:+.3f}"
    return "+0.000" if text == "-0.000" else text


def p_shown(p: float | None, alpha: float | None) -> str:
    """A p-value never rounded across ``alpha`` (``<0.001``, ``0.0496``, ``0.41``); ``n/a`` if none."""
    return "n/a" if p is None else p_text(float(p), alpha)
