"""PPI++ against ppi_py (estimate, interval, same-sample and fixed lambda, classical interval), the
cross-fitted default against a fold-by-fold re-derivation, its coverage by simulation with a good
and a poor judge, and its input checks."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

from heta_nb import stats
from heta_nb.stats.intervals import student_t_ppf, t_interval
from heta_nb.stats.ppi import CHOICE_MARGIN, PPIEstimate, ppi_mean, ppi_mean_difference

ppi_py = pytest.importorskip("ppi_py")
ppi_internals = pytest.importorskip("ppi_py.ppi")


def oracle_lam(y: np.ndarray, yhat: np.ndarray, yhat_u: np.ndarray) -> float:
    """The lambda ``ppi_py.ppi_mean_ci(..., lam=None)`` computes (``lam="same"``), by the same private call it makes."""
    theta = ppi_py.ppi_mean_pointestimate(y, yhat, yhat_u, lam=1)
    y2, yhat2, yhat_u2 = (x.reshape(-1, 1) - theta for x in (y, yhat, yhat_u))
    return float(ppi_internals._calc_lam_glm(y2, yhat2, yhat_u2, np.eye(1), coord=None, clip=True))


def _case(rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Human 0/1 verdicts and a judge's scores (0/1 or probabilities) of varying quality."""
    n, big_n, p = int(rng.integers(2, 300)), int(rng.integers(1, 3000)), rng.uniform(0.05, 0.95)
    y = (rng.random(n) < p).astype(float)
    truth_u = (rng.random(big_n) < p).astype(float)
    quality, verdicts = rng.uniform(0.3, 1.0), rng.random() < 0.5

    def judge(t: np.ndarray) -> np.ndarray:
        if verdicts:  # a verdict: agrees with people with probability `quality`
            return np.where(rng.random(t.size) < quality, t, 1.0 - t)
        return np.clip(quality * t + (1 - quality) * rng.random(t.size), 0, 1)  # a probability score

    return y, judge(y), judge(truth_u)


@pytest.mark.parametrize("confidence", [0.9, 0.95])
def test_ppi_mean_equals_ppi_py(confidence: float) -> None:
    rng = np.random.default_rng(31)
    alpha = 1.0 - confidence
    for _ in range(300):
        y, yhat, yhat_u = _case(rng)
        result = ppi_mean(y, yhat, yhat_u, confidence=confidence, lam="same")
        low, high = ppi_py.ppi_mean_ci(y, yhat, yhat_u, alpha=alpha)  # alternative="two-sided", lam=None
        assert (result.ci_low, result.ci_high) == pytest.approx((low[0], high[0]), abs=1e-9)
        assert result.estimate == pytest.approx(ppi_py.ppi_mean_pointestimate(y, yhat, yhat_u)[0], abs=1e-9)
        assert result.lam == pytest.approx(oracle_lam(y, yhat, yhat_u), abs=1e-9)
        classical = ppi_py.classical_mean_ci(y, alpha=alpha)
        assert (result.classical_ci_low, result.classical_ci_high) == pytest.approx(classical, abs=1e-9)
        assert result.classical_estimate == pytest.approx(y.mean(), abs=1e-12)
        assert (result.n_labeled, result.n_unlabeled) == (y.size, yhat_u.size)
        assert (result.tuning, result.df, result.fold_lams) == ("same", None, ())
        for lam in (0.0, 0.3, 1.0):
            fixed = ppi_mean(y, yhat, yhat_u, confidence=confidence, lam=lam)
            low, high = ppi_py.ppi_mean_ci(y, yhat, yhat_u, alpha=alpha, lam=lam)
            assert (fixed.ci_low, fixed.ci_high) == pytest.approx((low[0], high[0]), abs=1e-9)
            expected = ppi_py.ppi_mean_pointestimate(y, yhat, yhat_u, lam=lam)
            assert fixed.estimate == pytest.approx(float(np.ravel(expected)[0]), abs=1e-9) and fixed.lam == lam
            assert (fixed.tuning, fixed.df) == ("fixed", None)


