"""Prediction-powered inference (PPI++): a human-judged rate from few human labels and many judge scores.

A judge (an LLM or a metric) scores every case; people label only a few. PPI++
(Angelopoulos, Bates, Fannjiang, Jordan & Zrnic 2023, "Prediction-powered inference",
Science 382; Angelopoulos, Duchi & Zrnic 2023, "PPI++: Efficient prediction-powered
inference", arXiv:2311.01453) estimates the mean human verdict ``theta = E[y]`` from ``n``
labeled cases ``(y_i, yhat_i)`` and ``N`` judged-only cases ``yhat_u`` by

    theta_hat = lam * mean(yhat_u) + mean(y - lam * yhat)

which is unbiased for any ``lam`` fixed in advance: the judge's bias is measured on the labeled
cases and subtracted. ``lam = 1`` is plain PPI, ``lam = 0`` the classical human-only mean; the
variance is least at ``lam* = cov(y, yhat) / ((1 + n / N) var(yhat))``. ``lam`` chooses how the
weight is set:

``lam=None`` (the default): cross-fitted, with Student t intervals.
    The labeled cases are split by a fixed permutation (``seed``) into ``K = min(folds, n)``
    folds ``I_1..I_K`` of sizes ``n_k`` differing by at most one. Fold ``k``'s weight
    ``lam_k = clip(cov(y, yhat) / ((1 + n / N) var(yhat)), 0, 1)`` is the slope over the
    labeled cases *outside* fold ``k`` only (0 where the judge's scores there do not vary); case
    ``i`` of fold ``k(i)`` gets ``lam_i = lam_k(i)``, and ``lam_bar = mean_i lam_i = sum_k (n_k / n)
    lam_k``. Each fold is a PPI estimate with its own weight, and they are averaged by size::

        theta_hat = sum_k (n_k / n) [mean_{i in I_k}(y_i - lam_k yhat_i) + lam_k mean(yhat_u)]
                  = mean_i(y_i - lam_i yhat_i) + lam_bar * mean(yhat_u)

    It is exactly unbiased: ``lam_k`` is a function of the other folds' labeled cases alone, so it
    is independent of fold ``k`` and of the unlabeled cases, and ``E[y_i - lam_k yhat_i + lam_k
    mean(yhat_u) | lam_k] = theta - lam_k mu + lam_k mu = theta`` (``mu = E[yhat]``). The
    unlabeled mean enters once, with the weight ``lam_bar``. As ``lam_k -> lam*`` the estimator
    behaves as PPI with the fixed ``lam*`` (the cross-fold dependence is second order), so::

        se^2 = lam_bar^2 * s2_yhat / N + s2_r / n
        s2_r = sum_i (r_i - mean(r) + (lam_i - lam_bar) * m)^2 / (n - 1),   r_i = y_i - lam_i yhat_i

    with ``s2_yhat`` the sample variance (ddof 1) and ``m`` the mean of all ``n + N`` judge scores:
    each residual is centred at its fold's estimated mean ``mean(r) - (lam_k - lam_bar) m``
    (``E r_i = theta - lam_k mu``), so that the folds' different weights are not counted as noise.
    The interval is ``theta_hat ± t(n - 1) * se``, Student t with ``n - 1`` degrees of freedom: the
    labeled term, estimated from ``n`` cases, dominates when ``n << N`` (with one weight and
    ``N -> inf`` it is the one-sample t statistic of ``r``); for the unlabeled term (``n + N - 1``
    degrees of freedom) it is conservative. With every ``lam_k = 0`` the interval is exactly the
    classical t interval. Tuning the weight on the same labels it is then applied to (``"same"``)
    fits the judge to those labels' noise: at ``n = 100`` with a good judge (the same 20,000
    replications, two seeds) the z interval covered 0.938-0.940 with that weight, 0.941-0.944
    cross-fitted, and 0.946-0.948 cross-fitted with t; and same-sample tuning biased the estimate
    by ~+0.002, which cross-fitting removes. The fold assignment is by position, so reordering the labeled cases (or
    another ``seed``) moves the estimate slightly (by ~5 % of its standard error at ``n = 100``).

``lam="same"``: ``ppi_py``'s power tuning on the same sample, z intervals.
    ``lam = cov(y, yhat) / ((1 + n / N) * var(yhat))`` (covariance ddof 0 on the labeled cases,
    variance ddof 1 on all judge scores), clipped to [0, 1], exactly as
    ``ppi_py.ppi_mean_ci(..., lam=None)`` (``tests/stats/test_ppi.py`` checks it to 1e-9); 0 for a
    constant judge, where ``ppi_py`` gives NaN. Interval ``theta_hat ± z * sqrt(var(lam * yhat_u)
    / N + var(y - lam * yhat) / n)`` (population variances, ddof 0, as ``ppi_py``).

``lam=<number>``: that fixed weight, the same z interval as ``"same"`` (``ppi_py``'s with ``lam=``).

Beside it stands the classical interval of the human labels alone: in the default mode the Student
t interval ``mean(y) ± t(n - 1) * std(y, ddof=1) / sqrt(n)`` (:func:`~heta_nb.stats.intervals.t_interval`'s),
otherwise ``ppi_py.classical_mean_ci``'s z interval ``mean(y) ± z * std(y, ddof=0) / sqrt(n)``, so
that the two beside each other always use the same quantile. ``chosen`` is ``"ppi"`` only when the
PPI++ interval is at least :data:`CHOICE_MARGIN` (5 %) narrower than the classical one: PPI++ also
rests on the judge's scores being drawn like the labeled cases', and a 1 % gain is not worth that
assumption. A judge that agrees with people no better than chance gets ``lam`` near 0, and PPI++
falls back to about the human-only interval rather than widening it.

Measured at ``n = 100``, ``N = 2000`` (``tests/stats/test_ppi.py``), the default 95 % interval covers
0.945-0.951 in runs of 20,000 replications (0.948-0.949 pooled over eight) for a good (90 %
agreement) and a poor (55 %) judge, for a mean and a paired difference; ``"same"`` covered
0.941-0.945. Both intervals rest on the normal approximation: with few labels and a judge that
rarely disagrees with people (say ``n = 30``, 90 % agreement) the labeled term's variance is
estimated from a handful of disagreements and the interval is optimistic (~0.90).
"""

