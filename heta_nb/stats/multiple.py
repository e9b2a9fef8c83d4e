"""Adjusted p-values for a family of tests: Holm (family-wise error) and Benjamini-Hochberg.

Holm's step-down controls the chance of any false finding in the family under any dependence
between the tests. Benjamini-Hochberg controls the false discovery rate (the expected share of false findings
among those reported) for independent or positively dependent tests: with the ``m`` p-values
sorted ascending, ``p_(i)`` becomes ``min_{j >= i} min(1, m * p_(j) / j)``, as
``statsmodels.stats.multitest.multipletests(method="fdr_bh")``.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

__all__ = ["benjamini_hochberg", "holm"]


def _checked(p_values: Sequence[float]) -> tuple[list[float], list[int]]:
    """The p-values as floats and the positions of the non-NaN ones, smallest first.

    Raises:
        ValueError: If a p-value lies outside [0, 1].
    """
    values = [float(p) for p in p_values]
    for p in values:
        if not math.isnan(p) and not 0.0 <= p <= 1.0:
            raise ValueError(f"p-values must lie in [0, 1], got {p!r}")
    return values, sorted((i for i, p in enumerate(values) if not math.isnan(p)), key=values.__getitem__)


def holm(p_values: Sequence[float]) -> list[float]:
    """Holm–Bonferroni step-down adjusted p-values.

    With the m non-NaN p-values sorted ascending, ``p_(i)`` becomes
    ``max_{j <= i} min(1, (m - j + 1) * p_(j))``. NaN entries are returned as NaN and not
    counted in m. The output keeps the input order.

    Args:
        p_values: Raw p-values in [0, 1] (NaN allowed).

    Returns:
        Adjusted p-values, same length and order.

    Raises:
        ValueError: If a p-value lies outside [0, 1].
    """
    values, order = _checked(p_values)
    m = len(order)
    adjusted = list(values)
    running = 0.0
    for rank, i in enumerate(order):
        running = max(running, min(1.0, (m - rank) * values[i]))
        adjusted[i] = running
    return adjusted


def benjamini_hochberg(p_values: Sequence[float]) -> list[float]:
    """Benjamini-Hochberg adjusted p-values; NaN entries stay NaN and are not counted in ``m``.

    Raises:
        ValueError: If a p-value lies outside [0, 1].
    """
    values, order = _checked(p_values)
    m = len(order)
    adjusted = list(values)
    running = 1.0
    for rank in range(m - 1, -1, -1):
        i = order[rank]
        running = min(running, min(1.0, m * values[i] / (rank + 1)))
        adjusted[i] = running
    return adjusted
