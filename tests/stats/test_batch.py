"""The batched paired tests (heta_nb.stats.batch): the Poisson bootstrap of large case sets
against the classic bootstrap, scipy and each pair tested alone."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

import heta_nb.stats.batch as batch
from heta_nb.stats.batch import paired_tests


def scores(n: int, pairs: int = 1, shift: float = 0.02, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    a = rng.random((pairs, n)).round(4)
    b = np.clip(a + rng.normal(shift, 0.25, (pairs, n)), 0.0, 1.0).round(4)
    return a, b


def se_of(d: np.ndarray) -> float:
    return float(np.std(d, ddof=1) / math.sqrt(d.size))


def test_poisson_words_follow_poisson_one() -> None:
    weights = batch._POISSON_WORDS
    assert weights.dtype == np.float32 and weights.size == 1 << 16
    for k in range(8):
        share = np.count_nonzero(weights == k) / weights.size
        assert share == pytest.approx(math.exp(-1.0) / math.factorial(k), abs=2.0**-16)
    assert float(weights.mean()) == pytest.approx(1.0, abs=1e-3)
    assert float(weights.var()) == pytest.approx(1.0, abs=2e-3)


def test_large_sets_take_the_poisson_bootstrap_and_agree_with_scipy() -> None:
    a, b = scores(2000)
    (test,) = paired_tests(a, b, resamples=20_000, seed=3)
    assert "Poisson bootstrap" in test.method
    d = b[0] - a[0]
    boot = stats.bootstrap((d,), np.mean, method="percentile", n_resamples=20_000, rng=5)
    # two Monte Carlo estimates of each quantile, each with a standard error ~0.02 se
    assert test.ci_low == pytest.approx(boot.confidence_interval.low, abs=0.1 * se_of(d))
    assert test.ci_high == pytest.approx(boot.confidence_interval.high, abs=0.1 * se_of(d))
    perm = stats.permutation_test(
        (d,), lambda x, axis: np.mean(x, axis=axis), permutation_type="samples", n_resamples=20_000, rng=5
    )
    assert test.p_value == pytest.approx(perm.pvalue, abs=0.02)


def test_poisson_and_classic_bootstrap_agree(monkeypatch: pytest.MonkeyPatch) -> None:
    a, b = scores(1500, pairs=3, shift=0.01, seed=4)
    poisson = paired_tests(a, b, resamples=20_000, seed=1)
    monkeypatch.setattr(batch, "_POISSON_MIN", 10**9)
    classic = paired_tests(a, b, resamples=20_000, seed=1)
    for p, c, x, y in zip(poisson, classic, a, b):
        assert "Poisson" in p.method and "Poisson" not in c.method
        se = se_of(y - x)
        assert (p.n, p.mean_diff, p.wins, p.ties, p.losses) == (c.n, c.mean_diff, c.wins, c.ties, c.losses)
        assert p.ci_low == pytest.approx(c.ci_low, abs=0.1 * se)
        assert p.ci_high == pytest.approx(c.ci_high, abs=0.1 * se)
        assert p.p_value == pytest.approx(c.p_value, abs=1e-3)  # the same sign patterns


def test_a_masked_pair_is_a_bootstrap_of_its_own_cases() -> None:
    a, b = scores(3000, pairs=2, shift=0.03, seed=6)
    mask = np.ones(a.shape, dtype=bool)
    mask[1, np.random.default_rng(0).random(3000) < 0.3] = False
    x, y = np.where(mask, a, 0.0), np.where(mask, b, 0.0)
    full, masked = paired_tests(x, y, mask, resamples=20_000, seed=2)
    assert masked.n == int(mask[1].sum()) and "Poisson" in masked.method
    # what is masked out does not count at all
    noisy = paired_tests(np.where(mask, a, 5.0), np.where(mask, b, -7.0), mask, resamples=20_000, seed=2)
    assert noisy == [full, masked]
    # the same pair tested alone (its own cases, its own resamples): within Monte Carlo error
    (alone,) = paired_tests(a[1][mask[1]][None, :], b[1][mask[1]][None, :], resamples=20_000, seed=9)
    se = se_of(b[1][mask[1]] - a[1][mask[1]])
    assert masked.mean_diff == alone.mean_diff
    assert masked.ci_low == pytest.approx(alone.ci_low, abs=0.1 * se)
    assert masked.ci_high == pytest.approx(alone.ci_high, abs=0.1 * se)
    assert full.ci_low < full.mean_diff < full.ci_high


def test_small_masked_pairs_in_a_large_set_take_their_own_resamples() -> None:
    a, b = scores(2000, pairs=2, seed=7)
    mask = np.ones(a.shape, dtype=bool)
    mask[1, 400:] = False
    big, small = paired_tests(np.where(mask, a, 0.0), np.where(mask, b, 0.0), mask, resamples=2000, seed=0)
    assert "Poisson" in big.method and "Poisson" not in small.method and small.n == 400
    # its draws depend on its own cases only: beside another pair, the same numbers
    c, d = scores(2000, pairs=1, seed=70)
    x, y = np.vstack([c, a[1:]]), np.vstack([d, b[1:]])
    other, again = paired_tests(np.where(mask, x, 0.0), np.where(mask, y, 0.0), mask, resamples=2000, seed=0)
    assert other.mean_diff != big.mean_diff
    assert again == small


def test_same_seed_same_numbers_whatever_the_threads() -> None:
    a, b = scores(1200, pairs=4, seed=8)
    one = paired_tests(a, b, resamples=3000, seed=11, workers=1)
    assert paired_tests(a, b, resamples=3000, seed=11, workers=3) == one
    assert paired_tests(a, b, resamples=3000, seed=11) == one
    other = paired_tests(a, b, resamples=3000, seed=12)
    assert [t.ci_low for t in other] != [t.ci_low for t in one]