def test_lam_zero_is_the_classical_interval_and_a_constant_judge_gets_zero() -> None:
    rng = np.random.default_rng(2)
    y, yhat, yhat_u = (rng.random(50) < 0.6) * 1.0, rng.random(50), rng.random(500)
    zero = ppi_mean(y, yhat, yhat_u, lam=0.0)
    assert (zero.estimate, zero.ci_low, zero.ci_high) == pytest.approx(
        (zero.classical_estimate, zero.classical_ci_low, zero.classical_ci_high), abs=1e-12
    )
    assert zero.chosen == "classical"  # a tie goes to the human-only interval
    for lam in (None, "same"):
        constant = ppi_mean(y, np.ones(50), np.ones(500), lam=lam)  # ppi_py gives lam = NaN here
        assert constant.lam == 0.0 and constant.chosen == "classical" and constant.estimate == pytest.approx(y.mean())


def test_ppi_mean_difference_equals_ppi_py_on_the_differences() -> None:
    rng = np.random.default_rng(12)
    for _ in range(100):
        n, big_n = int(rng.integers(2, 200)), int(rng.integers(1, 2000))
        y_a, y_b = (rng.random(n) < 0.5) * 1.0, (rng.random(n) < 0.6) * 1.0
        yhat_a, yhat_b = np.clip(y_a + rng.normal(0, 0.4, n), 0, 1), np.clip(y_b + rng.normal(0, 0.4, n), 0, 1)
        u_a, u_b = rng.random(big_n), rng.random(big_n)
        result = ppi_mean_difference(
            y_a=y_a, y_b=y_b, yhat_a=yhat_a, yhat_b=yhat_b, yhat_unlabeled_a=u_a, yhat_unlabeled_b=u_b, lam="same"
        )
        d, dhat, dhat_u = y_b - y_a, yhat_b - yhat_a, u_b - u_a
        low, high = ppi_py.ppi_mean_ci(d, dhat, dhat_u, alpha=0.05)
        assert (result.ci_low, result.ci_high) == pytest.approx((low[0], high[0]), abs=1e-9)
        assert result.estimate == pytest.approx(ppi_py.ppi_mean_pointestimate(d, dhat, dhat_u)[0], abs=1e-9)
        assert result.lam == pytest.approx(oracle_lam(d, dhat, dhat_u), abs=1e-9)
        classical = ppi_py.classical_mean_ci(d, alpha=0.05)
        assert (result.classical_ci_low, result.classical_ci_high) == pytest.approx(classical, abs=1e-9)
        assert result.kind == "difference" and result.classical_estimate == pytest.approx(y_b.mean() - y_a.mean())
        default = ppi_mean_difference(
            y_a=y_a, y_b=y_b, yhat_a=yhat_a, yhat_b=yhat_b, yhat_unlabeled_a=u_a, yhat_unlabeled_b=u_b
        )
        on_differences = ppi_mean(d, dhat, dhat_u)  # the cross-fitted default: the same on the differences
        assert default.record() == {**on_differences.record(), "kind": "difference"}


def test_text_interval_and_record() -> None:
    rng = np.random.default_rng(4)
    y = (rng.random(100) < 0.7) * 1.0
    good = ppi_mean(y, np.where(rng.random(100) < 0.95, y, 1 - y), (rng.random(3000) < 0.7) * 1.0)
    assert good.chosen == "ppi" and good.interval == (good.estimate, good.ci_low, good.ci_high)
    assert (
        good.effective_labels > 100
        and "PPI++ reported: the 100 human labels count as" in good.text
        and good.text.endswith(f"(its interval is {good.narrowing:.0%} narrower than human-only)")
        and "cross-fitted over 5 folds; t, 99 df)" in good.text
        and good.text.startswith("mean: ")
    )
    noise = ppi_mean(y, rng.random(100), rng.random(3000), lam=0.0)
    assert noise.interval == (noise.classical_estimate, noise.classical_ci_low, noise.classical_ci_high)
    assert "human-only reported: the judge does not narrow the interval" in noise.text and "lam=0.00; z)" in noise.text
    assert good.record()["chosen"] == "ppi" and set(good.record()) >= {"estimate", "lam", "classical_ci_high", "df"}
    assert good.record()["tuning"] == "cross-fit" and len(good.record()["fold_lams"]) == 5
    barely = PPIEstimate(0.70, 0.61, 0.79, 100, 2000, 0.1, 0.70, 0.609, 0.791, "ppi")  # built by hand
    assert round(barely.effective_labels) == 102
    assert barely.text.endswith("count as 102 (its interval is 1% narrower than human-only, under the 5% margin)")
    diff = ppi_mean_difference(
        y_a=y, y_b=y, yhat_a=y, yhat_b=y, yhat_unlabeled_a=np.zeros(5), yhat_unlabeled_b=np.ones(5)
    )
    assert diff.text.startswith("difference b - a: PPI++ ") and "+" in diff.text


