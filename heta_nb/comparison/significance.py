"""The paired tests of each system against its baseline, Holm-adjusted per family, and their verdict.

**One multiplicity convention.** A *family* is the metrics one system is tested on
against its baseline: one pair of systems in one mode (``large-chunks/extractive_answer``
against ``small-chunks/extractive_answer``). Holm's step-down correction runs over each
family; metrics that are n/a (not tested) are not in it. A pair's tests depend only on
the two systems' scores, so ``compare``, ``check`` and the leaderboard give the same
numbers for the same pair, and every output names the family
(:attr:`Family.text`: ``"Holm over the 6 metrics of extractive_answer"``).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, replace

import numpy as np

from heta_nb.comparison.align import Aligned
from heta_nb.comparison.sensitivity import Clustering, cluster_tests
from heta_nb.stats.batch import paired_tests
from heta_nb.stats.clustered import ClusteredInterval
from heta_nb.stats.format import p_text
from heta_nb.stats.paired import PairedTest, holm

__all__ = ["Family", "is_significant", "run_paired_tests", "untested", "untested_test", "verdict_text"]


@dataclass(frozen=True)
class Family:
    """The tests corrected together: one system against its baseline, over its tested metrics."""

    system: str
    baseline: str
    subject: str
    """The pair in words (``"extractive_answer"``, ``"large-chunks vs small-chunks"``)."""
    metrics: tuple[str, ...]
    """The metrics tested (with aligned cases), in order."""
    untested: tuple[str, ...] = ()
    """The metrics left out of the family (n/a: not tested)."""
    correction: str = "holm"

    @property
    def size(self) -> int:
        """How many tests are corrected together."""
        return len(self.metrics)

    @property
    def text(self) -> str:
        """``"Holm over the 6 metrics of extractive_answer"`` (``"no correction"`` when off),
        with the n/a metrics left out said (``"; 2 n/a not tested"``)."""
        count = f"{self.size} metric{'s' if self.size != 1 else ''}"
        head = (
            f"Holm over the {count} of {self.subject}"
            if self.correction == "holm"
            else (f"no correction over the {count} of {self.subject}")
        )
        if self.untested:
            head += f"; {len(self.untested)} n/a not tested"
        return head


def untested_test(resamples: int, seed: int, confidence: float, why: str) -> PairedTest:
    """The test of an n/a (system, metric): no cases, no numbers (``method`` says why)."""
    nan = math.nan
    return PairedTest(
        n=0,
        mean_a=nan,
        mean_b=nan,
        mean_diff=nan,
        ci_low=nan,
        ci_high=nan,
        confidence=confidence,
        p_value=nan,
        p_value_adjusted=nan,
        wins=0,
        ties=0,
        losses=0,
        resamples=resamples,
        seed=seed,
        method=f"not tested: n/a ({why})",
    )


def run_paired_tests(
    aligned: Aligned,
    base_of: Mapping[int, int],
    untested: Mapping[tuple[int, int], str],
    *,
    resamples: int,
    confidence: float,
    seed: int,
    tie_tolerance: float,
    correction: str,
    clustering: Clustering | None = None,
    intervals: dict[tuple[int, int], ClusteredInterval] | None = None,
) -> dict[tuple[int, int], PairedTest]:
    """Test every system against its baseline on each metric, family by family.

    One set of resamples serves every pair (:func:`heta_nb.stats.batch.paired_tests`): the
    comparison's cases are resampled together, and each pair's cases are picked out of them
    with its mask. Nothing outside the pair enters its numbers: the draws depend on the seed
    and the number of cases only, and each column is computed apart.

    Args:
        aligned: The aligned scores.
        base_of: Each tested system's baseline system.
        untested: ``{(system, metric): why}`` of the n/a tests (not run, not in a family).
        resamples: Bootstrap resamples, and permutation resamples when not exact.
        confidence: Confidence level of the intervals.
        seed: Seed of the resamples.
        tie_tolerance: ``|delta| <= tie_tolerance`` counts as a tie.
        correction: ``"holm"`` (adjust each family) or ``"none"``.
        clustering: When given, each test's interval and p-value come from the clusters
            (:func:`~heta_nb.comparison.sensitivity.cluster_tests`), before the correction.
        intervals: Filled with each clustered test's interval when clustering.

    Returns:
        The test of each ``(system index, metric index)`` (n/a ones with no numbers).
    """
    tests: dict[tuple[int, int], PairedTest] = {}
    families: list[list[tuple[int, int]]] = []
    for k in base_of:
        keys = [(k, j) for j in range(len(aligned.metrics)) if (k, j) not in untested]
        for j in range(len(aligned.metrics)):
            if (k, j) in untested:
                tests[(k, j)] = untested_test(resamples, seed, confidence, untested[(k, j)])
        if keys:
            families.append(keys)
    rows = [key for keys in families for key in keys]
    if rows:
        # Every pair in one call over every case of the comparison: the draws are a function of
        # the seed and the number of cases (the benchmark's, the same whatever is compared), each
        # pair's columns are computed apart, so a pair's numbers are those of the pair alone.
        cases = aligned.mask.shape[2]
        mask = np.array([aligned.mask[k, j] for k, j in rows], dtype=bool).reshape(len(rows), cases)
        a = np.array([aligned.values[base_of[k], j] for k, j in rows]).reshape(len(rows), cases)
        b = np.array([aligned.values[k, j] for k, j in rows]).reshape(len(rows), cases)
        found = dict(
            zip(
                rows,
                paired_tests(
                    np.where(mask, a, 0.0),
                    np.where(mask, b, 0.0),
                    mask,
                    resamples=resamples,
                    confidence=confidence,
                    seed=seed,
                    tie_tolerance=tie_tolerance,
                ),
            )
        )
        if clustering is not None:
            found, clustered = cluster_tests(
                found, aligned, base_of, clustering, resamples=resamples, seed=seed, confidence=confidence
            )
            if intervals is not None:
                intervals.update(clustered)
        for keys in families:
            family = {key: found[key] for key in keys}
            if correction == "holm":
                tested = [key for key in keys if family[key].n > 0]
                adjusted = holm([family[key].p_value for key in tested])
                family.update({key: replace(family[key], p_value_adjusted=p) for key, p in zip(tested, adjusted)})
            tests.update(family)
    return tests


def is_significant(test: PairedTest, alpha: float) -> bool:
    """Whether ``test`` has cases and its adjusted p-value is below ``alpha``.

    Args:
        test: The paired test.
        alpha: The significance level.

    Returns:
        True when the difference counts as detected.
    """
    p = test.p_value_adjusted
    return bool(test.n > 0 and not math.isnan(p) and p < alpha)


def verdict_text(test: PairedTest, alpha: float, mdd: float = math.nan) -> str:
    """Plain words: ``"better (p=0.003)"``, ``"underpowered (p=0.41; ...)"``, ``"worse (...)"``.

    Args:
        test: The paired test.
        alpha: The significance level (the p-value is never shown rounded across it).
        mdd: The smallest difference the test detects at 80 % power (NaN: unknown).

    Returns:
        The verdict, or ``"no aligned cases"``. A test that is not significant but whose CI
        excludes 0 (the CI is not adjusted for the family) is ``"inconclusive"``. One that
        is not significant while its minimum detectable difference is larger than the change
        it saw is ``"underpowered"`` (the benchmark could not have told the change apart), never
        "no detectable difference", which stays for a test that could have seen the change
        (and for no change at all: every case scored the same).
    """
    if test.n == 0:
        return "no aligned cases"
    p = p_text(test.p_value_adjusted, alpha)
    p = f"p{p}" if p.startswith("<") else f"p={p}"
    if is_significant(test, alpha):
        return f"{'better' if test.mean_diff > 0 else 'worse'} ({p})"
    if test.n >= 2 and (test.ci_low > 0.0 or test.ci_high < 0.0):  # never "no difference" beside such a CI
        return f"inconclusive ({p}; the unadjusted CI excludes 0)"
    if math.isfinite(mdd) and mdd > abs(test.mean_diff) + 1e-12:
        return f"underpowered ({p}; differences under {mdd:.3g} cannot be told apart with {test.n} cases)"
    return f"no detectable difference ({p})"


def untested(
    own: dict[tuple[int, int], str], modes: list[str], base_of: dict[int, int], metrics: int
) -> dict[tuple[int, int], str]:
    """The tests left out as n/a, ``{(system, metric): reason}``, given where each metric is
    n/a in a system's own mode (``own``): when it is n/a on both sides of a pair, or on one
    side of two *different* modes (a mode that returns no answers by design). The same mode
    of two recipes is still tested: a recipe whose mode stopped answering is a real regression."""
    out: dict[tuple[int, int], str] = {}
    for k, base in base_of.items():
        for j in range(metrics):
            mine, theirs = own.get((k, j), ""), own.get((base, j), "")
            if (mine and theirs) or ((mine or theirs) and modes[k] != modes[base]):
                out[(k, j)] = mine or theirs
    return out
