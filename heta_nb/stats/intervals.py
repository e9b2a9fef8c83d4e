"""Confidence intervals: Student t of a mean, Wilson of a proportion, the bootstrap's expanded level.

Also the exact Student t distribution and the sample moments those intervals stand on.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Iterable, Sequence
from statistics import NormalDist

__all__ = [
    "expanded_percentile_alpha",
    "is_binary",
    "mean",
    "sample_std",
    "student_t_cdf",
    "student_t_ppf",
    "t_interval",
    "wilson_interval",
]

_NAN = float("nan")


def mean(values: Sequence[float]) -> float:
    """Arithmetic mean, computed like Heta's summary (``sum(values) / len(values)``)."""
    return sum(values) / len(values) if values else _NAN


def sample_std(values: Sequence[float], *, centre: float | None = None) -> float:
    """Sample standard deviation (ddof=1); NaN for fewer than two values.

    ``centre`` is ``math.fsum(values) / len(values)`` when the caller computed it already.
    """
    n = len(values)
    if n < 2:
        return _NAN
    try:
        if centre is None:
            centre = math.fsum(values) / n
        return math.sqrt(math.fsum((v - centre) * (v - centre) for v in values) / (n - 1))
    except OverflowError:  # squares (or the sum) beyond the float range
        return math.inf
    except ValueError:  # fsum of +inf and -inf
        return _NAN


def _betacf(a: float, b: float, x: float) -> float:
    """Continued fraction for the incomplete beta function (modified Lentz method)."""
    tiny = 1e-300
    qab, qap, qam = a + b, a + 1.0, a - 1.0
    c, d = 1.0, 1.0 - qab * x / qap
    d = 1.0 / (d if abs(d) > tiny else tiny)
    h = d
    for m in range(1, 1000):
        m2 = 2 * m
        aa = m * (b - m) * x / ((qam + m2) * (a + m2))
        d = 1.0 + aa * d
        d = 1.0 / (d if abs(d) > tiny else tiny)
        c = 1.0 + aa / c
        c = c if abs(c) > tiny else tiny
        h *= d * c
        aa = -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2))
        d = 1.0 + aa * d
        d = 1.0 / (d if abs(d) > tiny else tiny)
        c = 1.0 + aa / c
        c = c if abs(c) > tiny else tiny
        delta = d * c
        h *= delta
        if abs(delta - 1.0) < 1e-16:
            break
    return h


def _betainc(a: float, b: float, x: float) -> float:
    """Regularized incomplete beta function I_x(a, b)."""
    if x <= 0.0:
        return 0.0
    if x >= 1.0:
        return 1.0
    log_front = math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b) + a * math.log(x) + b * math.log1p(-x)
    front = math.exp(log_front)
    if x < (a + 1.0) / (a + b + 2.0):
        return front * _betacf(a, b, x) / a
    return 1.0 - front * _betacf(b, a, 1.0 - x) / b


def student_t_cdf(t: float, df: float) -> float:
    """CDF of Student's t distribution with ``df`` degrees of freedom."""
    if math.isinf(t):
        return 1.0 if t > 0 else 0.0
    tail = 0.5 * _betainc(df / 2.0, 0.5, df / (df + t * t))
    return 1.0 - tail if t > 0 else tail