def test_ppi_is_chosen_only_when_at_least_five_percent_narrower() -> None:
    rng = np.random.default_rng(8)
    y = (rng.random(100) < 0.7) * 1.0
    yhat, yhat_u = np.where(rng.random(100) < 0.9, y, 1 - y), (rng.random(2000) < 0.7) * 1.0
    slightly = ppi_mean(y, yhat, yhat_u, lam=0.05)  # a small fixed weight narrows the interval a little
    assert 0.0 < slightly.narrowing < CHOICE_MARGIN and slightly.chosen == "classical"
    assert f"human-only reported: PPI++ is only {slightly.narrowing:.1%} narrower, under the 5% margin" in slightly.text
    seen = set()
    for _ in range(300):
        y, yhat, yhat_u = _case(rng)
        for lam in (None, "same", 0.2):
            r = ppi_mean(y, yhat, yhat_u, lam=lam)
            ppi_half, classical_half = (r.ci_high - r.ci_low) / 2, (r.classical_ci_high - r.classical_ci_low) / 2
            assert (r.chosen == "ppi") == (ppi_half <= (1 - CHOICE_MARGIN) * classical_half)
            seen.add((r.chosen, 0 < r.narrowing < CHOICE_MARGIN))
    assert seen >= {("ppi", False), ("classical", True), ("classical", False)}


# --- the cross-fitted default --------------------------------------------------------------------


def crossfit_by_hand(
    y: np.ndarray, yhat: np.ndarray, yhat_u: np.ndarray, confidence: float, folds: int = 5, seed: int = 0
) -> tuple[float, float, float, list[float]]:
    """The docstring's formula fold by fold: each fold a PPI estimate with the weight of the other folds."""
    n, big_n = y.size, yhat_u.size
    parts = np.array_split(np.random.default_rng(seed).permutation(n), min(folds, n))
    lams = []
    for part in parts:
        rest = np.setdiff1d(np.arange(n), part)
        if np.ptp(yhat[rest]) == 0:
            lams.append(0.0)
            continue
        slope = np.cov(y[rest], yhat[rest], ddof=0)[0, 1] / np.var(yhat[rest])
        lams.append(min(1.0, max(0.0, slope / (1 + n / big_n))))
    shares = [part.size / n for part in parts]
    estimate = sum(
        w * (np.mean(y[part] - lam * yhat[part]) + lam * np.mean(yhat_u)) for w, part, lam in zip(shares, parts, lams)
    )
    lam_bar = sum(w * lam for w, lam in zip(shares, lams))
    judged = np.concatenate([yhat, yhat_u])
    mean_r = sum(w * np.mean(y[part] - lam * yhat[part]) for w, part, lam in zip(shares, parts, lams))
    s2_r = sum(
        np.sum((y[part] - lam * yhat[part] - (mean_r - (lam - lam_bar) * judged.mean())) ** 2)
        for part, lam in zip(parts, lams)
    ) / (n - 1)
    se = math.sqrt(lam_bar**2 * np.var(judged, ddof=1) / big_n + s2_r / n)
    half = student_t_ppf(0.5 + confidence / 2, n - 1) * se
    return float(estimate), float(estimate - half), float(estimate + half), lams


