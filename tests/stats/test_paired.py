"""Paired tests: seeds, edge cases, NaN pairs, Holm, memory."""

from __future__ import annotations

import math
import time
import tracemalloc

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from heta_nb.stats import paired as paired_stats
from heta_nb.stats.paired import PairedTest, adjust_holm, holm, paired_test

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


def test_exact_constant_differences_known_value() -> None:
    res = paired_test(np.zeros(5), np.full(5, 0.25))
    assert res.p_value == pytest.approx(2 / 2**5, abs=1e-15)  # all-plus and all-minus only
    assert (res.ci_low, res.ci_high) == (0.25, 0.25)
    assert res.mean_diff == 0.25 and res.wins == 5


def test_exact_uses_nonzero_count_and_resamples_threshold() -> None:
    d = np.array([0.4, -0.1, 0.0, 0.7, 0.0, 0.2, 0.9, -0.3])  # 6 non-zero
    a, b = pair(d)
    assert "exact (64 sign patterns)" in paired_test(a, b, resamples=64).method
    assert "Monte Carlo" in paired_test(a, b, resamples=63).method
    # zeros flip to themselves: same p as the test on the non-zero differences alone
    assert paired_test(a, b).p_value == pytest.approx(scipy_sign_flip(b - a), abs=1e-12)
    assert paired_test(a, b).p_value == pytest.approx(scipy_sign_flip(d[d != 0]), abs=1e-12)


def test_exact_does_not_depend_on_chunking(monkeypatch: pytest.MonkeyPatch) -> None:
    d = np.random.default_rng(3).normal(0.5, 1.0, 14)
    expected = paired_test(np.zeros(14), d, resamples=1 << 14).p_value
    monkeypatch.setattr(paired_stats, "_CHUNK", 100)
    monkeypatch.setattr(paired_stats, "_BLOCK", 1000)
    assert paired_test(np.zeros(14), d, resamples=1 << 14, workers=2).p_value == expected


def test_four_bit_tables_give_the_same_counts(monkeypatch: pytest.MonkeyPatch) -> None:
    rng = np.random.default_rng(21)
    small = rng.normal(0.4, 1.0, 13)
    large = rng.normal(0.05, 1.0, 999)  # 999 is not a multiple of 8: padding is exercised
    exact, mc = paired_test(np.zeros(13), small), paired_test(np.zeros(999), large, resamples=3000)
    monkeypatch.setattr(paired_stats, "_TABLE_MAX", 0)  # force 4-bit lookup tables
    assert paired_stats._SignTable(large).bits == 4
    # the same random bytes encode the same sign patterns in both layouts
    assert paired_test(np.zeros(13), small).p_value == exact.p_value
    assert paired_test(np.zeros(999), large, resamples=3000).p_value == mc.p_value


def test_sign_table_statistic_matches_direct_sum(monkeypatch: pytest.MonkeyPatch) -> None:
    rng = np.random.default_rng(13)
    values = rng.normal(size=21)
    patterns = rng.integers(0, 256, size=(50, 3), dtype=np.uint8)
    signs = np.unpackbits(patterns, axis=1, bitorder="little")[:, :21] * 2.0 - 1.0
    expected = signs @ values
    for table_max, bits in ((32 << 20, 8), (0, 4)):
        monkeypatch.setattr(paired_stats, "_TABLE_MAX", table_max)
        table = paired_stats._SignTable(values)
        assert table.bits == bits
        assert table.sums(patterns, paired_stats._Scratch()) == pytest.approx(expected, abs=1e-12)


# --- Monte Carlo permutation p-values ----------------------------------------------------


@pytest.mark.parametrize("shift", [0.25, 0.5])
def test_monte_carlo_p_close_to_exact(shift: float) -> None:
    n, resamples = 16, 4000  # 2**16 > resamples: Monte Carlo; SciPy can still do it exactly
    d = np.random.default_rng(11).normal(shift, 1.0, n)
    exact = scipy_sign_flip(d)
    assert 0.005 < exact < 0.5  # a p-value where the comparison means something
    res = paired_test(np.zeros(n), d, resamples=resamples, seed=1)
    assert "Monte Carlo" in res.method
    assert abs(res.p_value - exact) <= mc_tolerance(exact, resamples)
    # ... and the exact enumeration (allowed once resamples >= 2**16) hits it to rounding
    assert paired_test(np.zeros(n), d, resamples=1 << 16).p_value == pytest.approx(exact, abs=1e-12)


