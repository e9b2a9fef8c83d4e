"""Agreement: Cohen's kappa against scikit-learn, Krippendorff's alpha against ``krippendorff``,
the bootstrap intervals (seeded, covering a known value), degenerate and invalid inputs."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from heta_nb import stats
from heta_nb.stats.agreement import (
    MIN_UNITS,
    Agreement,
    BinaryAgreement,
    alpha_with_ci,
    binary_agreement,
    cohen_kappa,
    kappa_with_ci,
    krippendorff_alpha,
)

sk_metrics = pytest.importorskip("sklearn.metrics")
krippendorff = pytest.importorskip("krippendorff")


def sk_kappa(a: object, b: object, **kwargs: object) -> float:
    with warnings.catch_warnings():  # sklearn warns (and returns NaN) where kappa is undefined
        warnings.simplefilter("ignore")
        return float(sk_metrics.cohen_kappa_score(a, b, **kwargs))


def same(x: float, y: float, tol: float = 1e-12) -> bool:
    return (math.isnan(x) and math.isnan(y)) or abs(x - y) <= tol


# --- Cohen's kappa against scikit-learn ----------------------------------------------------------


@pytest.mark.parametrize("weights", [None, "linear", "quadratic"])
def test_kappa_equals_sklearn_on_random_cases(weights: str | None) -> None:
    rng = np.random.default_rng(2024)
    for _ in range(300):
        n, k = int(rng.integers(1, 80)), int(rng.integers(1, 6))
        a = rng.integers(0, k, n)
        agree = rng.random() ** 2
        b = np.where(rng.random(n) < agree, a, rng.integers(0, k, n))
        assert same(cohen_kappa(a, b, weights=weights), sk_kappa(a, b, weights=weights))  # type: ignore[arg-type]


@settings(max_examples=300, deadline=None)
@given(
    st.lists(st.tuples(st.sampled_from(["no", "partly", "yes", "n/a"]), st.sampled_from(["no", "partly", "yes"])),
             min_size=1, max_size=40),
    st.sampled_from([None, "linear", "quadratic"]),
)  # fmt: skip
def test_kappa_equals_sklearn_on_string_labels(pairs: list[tuple[str, str]], weights: str | None) -> None:
    a, b = [x for x, _ in pairs], [y for _, y in pairs]
    assert same(cohen_kappa(a, b, weights=weights), sk_kappa(a, b, weights=weights))  # type: ignore[arg-type]


@pytest.mark.parametrize("weights", [None, "linear", "quadratic"])
def test_kappa_labels_argument_equals_sklearn(weights: str | None) -> None:
    rng = np.random.default_rng(5)
    a, b = rng.integers(1, 6, 50), rng.integers(1, 6, 50)
    for labels in ([1, 2, 3, 4, 5], [5, 4, 3, 2, 1], [1, 2, 3, 4, 5, 6, 7], [2, 3, 4], [1, 3, 5]):
        mine = cohen_kappa(a, b, labels=labels, weights=weights)  # type: ignore[arg-type]
        assert same(mine, sk_kappa(a, b, labels=labels, weights=weights))


def test_kappa_textbook_value_and_missing_pairs() -> None:
    y1 = ["negative", "positive", "negative", "neutral", "positive"]
    y2 = ["negative", "positive", "negative", "neutral", "negative"]
    assert cohen_kappa(y1, y2) == pytest.approx(0.6875, abs=1e-15)  # sklearn's docstring example
    # None / NaN on either side drops the pair
    assert cohen_kappa([*y1, None, "x"], [*y2, "y", float("nan")]) == pytest.approx(0.6875, abs=1e-15)
    assert cohen_kappa(np.array([1.0, 2.0, np.nan, 1.0]), np.array([1.0, 2.0, 2.0, 1.0])) == 1.0


# --- Krippendorff's alpha against the krippendorff package ---------------------------------------

LEVELS = ["nominal", "ordinal", "interval", "ratio"]


def _reliability(rng: np.random.Generator) -> np.ndarray:
    raters, units, k = int(rng.integers(2, 6)), int(rng.integers(2, 40)), int(rng.integers(2, 7))
    truth = rng.integers(0, k, units)
    data = np.where(rng.random((raters, units)) < rng.random(), truth, rng.integers(0, k, (raters, units)))
    data = data.astype(float) + (rng.random() < 0.5) * 1.0  # values from 0 or from 1 (ratio: zeros)
    data[rng.random(data.shape) < rng.random() * 0.5] = np.nan
    return data


@pytest.mark.parametrize("level", LEVELS)
def test_alpha_equals_krippendorff_with_missing_values(level: str) -> None:
    rng = np.random.default_rng(17)
    checked = 0
    while checked < 200:
        data = _reliability(rng)
        values = np.unique(data[~np.isnan(data)])
        if values.size < 2 or not ((~np.isnan(data)).sum(axis=0) >= 2).any():
            assert math.isnan(krippendorff_alpha(data, level=level))  # type: ignore[arg-type]
            continue  # the package raises on these
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            expected = float(krippendorff.alpha(reliability_data=data, level_of_measurement=level))
        assert same(krippendorff_alpha(data, level=level), expected, 1e-9)  # type: ignore[arg-type]
        checked += 1


@pytest.mark.parametrize("level", ["interval", "ratio"])
def test_alpha_equals_krippendorff_on_continuous_values(level: str) -> None:
    rng = np.random.default_rng(3)
    for _ in range(50):
        truth = rng.gamma(2.0, 1.0, 30)
        data = truth + rng.normal(0, rng.random(), (3, 30))
        data[rng.random(data.shape) < 0.2] = np.nan
        expected = krippendorff.alpha(reliability_data=data, level_of_measurement=level)
        assert krippendorff_alpha(data, level=level) == pytest.approx(expected, rel=1e-9, abs=1e-12)  # type: ignore[arg-type]


def test_alpha_documented_values_and_inputs() -> None:
    nan = np.nan
    data = [
        [nan, nan, nan, nan, nan, 3, 4, 1, 2, 1, 1, 3, 3, nan, 3],
        [1, nan, 2, 1, 3, 3, 4, 3, nan, nan, nan, nan, nan, nan, nan],
        [nan, nan, 2, 1, 3, 4, 4, nan, 2, 1, 1, 3, 3, nan, 4],
    ]
    assert krippendorff_alpha(data) == pytest.approx(0.691358, abs=1e-6)
    assert krippendorff_alpha(data, level="interval") == pytest.approx(0.810845, abs=1e-6)
    with_none = [[None if isinstance(v, float) and math.isnan(v) else v for v in row] for row in data]
    assert krippendorff_alpha(with_none) == krippendorff_alpha(np.array(data))
    # nominal labels of any hashable kind; NaN coerced to "nan" in a string array is missing, as in the package
    words = np.array([["a", "b", "c", "a", "nan"], ["a", "b", "b", "a", "c"], ["nan", "b", "c", "a", "c"]])
    expected = krippendorff.alpha(reliability_data=words, level_of_measurement="nominal")
    assert krippendorff_alpha(words) == pytest.approx(expected, abs=1e-12)
    assert krippendorff_alpha([["a", "b", "c", "a", None], ["a", "b", "b", "a", "c"]]) == pytest.approx(
        krippendorff.alpha(reliability_data=words[:2], level_of_measurement="nominal"), abs=1e-12
    )


# --- bootstrap intervals -------------------------------------------------------------------------


def test_intervals_are_deterministic_given_the_seed() -> None:
    rng = np.random.default_rng(1)
    a = rng.integers(0, 3, 60)
    b = np.where(rng.random(60) < 0.7, a, rng.integers(0, 3, 60))
    first = kappa_with_ci(a, b, seed=4)
    assert first == kappa_with_ci(a, b, seed=4)
    assert first.value == cohen_kappa(a, b) and first.n == 60 and first.reason == ""
    assert first.ci_low < first.value < first.ci_high
    assert (first.ci_low, first.ci_high) != (kappa_with_ci(a, b, seed=5).ci_low, kappa_with_ci(a, b, seed=5).ci_high)
    assert first.text == f"kappa {first.value:.2f} [{first.ci_low:.2f}, {first.ci_high:.2f}] (n=60)"
    data = np.vstack([a, b, np.where(rng.random(60) < 0.2, np.nan, a)])
    alpha = alpha_with_ci(data, level="ordinal", seed=4)
    assert alpha == alpha_with_ci(data, level="ordinal", seed=4)
    assert alpha.value == krippendorff_alpha(data, level="ordinal") and alpha.n == 60
    assert alpha.text.startswith("alpha (ordinal) ") and alpha.record()["statistic"] == "krippendorff_alpha"


def test_bootstrap_matches_resampling_units_directly() -> None:
    # The multinomial shortcut has the distribution of resampling cases with replacement.
    rng = np.random.default_rng(8)
    a = rng.integers(0, 3, 80)
    b = np.where(rng.random(80) < 0.6, a, rng.integers(0, 3, 80))
    idx = rng.integers(0, 80, (4000, 80))
    direct = np.array([cohen_kappa(a[i], b[i], weights="linear") for i in idx])
    lo, hi = np.quantile(direct, [0.025, 0.975])
    fast = kappa_with_ci(a, b, weights="linear", resamples=4000)
    assert fast.ci_low == pytest.approx(lo, abs=0.02) and fast.ci_high == pytest.approx(hi, abs=0.02)
    data = np.vstack([a, b, np.where(rng.random(80) < 0.3, np.nan, b)]).astype(float)
    direct = np.array([krippendorff_alpha(data[:, i], level="interval") for i in idx[:2000]])
    lo, hi = np.quantile(direct, [0.025, 0.975])
    fast = alpha_with_ci(data, level="interval", resamples=2000)
    assert fast.ci_low == pytest.approx(lo, abs=0.02) and fast.ci_high == pytest.approx(hi, abs=0.02)


# A 2 x 2 population: P(1,1) = .45, P(0,0) = .35, P(1,0) = P(0,1) = .10; both marginals .55 / .45,
# so kappa = (0.80 - 0.505) / (1 - 0.505) and alpha tends to the same value.
TABLE = np.array([[0.35, 0.10], [0.10, 0.45]])
KAPPA = (0.80 - 0.505) / (1 - 0.505)


def _coverage(statistic: str, replications: int, n: int, seed: int) -> float:
    rng = np.random.default_rng(seed)
    cells = rng.choice(4, size=(replications, n), p=TABLE.ravel())
    hits = 0
    for i in range(replications):
        a, b = cells[i] // 2, cells[i] % 2
        if statistic == "kappa":
            result = kappa_with_ci(a, b, resamples=1000, seed=i)
        else:
            result = alpha_with_ci(np.vstack([a, b]), resamples=1000, seed=i)
        hits += result.ci_low <= KAPPA <= result.ci_high
    return hits / replications


@pytest.mark.parametrize("statistic", ["kappa", "alpha"])
def test_bootstrap_interval_covers_a_known_value(statistic: str) -> None:
    # Measured with 2,000 replications (seed 99): kappa 0.940, alpha 0.944 (n=100, nominal 0.95).
    assert _coverage(statistic, 200, 100, seed=11) >= 0.90


# --- degenerate inputs: NaN with a reason, never an exception ------------------------------------


def test_kappa_degenerate_inputs() -> None:
    one = kappa_with_ci(["yes"] * 10, ["yes"] * 10)
    assert math.isnan(one.value) and math.isnan(one.ci_low) and "one and the same category" in one.reason
    assert "n/a" in one.text
    missing = kappa_with_ci([None, float("nan")], ["a", "b"])
    assert missing.n == 0 and math.isnan(missing.value) and missing.reason == "no complete pair of labels"
    assert math.isnan(cohen_kappa([], []))
    small = kappa_with_ci([1, 2, 1, 2], [1, 2, 2, 2])
    assert small.n == 4 < MIN_UNITS and not math.isnan(small.value) and math.isnan(small.ci_low)
    assert "fewer than 5 units" in small.reason and "no interval" in small.text
    # one rare category: most resamples still hold both, but not enough of them
    rare = kappa_with_ci([0] * 19 + [1], [0] * 19 + [1])
    assert rare.value == 1.0 and math.isnan(rare.ci_high) and "resamples" in rare.reason
    # one rater constant, the other not: kappa is 0, not undefined
    assert cohen_kappa([1, 1, 1, 1], [1, 0, 1, 0]) == 0.0 == sk_kappa([1, 1, 1, 1], [1, 0, 1, 0])


def test_alpha_degenerate_inputs() -> None:
    nothing = alpha_with_ci(np.full((3, 6), np.nan))
    assert nothing.n == 0 and math.isnan(nothing.value) and nothing.reason == "no ratings"
    single = alpha_with_ci([[1, 1, 1, 1, 1, 1], [1, 1, None, 1, 1, 1]])
    assert math.isnan(single.value) and "one value" in single.reason
    unpaired = alpha_with_ci([[1, None, 2, None], [None, 2, None, 1]])
    assert unpaired.n == 0 and math.isnan(unpaired.value) and "two or more ratings" in unpaired.reason
    same_values = alpha_with_ci([[1, 1, 1, 2, None], [1, 1, 1, None, 2]], level="interval")
    assert math.isnan(same_values.value) and "same value" in same_values.reason
    small = alpha_with_ci([[1, 2, 3, 1], [1, 2, 3, 2]], level="ordinal")
    assert small.n == 4 and not math.isnan(small.value) and math.isnan(small.ci_low) and "fewer than" in small.reason


def test_binary_agreement_counts_rates_and_kappa() -> None:
    predicted = [True, True, False, False, True, 1, 0, None, True, False] * 6
    human = [True, False, False, True, True, 1, 0, True, np.nan, False] * 6
    result = binary_agreement(predicted, human)
    assert isinstance(result, BinaryAgreement) and isinstance(result.kappa, Agreement)
    assert (result.n, result.true_positive, result.false_positive) == (48, 18, 6)
    assert (result.true_negative, result.false_negative) == (18, 6)
    assert result.accuracy == 36 / 48 and result.sensitivity == 18 / 24 and result.specificity == 18 / 24
    kept = [(p, h) for p, h in zip(predicted, human) if p is not None and h == h]
    assert result.kappa.value == pytest.approx(sk_kappa([bool(p) for p, _ in kept], [bool(h) for _, h in kept]))
    record = result.record()
    assert record["kappa"] == result.kappa.value and record["confidence"] == 0.95 and "kappa_reason" in record
    assert result.text.startswith("accuracy 0.75, sensitivity 0.75, specificity 0.75, kappa 0.50 [")
    all_yes = binary_agreement([True, False, True], [True, True, True])
    assert math.isnan(all_yes.specificity) and all_yes.sensitivity == 2 / 3 and "specificity n/a" in all_yes.text
    assert binary_agreement([], []).n == 0


# --- invalid input: a one-line ValueError naming the argument ------------------------------------


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: cohen_kappa([1, 2], [1]), "a and b must have equal lengths"),
        (lambda: cohen_kappa([1, 2], [1, 2], weights="cubic"), "weights must be"),  # type: ignore[arg-type]
        (lambda: cohen_kappa("abc", "abd"), "a must be a sequence"),
        (lambda: cohen_kappa(np.zeros((2, 2)), [1, 2]), "a must be 1-D"),
        (lambda: cohen_kappa([[1], [2]], [1, 2]), "labels must be hashable"),
        (lambda: cohen_kappa([1, "x"], [1, 1], weights="linear"), "weighted kappa needs labels that sort"),
        (lambda: cohen_kappa([1, 2], [1, 2], labels=[1, 1, 2]), "labels must not repeat"),
        (lambda: kappa_with_ci([1, 2], [1, 2], confidence=1.0), "confidence must be in"),
        (lambda: kappa_with_ci([1, 2], [1, 2], resamples=0), "resamples must be"),
        (lambda: krippendorff_alpha([[1, 2]], level="bogus"), "level must be one of"),  # type: ignore[arg-type]
        (lambda: krippendorff_alpha([1, 2, 3]), "data must be a raters x units array"),
        (lambda: krippendorff_alpha(np.ones(3)), "data must be a raters x units array"),
        (lambda: krippendorff_alpha([[1.0, np.inf], [1.0, 2.0]]), "data must be finite"),
        (lambda: krippendorff_alpha([["lo", "hi"], ["hi", "hi"]], level="ordinal"), "data must hold numbers"),
        (lambda: binary_agreement([True, "yes"], [True, True]), "predicted must hold bools"),
        (lambda: binary_agreement([True], [0.5]), "human must hold bools"),
        (lambda: binary_agreement([True], [True, False]), "equal lengths"),
    ],
)
def test_invalid_input_raises_one_line_value_error(call: object, message: str) -> None:
    with pytest.raises(ValueError, match=message) as info:
        call()  # type: ignore[operator]
    assert "\n" not in str(info.value)


def test_names_are_exported_from_the_package() -> None:
    assert stats.cohen_kappa is cohen_kappa and stats.Agreement is Agreement
    assert {"kappa_with_ci", "alpha_with_ci", "binary_agreement", "BinaryAgreement"} <= set(stats.__all__)