@pytest.mark.parametrize(("confidence", "folds", "seed"), [(0.95, 5, 0), (0.9, 2, 0), (0.95, 10, 3)])
def test_cross_fitted_default_equals_the_formula_fold_by_fold(confidence: float, folds: int, seed: int) -> None:
    rng = np.random.default_rng(33)
    for _ in range(200):
        y, yhat, yhat_u = _case(rng)
        result = ppi_mean(y, yhat, yhat_u, confidence=confidence, folds=folds, seed=seed)
        estimate, low, high, lams = crossfit_by_hand(y, yhat, yhat_u, confidence, folds, seed)
        assert (result.estimate, result.ci_low, result.ci_high) == pytest.approx((estimate, low, high), abs=1e-9)
        assert result.fold_lams == pytest.approx(lams, abs=1e-9) and len(lams) == min(folds, y.size)
        assert result.lam == pytest.approx(np.mean([lams[k] for k in _fold_index(y.size, folds, seed)]), abs=1e-12)
        assert (result.classical_ci_low, result.classical_ci_high) == pytest.approx(
            t_interval(list(y), confidence), abs=1e-12
        )
        assert (result.tuning, result.df) == ("cross-fit", y.size - 1)


def _fold_index(n: int, folds: int, seed: int) -> np.ndarray:
    index = np.empty(n, dtype=int)
    for k, part in enumerate(np.array_split(np.random.default_rng(seed).permutation(n), min(folds, n))):
        index[part] = k
    return index


def test_a_folds_weight_is_estimated_without_its_own_labels() -> None:
    rng = np.random.default_rng(5)
    y = (rng.random(60) < 0.6) * 1.0
    yhat, yhat_u = np.clip(y + rng.normal(0, 0.5, 60), 0, 1), rng.random(600)
    base = ppi_mean(y, yhat, yhat_u)
    fold = _fold_index(60, 5, 0)
    for k in range(5):
        flipped = np.where(fold == k, 1.0 - y, y)  # change only fold k's human verdicts
        moved = ppi_mean(flipped, yhat, yhat_u)
        assert moved.fold_lams[k] == pytest.approx(base.fold_lams[k], abs=1e-12)
        assert all(moved.fold_lams[j] != pytest.approx(base.fold_lams[j], abs=1e-6) for j in range(5) if j != k)
        assert ppi_mean(flipped, yhat, yhat_u, lam="same").lam != pytest.approx(
            ppi_mean(y, yhat, yhat_u, lam="same").lam
        )
    other = ppi_mean(y, yhat, yhat_u, seed=1, folds=2)  # another split: another estimate, within a fraction of its se
    assert len(other.fold_lams) == 2 and other.estimate != base.estimate
    assert abs(other.estimate - base.estimate) < 0.25 * (base.ci_high - base.ci_low) / 2
    constant = ppi_mean(y, np.full(60, 0.3), np.full(600, 0.3))  # every weight 0: the classical t interval
    assert constant.fold_lams == (0.0,) * 5 and (constant.ci_low, constant.ci_high) == pytest.approx(
        t_interval(list(y)), abs=1e-12
    )
    tiny = ppi_mean([1.0, 0.0], [1.0, 0.0], [1.0])  # two labels: two folds of one, nothing to fit a weight on
    assert tiny.fold_lams == (0.0, 0.0) and tiny.estimate == 0.5


def test_cross_fitting_is_exactly_unbiased_and_same_sample_tuning_is_not() -> None:
    """E[theta_hat] by enumeration: every labeled sample of 4 cases and every unlabeled case, weighted."""
    cells = [(1.0, 1.0, 0.5), (1.0, 0.0, 0.1), (0.0, 1.0, 0.1), (0.0, 0.0, 0.3)]  # (y, yhat, probability)
    p_yhat = {1.0: 0.6, 0.0: 0.4}
    theta = 0.6
    expected: dict[str, float] = {"cross-fit 2": 0.0, "cross-fit 4": 0.0, "same": 0.0}
    for sample in np.ndindex(4, 4, 4, 4):
        y = np.array([cells[c][0] for c in sample])
        yhat = np.array([cells[c][1] for c in sample])
        weight = math.prod(cells[c][2] for c in sample)
        for u, p_u in p_yhat.items():
            unlabeled = np.array([u])
            expected["cross-fit 2"] += weight * p_u * ppi_mean(y, yhat, unlabeled, folds=2).estimate
            expected["cross-fit 4"] += weight * p_u * ppi_mean(y, yhat, unlabeled, folds=4).estimate
            expected["same"] += weight * p_u * ppi_mean(y, yhat, unlabeled, lam="same").estimate
    assert expected["cross-fit 2"] == pytest.approx(theta, abs=1e-12)
    assert expected["cross-fit 4"] == pytest.approx(theta, abs=1e-12)
    assert abs(expected["same"] - theta) > 1e-3  # the weight tuned on the same labels biases the estimate