def test_monte_carlo_tiny_p_is_phipson_smyth_floor() -> None:
    d = np.full(40, 0.5)
    res = paired_test(np.zeros(40), d, resamples=999)
    assert res.p_value == pytest.approx(1 / 1000)  # never 0; 2/2**40 is below the floor
    assert (res.ci_low, res.ci_high) == (0.5, 0.5)


def test_monte_carlo_ties_counted_for_discrete_scores() -> None:
    rng = np.random.default_rng(8)
    a = rng.integers(0, 2, 60).astype(float)
    b = np.where(rng.random(60) < 0.2, 1.0 - a, a)  # boolean metric, a few flips
    d = b - a
    exact = _exact_binary_sign_flip(d)
    res = paired_test(a, b, resamples=20_000, seed=2)
    assert abs(res.p_value - exact) <= mc_tolerance(exact, 20_000)


def test_bootstrap_ci_matches_normal_theory_for_large_n() -> None:
    n = 5000
    d = np.random.default_rng(2).normal(0.1, 1.0, n)
    res = paired_test(np.zeros(n), d, resamples=4000)
    half = 1.959964 * np.std(d) / math.sqrt(n)
    assert res.ci_low == pytest.approx(d.mean() - half, abs=0.15 * half)
    assert res.ci_high == pytest.approx(d.mean() + half, abs=0.15 * half)
    assert res.p_value == pytest.approx(1 / 4001)


