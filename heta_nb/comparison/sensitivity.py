"""How much each paired test can see: clustered intervals, McNemar for pass/fail metrics, and
the smallest difference the benchmark detects.

* **Clustering** (``compare(cluster_by=...)``): cases that share a document or topic move
  together, so the interval and the p-value of each test treat the clusters as the independent
  units (:func:`heta_nb.stats.clustered.clustered_mean_difference`: cluster-robust CR1 errors
  with a t test on ``G - 1`` df, or a cluster bootstrap with a cluster sign-flip test). They
  replace the case-level numbers before Holm, so every verdict, output and gate reads them.
* **McNemar** beside the sign-flip test for a metric whose compared scores are all 0/1
  (hit@K, pass/fail, exact match): the exact test on the discordant pairs.
* **Minimum detectable difference** at 80 % power: ``(z(1 - alpha / 2m) + z(0.8)) * se`` with
  ``m`` the family's size and ``se`` the test's standard error (clustered when clustering), so a
  verdict that finds nothing can say whether the benchmark could have found it.
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from heta_nb.comparison.align import Aligned
from heta_nb.stats.clustered import ClusteredInterval, clustered_mean_difference
from heta_nb.stats.discordant import McNemar, mcnemar_exact
from heta_nb.stats.paired import PairedTest
from heta_nb.stats.power import detectable_difference

__all__ = ["POWER", "Clustering", "Sensitivity", "cluster_tests", "clustering_note", "sensitivities", "sensitivity_of"]

POWER = 0.8
"""The power every minimum detectable difference is stated at."""


@dataclass(frozen=True)
class Clustering:
    """How a comparison's cases are clustered."""

    by: str
    """The grouping in words (``"document"``, ``"labels.topic"``)."""
    labels: tuple[Hashable, ...]
    """Each aligned case's cluster (cases without a group are clusters of their own)."""
    method: str
    """``"bootstrap"`` or ``"robust"``."""

    def codes(self) -> np.ndarray:
        """Each aligned case's cluster as an integer (equal clusters, equal codes)."""
        index: dict[Hashable, int] = {}
        return np.fromiter((index.setdefault(x, len(index)) for x in self.labels), np.intp, len(self.labels))

    @property
    def unit(self) -> str:
        """What a cluster is, for the text: ``"documents"``, ``"topic groups"``."""
        return {"document": "documents", "linked_documents": "groups of linked documents"}.get(
            self.by, f"{self.by} groups"
        )


@dataclass(frozen=True)
class Sensitivity:
    """What one test can see, beside its numbers."""

    mdd: float
    """Minimum detectable difference at :data:`POWER` (NaN below two cases)."""
    se: float
    """The standard error it is computed from (clustered when clustering)."""
    mcnemar: McNemar | None = None
    """McNemar's exact test when every compared score is 0 or 1, else None."""
    clustered: ClusteredInterval | None = None
    """The clustered interval when clustering, else None."""

    def power_text(self, metric: str, n: int) -> str:
        """``"differences under 0.031 in answer_f1 cannot be told apart with 190 cases"``."""
        if not math.isfinite(self.mdd):
            return f"{metric}: too few cases to say which differences can be told apart (n={n})"
        return f"differences under {self.mdd:.3g} in {metric} cannot be told apart with {n} cases"


def cluster_tests(
    found: Mapping[tuple[int, int], PairedTest],
    aligned: Aligned,
    base_of: Mapping[int, int],
    clustering: Clustering,
    *,
    resamples: int,
    seed: int,
    confidence: float,
) -> tuple[dict[tuple[int, int], PairedTest], dict[tuple[int, int], ClusteredInterval]]:
    """Each test with its interval and p-value taken from the clusters (before any correction)."""
    codes = clustering.codes()
    tests: dict[tuple[int, int], PairedTest] = {}
    intervals: dict[tuple[int, int], ClusteredInterval] = {}
    for (k, j), test in found.items():
        mask = aligned.mask[k, j]
        if test.n < 1:
            tests[(k, j)] = test
            continue
        d = aligned.values[k, j, mask] - aligned.values[base_of[k], j, mask]
        interval = clustered_mean_difference(
            d,
            codes[mask],
            confidence=confidence,
            resamples=min(resamples, 2_000) if clustering.method == "bootstrap" else 1,
            seed=seed,
            method="bootstrap" if clustering.method == "bootstrap" else "robust",
            unit=clustering.unit,
        )
        intervals[(k, j)] = interval
        how = "cluster bootstrap + cluster sign-flip" if clustering.method == "bootstrap" else "cluster-robust t"
        tests[(k, j)] = replace(
            test,
            ci_low=interval.ci_low,
            ci_high=interval.ci_high,
            p_value=interval.p_value,
            p_value_adjusted=interval.p_value,
            method=f"{how} over {interval.clusters} {clustering.unit} (design effect {interval.design_effect:.2f})",
        )
    return tests, intervals


