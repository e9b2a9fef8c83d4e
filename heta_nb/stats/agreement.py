"""Agreement between raters: Cohen's kappa, Krippendorff's alpha, a judge against people.

:func:`cohen_kappa` equals ``sklearn.metrics.cohen_kappa_score`` and :func:`krippendorff_alpha`
equals ``krippendorff.alpha`` at every level (both packages are test oracles only). The
``*_with_ci`` forms add a percentile bootstrap interval over units (cases), deterministic
given ``seed``; resampling ``n`` units with replacement is drawn as its equivalent, a
multinomial count of each distinct unit (a kappa's table cell, an alpha's unit profile).

NaN means *undefined*, never an error: kappa with no complete pair or when both raters used
one and the same category (0/0); alpha with fewer than two values or no unit rated twice.
Bounds are NaN below :data:`MIN_UNITS` units or when more than :data:`MAX_UNDEFINED` of the
resamples are undefined; :attr:`Agreement.reason` says which.
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Iterable, Sequence
from dataclasses import asdict, dataclass
from typing import Any, Literal

import numpy as np
import numpy.typing as npt

__all__ = [
    "MAX_UNDEFINED",
    "MIN_UNITS",
    "Agreement",
    "BinaryAgreement",
    "alpha_with_ci",
    "binary_agreement",
    "cohen_kappa",
    "kappa_with_ci",
    "krippendorff_alpha",
]

Weights = Literal["linear", "quadratic"] | None
Level = Literal["nominal", "ordinal", "interval", "ratio"]

MIN_UNITS = 5
"""Fewer units than this: no bootstrap interval (NaN bounds)."""
MAX_UNDEFINED = 0.05
"""A larger share of undefined resamples: no bootstrap interval (NaN bounds)."""

_NAN = float("nan")
_LEVELS = ("nominal", "ordinal", "interval", "ratio")
_CHUNK = 1 << 22  # elements of the largest temporary array of one bootstrap step


@dataclass(frozen=True)
class Agreement:
    """An agreement statistic with its percentile bootstrap interval over units."""

    statistic: str
    """``"cohen_kappa"`` or ``"krippendorff_alpha"``."""
    value: float
    """The statistic on all units (NaN: undefined, see ``reason``)."""
    ci_low: float
    """Lower percentile bound (NaN: no interval, see ``reason``)."""
    ci_high: float
    """Upper percentile bound."""
    n: int
    """Units used: complete pairs (kappa) or units with two or more ratings (alpha)."""
    confidence: float
    """Confidence level of the interval, e.g. 0.95."""
    variant: str = ""
    """Kappa's weights (``"unweighted"``, ``"linear"``, ``"quadratic"``) or alpha's level."""
    reason: str = ""
    """Why the value or the bounds are NaN (empty when they are not)."""

    @property
    def text(self) -> str:
        """E.g. ``"kappa 0.71 [0.58, 0.82] (n=60)"``; says why when a number is missing."""
        name = "kappa" if self.statistic == "cohen_kappa" else "alpha"
        if self.variant and self.variant != "unweighted":
            name += f" ({self.variant})"
        if math.isnan(self.value):
            return f"{name} n/a: {self.reason} (n={self.n})"
        if math.isnan(self.ci_low) or math.isnan(self.ci_high):
            return f"{name} {self.value:.2f}, no interval: {self.reason} (n={self.n})"
        return f"{name} {self.value:.2f} [{self.ci_low:.2f}, {self.ci_high:.2f}] (n={self.n})"

    def record(self) -> dict[str, Any]:
        """The fields as a plain dict (JSON-ready)."""
        return asdict(self)


@dataclass(frozen=True)
class BinaryAgreement:
    """A thresholded metric or judge (predicted) against human verdicts (the truth)."""

    n: int
    """Complete pairs (a missing verdict on either side drops the case)."""
    true_positive: int
    false_positive: int
    true_negative: int
    false_negative: int
    accuracy: float
    """Share of cases where both agree (NaN when ``n == 0``)."""
    sensitivity: float
    """True-positive rate: share of human positives predicted positive (NaN: no human positive)."""
    specificity: float
    """True-negative rate: share of human negatives predicted negative (NaN: no human negative)."""
    kappa: Agreement
    """Cohen's kappa with its bootstrap interval."""

    @property
    def text(self) -> str:
        """E.g. ``"accuracy 0.85, sensitivity 0.90, specificity 0.80, kappa 0.70 [0.52, 0.84] (n=60)"``."""
        rates = (self.accuracy, self.sensitivity, self.specificity)
        acc, tpr, tnr = ("n/a" if math.isnan(r) else f"{r:.2f}" for r in rates)
        return f"accuracy {acc}, sensitivity {tpr}, specificity {tnr}, {self.kappa.text}"

    def record(self) -> dict[str, Any]:
        """Flat dict: the counts and rates, then ``kappa``, its bounds, ``confidence`` and ``kappa_reason``."""
        flat = {name: value for name, value in asdict(self).items() if name != "kappa"}
        k = self.kappa
        kappa = {"kappa": k.value, "kappa_ci_low": k.ci_low, "kappa_ci_high": k.ci_high, "confidence": k.confidence}
        return {**flat, **kappa, "kappa_reason": k.reason}