from __future__ import annotations

import functools
import math
from dataclasses import asdict, dataclass
from statistics import NormalDist
from typing import Any, Literal

import numpy as np
import numpy.typing as npt

from heta_nb.stats.intervals import student_t_ppf

__all__ = ["CHOICE_MARGIN", "DEFAULT_FOLDS", "PPIEstimate", "ppi_mean", "ppi_mean_difference"]

CHOICE_MARGIN = 0.05
"""``chosen`` is ``"ppi"`` only when the PPI++ interval is at least this much (5 %) narrower than the classical one."""

DEFAULT_FOLDS = 5
"""Folds of the cross-fitted weight (``lam=None``). 2 covered as well but was ~0.4-0.8 % wider (n = 100)."""

Lam = float | Literal["same"] | None
"""``None``: cross-fitted; ``"same"``: tuned on the same labels (``ppi_py``'s); a number: fixed."""


@dataclass(frozen=True)
class PPIEstimate:
    """A PPI++ estimate with the classical (human labels only) estimate beside it.

    For :func:`ppi_mean_difference` every number is a difference ``b - a`` (``kind``
    ``"difference"``).
    """

    estimate: float
    """The PPI++ point estimate."""
    ci_low: float
    """Lower bound of its interval (Student t with ``df`` degrees of freedom, or z when ``df`` is None)."""
    ci_high: float
    """Upper bound of that interval."""
    n_labeled: int
    """Cases with human labels (and judge scores)."""
    n_unlabeled: int
    """Cases with judge scores only."""
    lam: float
    """The judge's weight; cross-fitted, the case-weighted mean of the folds' weights (0: the judge is ignored)."""
    classical_estimate: float
    """The mean of the human labels alone."""
    classical_ci_low: float
    """Lower bound of its interval (same quantile as PPI++'s: t, or z as ``ppi_py.classical_mean_ci``)."""
    classical_ci_high: float
    """Upper bound of that interval."""
    chosen: str
    """``"ppi"`` when the PPI++ interval is at least :data:`CHOICE_MARGIN` (5 %) narrower, else ``"classical"``."""
    confidence: float = 0.95
    """Confidence level of both intervals."""
    kind: str = "mean"
    """``"mean"`` or ``"difference"`` (every number is then ``b - a``)."""
    tuning: str = "fixed"
    """How ``lam`` was set: ``"cross-fit"`` (the default), ``"same"`` (``ppi_py``'s) or ``"fixed"``."""
    fold_lams: tuple[float, ...] = ()
    """Cross-fitted: each fold's weight, estimated without that fold's labels (empty otherwise)."""
    df: int | None = None
    """Degrees of freedom of both intervals' Student t quantile; None: the normal (z) quantile."""

    @property
    def interval(self) -> tuple[float, float, float]:
        """The chosen ``(estimate, ci_low, ci_high)``: PPI++'s or the classical one."""
        if self.chosen == "ppi":
            return (self.estimate, self.ci_low, self.ci_high)
        return (self.classical_estimate, self.classical_ci_low, self.classical_ci_high)

    @property
    def effective_labels(self) -> float:
        """Human labels a classical interval would need for PPI++'s width: ``n * (classical / PPI++ width)^2``."""
        ppi_width = self.ci_high - self.ci_low
        classical_width = self.classical_ci_high - self.classical_ci_low
        if not ppi_width > 0.0:
            return math.inf if classical_width > 0.0 else float(self.n_labeled)
        return self.n_labeled * (classical_width / ppi_width) ** 2

    @property
    def narrowing(self) -> float:
        """How much narrower the PPI++ interval is than the classical one (``1 - ppi / classical width``).

        Negative when it is wider; NaN when neither has a width.
        """
        ppi_width = self.ci_high - self.ci_low
        classical_width = self.classical_ci_high - self.classical_ci_low
        if not classical_width > 0.0:
            return math.nan if not ppi_width > 0.0 else -math.inf
        return 1.0 - ppi_width / classical_width

    @property
    def text(self) -> str:
        """Both intervals, the sizes, ``lam``, which one is reported and why, in one line."""
        sign = "+" if self.kind == "difference" else ""
        what = "difference b - a" if self.kind == "difference" else "mean"

        def show(est: float, low: float, high: float) -> str:
            return f"{est:{sign}.3f} [{low:{sign}.3f}, {high:{sign}.3f}]"

        ppi = show(self.estimate, self.ci_low, self.ci_high)
        human = show(self.classical_estimate, self.classical_ci_low, self.classical_ci_high)
        how = {"cross-fit": f", cross-fitted over {len(self.fold_lams)} folds", "same": ", tuned on the same labels"}
        quantile = "z" if self.df is None else f"t, {self.df} df"
        sizes = (
            f"n={self.n_labeled} labeled + {self.n_unlabeled} judged only, "
            f"lam={self.lam:.2f}{how.get(self.tuning, '')}; {quantile}"
        )
        gain = self.narrowing
        if self.chosen == "ppi":
            verdict = (
                f"PPI++ reported: the {self.n_labeled} human labels count as {self.effective_labels:.0f} "
                f"(its interval is {gain:.0%} narrower than human-only"
            )
            verdict += f", under the {CHOICE_MARGIN:.0%} margin)" if gain < CHOICE_MARGIN else ")"
        elif gain > 0.0:
            verdict = (
                f"human-only reported: PPI++ is only {gain:.1%} narrower, under the {CHOICE_MARGIN:.0%} "
                "margin that relying on the judge must earn"
            )
        else:
            verdict = "human-only reported: the judge does not narrow the interval"
        return f"{what}: PPI++ {ppi}, human-only {human} ({sizes}); {verdict}"

    def record(self) -> dict[str, Any]:
        """The fields as a plain dict (JSON-ready)."""
        return asdict(self)


