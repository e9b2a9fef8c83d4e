"""PPI++ against ppi_py (estimate, interval, power-tuned lambda, classical interval), its coverage
by simulation with a good and a poor judge, and its input checks."""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np
import pytest

from heta_nb import stats
from heta_nb.stats.ppi import PPIEstimate, ppi_mean, ppi_mean_difference

ppi_py = pytest.importorskip("ppi_py")
ppi_internals = pytest.importorskip("ppi_py.ppi")


def oracle_lam(y: np.ndarray, yhat: np.ndarray, yhat_u: np.ndarray) -> float:
    """The lambda ``ppi_py.ppi_mean_ci(..., lam=None)`` computes, by the same private call it makes."""
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
        result = ppi_mean(y, yhat, yhat_u, confidence=confidence)
        low, high = ppi_py.ppi_mean_ci(y, yhat, yhat_u, alpha=alpha)  # alternative="two-sided", lam=None
        assert (result.ci_low, result.ci_high) == pytest.approx((low[0], high[0]), abs=1e-9)
        assert result.estimate == pytest.approx(ppi_py.ppi_mean_pointestimate(y, yhat, yhat_u)[0], abs=1e-9)
        assert result.lam == pytest.approx(oracle_lam(y, yhat, yhat_u), abs=1e-9)
        classical = ppi_py.classical_mean_ci(y, alpha=alpha)
        assert (result.classical_ci_low, result.classical_ci_high) == pytest.approx(classical, abs=1e-9)
        assert result.classical_estimate == pytest.approx(y.mean(), abs=1e-12)
        assert (result.n_labeled, result.n_unlabeled) == (y.size, yhat_u.size)
        for lam in (0.0, 0.3, 1.0):
            fixed = ppi_mean(y, yhat, yhat_u, confidence=confidence, lam=lam)
            low, high = ppi_py.ppi_mean_ci(y, yhat, yhat_u, alpha=alpha, lam=lam)
            assert (fixed.ci_low, fixed.ci_high) == pytest.approx((low[0], high[0]), abs=1e-9)
            expected = ppi_py.ppi_mean_pointestimate(y, yhat, yhat_u, lam=lam)
            assert fixed.estimate == pytest.approx(float(np.ravel(expected)[0]), abs=1e-9) and fixed.lam == lam


def test_lam_zero_is_the_classical_interval_and_a_constant_judge_gets_zero() -> None:
    rng = np.random.default_rng(2)
    y, yhat, yhat_u = (rng.random(50) < 0.6) * 1.0, rng.random(50), rng.random(500)
    zero = ppi_mean(y, yhat, yhat_u, lam=0.0)
    assert (zero.estimate, zero.ci_low, zero.ci_high) == pytest.approx(
        (zero.classical_estimate, zero.classical_ci_low, zero.classical_ci_high), abs=1e-12
    )
    assert zero.chosen == "classical"  # a tie goes to the human-only interval
    constant = ppi_mean(y, np.ones(50), np.ones(500))  # ppi_py gives lam = NaN here
    assert constant.lam == 0.0 and constant.chosen == "classical" and constant.estimate == pytest.approx(y.mean())


def test_ppi_mean_difference_equals_ppi_py_on_the_differences() -> None:
    rng = np.random.default_rng(12)
    for _ in range(100):
        n, big_n = int(rng.integers(2, 200)), int(rng.integers(1, 2000))
        y_a, y_b = (rng.random(n) < 0.5) * 1.0, (rng.random(n) < 0.6) * 1.0
        yhat_a, yhat_b = np.clip(y_a + rng.normal(0, 0.4, n), 0, 1), np.clip(y_b + rng.normal(0, 0.4, n), 0, 1)
        u_a, u_b = rng.random(big_n), rng.random(big_n)
        result = ppi_mean_difference(
            y_a=y_a, y_b=y_b, yhat_a=yhat_a, yhat_b=yhat_b, yhat_unlabeled_a=u_a, yhat_unlabeled_b=u_b
        )
        d, dhat, dhat_u = y_b - y_a, yhat_b - yhat_a, u_b - u_a
        low, high = ppi_py.ppi_mean_ci(d, dhat, dhat_u, alpha=0.05)
        assert (result.ci_low, result.ci_high) == pytest.approx((low[0], high[0]), abs=1e-9)
        assert result.estimate == pytest.approx(ppi_py.ppi_mean_pointestimate(d, dhat, dhat_u)[0], abs=1e-9)
        assert result.lam == pytest.approx(oracle_lam(d, dhat, dhat_u), abs=1e-9)
        classical = ppi_py.classical_mean_ci(d, alpha=0.05)
        assert (result.classical_ci_low, result.classical_ci_high) == pytest.approx(classical, abs=1e-9)
        assert result.kind == "difference" and result.classical_estimate == pytest.approx(y_b.mean() - y_a.mean())


def test_text_interval_and_record() -> None:
    rng = np.random.default_rng(4)
    y = (rng.random(100) < 0.7) * 1.0
    good = ppi_mean(y, np.where(rng.random(100) < 0.95, y, 1 - y), (rng.random(3000) < 0.7) * 1.0)
    assert good.chosen == "ppi" and good.interval == (good.estimate, good.ci_low, good.ci_high)
    assert (
        good.effective_labels > 100
        and "PPI++ reported: the 100 human labels count as" in good.text
        and good.text.startswith("mean: ")
    )
    noise = ppi_mean(y, rng.random(100), rng.random(3000), lam=0.0)
    assert noise.interval == (noise.classical_estimate, noise.classical_ci_low, noise.classical_ci_high)
    assert "human-only reported: the judge does not narrow the interval" in noise.text
    assert good.record()["chosen"] == "ppi" and set(good.record()) >= {"estimate", "lam", "classical_ci_high"}
    barely = PPIEstimate(0.70, 0.61, 0.79, 100, 2000, 0.1, 0.70, 0.609, 0.791, "ppi")
    assert round(barely.effective_labels) == 102 and barely.text.endswith("count as 102 (the judge barely helps)")
    diff = ppi_mean_difference(
        y_a=y, y_b=y, yhat_a=y, yhat_b=y, yhat_unlabeled_a=np.zeros(5), yhat_unlabeled_b=np.ones(5)
    )
    assert diff.text.startswith("difference b - a: PPI++ ") and "+" in diff.text


