"""The paired permutation test and bootstrap against scipy.stats (and brute force)."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from heta_nb.stats.paired import paired_test

scipy_stats = pytest.importorskip("scipy.stats")


def _mean(x: np.ndarray, axis: int = -1) -> np.ndarray:
    return np.mean(x, axis=axis)


def scipy_sign_flip(d: np.ndarray, n_resamples: float = np.inf, seed: int = 0) -> float:
    """SciPy's paired (one-sample, sign-flip) permutation test of mean(d) = 0."""
    if d.size == 1:  # SciPy needs two observations; +d and -d are equally extreme
        return 1.0
    res = scipy_stats.permutation_test(
        (d,), _mean, permutation_type="samples", vectorized=True, n_resamples=n_resamples,
        alternative="two-sided", rng=np.random.default_rng(seed),
    )  # fmt: skip
    return float(res.pvalue)


def mc_tolerance(p: float, resamples: int, sigmas: float = 4.0) -> float:
    """Allowed gap between a Monte Carlo p-value and its exact value.

    ``sigmas`` binomial standard errors ``sqrt(p (1 - p) / R)``, plus ``2 / (R + 1)`` for
    the Phipson-Smyth ``+1`` (and SciPy's doubling of it in ``2 * min(...)``).
    """
    return sigmas * math.sqrt(max(p * (1.0 - p), 1.0 / resamples) / resamples) + 2.0 / (resamples + 1)


def pair(d: np.ndarray, seed: int = 99) -> tuple[np.ndarray, np.ndarray]:
    """Scores (a, b) with b - a == d exactly (a is a multiple of 1/4, so no rounding)."""
    a = np.random.default_rng(seed).integers(0, 5, d.size) / 4.0
    return a, a + d


def _exact_binary_sign_flip(d: np.ndarray) -> float:
    """Exact two-sided sign-flip p for differences in {-1, 0, 1} (a sign test)."""
    k = int(np.count_nonzero(d))
    t_obs = abs(int(d.sum()))
    # T = 2 * (#plus) - k with #plus ~ Binomial(k, 1/2)
    return sum(math.comb(k, j) for j in range(k + 1) if abs(2 * j - k) >= t_obs) / 2**k


def brute_force_p(d: np.ndarray) -> float:
    """Two-sided sign-flip p-value by enumerating every sign pattern (zeros included)."""
    observed = abs(float(d.sum()))
    slack = 1e-9 * float(np.abs(d).sum())
    patterns = list(itertools.product((1.0, -1.0), repeat=d.size))
    return sum(abs(float(np.dot(s, d))) >= observed - slack for s in patterns) / len(patterns)


# --- exact permutation p-values ---------------------------------------------------------


@pytest.mark.parametrize("n", [1, 2, 3, 5, 8, 11, 13])
@pytest.mark.parametrize("shift", [0.0, 0.3, 1.0])
def test_exact_p_matches_scipy_continuous(n: int, shift: float) -> None:
    d = np.random.default_rng(n).normal(shift, 1.0, n)
    res = paired_test(np.zeros(n), d)
    assert res.method.startswith("paired sign-flip permutation, exact")
    assert res.p_value == pytest.approx(scipy_sign_flip(d), abs=1e-12)


@pytest.mark.parametrize(
    "d",
    [
        [1, 1, 1, -1, 0, 1, 0, 1, 1, -1, 1, 1],  # boolean metric: many exact ties in T*
        [1 / 3, 2 / 3, -1 / 3, 1, 1 / 3, 0, -2 / 3, 1 / 3, 2 / 3, 1 / 3],  # thirds: not exact in binary
        [0.5, 0.5, 0.5, 0.5, -0.5, 0.25],
        [2.0, 2.0, 2.0, 2.0, 2.0],  # constant: only all-plus / all-minus are as extreme
        [0.1, 0.2, -0.3, 0.1, 0.2, 0.3, -0.1],
    ],
)
def test_exact_p_matches_scipy_discrete(d: list[float]) -> None:
    diffs = np.asarray(d, dtype=float)
    a, b = pair(diffs)
    res = paired_test(a, b)
    assert res.p_value == pytest.approx(scipy_sign_flip(b - a), abs=1e-12)