def ppi_mean(
    y_labeled: npt.ArrayLike,
    yhat_labeled: npt.ArrayLike,
    yhat_unlabeled: npt.ArrayLike,
    *,
    confidence: float = 0.95,
    lam: Lam = None,
    folds: int = DEFAULT_FOLDS,
    seed: int = 0,
) -> PPIEstimate:
    """PPI++ estimate and interval of the mean human verdict, the classical one beside it.

    Args:
        y_labeled: Human verdicts (0/1 or numbers) on the labeled cases.
        yhat_labeled: The judge's scores on the same cases, aligned.
        yhat_unlabeled: The judge's scores on the cases nobody labeled (from the same population).
        confidence: Confidence level of both intervals, in (0, 1).
        lam: The judge's weight (see the module docstring). None (the default) cross-fits it over
            ``folds`` folds, with Student t intervals; ``"same"`` tunes it on the same labels
            (``ppi_py``'s ``lam=None``, z intervals); a number fixes it (``ppi_py``'s ``lam=``, z
            intervals): ``1`` is plain PPI, ``0`` the classical mean.
        folds: Cross-fitting folds (at most one per labeled case), ``lam=None`` only.
        seed: Seed of the permutation that assigns the labeled cases to folds, ``lam=None`` only.

    Returns:
        The :class:`PPIEstimate`.

    Raises:
        ValueError: On unequal lengths, non-finite values, fewer than two labeled cases, no
            unlabeled case, a confidence outside (0, 1), a ``lam`` that is not None, ``"same"``
            or a finite number, fewer than 2 folds or a negative seed.
    """
    y = _scores(y_labeled, "y_labeled")
    yhat = _scores(yhat_labeled, "yhat_labeled")
    yhat_u = _scores(yhat_unlabeled, "yhat_unlabeled")
    _check(y, "y_labeled", yhat, "yhat_labeled", yhat_u, "yhat_unlabeled", confidence, lam, folds, seed)
    return _estimate(y, yhat, yhat_u, confidence, lam, folds, seed, "mean")


