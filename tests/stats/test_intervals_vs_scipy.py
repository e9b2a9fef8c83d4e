"""t and Wilson intervals and the expanded percentile level, against scipy."""

from __future__ import annotations

import math

import pytest

from heta_nb import stats

scipy_stats = pytest.importorskip("scipy.stats")


@pytest.mark.parametrize("df", [1, 2, 3, 4, 5, 7, 10, 29, 30, 100, 1000, 10_000, 100_000])
@pytest.mark.parametrize("p", [0.5, 0.6, 0.8, 0.9, 0.95, 0.975, 0.99, 0.995, 0.9995, 0.999999])
def test_student_t_quantile(df: int, p: float) -> None:
    expected = scipy_stats.t.ppf(p, df)
    assert stats.student_t_ppf(p, df) == pytest.approx(expected, rel=1e-9, abs=1e-9)
    assert stats.student_t_ppf(1 - p, df) == pytest.approx(-expected, rel=1e-8, abs=1e-8)


@pytest.mark.parametrize("df", [1, 3, 12, 250])
@pytest.mark.parametrize("t", [-30.0, -2.5, -0.1, 0.0, 0.7, 1.96, 8.0])
def test_student_t_cdf(df: int, t: float) -> None:
    assert stats.student_t_cdf(t, df) == pytest.approx(scipy_stats.t.cdf(t, df), abs=1e-12)


def test_intervals_and_degenerate_inputs() -> None:
    values = [0.2, 0.4, 0.4, 0.9, 1.0]
    low, high = stats.t_interval(values, 0.95)
    exp_low, exp_high = scipy_stats.t.interval(0.95, 4, loc=sum(values) / 5, scale=scipy_stats.sem(values))
    assert (low, high) == pytest.approx((exp_low, exp_high), abs=1e-12)
    assert all(math.isnan(v) for v in stats.t_interval([1.0], 0.95))
    assert all(math.isnan(v) for v in stats.wilson_interval(0, 0))
    assert stats.wilson_interval(0, 10)[0] == 0.0 and stats.wilson_interval(10, 10)[1] == 1.0
    assert stats.mean([]) != stats.mean([])  # NaN
    assert math.isnan(stats.sample_std([3.0]))
    with pytest.raises(ValueError):
        stats.student_t_ppf(1.5, 3)


def test_expanded_percentile_level_matches_scipy() -> None:
    # 2 * scipy.stats.norm.cdf(-sqrt(n / (n - 1)) * scipy.stats.t.ppf(1 - alpha / 2, n - 1))
    reference = {
        (0.05, 5): 0.0019082011037649814,
        (0.05, 10): 0.017101278048812733,
        (0.05, 30): 0.03750780055644108,
        (0.05, 400): 0.04902325952453517,
        (0.1, 10): 0.05332610386446916,
        (0.1, 30): 0.0839570269839585,
    }
    for (alpha, n), value in reference.items():
        assert stats.expanded_percentile_alpha(alpha, n) == pytest.approx(value, rel=1e-9)
    assert stats.expanded_percentile_alpha(0.05, 1) == 0.05