@functools.lru_cache(maxsize=4096)
def student_t_ppf(p: float, df: float) -> float:
    """Quantile (inverse CDF) of Student's t distribution.

    Computed exactly (inverting the regularized incomplete beta function), not
    approximated; ``tests/stats/test_intervals_vs_scipy.py`` checks it against SciPy. Solved by bracketing
    from the normal quantile and bisection refined with Newton steps, to about 1e-13
    absolute. Remembered per ``(p, df)``: intervals ask for the same few quantiles again and
    again (a comparison's clustered tests, a summary's metrics).
    """
    if not 0.0 < p < 1.0:
        if p == 0.0:
            return -math.inf
        if p == 1.0:
            return math.inf
        raise ValueError("p must be in [0, 1]")
    if p == 0.5:
        return 0.0
    if p < 0.5:
        return -student_t_ppf(1.0 - p, df)
    z = NormalDist().inv_cdf(p)
    lo, hi = 0.0, max(2.0 * z, 1.0)
    while student_t_cdf(hi, df) < p:
        lo, hi = hi, hi * 2.0
    x = z if lo < z < hi else (lo + hi) / 2.0
    log_norm = math.lgamma((df + 1) / 2) - math.lgamma(df / 2) - 0.5 * math.log(df * math.pi)
    for _ in range(200):
        f = student_t_cdf(x, df) - p
        if f == 0.0:
            return x
        if f > 0:
            hi = x
        else:
            lo = x
        density = math.exp(log_norm - (df + 1) / 2 * math.log1p(x * x / df))
        step = x - f / density if density > 0 else (lo + hi) / 2
        if not lo < step < hi:
            step = (lo + hi) / 2
        if abs(step - x) <= 1e-15 * max(1.0, abs(x)):
            return step
        x = step
    return x


def t_interval(
    values: Sequence[float],
    confidence: float = 0.95,
    *,
    std: float | None = None,
    centre: float | None = None,
) -> tuple[float, float]:
    """Student-t confidence interval of the mean; (NaN, NaN) below two values.

    ``mean ± t(1-α/2, n-1) · s/√n`` with the sample standard deviation ``s`` (ddof=1):
    the interval for numeric scores (recall, nDCG, F1, latency...).

    ``std`` (``sample_std(values)``) and ``centre`` (``math.fsum(values) / n``) may be
    passed when the caller computed them already.
    """
    n = len(values)
    if n < 2:
        return (_NAN, _NAN)
    if centre is None:
        try:
            centre = math.fsum(values) / n
        except (OverflowError, ValueError):
            return (_NAN, _NAN)
    spread = sample_std(values) if std is None else std
    if not math.isfinite(spread):
        return (_NAN, _NAN)
    half = student_t_ppf(0.5 + confidence / 2.0, n - 1) * spread / math.sqrt(n)
    return (centre - half, centre + half)


def is_binary(values: Iterable[float]) -> bool:
    """Whether every value is exactly 0 or 1: a proportion's data, given Wilson intervals."""
    return all(v == 0.0 or v == 1.0 for v in values)


def wilson_interval(successes: int, n: int, confidence: float = 0.95) -> tuple[float, float]:
    """Wilson score interval of a proportion; (NaN, NaN) when ``n == 0``.

    The interval for boolean scores (answer_contains...), and numbers that are all 0 or
    1 (hit@K): it keeps sensible coverage near 0 and 1 where the normal (Wald) and t
    intervals collapse (to zero width when every value is 1).
    """
    if n <= 0:
        return (_NAN, _NAN)
    z = NormalDist().inv_cdf(0.5 + confidence / 2.0)
    phat = successes / n
    denom = 1.0 + z * z / n
    centre = (phat + z * z / (2 * n)) / denom
    half = z * math.sqrt(phat * (1 - phat) / n + z * z / (4 * n * n)) / denom
    low = 0.0 if successes <= 0 else max(0.0, centre - half)
    high = 1.0 if successes >= n else min(1.0, centre + half)
    return (low, high)


def expanded_percentile_alpha(alpha: float, n: int) -> float:
    """Two-sided level ``alpha'`` whose bootstrap percentile interval matches Student-t width.

    Hesterberg's *expanded percentile* interval (2015, §3.5): use the percentiles
    ``alpha' / 2`` and ``1 - alpha' / 2`` of the bootstrap distribution of a mean with
    ``alpha' / 2 = Phi(-sqrt(n / (n - 1)) * t(1 - alpha / 2, n - 1))``. That undoes the two
    reasons the plain percentile interval is too narrow for small n: the bootstrap spread
    is ``s / sqrt(n)`` with ddof 0, and normal instead of t tails. ``alpha`` is returned
    unchanged for ``n < 2`` (no spread can be estimated).
    """
    if n < 2:
        return alpha
    z = math.sqrt(n / (n - 1)) * student_t_ppf(1.0 - alpha / 2.0, n - 1)
    return 2.0 * NormalDist().cdf(-z)
