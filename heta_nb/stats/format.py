"""P-values as text: a few digits, never rounded across the significance level."""

from __future__ import annotations

import math

__all__ = ["p_digits", "p_text"]


def p_text(p: float, alpha: float | None = None) -> str:
    """``p`` for display: ``<0.001``, 3 decimals below 0.01, else 2.

    With ``alpha``, digits are added until the shown number lies on the same side of
    ``alpha`` as ``p`` (0.0496 at alpha 0.05 is ``0.0496``, not ``0.05``), so a verdict
    never reads "better (p=0.05)" at alpha = 0.05.

    Args:
        p: The p-value (NaN when there is none).
        alpha: The significance level the text must not round across, if any.

    Returns:
        ``"n/a"``, ``"<0.001"`` or the formatted number.
    """
    if math.isnan(p):
        return "n/a"
    if p < 0.001:
        return "<0.001"
    return p_digits(p, alpha, 3 if p < 0.01 else 2, "f")


def p_digits(p: float, alpha: float | None, digits: int, kind: str) -> str:
    """``format(p, f".{digits}{kind}")`` with more digits when rounding crosses ``alpha``.

    Args:
        p: The p-value.
        alpha: The significance level the text must not round across, if any.
        digits: Digits to start with (a format precision).
        kind: The format type, e.g. ``"f"`` or ``"g"``.

    Returns:
        The formatted number.
    """
    text = format(p, f".{digits}{kind}")
    if alpha is None:
        return text
    while (float(text) < alpha) != (p < alpha) and digits < 17:
        digits += 1
        text = format(p, f".{digits}{kind}")
    return text
