"""A paired mean difference whose cases come in clusters (several questions per document or topic).

Cases that share a cluster tend to move together, so ``n`` clustered cases hold less information
than ``n`` independent ones and the usual interval ``mean ± t(n - 1) * s / sqrt(n)`` is too narrow.
:func:`clustered_mean_difference` treats the ``G`` clusters as the independent units:

``method="robust"``: the cluster-robust (CR1, Stata's) standard error of the mean.
    With residuals ``e_i = d_i - mean(d)`` and their cluster sums ``E_g``::

        se^2 = G / (G - 1) * sum_g E_g^2 / n^2

    which is what ``statsmodels`` OLS of ``d`` on a constant reports with ``cov_type="cluster"``
    (its default ``use_correction=True`` multiplies by ``G / (G - 1) * (n - 1) / (n - k)``, and
    ``k = 1`` here). The interval is ``mean ± t(1 - alpha / 2, G - 1) * se``, Student t on ``G - 1``
    degrees of freedom (statsmodels' ``df_correction``). With one case per cluster it is exactly
    the naive t interval's ``s / sqrt(n)`` (on ``n - 1`` df).

``method="bootstrap"`` (default): whole clusters resampled with replacement.
    Each resample draws ``G`` clusters and takes the mean of all their cases (sum of the drawn
    clusters' sums over the sum of their sizes). The interval is the *expanded* percentile interval
    (Hesterberg 2015, as :mod:`heta_nb.stats.paired`'s) at ``G`` units: the percentiles at
    ``alpha' / 2`` with ``alpha' / 2 = Phi(-sqrt(G / (G - 1)) * t(1 - alpha / 2, G - 1))``, which
    undoes the plain percentile interval's narrowness with few clusters; ``se`` is the standard
    deviation of the resampled means.

**p-value** of "mean difference = 0", in the same spirit: ``"robust"`` the two-sided Student t on
``G - 1`` df of ``mean / se``; ``"bootstrap"`` a sign-flip permutation test over whole clusters (each
cluster's sum of differences keeps or flips its sign as one unit: exact over the ``2^G`` patterns up
to :data:`EXACT_CLUSTERS` clusters, else ``resamples`` random patterns with ``(hits + 1) / (draws + 1)``).

Beside it stands the naive interval that ignores the clustering (Student t on ``n - 1`` df), and
the design effect ``se^2 / naive_se^2``: how many times the clustering inflates the variance.

Measured (``tests/stats/test_clustered.py``): 60 clusters of 5 cases, intra-cluster correlation
0.3 (design effect ~2.2), 1,000 replications per seed: the robust 95 % interval covered
0.940-0.951 over three seeds (0.947 pooled) while the naive one covered 0.80-0.81; the cluster
bootstrap (1,000 resamples) covered 0.942 (naive 0.79).
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Iterable
from dataclasses import asdict, dataclass
from typing import Any, Literal

import numpy as np
import numpy.typing as npt

from heta_nb.stats.intervals import expanded_percentile_alpha, student_t_cdf, student_t_ppf
from heta_nb.stats.power import checked_differences

__all__ = ["EXACT_CLUSTERS", "ClusteredInterval", "clustered_mean_difference"]

EXACT_CLUSTERS = 16
"""Up to this many clusters the cluster sign-flip p-value enumerates every sign pattern."""

_NAN = float("nan")
_CHUNK = 1 << 22  # elements of the largest index array of one bootstrap step
_METHODS = ("bootstrap", "robust")


@dataclass(frozen=True)
class ClusteredInterval:
    """A mean of paired differences with an interval that treats clusters as the independent units."""

    estimate: float
    """Mean of the per-case differences (NaN when there is no case)."""
    ci_low: float
    """Lower bound of the clustered interval (NaN: no interval, see ``reason``)."""
    ci_high: float
    """Upper bound of that interval."""
    se: float
    """Clustered standard error: CR1 (``"robust"``) or the SD of the resampled means (``"bootstrap"``)."""
    n: int
    """Cases used (a NaN difference drops the case)."""
    clusters: int
    """Distinct clusters among those cases."""
    method: str
    """``"robust"`` or ``"bootstrap"``."""
    design_effect: float
    """``se^2 / naive_se^2``: how much the clustering inflates the variance (NaN: no spread)."""
    naive_ci_low: float
    """Lower bound of the interval ignoring the clustering (Student t, ``n - 1`` df)."""
    naive_ci_high: float
    """Upper bound of that interval."""
    naive_se: float
    """``s / sqrt(n)``, the standard error ignoring the clustering."""
    confidence: float = 0.95
    """Confidence level of both intervals."""
    df: int | None = None
    """Degrees of freedom of the robust interval's t quantile (``G - 1``); None for the bootstrap."""
    resamples: int = 0
    """Bootstrap resamples (0 for the robust method)."""
    seed: int | None = None
    """Seed of the bootstrap (the drawn entropy when ``seed=None``); None for the robust method."""
    unit: str = "clusters"
    """What a cluster is, for the text (``"documents"``, ``"topics"``)."""
    reason: str = ""
    """Why a number is NaN (empty when none is)."""
    p_value: float = _NAN
    """Two-sided p-value of "no difference" with clusters as the units (see the module)."""

    @property
    def text(self) -> str:
        """E.g. ``"mean difference +0.031, 95% CI [+0.010, +0.052] clustered by 40 documents ...; ignoring ..."``."""
        if math.isnan(self.estimate):
            return f"mean difference n/a: {self.reason} (n={self.n})"
        head = f"mean difference {self.estimate:+.3f}"
        if math.isnan(self.ci_low) or math.isnan(self.ci_high):
            return f"{head}, no clustered interval: {self.reason} (n={self.n}, {self.clusters} {self.unit})"
        how = f"cluster-robust, t with {self.df} df" if self.method == "robust" else "cluster bootstrap"
        naive = f"[{self.naive_ci_low:+.3f}, {self.naive_ci_high:+.3f}]"
        effect = "n/a" if math.isnan(self.design_effect) else f"{self.design_effect:.2f}"
        return (
            f"{head}, {self.confidence:.0%} CI [{self.ci_low:+.3f}, {self.ci_high:+.3f}] clustered by "
            f"{self.clusters} {self.unit} ({how}); ignoring the clustering gives {naive} "
            f"(design effect {effect}, n={self.n})"
        )

    def record(self) -> dict[str, Any]:
        """The fields as a plain dict (JSON-ready)."""
        return asdict(self)