def ppi_mean_difference(
    *,
    y_a: npt.ArrayLike,
    y_b: npt.ArrayLike,
    yhat_a: npt.ArrayLike,
    yhat_b: npt.ArrayLike,
    yhat_unlabeled_a: npt.ArrayLike,
    yhat_unlabeled_b: npt.ArrayLike,
    confidence: float = 0.95,
    lam: Lam = None,
    folds: int = DEFAULT_FOLDS,
    seed: int = 0,
) -> PPIEstimate:
    """PPI++ estimate and interval of the difference ``b - a`` of two recipes' human-judged rates.

    Paired: both recipes answered the same cases. PPI++ (:func:`ppi_mean`) is applied to the
    per-case differences ``y_b - y_a`` (people) and ``yhat_b - yhat_a`` (the judge), so every
    number of the result is a difference ``b - a`` (``kind="difference"``). Keyword-only, so
    that ``a`` and ``b`` cannot be swapped by position.

    Args:
        y_a: Human verdicts on recipe a's answers to the labeled cases.
        y_b: Human verdicts on recipe b's answers to the same cases, aligned.
        yhat_a: The judge's scores of a's answers to the labeled cases.
        yhat_b: The judge's scores of b's answers to the labeled cases.
        yhat_unlabeled_a: The judge's scores of a's answers to the unlabeled cases.
        yhat_unlabeled_b: The judge's scores of b's answers to the same unlabeled cases.
        confidence: Confidence level of both intervals, in (0, 1).
        lam: The judge's weight (see :func:`ppi_mean`); None cross-fits it.
        folds: Cross-fitting folds, ``lam=None`` only.
        seed: Seed of the fold assignment, ``lam=None`` only.

    Returns:
        The :class:`PPIEstimate` of the difference.

    Raises:
        ValueError: As :func:`ppi_mean`, naming the argument.
    """
    arrays = {
        name: _scores(values, name)
        for name, values in (
            ("y_a", y_a), ("y_b", y_b), ("yhat_a", yhat_a), ("yhat_b", yhat_b),
            ("yhat_unlabeled_a", yhat_unlabeled_a), ("yhat_unlabeled_b", yhat_unlabeled_b),
        )
    }  # fmt: skip
    for first, second in (
        ("y_a", "y_b"),
        ("y_a", "yhat_a"),
        ("y_a", "yhat_b"),
        ("yhat_unlabeled_a", "yhat_unlabeled_b"),
    ):
        if arrays[first].size != arrays[second].size:
            raise ValueError(
                f"{second} must have one value per {first}, got {arrays[second].size} and {arrays[first].size}"
            )
    y = arrays["y_b"] - arrays["y_a"]
    yhat = arrays["yhat_b"] - arrays["yhat_a"]
    yhat_u = arrays["yhat_unlabeled_b"] - arrays["yhat_unlabeled_a"]
    _check(y, "y_a", yhat, "yhat_a", yhat_u, "yhat_unlabeled_a", confidence, lam, folds, seed)
    return _estimate(y, yhat, yhat_u, confidence, lam, folds, seed, "difference")


