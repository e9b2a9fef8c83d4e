"""McNemar's exact test: did a pass/fail verdict change between two recipes run on the same cases?

Of ``n`` cases scored pass (1) or fail (0) ``before`` and ``after``, only the discordant ones
carry information: ``b`` passed before and fail after (lost), ``c`` failed before and pass after
(gained). Under "no change" each of the ``b + c`` discordant cases is as likely lost as gained,
so ``b ~ Binomial(b + c, 1/2)`` and the exact two-sided p-value is::

    p = min(1, 2 * P(X <= min(b, c))),   X ~ Binomial(b + c, 1/2)

as ``statsmodels.stats.contingency_tables.mcnemar(table, exact=True)`` (``p = 1`` when there is no
discordant case). The binomial tail is summed with exact integer arithmetic up to
:data:`EXACT_MAX` discordant cases, beyond that from the regularized incomplete beta function
``P(X <= k) = I_{1/2}(m - k, k + 1)``.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Iterable
from dataclasses import asdict, dataclass
from typing import Any

from heta_nb.stats.format import p_text
from heta_nb.stats.intervals import _betainc

__all__ = ["EXACT_MAX", "McNemar", "mcnemar_exact"]

EXACT_MAX = 20_000
"""Up to this many discordant cases the binomial tail is summed exactly in integers."""

_NAN = float("nan")


@dataclass(frozen=True)
class McNemar:
    """McNemar's exact test of paired pass/fail verdicts ``before`` -> ``after``."""

    n: int
    """Complete pairs (a missing verdict on either side drops the case)."""
    b: int
    """Discordant pairs 1 -> 0: passed before, fail after (lost)."""
    c: int
    """Discordant pairs 0 -> 1: failed before, pass after (gained)."""
    both_pass: int
    """Concordant pairs 1 -> 1."""
    both_fail: int
    """Concordant pairs 0 -> 0."""
    p_value: float
    """Exact two-sided binomial p-value (NaN when there is no pair, see ``reason``)."""
    reason: str = ""
    """Why ``p_value`` is NaN (empty when it is not)."""

    @property
    def discordant(self) -> int:
        """``b + c``: the pairs whose verdict changed."""
        return self.b + self.c

    @property
    def text(self) -> str:
        """E.g. ``"McNemar exact p=0.04 (12 discordant: 2 gained, 10 lost)"``."""
        if math.isnan(self.p_value):
            return f"McNemar n/a: {self.reason} (n={self.n})"
        shown = p_text(self.p_value)
        p = f"p{shown}" if shown.startswith("<") else f"p={shown}"
        return f"McNemar exact {p} ({self.discordant} discordant: {self.c} gained, {self.b} lost)"

    def record(self) -> dict[str, Any]:
        """The fields as a plain dict (JSON-ready)."""
        return asdict(self)


def mcnemar_exact(before: Iterable[object], after: Iterable[object]) -> McNemar:
    """McNemar's exact test of paired binary outcomes (``statsmodels``' ``mcnemar(exact=True)``).

    Args:
        before: Verdicts of the baseline, one per case: bools or 0/1 (None or NaN = missing).
        after: Verdicts of the candidate on the same cases.

    Returns:
        The :class:`McNemar` counts and p-value.

    Raises:
        ValueError: On unequal lengths or a verdict that is not a bool, 0 or 1.
    """
    xs, ys = _verdicts(before, "before"), _verdicts(after, "after")
    if len(xs) != len(ys):
        raise ValueError(f"before and after must have equal lengths, got {len(xs)} and {len(ys)}")
    counts = {(x, y): 0 for x in (False, True) for y in (False, True)}
    for x, y in zip(xs, ys):
        if x is not None and y is not None:
            counts[(x, y)] += 1
    b, c = counts[(True, False)], counts[(False, True)]
    n = sum(counts.values())
    p, reason = (_two_sided(b, c), "") if n else (_NAN, "no complete pairs")
    return McNemar(n, b, c, counts[(True, True)], counts[(False, False)], p, reason)


def _two_sided(b: int, c: int) -> float:
    """``min(1, 2 * P(X <= min(b, c)))`` for ``X ~ Binomial(b + c, 1/2)``."""
    m, k = b + c, min(b, c)
    if 2 * k >= m:  # the smaller count is half: the tail is at least 1/2
        return 1.0
    if m <= EXACT_MAX:
        total, term = 0, 1
        for i in range(k + 1):
            total += term
            term = term * (m - i) // (i + 1)
        return min(1.0, 2 * total / (1 << m))  # int / int: correctly rounded
    return min(1.0, 2.0 * _betainc(m - k, k + 1, 0.5))


def _verdicts(values: Iterable[object], name: str) -> list[bool | None]:
    """Bools (None: missing) from bools, 0/1 numbers, None or NaN."""
    if isinstance(values, (str, bytes)):
        raise ValueError(f"{name} must be a sequence of verdicts, not one string")
    try:
        items = list(values)
    except TypeError:
        raise ValueError(f"{name} must be a sequence of verdicts, got {type(values).__name__}") from None
    out: list[bool | None] = []
    for v in items:
        if v is None or isinstance(v, numbers.Real) and math.isnan(v):
            out.append(None)
            continue
        try:
            ok = not isinstance(v, (str, bytes)) and (v == 0 or v == 1)
        except (TypeError, ValueError):
            ok = False
        if not ok:
            raise ValueError(f"{name} must hold bools (or 0/1, None/NaN for missing), got {v!r}")
        out.append(bool(v))
    return out
