"""Prediction-powered inference (PPI++): a human-judged rate from few human labels and many judge scores.

A judge (an LLM or a metric) scores every case; people label only a few. PPI++
(Angelopoulos, Bates, Fannjiang, Jordan & Zrnic 2023, "Prediction-powered inference",
Science 382; Angelopoulos, Duchi & Zrnic 2023, "PPI++: Efficient prediction-powered
inference", arXiv:2311.01453) estimates the mean human verdict ``theta = E[y]`` by

    theta_hat = lam * mean(yhat_unlabeled) + mean(y_labeled - lam * yhat_labeled)

which is unbiased for any fixed ``lam``: the judge's bias is measured on the labeled cases
and subtracted. Its CLT interval is ``theta_hat ± z * sqrt(var(lam * yhat_unlabeled) / N +
var(y - lam * yhat) / n)`` (population variances, ddof 0, as ``ppi_py``). ``lam = 1`` is
plain PPI, ``lam = 0`` the classical human-only mean; power tuning picks the
variance-minimising ``lam = cov(y, yhat) / ((1 + n / N) * var(yhat))`` (covariance ddof 0 on
the labeled cases, variance ddof 1 on all judge scores), clipped to [0, 1], exactly as
``ppi_py.ppi_mean_ci(..., lam=None)`` does (``tests/stats/test_ppi.py`` checks it to 1e-9).
A judge that agrees with people no better than chance gets ``lam`` near 0, and PPI++
falls back to about the human-only interval rather than widening it.

Beside it stands the classical interval of the human labels alone, ``mean(y) ± z *
std(y, ddof=0) / sqrt(n)``: the z interval of ``ppi_py.classical_mean_ci``, so the two are
comparable. ``chosen`` names the narrower valid interval. Both rest on the normal
approximation, so with very few labels (or a rate near 0 or 1) they are optimistic.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from statistics import NormalDist
from typing import Any

import numpy as np
import numpy.typing as npt

__all__ = ["PPIEstimate", "ppi_mean", "ppi_mean_difference"]


@dataclass(frozen=True)
class PPIEstimate:
    """A PPI++ estimate with the classical (human labels only) estimate beside it.

    For :func:`ppi_mean_difference` every number is a difference ``b - a`` (``kind``
    ``"difference"``).
    """

    estimate: float
    """The PPI++ point estimate."""
    ci_low: float
    """Lower bound of its CLT (z) interval."""
    ci_high: float
    """Upper bound of that interval."""
    n_labeled: int
    """Cases with human labels (and judge scores)."""
    n_unlabeled: int
    """Cases with judge scores only."""
    lam: float
    """The power-tuning weight of the judge used, in [0, 1] when tuned (0: the judge is ignored)."""
    classical_estimate: float
    """The mean of the human labels alone."""
    classical_ci_low: float
    """Lower bound of its z interval (``ppi_py.classical_mean_ci``'s)."""
    classical_ci_high: float
    """Upper bound of that interval."""
    chosen: str
    """``"ppi"`` when the PPI++ interval is the narrower one, else ``"classical"`` (ties too)."""
    confidence: float = 0.95
    """Confidence level of both intervals."""
    kind: str = "mean"
    """``"mean"`` or ``"difference"`` (every number is then ``b - a``)."""

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
    def text(self) -> str:
        """Both intervals, the sizes, ``lam`` and which one is reported, in one line."""
        sign = "+" if self.kind == "difference" else ""
        what = "difference b - a" if self.kind == "difference" else "mean"

        def show(est: float, low: float, high: float) -> str:
            return f"{est:{sign}.3f} [{low:{sign}.3f}, {high:{sign}.3f}]"

        ppi = show(self.estimate, self.ci_low, self.ci_high)
        human = show(self.classical_estimate, self.classical_ci_low, self.classical_ci_high)
        sizes = f"n={self.n_labeled} labeled + {self.n_unlabeled} judged only, lam={self.lam:.2f}"
        if self.chosen == "ppi":
            verdict = f"PPI++ reported: the {self.n_labeled} human labels count as {self.effective_labels:.0f}"
            if self.effective_labels < 1.1 * self.n_labeled:
                verdict += " (the judge barely helps)"
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
    lam: float | None = None,
) -> PPIEstimate:
    """PPI++ estimate and interval of the mean human verdict, the classical one beside it.

    Args:
        y_labeled: Human verdicts (0/1 or numbers) on the labeled cases.
        yhat_labeled: The judge's scores on the same cases, aligned.
        yhat_unlabeled: The judge's scores on the cases nobody labeled (from the same population).
        confidence: Confidence level of both intervals, in (0, 1).
        lam: The judge's weight; None tunes it (``ppi_py``'s ``lam=None``; 0 for a constant
            judge, where ``ppi_py`` gives NaN). ``1`` is plain PPI, ``0`` the classical mean.

    Returns:
        The :class:`PPIEstimate`.

    Raises:
        ValueError: On unequal lengths, non-finite values, fewer than two labeled cases, no
            unlabeled case, a confidence outside (0, 1) or a non-finite ``lam``.
    """
    y = _scores(y_labeled, "y_labeled")
    yhat = _scores(yhat_labeled, "yhat_labeled")
    yhat_u = _scores(yhat_unlabeled, "yhat_unlabeled")
    _check(y, "y_labeled", yhat, "yhat_labeled", yhat_u, "yhat_unlabeled", confidence, lam)
    return _estimate(y, yhat, yhat_u, confidence, lam, "mean")