def sensitivity_of(
    test: PairedTest,
    base: np.ndarray,
    values: np.ndarray,
    *,
    alpha: float,
    tests: int,
    clustered: ClusteredInterval | None = None,
) -> Sensitivity:
    """The :class:`Sensitivity` of one test from its paired scores (``base``, ``values``: the
    compared cases), at level ``alpha`` over a family of ``tests``."""
    d = values - base
    n = int(d.size)
    if clustered is not None:
        se = clustered.se
    else:
        se = float(np.std(d, ddof=1)) / math.sqrt(n) if n >= 2 else math.nan
    mdd = detectable_difference(se, 1, alpha=alpha, power=POWER, tests=max(1, tests)) if math.isfinite(se) else math.nan
    mcnemar = mcnemar_exact(base.tolist(), values.tolist()) if n and _binary(base) and _binary(values) else None
    return Sensitivity(mdd=mdd, se=se, mcnemar=mcnemar, clustered=clustered)


def _binary(values: np.ndarray) -> bool:
    """Every value is 0 or 1."""
    return bool(np.all((values == 0.0) | (values == 1.0)))


def sensitivities(
    tests: Mapping[tuple[int, int], PairedTest],
    aligned: Aligned,
    base_of: Mapping[int, int],
    family_sizes: Mapping[int, int],
    intervals: Mapping[tuple[int, int], ClusteredInterval],
    *,
    alpha: float,
    skip: Sequence[tuple[int, int]] | Any = (),
) -> dict[tuple[int, int], Sensitivity]:
    """:func:`sensitivity_of` of every tested ``(system, metric)`` (``skip``: the untested ones)."""
    out: dict[tuple[int, int], Sensitivity] = {}
    for (k, j), test in tests.items():
        if (k, j) in skip or test.n == 0:
            continue
        mask = aligned.mask[k, j]
        out[(k, j)] = sensitivity_of(
            test,
            aligned.values[base_of[k], j, mask],
            aligned.values[k, j, mask],
            alpha=alpha,
            tests=family_sizes.get(k, 1),
            clustered=intervals.get((k, j)),
        )
    return out


def clustering_note(
    clustering: Clustering,
    intervals: Mapping[tuple[int, int], ClusteredInterval],
    systems: Sequence[Any],
    metrics: Sequence[str],
) -> str:
    """``"intervals and p-values clustered by document (40 documents, cluster bootstrap); design
    effect: answer_f1 2.10, ..."``: that the tests account for the clustering, and by how much."""
    how = "cluster bootstrap, cluster sign-flip test" if clustering.method == "bootstrap" else "CR1, t on G - 1 df"
    counts = sorted({i.clusters for i in intervals.values()})
    count = f"{counts[0]}" if len(counts) == 1 else f"{counts[0]}-{counts[-1]}" if counts else "0"
    effects = []
    for (k, j), interval in list(intervals.items())[:6]:
        effect = "n/a" if math.isnan(interval.design_effect) else f"{interval.design_effect:.2f}"
        effects.append(f"{systems[k].name} {metrics[j]} {effect}")
    more = f"; {len(intervals) - 6} more" if len(intervals) > 6 else ""
    return (
        f"intervals and p-values clustered by {clustering.by} ({count} {clustering.unit}; {how}); "
        f"design effect (variance inflation from the clustering): {', '.join(effects) or 'none tested'}{more}"
    )