# --- coverage by simulation ---------------------------------------------------------------------
# A population whose human-judged pass rate is 0.7; a judge agrees with the human verdict with
# probability 0.9 (good) or 0.55 (poor), case by case. n_labeled = 100, n_unlabeled = 2,000.
#
# The requirement: the 95 % interval covers the truth in >= 94 % of 1,000 replications, for the mean
# and the paired difference, with either judge, and is narrower than human-only with the good one.
# The default (cross-fitted lambda, t with 99 df), 20,000 replications at each of seeds 0-7
# (standard error 0.0016), covered:  mean/good 0.9469-0.9496 (pooled 0.948), mean/poor
# 0.9462-0.9508 (0.949), difference/good 0.9472-0.9499 (0.949), difference/poor 0.9454-0.9514
# (0.949); the human-only t interval 0.950 / 0.949. ppi_py's same-sample tuning with z covered
# 0.941 / 0.943 / 0.943 / 0.945 (seed 1). Widths: mean/good 0.119 vs human-only 0.182 (0.66x, as
# ~2.3x the labels), difference/good 0.130 vs 0.159 (0.82x); with the poor judge 1.000x / 1.002x.
#
# On 1,000 replications the standard error is 0.007: an interval covering 0.948 falls below 0.94 on
# ~11 % of seeds, an exact 95 % one on ~6 %. Over seeds 0-19 the default's PPI++ interval did on 1, 2,
# 1 and 3 of 20 seeds (mean/good, mean/poor, difference/good, difference/poor; lowest 0.935), the
# human-only t interval on 0, 0, 1, 1 (0.936 at seed 7 for the difference). So the 1,000-replication
# tests run on seed 1 (the seed these tests always used), and the 20,000-replication tests hold the
# same 0.94 bar where noise cannot decide it (all eight seeds pass, lowest 0.9454).

RATE, N_LABELED, N_UNLABELED, REPLICATIONS, SEED = 0.7, 100, 2000, 1000, 1
CHUNK = 1000  # replications drawn at a time (2,000 x 1,000 floats per array); 1,000 draws as one chunk


def _judge(rng: np.random.Generator, truth: np.ndarray, quality: float) -> np.ndarray:
    return np.where(rng.random(truth.shape) < quality, truth, 1.0 - truth)


def _summary(results: list[PPIEstimate], truth: float) -> dict[str, float]:
    def covered(low: float, high: float) -> bool:
        return low <= truth <= high

    return {
        "ppi": float(np.mean([covered(r.ci_low, r.ci_high) for r in results])),
        "classical": float(np.mean([covered(r.classical_ci_low, r.classical_ci_high) for r in results])),
        "chosen": float(np.mean([covered(*r.interval[1:]) for r in results])),
        "width": float(np.mean([r.ci_high - r.ci_low for r in results])),
        "classical_width": float(np.mean([r.classical_ci_high - r.classical_ci_low for r in results])),
        "width_ratio": float(
            np.mean([r.ci_high - r.ci_low for r in results])
            / np.mean([r.classical_ci_high - r.classical_ci_low for r in results])
        ),
        "share_ppi": float(np.mean([r.chosen == "ppi" for r in results])),
        "lam": float(np.mean([r.lam for r in results])),
        "bias": float(np.mean([r.estimate for r in results]) - truth),
    }