# --- Cohen's kappa -------------------------------------------------------------------------------


def cohen_kappa(a: Iterable[Hashable], b: Iterable[Hashable], *, labels: Sequence[Hashable] | None = None,
                weights: Weights = None) -> float:  # fmt: skip
    """Cohen's kappa of two raters' labels, as ``sklearn.metrics.cohen_kappa_score``.

    Args:
        a: The first rater's labels (hashables; None or NaN = missing, the pair is dropped).
        b: The second rater's labels for the same units.
        labels: The categories in order; pairs with a label outside them are dropped (as
            sklearn does). Default: the sorted labels that occur.
        weights: None, ``"linear"`` or ``"quadratic"``: ordinal disagreement weights by the
            distance of the labels' ranks in ``labels`` order (not of their values).

    Returns:
        Kappa, or NaN when undefined: no complete pair, or both raters used one and the
        same category (the expected agreement is 1, so kappa is 0/0).

    Raises:
        ValueError: On unequal lengths, unhashable labels, repeated ``labels``, unknown
            ``weights``, or weights over labels that do not sort.
    """
    codes_a, codes_b, k = _encode_pairs(a, b, labels, weights)
    return float(_kappa(_table(codes_a, codes_b, k), _weight_matrix(k, weights)))


def kappa_with_ci(a: Iterable[Hashable], b: Iterable[Hashable], *, confidence: float = 0.95, resamples: int = 2000,
                  seed: int | None = 0, weights: Weights = None,
                  labels: Sequence[Hashable] | None = None) -> Agreement:  # fmt: skip
    """:func:`cohen_kappa` with a percentile bootstrap interval over the pairs.

    Args:
        a: The first rater's labels (see :func:`cohen_kappa`).
        b: The second rater's labels.
        confidence: Confidence level in (0, 1).
        resamples: Bootstrap resamples.
        seed: Seed of ``numpy.random.default_rng``: the same inputs and seed give the same interval.
        weights: None, ``"linear"`` or ``"quadratic"``.
        labels: The categories in order (see :func:`cohen_kappa`).

    Returns:
        The :class:`Agreement` (``statistic="cohen_kappa"``).
    """
    _check_bootstrap(confidence, resamples)
    codes_a, codes_b, k = _encode_pairs(a, b, labels, weights)
    table = _table(codes_a, codes_b, k)
    w = _weight_matrix(k, weights)
    value = float(_kappa(table, w))
    n = int(codes_a.size)
    variant = weights or "unweighted"
    why = "no complete pair of labels" if n == 0 else f"fewer than {MIN_UNITS} units" if n < MIN_UNITS else ""
    if n and math.isnan(value):
        why = "both raters used one and the same category (kappa undefined: chance agreement is 1)"
    if why:
        return Agreement("cohen_kappa", value, _NAN, _NAN, n, confidence, variant, why)
    rng = np.random.default_rng(seed)
    cells = table.ravel()
    boot = np.empty(resamples)
    rows = max(1, _CHUNK // cells.size)
    for start in range(0, resamples, rows):
        r = min(rows, resamples - start)
        counts = rng.multinomial(n, cells / n, size=r).astype(np.float64)
        boot[start : start + r] = _kappa(counts.reshape(r, k, k), w)
    low, high, why = _percentile(boot, confidence)
    return Agreement("cohen_kappa", value, low, high, n, confidence, variant, why)


def _kappa(tables: np.ndarray, w: np.ndarray) -> np.ndarray:
    """Kappa of each ``k x k`` table in ``tables`` (NaN where the expected disagreement is 0)."""
    n = tables.sum(axis=(-2, -1))
    rows, cols = tables.sum(axis=-1), tables.sum(axis=-2)
    with np.errstate(divide="ignore", invalid="ignore"):
        expected = rows[..., :, None] * cols[..., None, :] / n[..., None, None]
        disagree = (w * tables).sum(axis=(-2, -1))
        chance = (w * expected).sum(axis=(-2, -1))
        return np.where(chance > 0, 1.0 - disagree / chance, _NAN)


def _table(codes_a: np.ndarray, codes_b: np.ndarray, k: int) -> np.ndarray:
    """The ``k x k`` confusion table (rows: ``a``) as floats."""
    return np.bincount(codes_a * k + codes_b, minlength=k * k).reshape(k, k).astype(np.float64)


def _weight_matrix(k: int, weights: Weights) -> np.ndarray:
    """Disagreement weights: 1 off the diagonal, or the ranks' distance (squared)."""
    if weights is None:
        return 1.0 - np.eye(k)
    rank = np.arange(k, dtype=np.float64)
    distance = np.abs(rank[:, None] - rank[None, :])
    return distance if weights == "linear" else distance**2


def _encode_pairs(
    a: Iterable[Hashable], b: Iterable[Hashable], labels: Sequence[Hashable] | None, weights: Weights
) -> tuple[np.ndarray, np.ndarray, int]:
    """Each complete pair's category codes (``labels`` order) and the number of categories."""
    if weights not in (None, "linear", "quadratic"):
        raise ValueError(f"weights must be None, 'linear' or 'quadratic', got {weights!r}")
    xs, ys = _labels_of(a, "a"), _labels_of(b, "b")
    if len(xs) != len(ys):
        raise ValueError(f"a and b must have equal lengths, got {len(xs)} and {len(ys)}")
    pairs = [(x, y) for x, y in zip(xs, ys) if not (_missing(x) or _missing(y))]
    try:
        if labels is None:
            seen = {v for pair in pairs for v in pair}
            try:
                order: list[Hashable] = sorted(seen)  # type: ignore[type-var]
            except TypeError:
                if weights is not None:
                    raise ValueError(
                        "labels: weighted kappa needs labels that sort; pass labels=[...] in order"
                    ) from None
                order = list(dict.fromkeys(v for pair in pairs for v in pair))
        else:
            order = _labels_of(labels, "labels")
            if len(set(order)) != len(order):
                raise ValueError("labels must not repeat a label")
        index = {v: i for i, v in enumerate(order)}
        kept = [(index[x], index[y]) for x, y in pairs if x in index and y in index]
    except TypeError as error:  # an unhashable label
        raise ValueError(f"a and b: labels must be hashable ({error})") from None
    codes = np.array(kept, dtype=np.intp).reshape(-1, 2)
    return codes[:, 0], codes[:, 1], max(1, len(order))


def _labels_of(values: Iterable[Hashable], name: str) -> list[Hashable]:
    """``values`` as a list of Python objects (numpy scalars unboxed)."""
    if isinstance(values, (str, bytes)):
        raise ValueError(f"{name} must be a sequence of labels, not one string")
    if isinstance(values, np.ndarray):
        if values.ndim != 1:
            raise ValueError(f"{name} must be 1-D, got shape {values.shape}")
        return list(values.tolist())
    try:
        return list(values)
    except TypeError:
        raise ValueError(f"{name} must be a sequence of labels, got {type(values).__name__}") from None


def _missing(value: object) -> bool:
    """None, NaN, NaT or pandas' NA (whose comparisons have no truth value)."""
    try:
        return value is None or bool(value != value)
    except TypeError:
        return True


# --- Krippendorff's alpha ------------------------------------------------------------------------


def krippendorff_alpha(data: npt.ArrayLike, *, level: Level = "nominal") -> float:
    """Krippendorff's alpha, as ``krippendorff.alpha(reliability_data=data, level_of_measurement=level)``.

    Args:
        data: Raters x units (one row per rater), NaN or None for a missing rating. Any
            hashables at the nominal level; numbers at the others (for ordinal data, ranks).
        level: ``"nominal"``, ``"ordinal"``, ``"interval"`` or ``"ratio"``.

    Returns:
        Alpha, or NaN when undefined: fewer than two distinct values, or no unit rated twice.

    Raises:
        ValueError: On an unknown level, data that is not 2-D, infinite values, or
            non-numbers at a level other than nominal.
    """
    return _Units.of(data, level).alpha()[0]


def alpha_with_ci(data: npt.ArrayLike, *, level: Level = "nominal", confidence: float = 0.95, resamples: int = 2000,
                  seed: int | None = 0) -> Agreement:  # fmt: skip
    """:func:`krippendorff_alpha` with a percentile bootstrap interval over units.

    Only units with two or more ratings (the pairable ones) are resampled; ``n`` counts them.

    Args:
        data: Raters x units (see :func:`krippendorff_alpha`).
        level: ``"nominal"``, ``"ordinal"``, ``"interval"`` or ``"ratio"``.
        confidence: Confidence level in (0, 1).
        resamples: Bootstrap resamples.
        seed: Seed of ``numpy.random.default_rng``: the same inputs and seed give the same interval.

    Returns:
        The :class:`Agreement` (``statistic="krippendorff_alpha"``).
    """
    _check_bootstrap(confidence, resamples)
    units = _Units.of(data, level)
    value, why = units.alpha()
    n = units.n
    if not why and n < MIN_UNITS:
        why = f"fewer than {MIN_UNITS} units"
    if why:
        return Agreement("krippendorff_alpha", value, _NAN, _NAN, n, confidence, level, why)
    rng = np.random.default_rng(seed)
    boot = np.empty(resamples)
    profiles, values = units.profiles.shape
    rows = max(1, _CHUNK // ((profiles + 1) * values * values if level == "ordinal" else profiles + values))
    for start in range(0, resamples, rows):
        r = min(rows, resamples - start)
        boot[start : start + r] = units.alphas(rng.multinomial(n, units.weights / n, size=r).astype(np.float64))
    low, high, why = _percentile(boot, confidence)
    return Agreement("krippendorff_alpha", value, low, high, n, confidence, level, why)


@dataclass(frozen=True)
class _Units:
    """The pairable units of reliability data, grouped into distinct value-count profiles."""

    profiles: np.ndarray  # (P, V): how many raters gave each value, one row per distinct unit
    weights: np.ndarray  # (P,): how many units have that profile
    distance: np.ndarray  # (V, V): the level's distances (ordinal: placeholder, see alphas)
    level: str
    values: int  # distinct values in the whole data (pairable or not)
    n: int  # pairable units

    @classmethod
    def of(cls, data: npt.ArrayLike, level: str) -> _Units:
        """Parse ``data`` (raters x units) at ``level``."""
        if level not in _LEVELS:
            raise ValueError(f"level must be one of {', '.join(_LEVELS)}, got {level!r}")
        codes, domain = _rating_codes(data, level)
        n_values = domain.size if domain is not None else int(codes.max(initial=-1)) + 1
        n_units, rated = codes.shape[1], codes >= 0
        unit = np.broadcast_to(np.arange(n_units), codes.shape)[rated]
        counts = np.bincount(unit * max(1, n_values) + codes[rated], minlength=n_units * max(1, n_values))
        counts = counts.reshape(n_units, max(1, n_values))[rated.sum(axis=0) >= 2]
        profiles, weights = np.unique(counts, axis=0, return_counts=True)
        distance = _distances(domain, n_values, level)
        return cls(
            profiles.astype(np.float64), weights.astype(np.float64), distance, level, n_values, int(weights.sum())
        )

    def alpha(self) -> tuple[float, str]:
        """Alpha of all pairable units, and why it is undefined ('' when it is not)."""
        if self.values < 2:
            return _NAN, "no ratings" if self.values == 0 else "one value only (alpha undefined)"
        if self.n == 0:
            return _NAN, "no unit has two or more ratings"
        value = float(self.alphas(self.weights[None, :])[0])
        return value, "" if math.isfinite(value) else "every pairable rating has the same value (alpha undefined)"

    def alphas(self, multiplicity: np.ndarray) -> np.ndarray:
        """Alpha for each row of ``multiplicity`` (R, P): how often each profile is drawn."""
        counts = self.profiles
        scale = counts / (counts.sum(axis=1, keepdims=True) - 1.0)  # n_uc / (m_u - 1)
        n_v = multiplicity @ counts  # (R, V): pairable values of each kind
        total = n_v.sum(axis=1)
        if self.level == "ordinal":
            between = np.concatenate([np.zeros((n_v.shape[0], 1)), np.cumsum(n_v, axis=1)], axis=1)
            rank = np.arange(n_v.shape[1])
            lo, hi = np.minimum.outer(rank, rank), np.maximum.outer(rank, rank)
            distance = (between[:, hi + 1] - between[:, lo] - (n_v[:, lo] + n_v[:, hi]) / 2.0) ** 2  # (R, V, V)
            o_units = scale[:, :, None] * counts[:, None, :]  # (P, V, V), the diagonal term d_cc = 0
            observed = np.einsum("rp,pvw,rvw->r", multiplicity, o_units, distance)
            chance = np.einsum("rv,rvw,rw->r", n_v, distance, n_v)
        else:
            per_profile = (scale * (counts @ self.distance)).sum(axis=1)  # sum_ck o_ck d_ck of one unit
            observed = multiplicity @ per_profile
            chance = ((n_v @ self.distance) * n_v).sum(axis=1)
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.where(chance > 0, 1.0 - (total - 1.0) * observed / chance, _NAN)


def _rating_codes(data: npt.ArrayLike, level: str) -> tuple[np.ndarray, np.ndarray | None]:
    """Each rating's value code (-1: missing) and, for numbers, the sorted distinct values."""
    if isinstance(data, np.ndarray) and data.dtype.kind in "biuf":
        numbers = data.astype(np.float64)
    else:
        boxed = np.asarray(data, dtype=object)
        strings = isinstance(data, np.ndarray) and data.dtype.kind in "US"
        if boxed.ndim != 2:
            raise ValueError(f"data must be a raters x units array, got shape {boxed.shape}")
        flat = boxed.ravel()
        missing = np.array([_missing(v) or (strings and v in ("nan", b"nan")) for v in flat], dtype=bool)
        numeric = all(isinstance(v, (int, float, np.number)) for v, m in zip(flat, missing) if not m)
        if numeric:
            numbers = np.where(missing, _NAN, flat).astype(np.float64).reshape(boxed.shape)
        elif level != "nominal":
            raise ValueError(f"data must hold numbers at level {level!r} (map ordered labels to ranks first)")
        else:
            try:
                index: dict[Hashable, int] = {}
                codes = [-1 if m else index.setdefault(v, len(index)) for v, m in zip(flat, missing)]
            except TypeError as error:
                raise ValueError(f"data: ratings must be hashable ({error})") from None
            return np.array(codes, dtype=np.intp).reshape(boxed.shape), None
    if numbers.ndim != 2:
        raise ValueError(f"data must be a raters x units array, got shape {numbers.shape}")
    if np.isinf(numbers).any():
        raise ValueError("data must be finite (NaN marks a missing rating)")
    rated = ~np.isnan(numbers)
    domain = np.unique(numbers[rated])
    codes_f = np.full(numbers.shape, -1, dtype=np.intp)
    codes_f[rated] = np.searchsorted(domain, numbers[rated])
    return codes_f, domain


def _distances(domain: np.ndarray | None, n_values: int, level: str) -> np.ndarray:
    """The level's squared distances between values (ordinal: computed per resample)."""
    k = max(1, n_values)
    if level == "nominal" or domain is None:
        return 1.0 - np.eye(k)
    diff: np.ndarray = domain[:, None] - domain[None, :]
    if level == "ratio":
        plus = domain[:, None] + domain[None, :]
        diff = np.divide(diff, plus, out=np.zeros((k, k)), where=plus != 0)
    squared: np.ndarray = diff * diff if level in ("interval", "ratio") else np.zeros((k, k))
    return squared


# --- shared --------------------------------------------------------------------------------------


def _check_bootstrap(confidence: float, resamples: int) -> None:
    """Raise ValueError on a confidence outside (0, 1) or a non-positive ``resamples``."""
    if not 0.0 < confidence < 1.0:
        raise ValueError(f"confidence must be in (0, 1), got {confidence!r}")
    if isinstance(resamples, bool) or not isinstance(resamples, (int, np.integer)) or resamples < 1:
        raise ValueError(f"resamples must be a positive integer, got {resamples!r}")


def _percentile(boot: np.ndarray, confidence: float) -> tuple[float, float, str]:
    """Percentile bounds of the defined resamples, or NaN bounds and why."""
    defined = boot[np.isfinite(boot)]
    undefined = 1.0 - defined.size / boot.size
    if undefined > MAX_UNDEFINED:
        return _NAN, _NAN, f"undefined in {undefined:.0%} of resamples (they hold one category only)"
    low, high = np.quantile(defined, [(1.0 - confidence) / 2.0, (1.0 + confidence) / 2.0])
    return float(low), float(high), ""


# --- a judge against people ----------------------------------------------------------------------


def binary_agreement(predicted: Iterable[object], human: Iterable[object], *, confidence: float = 0.95,
                     resamples: int = 2000, seed: int | None = 0) -> BinaryAgreement:  # fmt: skip
    """A thresholded metric or judge's verdicts against human verdicts (the reference).

    Args:
        predicted: The metric's or judge's verdicts: bools (or 0/1); None or NaN = missing.
        human: Human verdicts on the same cases.
        confidence: Confidence level of kappa's interval.
        resamples: Bootstrap resamples of kappa's interval.
        seed: Seed of that bootstrap.

    Returns:
        The :class:`BinaryAgreement`: counts, accuracy, sensitivity, specificity, kappa.

    Raises:
        ValueError: On unequal lengths or a verdict that is not a bool, 0 or 1.
    """
    p, h = _verdicts(predicted, "predicted"), _verdicts(human, "human")
    if len(p) != len(h):
        raise ValueError(f"predicted and human must have equal lengths, got {len(p)} and {len(h)}")
    pairs = [(x, y) for x, y in zip(p, h) if x is not None and y is not None]
    tp, fp, tn = (sum(1 for pair in pairs if pair == cell) for cell in ((True, True), (True, False), (False, False)))
    fn = len(pairs) - tp - fp - tn
    kappa = kappa_with_ci([x for x, _ in pairs], [y for _, y in pairs], confidence=confidence,
                          resamples=resamples, seed=seed, labels=[False, True])  # fmt: skip
    return BinaryAgreement(
        n=len(pairs), true_positive=tp, false_positive=fp, true_negative=tn, false_negative=fn,
        accuracy=_ratio(tp + tn, len(pairs)), sensitivity=_ratio(tp, tp + fn), specificity=_ratio(tn, tn + fp),
        kappa=kappa,
    )  # fmt: skip


def _verdicts(values: Iterable[object], name: str) -> list[bool | None]:
    """Bools (None: missing) from bools, 0/1 numbers, None or NaN."""
    labels = _labels_of(values, name)
    for v in labels:
        if not (_missing(v) or isinstance(v, (bool, np.bool_, int, float, np.number)) and v in (0, 1)):
            raise ValueError(f"{name} must hold bools (or 0/1, None/NaN for missing), got {v!r}")
    return [None if _missing(v) else bool(v) for v in labels]


def _ratio(part: int, whole: int) -> float:
    """``part / whole``, NaN when ``whole`` is 0."""
    return part / whole if whole else _NAN