def _estimate(
    y: np.ndarray, yhat: np.ndarray, yhat_u: np.ndarray, confidence: float, lam: Lam, folds: int, seed: int,
    kind: str,
) -> PPIEstimate:  # fmt: skip
    """The PPI++ and classical estimates of ``mean(y)`` (inputs already checked)."""
    n, big_n = y.size, yhat_u.size
    classical = float(np.mean(y))
    fold_lams: tuple[float, ...] = ()
    df: int | None = None
    if lam is None:  # cross-fitted weight, Student t intervals (see the module docstring)
        df = n - 1
        quantile = _t_quantile(0.5 + confidence / 2.0, df)
        weights, fold_lams = _cross_fit_lams(y, yhat, n / big_n, folds, seed)
        weight = float(np.mean(weights))
        residual = y - weights * yhat
        estimate = float(weight * np.mean(yhat_u) + np.mean(residual))
        judged = np.concatenate([yhat, yhat_u])
        centred = residual - np.mean(residual) + (weights - weight) * np.mean(judged)
        variance = weight**2 * float(np.var(judged, ddof=1)) / big_n + float(np.sum(centred**2)) / (n - 1) / n
        half = quantile * math.sqrt(variance)
        classical_half = quantile * float(np.std(y, ddof=1)) / math.sqrt(n)
        tuning = "cross-fit"
    else:  # ppi_py's: the weight tuned on the same labels, or fixed; z intervals
        quantile = NormalDist().inv_cdf(0.5 + confidence / 2.0)
        weight = _tuned_lam(y, yhat, yhat_u) if lam == "same" else float(lam)
        rectifier = y - weight * yhat
        imputed = weight * yhat_u
        estimate = float(np.mean(imputed) + np.mean(rectifier))
        half = quantile * math.sqrt(float(np.var(imputed)) / big_n + float(np.var(rectifier)) / n)
        classical_half = quantile * float(np.std(y)) / math.sqrt(n)
        tuning = "same" if lam == "same" else "fixed"
    low, high = estimate - half, estimate + half
    narrower = math.isfinite(half) and half <= (1.0 - CHOICE_MARGIN) * classical_half
    return PPIEstimate(
        estimate=estimate, ci_low=low, ci_high=high, n_labeled=n, n_unlabeled=big_n, lam=weight,
        classical_estimate=classical, classical_ci_low=classical - classical_half,
        classical_ci_high=classical + classical_half, chosen="ppi" if narrower else "classical",
        confidence=confidence, kind=kind, tuning=tuning, fold_lams=fold_lams, df=df,
    )  # fmt: skip


def _cross_fit_lams(
    y: np.ndarray, yhat: np.ndarray, ratio: float, folds: int, seed: int
) -> tuple[np.ndarray, tuple[float, ...]]:
    """Each labeled case's weight, estimated without its fold's cases, and the folds' weights.

    A fold's weight is the slope ``cov(y, yhat) / var(yhat)`` over the other folds' cases (both
    ddof 0), divided by ``1 + ratio`` (``ratio = n / N``) and clipped to [0, 1]; 0 where the judge's
    scores there do not vary. The other folds' moments are the totals minus the fold's, of the
    data centred at its overall means (the slope does not depend on the centring).
    """
    fold = _folds(y.size, folds, seed)
    size = np.bincount(fold)
    rest = y.size - size

    def outside(values: np.ndarray) -> np.ndarray:  # the mean over the other folds, per fold
        mean: np.ndarray = (values.sum() - np.bincount(fold, weights=values, minlength=size.size)) / rest
        return mean

    y_c, yhat_c = y - np.mean(y), yhat - np.mean(yhat)
    mean_y, mean_yhat = outside(y_c), outside(yhat_c)
    covariance = outside(y_c * yhat_c) - mean_y * mean_yhat
    spread = outside(yhat_c * yhat_c) - mean_yhat * mean_yhat
    varies = spread > 1e-12 * float(np.mean(yhat_c * yhat_c))  # rounding aside, > 0
    slope = np.divide(covariance, spread, out=np.zeros_like(spread), where=varies)
    lams = np.clip(slope / (1.0 + ratio), 0.0, 1.0)
    return lams[fold], tuple(float(value) for value in lams)