def clustered_mean_difference(
    diffs: npt.ArrayLike,
    clusters: Iterable[Hashable],
    *,
    confidence: float = 0.95,
    resamples: int = 2000,
    seed: int | None = 0,
    method: Literal["bootstrap", "robust"] = "bootstrap",
    unit: str = "clusters",
) -> ClusteredInterval:
    """Mean of per-case paired differences with a cluster bootstrap or cluster-robust interval.

    Args:
        diffs: Per-case differences ``b - a`` (1-D; NaN = missing, the case is dropped).
        clusters: Each case's cluster label (document, topic...), aligned with ``diffs``.
        confidence: Confidence level of the intervals, in (0, 1).
        resamples: Bootstrap resamples of whole clusters (``method="bootstrap"``).
        seed: Seed of the bootstrap (``numpy.random.SeedSequence``); None draws fresh entropy.
        method: ``"bootstrap"`` (resample clusters) or ``"robust"`` (CR1 standard error, t on G - 1 df).
        unit: What a cluster is, for the text.

    Returns:
        The :class:`ClusteredInterval`, with the naive interval beside it.

    Raises:
        ValueError: On mismatched lengths, infinite or non-numeric differences, missing or
            unhashable cluster labels, or invalid parameters.
    """
    if method not in _METHODS:
        raise ValueError(f"method must be 'bootstrap' or 'robust', got {method!r}")
    if not 0.0 < confidence < 1.0:
        raise ValueError(f"confidence must be in (0, 1), got {confidence!r}")
    if isinstance(resamples, bool) or not isinstance(resamples, (int, np.integer)) or resamples < 1:
        raise ValueError(f"resamples must be a positive integer, got {resamples!r}")
    d = checked_differences(diffs)
    codes = _cluster_codes(clusters, d.size)
    keep = ~np.isnan(d)
    if not keep.all():
        d, codes = d[keep], codes[keep]
    _, codes = np.unique(codes, return_inverse=True)  # renumber the clusters left 0..G-1
    n, g = int(d.size), int(codes.max()) + 1 if d.size else 0
    boot = method == "bootstrap"
    seq = np.random.SeedSequence(seed) if boot else None
    common: dict[str, Any] = {
        "n": n, "clusters": g, "method": method, "confidence": confidence, "unit": unit,
        "resamples": int(resamples) if boot else 0,
        "seed": int(seq.entropy) if seq is not None else None,  # type: ignore[arg-type]
    }  # fmt: skip
    if n == 0:
        return ClusteredInterval(_NAN, _NAN, _NAN, _NAN, design_effect=_NAN, naive_ci_low=_NAN,
                                 naive_ci_high=_NAN, naive_se=_NAN, reason="no complete cases", **common)  # fmt: skip
    estimate = float(np.mean(d))
    naive_se, naive_low, naive_high = _naive(d, estimate, confidence)
    sizes = np.bincount(codes, minlength=g).astype(np.float64)
    sums = np.bincount(codes, weights=d, minlength=g)
    reason = ""
    df: int | None = None
    p = _NAN
    if g < 2:
        se = low = high = _NAN
        reason = f"one {_singular(unit)}: no spread between clusters"
    elif boot:
        assert seq is not None
        rng = np.random.default_rng(seq)
        means = _bootstrap_means(sums, sizes, int(resamples), rng)
        se = float(np.std(means, ddof=1))
        alpha = expanded_percentile_alpha(1.0 - confidence, g)
        low, high = (float(q) for q in np.quantile(means, [alpha / 2.0, 1.0 - alpha / 2.0]))
        p = _sign_flip_p(sums, int(resamples), rng)
    else:
        resid = np.bincount(codes, weights=d - estimate, minlength=g)  # E_g
        se = math.sqrt(g / (g - 1) * float(np.dot(resid, resid))) / n
        df = g - 1
        half = student_t_ppf(0.5 + confidence / 2.0, df) * se
        low, high = estimate - half, estimate + half
        p = 2.0 * student_t_cdf(-abs(estimate) / se, df) if se > 0.0 else (1.0 if estimate == 0.0 else 0.0)
    if naive_se > 0.0 and not math.isnan(se):
        design_effect = (se / naive_se) ** 2
    else:
        design_effect = _NAN
        if not reason:
            reason = "one case: no spread" if n < 2 else "all differences equal: no spread"
    return ClusteredInterval(
        estimate, low, high, se, design_effect=design_effect, naive_ci_low=naive_low, naive_ci_high=naive_high,
        naive_se=naive_se, df=df, reason=reason, p_value=min(1.0, p), **common,
    )  # fmt: skip