# --- coverage by simulation ---------------------------------------------------------------------
# A population whose human-judged pass rate is 0.7; a judge agrees with the human verdict with
# probability 0.9 (good) or 0.55 (poor), case by case. n_labeled = 100, n_unlabeled = 2,000.
#
# The 95 % PPI++ interval is ppi_py's CLT (z) interval; at n = 100 it covers a little under 95 %:
# runs of 20,000 replications measured 0.938-0.941 (good judge; 0.947 with the population-optimal
# lambda, so ~0.6 points come from tuning lambda on the same labels), 0.943-0.946 (poor judge), and
# 0.939-0.944 for the paired difference (either judge); 0.951 / 0.949 at n = 400. A threshold of
# 0.94 on 1,000 replications (standard error 0.0075) would fail about half the seeds (seed 1 gives
# 0.938), so the tests ask >= 0.93; an interval missing its labeled-case variance covers ~0.37.

RATE, N_LABELED, N_UNLABELED, REPLICATIONS = 0.7, 100, 2000, 1000


def _judge(rng: np.random.Generator, truth: np.ndarray, quality: float) -> np.ndarray:
    return np.where(rng.random(truth.shape) < quality, truth, 1.0 - truth)


def _summary(results: list[PPIEstimate], truth: float) -> dict[str, float]:
    def covered(low: float, high: float) -> bool:
        return low <= truth <= high

    return {
        "ppi": float(np.mean([covered(r.ci_low, r.ci_high) for r in results])),
        "classical": float(np.mean([covered(r.classical_ci_low, r.classical_ci_high) for r in results])),
        "chosen": float(np.mean([covered(*r.interval[1:]) for r in results])),
        "width_ratio": float(
            np.mean([r.ci_high - r.ci_low for r in results])
            / np.mean([r.classical_ci_high - r.classical_ci_low for r in results])
        ),
        "share_ppi": float(np.mean([r.chosen == "ppi" for r in results])),
        "lam": float(np.mean([r.lam for r in results])),
    }


def simulate_mean(quality: float, seed: int, replications: int = REPLICATIONS) -> dict[str, float]:
    rng = np.random.default_rng(seed)
    y = (rng.random((replications, N_LABELED)) < RATE) * 1.0
    yhat = _judge(rng, y, quality)
    yhat_u = _judge(rng, (rng.random((replications, N_UNLABELED)) < RATE) * 1.0, quality)
    return _summary([ppi_mean(y[i], yhat[i], yhat_u[i]) for i in range(replications)], RATE)


def simulate_difference(quality: float, seed: int, replications: int = REPLICATIONS) -> dict[str, float]:
    """Recipe a passes 60 % of cases; b repeats a's verdict on 60 % of cases, else passes 85 %: 70 %, b - a = 0.1."""
    rng = np.random.default_rng(seed)

    def verdicts(size: tuple[int, int]) -> tuple[np.ndarray, np.ndarray]:
        a = (rng.random(size) < 0.6) * 1.0
        return a, np.where(rng.random(size) < 0.6, a, (rng.random(size) < 0.85) * 1.0)

    (y_a, y_b), (u_a, u_b) = verdicts((replications, N_LABELED)), verdicts((replications, N_UNLABELED))
    judged = [_judge(rng, x, quality) for x in (y_a, y_b, u_a, u_b)]
    results = [
        ppi_mean_difference(y_a=y_a[i], y_b=y_b[i], yhat_a=judged[0][i], yhat_b=judged[1][i],
                            yhat_unlabeled_a=judged[2][i], yhat_unlabeled_b=judged[3][i])
        for i in range(replications)
    ]  # fmt: skip
    return _summary(results, 0.1)


SIMULATIONS: dict[str, Callable[[float, int], dict[str, float]]] = {
    "mean": simulate_mean,
    "difference": simulate_difference,
}


@pytest.mark.parametrize("estimand", ["mean", "difference"])
def test_good_judge_covers_and_narrows(estimand: str) -> None:
    result = SIMULATIONS[estimand](0.9, 1)
    assert result["ppi"] >= 0.93 and result["chosen"] >= 0.93
    # mean: PPI++ ~0.65 of the human-only width (as ~2.4x the labels); difference ~0.80
    assert result["width_ratio"] < 0.9 and result["share_ppi"] > 0.95


@pytest.mark.parametrize("estimand", ["mean", "difference"])
def test_poor_judge_covers_and_is_no_wider(estimand: str) -> None:
    result = SIMULATIONS[estimand](0.55, 1)
    assert result["ppi"] >= 0.93 and result["chosen"] >= 0.93
    # power tuning shrinks lambda (~0.09 for the mean, ~0.04 for the difference): ~the human-only width
    assert result["lam"] < 0.2 and result["width_ratio"] <= 1.01


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
        (lambda: ppi_mean(Y, YHAT, U, lam=math.nan), "lam must be None or a finite number"),
        (lambda: ppi_mean(Y, YHAT, U, lam="1"), "lam must be None or a finite number"),  # type: ignore[arg-type]
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