@functools.lru_cache(maxsize=64)
def _folds(n: int, folds: int, seed: int) -> np.ndarray:
    """The fold of each of ``n`` cases: ``seed``'s permutation cut into ``min(folds, n)`` near-equal parts."""
    order = np.random.default_rng(seed).permutation(n)
    fold = np.empty(n, dtype=np.intp)
    for index, part in enumerate(np.array_split(order, min(folds, n))):
        fold[part] = index
    fold.setflags(write=False)
    return fold


@functools.lru_cache(maxsize=256)
def _t_quantile(p: float, df: int) -> float:
    """:func:`~heta_nb.stats.intervals.student_t_ppf`, remembered (it inverts a continued fraction)."""
    return student_t_ppf(p, df)


def _tuned_lam(y: np.ndarray, yhat: np.ndarray, yhat_u: np.ndarray) -> float:
    """The variance-minimising judge weight tuned on the same labels, clipped to [0, 1] (``ppi_py``'s ``lam=None``).

    ``cov(y, yhat)`` (ddof 0, labeled cases) over ``(1 + n / N) * var(yhat)`` (ddof 1, all
    judge scores); 0 when the judge's scores do not vary (it carries no information).
    """
    n, big_n = y.size, yhat_u.size
    covariance = float(np.mean((y - y.mean()) * (yhat - yhat.mean())))
    spread = float(np.var(np.concatenate([yhat, yhat_u]), ddof=1))
    if not spread > 0.0:
        return 0.0
    return min(1.0, max(0.0, covariance / ((1.0 + n / big_n) * spread)))


def _scores(values: npt.ArrayLike, name: str) -> np.ndarray:
    """``values`` as a 1-D float array of finite numbers, or a ValueError naming ``name``."""
    try:
        x = np.asarray(values, dtype=np.float64)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must hold numbers (bools, 0/1 verdicts or scores)") from None
    if x.ndim != 1:
        raise ValueError(f"{name} must be 1-D, got shape {x.shape}")
    if not np.isfinite(x).all():
        raise ValueError(f"{name} must hold finite numbers (drop cases with a missing verdict or score)")
    return x


def _is_int(value: object) -> bool:
    return isinstance(value, (int, np.integer)) and not isinstance(value, bool)


def _check(
    y: np.ndarray, y_name: str, yhat: np.ndarray, yhat_name: str, yhat_u: np.ndarray, u_name: str,
    confidence: float, lam: Lam, folds: int, seed: int,
) -> None:  # fmt: skip
    """Raise a one-line ValueError naming the argument when the inputs cannot be estimated from."""
    if yhat.size != y.size:
        raise ValueError(f"{yhat_name} must have one value per {y_name}, got {yhat.size} and {y.size}")
    if y.size < 2:
        raise ValueError(f"{y_name} needs at least 2 labeled cases, got {y.size}")
    if yhat_u.size < 1:
        raise ValueError(f"{u_name} needs at least 1 unlabeled case (with none, use the classical mean)")
    if not 0.0 < confidence < 1.0:
        raise ValueError(f"confidence must be in (0, 1), got {confidence!r}")
    if not (lam is None or (isinstance(lam, str) and lam == "same")) and (
        isinstance(lam, bool) or not isinstance(lam, (int, float, np.number)) or not math.isfinite(lam)
    ):
        raise ValueError(f"lam must be None, 'same' or a finite number, got {lam!r}")
    if not _is_int(folds) or folds < 2:
        raise ValueError(f"folds must be an integer of at least 2, got {folds!r}")
    if not _is_int(seed) or seed < 0:
        raise ValueError(f"seed must be a non-negative integer, got {seed!r}")
