"""The paired test of every system × metric against the baseline, Holm-adjusted as one family, and its verdict."""

from __future__ import annotations

import math
from dataclasses import replace

import numpy as np

from heta_nb.comparison.align import Aligned
from heta_nb.stats.batch import paired_tests
from heta_nb.stats.format import p_text
from heta_nb.stats.paired import PairedTest, holm

__all__ = ["is_significant", "run_paired_tests", "verdict_text"]


def run_paired_tests(
    aligned: Aligned,
    base: int,
    systems: int,
    *,
    resamples: int,
    confidence: float,
    seed: int,
    tie_tolerance: float,
    correction: str,
) -> dict[tuple[int, int], PairedTest]:
    """Test every non-baseline system against the baseline on every metric's aligned cases.

    One set of resamples serves every test (:func:`heta_nb.stats.batch.paired_tests`): the
    cases aligned for some metric are resampled together, and each metric's cases are
    picked out of them with its mask.

    Args:
        aligned: The aligned scores.
        base: Index of the baseline system.
        systems: Number of systems.
        resamples: Bootstrap resamples, and permutation resamples when not exact.
        confidence: Confidence level of the intervals.
        seed: Seed of the resamples (each test depends only on its two score arrays and
            the cases aligned for some metric).
        tie_tolerance: ``|delta| <= tie_tolerance`` counts as a tie.
        correction: ``"holm"`` (adjust every test as one family) or ``"none"``.

    Returns:
        The test of each ``(system index, metric index)``.
    """
    keys = [(s, j) for j in range(len(aligned.metrics)) for s in range(systems) if s != base]
    cases = np.flatnonzero(aligned.mask.any(axis=0)) if aligned.mask.size else np.zeros(0, np.intp)
    values = aligned.values[:, :, cases]
    mask = np.array([aligned.mask[j, cases] for _, j in keys], dtype=bool).reshape(len(keys), cases.size)
    a = np.array([values[base, j] for _, j in keys]).reshape(len(keys), cases.size)
    b = np.array([values[s, j] for s, j in keys]).reshape(len(keys), cases.size)
    found = paired_tests(
        np.where(mask, a, 0.0),
        np.where(mask, b, 0.0),
        mask,
        resamples=resamples,
        confidence=confidence,
        seed=seed,
        tie_tolerance=tie_tolerance,
    )
    tests = dict(zip(keys, found))
    if correction == "holm":
        adjusted = holm([tests[k].p_value for k in keys])
        tests = {k: replace(tests[k], p_value_adjusted=p) for k, p in zip(keys, adjusted)}
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


def verdict_text(test: PairedTest, alpha: float) -> str:
    """Plain words: ``"better (p=0.003)"``, ``"no detectable difference (p=0.41)"``, ``"worse (...)"``.

    Args:
        test: The paired test.
        alpha: The significance level (the p-value is never shown rounded across it).

    Returns:
        The verdict, or ``"no aligned cases"``. A test that is not significant but whose CI
        excludes 0 (the CI is not adjusted for the family) is ``"inconclusive"``, never
        "no detectable difference".
    """
    if test.n == 0:
        return "no aligned cases"
    p = p_text(test.p_value_adjusted, alpha)
    p = f"p{p}" if p.startswith("<") else f"p={p}"
    if is_significant(test, alpha):
        return f"{'better' if test.mean_diff > 0 else 'worse'} ({p})"
    if test.n >= 2 and (test.ci_low > 0.0 or test.ci_high < 0.0):  # never "no difference" beside such a CI
        return f"inconclusive ({p}; the unadjusted CI excludes 0)"
    return f"no detectable difference ({p})"