def simulate_mean(quality: float, seed: int, replications: int = REPLICATIONS, **options: Any) -> dict[str, float]:
    rng = np.random.default_rng(seed)
    results = []
    for start in range(0, replications, CHUNK):
        size = min(CHUNK, replications - start)
        y = (rng.random((size, N_LABELED)) < RATE) * 1.0
        yhat = _judge(rng, y, quality)
        yhat_u = _judge(rng, (rng.random((size, N_UNLABELED)) < RATE) * 1.0, quality)
        results += [ppi_mean(y[i], yhat[i], yhat_u[i], **options) for i in range(size)]
    return _summary(results, RATE)


def simulate_difference(
    quality: float, seed: int, replications: int = REPLICATIONS, **options: Any
) -> dict[str, float]:
    """Recipe a passes 60 % of cases; b repeats a's verdict on 60 % of cases, else passes 85 %: 70 %, b - a = 0.1."""
    rng = np.random.default_rng(seed)

    def verdicts(size: tuple[int, int]) -> tuple[np.ndarray, np.ndarray]:
        a = (rng.random(size) < 0.6) * 1.0
        return a, np.where(rng.random(size) < 0.6, a, (rng.random(size) < 0.85) * 1.0)

    results = []
    for start in range(0, replications, CHUNK):
        size = min(CHUNK, replications - start)
        (y_a, y_b), (u_a, u_b) = verdicts((size, N_LABELED)), verdicts((size, N_UNLABELED))
        judged = [_judge(rng, x, quality) for x in (y_a, y_b, u_a, u_b)]
        results += [
            ppi_mean_difference(y_a=y_a[i], y_b=y_b[i], yhat_a=judged[0][i], yhat_b=judged[1][i],
                                yhat_unlabeled_a=judged[2][i], yhat_unlabeled_b=judged[3][i], **options)
            for i in range(size)
        ]  # fmt: skip
    return _summary(results, 0.1)


SIMULATIONS: dict[str, Callable[..., dict[str, float]]] = {
    "mean": simulate_mean,
    "difference": simulate_difference,
}


@pytest.mark.parametrize("estimand", ["mean", "difference"])
def test_good_judge_covers_and_narrows(estimand: str) -> None:
    result = SIMULATIONS[estimand](0.9, SEED)
    assert result["ppi"] >= 0.94 and result["chosen"] >= 0.94
    # mean: PPI++ ~0.66 of the human-only width (as ~2.3x the labels); difference ~0.82
    assert result["width_ratio"] < 0.9 and result["share_ppi"] > 0.95


@pytest.mark.parametrize("estimand", ["mean", "difference"])
def test_poor_judge_covers_and_is_no_wider(estimand: str) -> None:
    result = SIMULATIONS[estimand](0.55, SEED)
    assert result["ppi"] >= 0.94 and result["chosen"] >= 0.94
    # the cross-fitted lambda is small (~0.10 for the mean, ~0.05 for the difference): ~the human-only
    # width, and within the 5 % margin, so the human-only interval is reported
    assert result["lam"] < 0.2 and result["width_ratio"] <= 1.01 and result["share_ppi"] < 0.05


@pytest.mark.parametrize(("estimand", "quality"), [("mean", 0.9), ("mean", 0.55), ("difference", 0.9),
                                                   ("difference", 0.55)])  # fmt: skip
def test_coverage_holds_over_20000_replications(estimand: str, quality: float) -> None:
    # The same bar where Monte Carlo noise cannot decide it: standard error 0.0016, margin >= 3.5 of them.
    result = SIMULATIONS[estimand](quality, SEED, 20_000)
    assert result["ppi"] >= 0.94 and result["chosen"] >= 0.94
    assert abs(result["bias"]) < 0.001  # unbiased (same-sample tuning: +0.002 for the mean, good judge)


def test_broken_interval_would_fail_the_coverage_threshold() -> None:
    # The threshold has teeth: dropping the rectifier's variance (the labeled term) covers far less.
    rng = np.random.default_rng(1)
    y = (rng.random((REPLICATIONS, N_LABELED)) < RATE) * 1.0
    yhat = _judge(rng, y, 0.9)
    yhat_u = _judge(rng, (rng.random((REPLICATIONS, N_UNLABELED)) < RATE) * 1.0, 0.9)
    hits = 0
    for i in range(REPLICATIONS):
        r = ppi_mean(y[i], yhat[i], yhat_u[i])
        half = 1.959964 * math.sqrt(np.var(r.lam * yhat_u[i]) / N_UNLABELED)
        hits += abs(r.estimate - RATE) <= half
    assert hits / REPLICATIONS < 0.8


