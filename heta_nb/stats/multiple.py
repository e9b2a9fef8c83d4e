"""Benjamini-Hochberg adjusted p-values (Holm's are :func:`heta_nb.stats.paired.holm`).

Benjamini-Hochberg controls the false discovery rate (the expected share of false findings
among those reported) for independent or positively dependent tests: with the ``m`` p-values
sorted ascending, ``p_(i)`` becomes ``min_{j >= i} min(1, m * p_(j) / j)``, as
``statsmodels.stats.multitest.multipletests(method="fdr_bh")``.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

__all__ = ["benjamini_hochberg"]


def benjamini_hochberg(p_values: Sequence[float]) -> list[float]:
    """Benjamini-Hochberg adjusted p-values; NaN entries stay NaN and are not counted in ``m``.

    Raises:
        ValueError: If a p-value lies outside [0, 1].
    """
    values = [float(p) for p in p_values]
    for p in values:
        if not math.isnan(p) and not 0.0 <= p <= 1.0:
            raise ValueError(f"p-values must lie in [0, 1], got {p!r}")
    order = sorted((i for i, p in enumerate(values) if not math.isnan(p)), key=values.__getitem__)
    m = len(order)
    adjusted = list(values)
    running = 1.0
    for rank in range(m - 1, -1, -1):
        i = order[rank]
        running = min(running, min(1.0, m * values[i] / (rank + 1)))
        adjusted[i] = running
    return adjusted