def ppi_mean_difference(
    *,
    y_a: npt.ArrayLike,
    y_b: npt.ArrayLike,
    yhat_a: npt.ArrayLike,
    yhat_b: npt.ArrayLike,
    yhat_unlabeled_a: npt.ArrayLike,
    yhat_unlabeled_b: npt.ArrayLike,
    confidence: float = 0.95,
    lam: float | None = None,
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
        lam: The judge's weight (see :func:`ppi_mean`); None tunes it.

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
    _check(y, "y_a", yhat, "yhat_a", yhat_u, "yhat_unlabeled_a", confidence, lam)
    return _estimate(y, yhat, yhat_u, confidence, lam, "difference")


def _estimate(
    y: np.ndarray, yhat: np.ndarray, yhat_u: np.ndarray, confidence: float, lam: float | None, kind: str
) -> PPIEstimate:
    """The PPI++ and classical estimates of ``mean(y)`` (inputs already checked)."""
    n, big_n = y.size, yhat_u.size
    z = NormalDist().inv_cdf(0.5 + confidence / 2.0)
    weight = _tuned_lam(y, yhat, yhat_u) if lam is None else float(lam)
    rectifier = y - weight * yhat
    imputed = weight * yhat_u
    estimate = float(np.mean(imputed) + np.mean(rectifier))
    half = z * math.sqrt(float(np.var(imputed)) / big_n + float(np.var(rectifier)) / n)
    classical = float(np.mean(y))
    classical_half = z * float(np.std(y)) / math.sqrt(n)
    low, high = estimate - half, estimate + half
    narrower = math.isfinite(half) and half < classical_half
    return PPIEstimate(
        estimate=estimate, ci_low=low, ci_high=high, n_labeled=n, n_unlabeled=big_n, lam=weight,
        classical_estimate=classical, classical_ci_low=classical - classical_half,
        classical_ci_high=classical + classical_half, chosen="ppi" if narrower else "classical",
        confidence=confidence, kind=kind,
    )  # fmt: skip


def _tuned_lam(y: np.ndarray, yhat: np.ndarray, yhat_u: np.ndarray) -> float:
    """The variance-minimising judge weight, clipped to [0, 1] (``ppi_py``'s ``lam=None``).

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


def _check(
    y: np.ndarray, y_name: str, yhat: np.ndarray, yhat_name: str, yhat_u: np.ndarray, u_name: str,
    confidence: float, lam: float | None,
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
    if lam is not None and (
        isinstance(lam, bool) or not isinstance(lam, (int, float, np.number)) or not math.isfinite(lam)
    ):
        raise ValueError(f"lam must be None or a finite number, got {lam!r}")