def test_bootstrap_long_rows_are_split(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(paired_stats, "_CHUNK", 1000)  # n > _CHUNK: each resample in pieces
    d = np.random.default_rng(6).normal(0.0, 1.0, 4321)
    res = paired_test(np.zeros(d.size), d, resamples=300, seed=5)
    half = 1.959964 * np.std(d) / math.sqrt(d.size)
    assert res.ci_low == pytest.approx(d.mean() - half, abs=0.35 * half)
    assert res.ci_high == pytest.approx(d.mean() + half, abs=0.35 * half)
    assert res == paired_test(np.zeros(d.size), d, resamples=300, seed=5)


def test_uniform_indices_are_uniform() -> None:
    rng = np.random.default_rng(0)
    for n in (3, 7, 1000, (1 << 32) // 3 + 1):  # the last rejects ~1/3 of the raw words
        idx = paired_stats._uniform_indices(rng, 300_000, n)
        assert idx.dtype == np.int64 and idx.min() >= 0 and idx.max() < n
        if n <= 1000:
            counts = np.bincount(idx, minlength=n)
            expected = idx.size / n
            chi2 = float(((counts - expected) ** 2 / expected).sum())
            assert scipy_stats.chi2.sf(chi2, n - 1) > 1e-4
        else:  # the rejection path: top third of the range must be as likely as the rest
            assert np.mean(idx >= 2 * (n // 3)) == pytest.approx(1 / 3, abs=0.01)


# --- reproducibility ---------------------------------------------------------------------


def test_same_seed_same_result_bit_for_bit() -> None:
    rng = np.random.default_rng(1)
    a, b = rng.random(3000), rng.random(3000)
    first = paired_test(a, b, seed=123, resamples=2000)
    assert first == paired_test(a, b, seed=123, resamples=2000)
    # threads do not change anything (work is big enough to use them)
    assert first == paired_test(a, b, seed=123, resamples=2000, workers=1)
    assert first == paired_test(a, b, seed=123, resamples=2000, workers=3)
    assert first.seed == 123


def test_different_seeds_differ_within_monte_carlo_error() -> None:
    rng = np.random.default_rng(4)
    a = rng.random(200)
    b = a + rng.normal(0.03, 0.3, 200)
    runs = [paired_test(a, b, seed=s, resamples=3000) for s in range(4)]
    ps = [r.p_value for r in runs]
    assert len(set(ps)) > 1 and len({r.ci_low for r in runs}) > 1
    centre = float(np.mean(ps))
    assert 0.01 < centre < 0.9
    assert all(abs(p - centre) <= mc_tolerance(centre, 3000) for p in ps)
    assert len({r.mean_diff for r in runs}) == 1


def test_seed_none_records_entropy_for_replay() -> None:
    a, b = np.zeros(50), np.linspace(-1, 1.5, 50)
    res = paired_test(a, b, seed=None, resamples=500)
    assert res == paired_test(a, b, seed=res.seed, resamples=500)


# --- NaNs, counts, degenerate inputs -----------------------------------------------------


def test_nan_pairs_are_dropped() -> None:
    a = np.array([0.1, np.nan, 0.5, 0.7, 0.2, 0.9, np.nan, 0.3])
    b = np.array([0.4, 0.2, np.nan, 0.9, 0.2, 0.4, np.nan, 0.8])
    keep = ~(np.isnan(a) | np.isnan(b))
    res = paired_test(a, b)
    clean = paired_test(a[keep], b[keep])
    assert res.n == 5 and res == clean
    assert res.mean_a == pytest.approx(a[keep].mean()) and res.mean_b == pytest.approx(b[keep].mean())


def test_wins_ties_losses() -> None:
    a = [0.5, 0.5, 0.5, 0.5, 0.5, 0.5]
    b = [0.6, 0.5, 0.4, 0.5001, 0.4999, 1.0]
    res = paired_test(a, b)
    assert (res.wins, res.ties, res.losses) == (3, 1, 2)
    res = paired_test(a, b, tie_tolerance=1e-3)
    assert (res.wins, res.ties, res.losses) == (2, 3, 1)
    assert res.p_value == paired_test(a, b).p_value  # the tolerance only affects the counts


def test_empty_and_all_nan() -> None:
    for a, b in (([], []), ([np.nan, 1.0], [2.0, np.nan])):
        res = paired_test(a, b)
        assert res.n == 0 and (res.wins, res.ties, res.losses) == (0, 0, 0)
        assert all(math.isnan(v) for v in (res.mean_a, res.mean_diff, res.ci_low, res.ci_high, res.p_value))
        assert math.isnan(res.p_value_adjusted)


def test_single_pair() -> None:
    res = paired_test([0.2], [0.7])
    assert res.n == 1 and res.p_value == 1.0 and res.wins == 1
    assert res.mean_diff == pytest.approx(0.5)
    assert math.isnan(res.ci_low) and math.isnan(res.ci_high) and "one pair: no interval" in res.method
    zero = paired_test([0.4], [0.4])
    assert zero.ties == 1 and math.isnan(zero.ci_low) and math.isnan(zero.ci_high)


def test_all_differences_zero() -> None:
    a = np.linspace(0, 1, 300)
    res = paired_test(a, a.copy())
    assert res.p_value == 1.0 and (res.ci_low, res.ci_high) == (0.0, 0.0)
    assert res.mean_diff == 0.0 and res.ties == 300
    assert "all differences zero" in res.method


def test_constant_differences_many_cases() -> None:
    a = np.linspace(0, 1, 100)
    res = paired_test(a, a + 0.125, resamples=2000)
    assert res.p_value == pytest.approx(1 / 2001)
    assert (res.ci_low, res.ci_high) == (0.125, 0.125)


def test_symmetry_swapping_a_and_b() -> None:
    rng = np.random.default_rng(12)
    a, b = rng.random(80), rng.random(80)
    ab, ba = paired_test(a, b), paired_test(b, a)
    assert ab.p_value == ba.p_value  # two-sided, same sign streams
    assert ab.mean_diff == -ba.mean_diff and (ab.wins, ab.losses) == (ba.losses, ba.wins)
    assert ab.ci_low == pytest.approx(-ba.ci_high) and ab.ci_high == pytest.approx(-ba.ci_low)


@pytest.mark.parametrize(
    "kwargs",
    [
        {"a": [1.0, 2.0], "b": [1.0]},
        {"a": [[1.0]], "b": [[1.0]]},
        {"a": [1.0, np.inf], "b": [1.0, 2.0]},
        {"a": [1.0], "b": [2.0], "confidence": 1.0},
        {"a": [1.0], "b": [2.0], "resamples": 0},
        {"a": [1.0], "b": [2.0], "tie_tolerance": -1.0},
    ],
)
def test_invalid_input(kwargs: dict) -> None:
    a, b = kwargs.pop("a"), kwargs.pop("b")
    with pytest.raises(ValueError):
        paired_test(a, b, **kwargs)


def test_result_is_frozen_dataclass() -> None:
    res = paired_test([0.0, 1.0, 0.5], [1.0, 1.0, 0.0])
    assert isinstance(res, PairedTest)
    with pytest.raises(AttributeError):
        res.p_value = 0.0  # type: ignore[misc]
    assert res.resamples == 10_000 and res.confidence == 0.95 and res.p_value_adjusted == res.p_value


# --- Holm ------------------------------------------------------------------------------------


def test_holm_textbook_example() -> None:
    assert holm([0.01, 0.04, 0.03, 0.005]) == pytest.approx([0.03, 0.06, 0.06, 0.02])


def test_holm_edge_cases() -> None:
    assert holm([]) == []
    assert holm([0.2]) == [0.2]
    assert holm([0.3, 0.6]) == pytest.approx([0.6, 0.6])
    assert holm([0.01, 0.01, 0.01]) == pytest.approx([0.03, 0.03, 0.03])
    assert holm([0.5, 0.9, 0.7]) == [1.0, 1.0, 1.0]
    out = holm([0.01, float("nan"), 0.04])  # m = 2, NaN untouched
    assert out[0] == pytest.approx(0.02) and math.isnan(out[1]) and out[2] == pytest.approx(0.04)
    with pytest.raises(ValueError):
        holm([0.5, 1.5])


@settings(max_examples=200, deadline=None)
@given(st.lists(st.one_of(st.floats(0.0, 1.0), st.just(float("nan"))), max_size=12))
def test_holm_properties(ps: list[float]) -> None:
    adj = holm(ps)
    assert len(adj) == len(ps)
    real = [(p, q) for p, q in zip(ps, adj) if not math.isnan(p)]
    assert all(math.isnan(q) for p, q in zip(ps, adj) if math.isnan(p))
    m = len(real)
    for p, q in real:
        assert p <= q <= 1.0
        assert q <= min(1.0, m * p) + 1e-15  # never more conservative than Bonferroni
    ordered = [q for _, q in sorted(real)]
    assert ordered == sorted(ordered)  # monotone in the raw p-values


def test_adjust_holm_sets_adjusted_copies() -> None:
    rng = np.random.default_rng(0)
    base = rng.random(40)
    tests = [paired_test(base, base + rng.normal(shift, 0.3, 40), resamples=999) for shift in (0.0, 0.1, 0.3)]
    adjusted = adjust_holm(tests)
    assert [t.p_value_adjusted for t in adjusted] == holm([t.p_value for t in tests])
    assert [t.p_value for t in adjusted] == [t.p_value for t in tests]
    assert all(t.p_value_adjusted == t.p_value for t in tests)  # originals unchanged


# --- sanity on cost (no timing assertion: see benchmarks/paired_stats.py) --------------------


def test_memory_stays_bounded() -> None:
    rng = np.random.default_rng(10)
    a = rng.random(20_000)
    b = a + rng.normal(0.0, 0.2, 20_000)
    tracemalloc.start()  # NumPy reports its buffers to tracemalloc
    try:
        tracemalloc.reset_peak()
        paired_test(a, b, resamples=600)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 64 * 2**20, f"peak {peak / 2**20:.1f} MiB"


def test_large_input_runs() -> None:
    rng = np.random.default_rng(9)
    a = rng.random(10_000)
    b = a + rng.normal(0.005, 0.2, 10_000)
    start = time.perf_counter()
    res = paired_test(a, b)
    elapsed = time.perf_counter() - start
    assert res.n == 10_000 and res.ci_low < res.mean_diff < res.ci_high
    print(f"paired_test 10k x 10k: {elapsed * 1000:.0f} ms")


# --- 3. Holm ------------------------------------------------------------------------------------


def test_holm_matches_statsmodels() -> None:
    # statsmodels.stats.multitest.multipletests(p, method="holm")[1]
    reference = [
        ([0.01, 0.04, 0.03, 0.005], [0.03, 0.06, 0.06, 0.02]),
        ([0.02, 0.02, 0.02, 0.5], [0.08, 0.08, 0.08, 0.5]),
        ([0.3, 0.2, 0.01, 0.04, 0.04, 0.9], [0.6000000000000001, 0.6000000000000001, 0.06, 0.2, 0.2, 0.9]),
        ([0.0, 1.0, 0.5], [0.0, 1.0, 1.0]),
        ([0.6, 0.7, 0.4], [1.0, 1.0, 1.0]),
        ([0.012, 0.011, 0.049, 0.2, 0.0125], [0.055, 0.055, 0.098, 0.2, 0.055]),
    ]
    for raw, adjusted in reference:
        assert holm(raw) == pytest.approx(adjusted, abs=1e-12)
    out = holm([0.01, math.nan, 0.04])  # NaN kept and not counted in m
    assert out[0] == 0.02 and math.isnan(out[1]) and out[2] == 0.04