# --- invalid input: a one-line ValueError naming the argument ------------------------------------

Y, YHAT, U = np.array([1.0, 0.0, 1.0]), np.array([1.0, 0.0, 0.0]), np.array([1.0, 0.0])


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: ppi_mean(Y, YHAT[:2], U), "yhat_labeled must have one value per y_labeled"),
        (lambda: ppi_mean(Y[:1], YHAT[:1], U), "y_labeled needs at least 2 labeled cases"),
        (lambda: ppi_mean(Y, YHAT, []), "yhat_unlabeled needs at least 1 unlabeled case"),
        (lambda: ppi_mean([1.0, np.nan, 0.0], YHAT, U), "y_labeled must hold finite numbers"),
        (lambda: ppi_mean(Y, [1.0, np.inf, 0.0], U), "yhat_labeled must hold finite numbers"),
        (lambda: ppi_mean(Y, YHAT, [None, 1.0]), "yhat_unlabeled must hold finite numbers"),
        (lambda: ppi_mean(Y, YHAT, ["a", "b"]), "yhat_unlabeled must hold numbers"),
        (lambda: ppi_mean(np.ones((3, 1)), YHAT, U), "y_labeled must be 1-D"),
        (lambda: ppi_mean(Y, YHAT, U, confidence=0.0), "confidence must be in"),
        (lambda: ppi_mean(Y, YHAT, U, lam=math.nan), "lam must be None, 'same' or a finite number"),
        (lambda: ppi_mean(Y, YHAT, U, lam="1"), "lam must be None, 'same' or a finite number"),  # type: ignore[arg-type]
        (lambda: ppi_mean(Y, YHAT, U, lam=True), "lam must be None, 'same' or a finite number"),
        (lambda: ppi_mean(Y, YHAT, U, folds=1), "folds must be an integer of at least 2"),
        (lambda: ppi_mean(Y, YHAT, U, folds=2.0), "folds must be an integer of at least 2"),  # type: ignore[arg-type]
        (lambda: ppi_mean(Y, YHAT, U, seed=-1), "seed must be a non-negative integer"),
        (lambda: ppi_mean_difference(y_a=Y, y_b=Y, yhat_a=Y, yhat_b=Y, yhat_unlabeled_a=U, yhat_unlabeled_b=U,
                                     seed=None), "seed must be a non-negative integer"),  # type: ignore[arg-type]
        (lambda: ppi_mean_difference(y_a=Y, y_b=Y[:2], yhat_a=Y, yhat_b=Y, yhat_unlabeled_a=U, yhat_unlabeled_b=U),
         "y_b must have one value per y_a"),
        (lambda: ppi_mean_difference(y_a=Y, y_b=Y, yhat_a=Y, yhat_b=Y, yhat_unlabeled_a=U, yhat_unlabeled_b=U[:1]),
         "yhat_unlabeled_b must have one value per yhat_unlabeled_a"),
        (lambda: ppi_mean_difference(y_a=Y, y_b=Y, yhat_a=Y, yhat_b=[np.nan] * 3, yhat_unlabeled_a=U,
                                     yhat_unlabeled_b=U), "yhat_b must hold finite numbers"),
    ],
)  # fmt: skip
def test_invalid_input_raises_one_line_value_error(call: Callable[[], object], message: str) -> None:
    with pytest.raises(ValueError, match=message) as info:
        call()
    assert "\n" not in str(info.value)


def test_bools_are_verdicts_and_names_are_exported() -> None:
    as_bools = ppi_mean([True, False, True], [True, False, False], [True, False])
    assert as_bools == ppi_mean(Y, YHAT, U)
    assert stats.ppi_mean is ppi_mean and stats.PPIEstimate is PPIEstimate
    assert stats.ppi_mean_difference is ppi_mean_difference
    assert stats.CHOICE_MARGIN == CHOICE_MARGIN == 0.05 and stats.DEFAULT_FOLDS == 5
