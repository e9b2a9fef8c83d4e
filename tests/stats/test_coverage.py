"""The bootstrap intervals keep their coverage; p-values are valid under the null."""

from __future__ import annotations

import math

import numpy as np
import pytest

from heta_nb.stats.paired import paired_test

# --- 1. bootstrap CI: coverage and method --------------------------------------------------------


def _coverage(n: int, kind: str, sims: int, seed: int = 7) -> float:
    rng = np.random.default_rng(seed)
    hits = 0
    for i in range(sims):
        if kind == "normal":
            a = rng.normal(0.5, 0.2, n)
            b, true = a + rng.normal(0.05, 0.2, n), 0.05
        else:  # binary 0/1 scores, P(a) = 0.5, P(b) = 0.6 independently
            a = (rng.random(n) < 0.5).astype(float)
            b, true = (rng.random(n) < 0.6).astype(float), 0.1
        t = paired_test(a, b, resamples=500, seed=i)
        hits += t.ci_low <= true <= t.ci_high
    return hits / sims


def test_bootstrap_ci_covers_at_small_n() -> None:
    # The plain percentile interval covered 0.89 (n = 10) and 0.83 (n = 5) of a nominal 95 %
    # (2,000 simulations each); the expanded percentile interval ~0.95 and ~0.91.
    assert _coverage(10, "normal", 1000) >= 0.93
    assert _coverage(5, "normal", 600) >= 0.88


@pytest.mark.parametrize(("n", "kind"), [(30, "normal"), (30, "binary"), (10, "binary")])
def test_bootstrap_ci_coverage_moderate_n(n: int, kind: str) -> None:
    assert 0.925 <= _coverage(n, kind, 500, seed=n) <= 0.985


@pytest.mark.parametrize("kind", ["normal", "binary"])
def test_bootstrap_ci_coverage_n200(kind: str) -> None:
    assert 0.93 <= _coverage(200, kind, 600, seed=200) <= 0.97


def test_bootstrap_ci_is_the_expanded_percentile_of_the_resampled_means() -> None:
    d = np.random.default_rng(3).normal(0.1, 1.0, 12)
    t = paired_test(np.zeros(12), d, resamples=4000, seed=1)
    assert "expanded-percentile" in t.method
    # Wider than the plain percentile interval of the same resamples, and holds the mean.
    plain = 1.96 * np.std(d) / math.sqrt(12)
    assert t.ci_high - t.ci_low > 2 * plain
    assert t.ci_low < t.mean_diff < t.ci_high


def test_degenerate_inputs() -> None:
    assert paired_test([], []).n == 0
    one = paired_test([0.2], [0.7])
    assert one.n == 1 and one.p_value == 1.0
    two = paired_test([0.2, 0.3], [0.7, 0.9])
    assert (two.ci_low, two.ci_high) == pytest.approx((0.5, 0.6)) and two.p_value == 0.5  # min/max of d; exact 2/4
    same = paired_test(np.linspace(0, 1, 10), np.linspace(0, 1, 10) + 0.25)
    assert same.ci_low == same.ci_high == pytest.approx(0.25) and same.p_value == pytest.approx(2 / 1024)
    ties = paired_test([0.5] * 9, [0.5] * 9)
    assert ties.p_value == 1.0 and (ties.wins, ties.ties, ties.losses) == (0, 9, 0)
    booleans = paired_test(np.array([True, False, True, False]), np.array([True, True, True, True]))
    assert booleans.mean_diff == 0.5 and booleans.p_value == 0.5
    with pytest.raises(ValueError, match="finite"):
        paired_test([0.0, math.inf], [1.0, 1.0])


def test_monte_carlo_p_is_never_zero_and_valid_under_the_null() -> None:
    rng = np.random.default_rng(11)
    ps = []
    for i in range(400):
        a, b = rng.normal(size=40), rng.normal(size=40)
        ps.append(paired_test(a, b, resamples=199, seed=i).p_value)
    p = np.asarray(ps)
    assert p.min() >= 1 / 200
    assert np.mean(p <= 0.05) <= 0.08 and np.mean(p <= 0.5) <= 0.56  # ~uniform (binomial 4 sd)
    huge = paired_test(np.zeros(200), np.full(200, 0.5), resamples=999)
    assert huge.p_value == 1 / 1000  # (0 + 1) / (999 + 1)
    a, b = rng.random(300), rng.random(300)
    assert paired_test(a, b, seed=5) == paired_test(a, b, seed=5, workers=1)
