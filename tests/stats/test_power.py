"""Minimum detectable difference and cases needed: statsmodels' power solvers as oracles, a
simulated paired t test's rejection rate at the stated MDD, the round trip, text and input checks."""

from __future__ import annotations

import math

import numpy as np
import pytest

from heta_nb import stats
from heta_nb.stats.intervals import student_t_ppf
from heta_nb.stats.power import (
    PowerNote,
    cases_needed,
    detectable_difference,
    min_detectable_difference,
    power_note,
)

smp = pytest.importorskip("statsmodels.stats.power")


@pytest.mark.parametrize("n", [10, 20, 100, 190, 1000])
@pytest.mark.parametrize(("alpha", "power"), [(0.05, 0.8), (0.01, 0.9), (0.05, 0.5)])
def test_matches_statsmodels_normal_power(n: int, alpha: float, power: float) -> None:
    """``NormalIndPower`` with ``ratio=0`` (one sample) solves the same z test; it also counts the
    far rejection tail, which our formula ignores, hence rel 1e-4 rather than exact."""
    ours = detectable_difference(1.0, n, alpha=alpha, power=power)
    oracle = smp.NormalIndPower().solve_power(nobs1=n, alpha=alpha, power=power, ratio=0, alternative="two-sided")
    assert ours == pytest.approx(oracle, rel=1e-4)
    # The paired t test (TTestPower) needs a slightly larger difference: within 12 % at n >= 20, 2 % at 100.
    t_mdd = smp.TTestPower().solve_power(nobs=n, alpha=alpha, power=power, alternative="two-sided")
    assert ours < t_mdd
    if n >= 20:
        assert t_mdd / ours - 1 < (0.02 if n >= 100 else 0.12)


def test_bonferroni_family_level() -> None:
    oracle = smp.NormalIndPower().solve_power(nobs1=50, alpha=0.05 / 4, power=0.8, ratio=0, alternative="two-sided")
    assert detectable_difference(1.0, 50, tests=4) == pytest.approx(oracle, rel=1e-4)
    assert detectable_difference(1.0, 50, tests=4) > detectable_difference(1.0, 50)


def test_cases_needed_matches_statsmodels_and_round_trips() -> None:
    for effect in (0.8, 0.5, 0.2, 0.1, 0.031):
        n = cases_needed(1.0, effect)
        oracle = smp.NormalIndPower().solve_power(effect_size=effect, alpha=0.05, power=0.8, ratio=0)
        assert n == math.ceil(oracle - 1e-6) or abs(n - oracle) < 1.0
    rng = np.random.default_rng(2)
    for _ in range(300):
        sd, diff = float(rng.uniform(0.01, 2.0)), float(rng.uniform(0.005, 1.0))
        alpha, power, tests = float(rng.uniform(0.001, 0.2)), float(rng.uniform(0.5, 0.99)), int(rng.integers(1, 6))
        n = cases_needed(sd, diff, alpha=alpha, power=power, tests=tests)
        assert detectable_difference(sd, n, alpha=alpha, power=power, tests=tests) <= diff
        if n > 1:
            assert detectable_difference(sd, n - 1, alpha=alpha, power=power, tests=tests) > diff
    # ... and the other way: the MDD of n cases needs (at most) those n cases.
    for n in (5, 37, 190, 2500):
        assert cases_needed(0.3, detectable_difference(0.3, n)) in (n - 1, n)
    assert cases_needed(0.0, 0.1) == 1


@pytest.mark.parametrize(("n", "tests"), [(100, 1), (190, 3)])
def test_paired_t_test_rejects_at_the_stated_power(n: int, tests: int) -> None:
    """Normal differences whose true mean is the MDD: a two-sided paired t test at alpha / tests
    rejects in 80 % +- 3 % of 2,000 replications."""
    rng = np.random.default_rng(100 + n)
    sd = 0.15
    mdd = detectable_difference(sd, n, tests=tests)
    d = rng.normal(mdd, sd, size=(2000, n))
    t = d.mean(axis=1) / (d.std(axis=1, ddof=1) / math.sqrt(n))
    rejected = float(np.mean(np.abs(t) > student_t_ppf(1.0 - 0.05 / (2 * tests), n - 1)))
    assert 0.77 <= rejected <= 0.83, rejected


def test_from_observed_differences_and_note() -> None:
    rng = np.random.default_rng(4)
    d = rng.normal(0.01, 0.11, 190)
    expected = detectable_difference(float(np.std(d, ddof=1)), 190)
    assert min_detectable_difference(d) == pytest.approx(expected, rel=1e-15)
    with_nan = np.append(d, np.nan)
    assert min_detectable_difference(with_nan) == min_detectable_difference(d)
    note = power_note(d, "answer_f1")
    assert note.mdd == min_detectable_difference(d) and note.n == 190
    assert note.text == (
        f"differences under {note.mdd:.3g} in answer_f1 cannot be told apart with 190 cases "
        "(80% power, two-sided alpha 0.05)"
    )
    assert "over 3 tests" in power_note(d, "answer_f1", tests=3).text
    assert note.record()["mdd"] == note.mdd


def test_undefined_cases() -> None:
    assert math.isnan(min_detectable_difference([0.1]))
    assert math.isnan(min_detectable_difference([]))
    note = power_note([np.nan, 0.2], "recall")
    assert math.isnan(note.mdd) and note.reason
    assert note.text == "no detectable difference in recall: fewer than two cases: no spread (n=1)"
    assert min_detectable_difference([0.2, 0.2, 0.2]) == pytest.approx(0.0, abs=1e-12)


@pytest.mark.parametrize(
    ("call", "match"),
    [
        (lambda: min_detectable_difference([0.1, np.inf]), "diffs must be finite"),
        (lambda: min_detectable_difference([[0.1, 0.2]]), "diffs must be 1-D"),
        (lambda: min_detectable_difference([0.1], alpha=0.0), "alpha must be in"),
        (lambda: min_detectable_difference([0.1], power=1.0), "power must be in"),
        (lambda: min_detectable_difference([0.1], tests=0), "tests must be a positive integer"),
        (lambda: cases_needed(-1.0, 0.1), "sd must be finite"),
        (lambda: cases_needed(1.0, 0.0), "difference must be finite and > 0"),
        (lambda: detectable_difference(-1.0, 10), "sd must be >= 0"),
    ],
)
def test_bad_input(call, match: str) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(ValueError, match=match):
        call()


def test_exported_lazily() -> None:
    assert stats.min_detectable_difference is min_detectable_difference and stats.PowerNote is PowerNote
    assert stats.cases_needed is cases_needed and stats.power_note is power_note