def test_exact_larger_n_matches_scipy() -> None:
    d = np.random.default_rng(7).normal(0.35, 1.0, 17)
    res = paired_test(np.zeros(17), d, resamples=1 << 17)
    assert "exact (131072" in res.method
    assert res.p_value == pytest.approx(scipy_sign_flip(d), abs=1e-12)


@settings(max_examples=40, deadline=None)
@given(st.lists(st.integers(-3, 3), min_size=1, max_size=10))
def test_exact_p_matches_scipy_property(values: list[int]) -> None:
    d = np.asarray(values, dtype=float) / 2.0
    a, b = pair(d)
    res = paired_test(a, b)
    expected = 1.0 if not d.any() else scipy_sign_flip(d)
    assert res.p_value == pytest.approx(expected, abs=1e-12)
    assert 0.0 < res.p_value <= 1.0
    if d.size >= 2:
        assert d.min() <= res.ci_low <= res.ci_high <= d.max()
    else:  # one pair: no interval
        assert math.isnan(res.ci_low) and math.isnan(res.ci_high)


def test_monte_carlo_p_close_to_scipy_monte_carlo() -> None:
    n, resamples = 400, 5000
    rng = np.random.default_rng(5)
    a = rng.random(n)
    b = a + rng.normal(0.02, 0.25, n)
    ours = paired_test(a, b, resamples=resamples, seed=3).p_value
    theirs = scipy_sign_flip(b - a, n_resamples=resamples, seed=3)
    assert 0.01 < theirs < 0.6
    # two independent estimates: sqrt(2) times one standard error
    assert abs(ours - theirs) <= mc_tolerance(theirs, resamples, sigmas=4.0 * math.sqrt(2.0))


def test_sign_test_reference_against_scipy() -> None:
    d = np.array([1, 1, 0, 1, -1, 1, 1, 0, 1, 1, -1, 1], dtype=float)
    assert _exact_binary_sign_flip(d) == pytest.approx(scipy_sign_flip(d), abs=1e-12)


# --- bootstrap confidence interval -------------------------------------------------------


@pytest.mark.parametrize("confidence", [0.9, 0.95])
@pytest.mark.parametrize("n", [30, 500])
def test_bootstrap_ci_close_to_scipy(n: int, confidence: float) -> None:
    resamples = 10_000
    rng = np.random.default_rng(n)
    a = rng.random(n)
    b = np.clip(a + rng.normal(0.05, 0.3, n), 0, 1)
    d = b - a
    res = paired_test(a, b, resamples=resamples, confidence=confidence, seed=4)
    ref = scipy_stats.bootstrap(
        (d,), np.mean, method="percentile", n_resamples=resamples, confidence_level=confidence,
        rng=np.random.default_rng(4),
    ).confidence_interval  # fmt: skip
    # SE of an estimated q-quantile: sqrt(q (1 - q) / R) / f(x_q); with the near-normal
    # bootstrap distribution (sd s / sqrt(n)) that is <= 2.7 s / sqrt(n R) at q = 0.025.
    # Two independent estimates, 4 sigma: 4 * sqrt(2) * 2.7 / sqrt(R) ~ 0.15 bootstrap sds.
    boot_sd = np.std(d) / math.sqrt(n)
    tol = 4 * math.sqrt(2) * 2.7 / math.sqrt(resamples) * boot_sd
    assert res.ci_low == pytest.approx(ref.low, abs=tol)
    assert res.ci_high == pytest.approx(ref.high, abs=tol)
    assert res.ci_low < res.mean_diff < res.ci_high
    assert res.mean_diff == pytest.approx(d.mean(), abs=1e-15)


# --- 2. permutation p-values ------------------------------------------------------------------


def test_exact_p_matches_brute_force_enumeration() -> None:
    rng = np.random.default_rng(3)
    for trial in range(120):
        n = int(rng.integers(1, 11))
        if trial % 3 == 0:
            d = rng.normal(0.3, 1.0, n)
        elif trial % 3 == 1:
            d = rng.integers(-2, 3, n).astype(float)
        else:  # quarter steps: exact ties between sign patterns
            d = rng.integers(0, 5, n) / 4 - rng.integers(0, 5, n) / 4
        t = paired_test(np.zeros(n), d)
        if np.any(d != 0):
            assert "exact" in t.method
        assert t.p_value == pytest.approx(brute_force_p(d), abs=1e-12), d