def _sign_flip_p(sums: np.ndarray, resamples: int, rng: np.random.Generator) -> float:
    """Two-sided p-value of a sign-flip test over whole clusters: how often ``|sum of ±S_g|``
    reaches the observed ``|sum of S_g|`` (exact up to :data:`EXACT_CLUSTERS` clusters)."""
    g = sums.size
    observed = abs(float(sums.sum())) * (1.0 - 1e-12) - 1e-300  # ties count as reaching it
    if g <= EXACT_CLUSTERS:
        patterns = ((np.arange(1 << g)[:, None] >> np.arange(g)[None, :]) & 1) * 2.0 - 1.0
        return float(np.mean(np.abs(patterns @ sums) >= observed))
    hits = 0
    total = float(sums.sum())
    step = max(1, _CHUNK // g)
    for start in range(0, resamples, step):
        rows = min(step, resamples - start)
        # one random bit per cluster (1: its sign flips): sum of ±S_g = total - 2 * (flipped sums)
        bits = np.unpackbits(rng.integers(0, 256, size=(rows, (g + 7) // 8), dtype=np.uint8), axis=1, count=g)
        hits += int(np.count_nonzero(np.abs(total - 2.0 * (bits @ sums)) >= observed))
    return (hits + 1) / (resamples + 1)


def _naive(d: np.ndarray, estimate: float, confidence: float) -> tuple[float, float, float]:
    """``(se, low, high)`` of the Student t interval ignoring the clustering; NaN below two cases."""
    n = d.size
    if n < 2:
        return _NAN, _NAN, _NAN
    se = float(np.std(d, ddof=1)) / math.sqrt(n)
    half = student_t_ppf(0.5 + confidence / 2.0, n - 1) * se
    return se, estimate - half, estimate + half


def _bootstrap_means(sums: np.ndarray, sizes: np.ndarray, resamples: int, rng: np.random.Generator) -> np.ndarray:
    """Means of ``resamples`` resamples of whole clusters (given each cluster's sum and size)."""
    g = sums.size
    out = np.empty(resamples)
    step = max(1, _CHUNK // g)
    for start in range(0, resamples, step):
        rows = min(step, resamples - start)
        idx = rng.integers(0, g, size=(rows, g))
        out[start : start + rows] = sums[idx].sum(axis=1) / sizes[idx].sum(axis=1)
    return out


def _cluster_codes(clusters: Iterable[Hashable], n: int) -> np.ndarray:
    """Integer codes of the cluster labels (equal labels, equal codes); an integer array is its own."""
    if isinstance(clusters, np.ndarray) and clusters.dtype.kind in "iu":
        if clusters.shape != (n,):
            raise ValueError(f"diffs and clusters must have equal lengths, got {n} and {clusters.size}")
        return clusters.astype(np.intp, copy=False)
    if isinstance(clusters, (str, bytes)):
        raise ValueError("clusters must be a sequence of labels, not one string")
    try:
        labels = list(clusters)
    except TypeError:
        raise ValueError(f"clusters must be a sequence of labels, got {type(clusters).__name__}") from None
    if len(labels) != n:
        raise ValueError(f"diffs and clusters must have equal lengths, got {n} and {len(labels)}")
    index: dict[Hashable, int] = {}
    try:
        codes = [index.setdefault(label, len(index)) for label in labels]
    except TypeError as error:
        raise ValueError(f"clusters: labels must be hashable ({error})") from None
    if None in index or any(isinstance(k, float) and math.isnan(k) for k in index):
        raise ValueError("clusters must not have missing labels (None or NaN)")
    return np.asarray(codes, dtype=np.intp)


def _singular(unit: str) -> str:
    """``"documents"`` -> ``"document"`` for the text."""
    return unit[:-1] if unit.endswith("s") and len(unit) > 1 else unit
