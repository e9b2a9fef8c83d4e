"""Clustered intervals of a paired mean difference: the cluster-robust SE against statsmodels OLS
(``cov_type="cluster"``), coverage by simulation (clustered vs naive), the cluster bootstrap, edge
cases and input checks."""

from __future__ import annotations

import math

import numpy as np
import pytest

from heta_nb import stats
from heta_nb.stats.clustered import ClusteredInterval, clustered_mean_difference
from heta_nb.stats.intervals import student_t_ppf, t_interval

sm = pytest.importorskip("statsmodels.api")


def _clustered_data(rng: np.random.Generator, clusters: int, size: int, icc: float, mu: float = 0.0):
    """Normal differences with intra-cluster correlation ``icc`` (unit variance), and their cluster labels."""
    labels = np.repeat(np.arange(clusters), size)
    shared = rng.normal(0.0, math.sqrt(icc), clusters)[labels]
    return mu + shared + rng.normal(0.0, math.sqrt(1.0 - icc), labels.size), labels


def test_robust_se_matches_statsmodels_cluster_ols() -> None:
    rng = np.random.default_rng(3)
    for trial in range(40):
        g = int(rng.integers(2, 80))
        labels = rng.integers(0, g, size=int(rng.integers(g, 6 * g + 2)))
        d = rng.normal(rng.normal(), 1.0, labels.size) + rng.normal(0, 1, g)[labels]
        if trial % 3 == 0:
            d = np.round(d)  # discrete scores
        ours = clustered_mean_difference(d, labels, method="robust")
        fit = sm.OLS(d, np.ones(d.size)).fit(cov_type="cluster", cov_kwds={"groups": labels}, use_t=True)
        assert ours.estimate == pytest.approx(float(fit.params[0]), abs=1e-12)
        assert ours.se == pytest.approx(float(fit.bse[0]), rel=1e-10)
        g_used = len(np.unique(labels))
        assert ours.clusters == g_used and ours.df == g_used - 1 == int(fit.df_resid_inference)
        low, high = fit.conf_int(alpha=0.05)[0]
        assert (ours.ci_low, ours.ci_high) == pytest.approx((low, high), rel=1e-9, abs=1e-12)


def test_singleton_clusters_give_the_naive_interval() -> None:
    d = np.random.default_rng(0).normal(size=30)
    result = clustered_mean_difference(d, range(30), method="robust")
    assert result.se == pytest.approx(result.naive_se, rel=1e-12)
    assert result.design_effect == pytest.approx(1.0, rel=1e-12)
    assert (result.naive_ci_low, result.naive_ci_high) == pytest.approx(t_interval(list(d)), rel=1e-12)
    assert result.ci_low == pytest.approx(result.estimate - student_t_ppf(0.975, 29) * result.se, rel=1e-12)


def _coverage(seed: int, replications: int = 1000) -> tuple[float, float]:
    rng = np.random.default_rng(seed)
    covered = naive = 0
    for _ in range(replications):
        d, labels = _clustered_data(rng, clusters=60, size=5, icc=0.3, mu=0.2)
        r = clustered_mean_difference(d, labels, method="robust")
        covered += r.ci_low <= 0.2 <= r.ci_high
        naive += r.naive_ci_low <= 0.2 <= r.naive_ci_high
    return covered / replications, naive / replications


@pytest.mark.parametrize("seed", [11, 12, 13])
def test_robust_coverage_while_naive_undercovers(seed: int) -> None:
    """60 clusters of 5, ICC 0.3 (design effect ~2.2): robust covers >= 0.94, naive ~0.84."""
    robust, naive = _coverage(seed)
    assert robust >= 0.94, robust
    assert naive <= 0.88, naive


def test_bootstrap_coverage() -> None:
    rng = np.random.default_rng(21)
    covered = naive = 0
    replications = 400
    for i in range(replications):
        d, labels = _clustered_data(rng, clusters=60, size=5, icc=0.3, mu=-0.1)
        r = clustered_mean_difference(d, labels, resamples=1000, seed=i)
        covered += r.ci_low <= -0.1 <= r.ci_high
        naive += r.naive_ci_low <= -0.1 <= r.naive_ci_high
    assert covered / replications >= 0.93, covered / replications
    assert naive / replications <= 0.9, naive / replications


def test_bootstrap_agrees_with_robust_and_is_reproducible() -> None:
    d, labels = _clustered_data(np.random.default_rng(5), clusters=40, size=6, icc=0.4)
    robust = clustered_mean_difference(d, labels, method="robust")
    boot = clustered_mean_difference(d, labels, resamples=20_000, seed=1)
    assert boot.method == "bootstrap" and boot.df is None and boot.resamples == 20_000 and boot.seed == 1
    assert boot.estimate == robust.estimate
    # The bootstrap SD lacks CR1's G / (G - 1): sqrt(39 / 40) of it, up to resampling noise.
    assert boot.se == pytest.approx(robust.se * math.sqrt(39 / 40), rel=0.03)
    assert boot.ci_low == pytest.approx(robust.ci_low, abs=0.15 * robust.se)
    assert boot.ci_high == pytest.approx(robust.ci_high, abs=0.15 * robust.se)
    assert clustered_mean_difference(d, labels, resamples=500, seed=1) == clustered_mean_difference(
        d, labels, resamples=500, seed=1
    )
    fresh = clustered_mean_difference(d, labels, resamples=500, seed=None)
    assert fresh == clustered_mean_difference(d, labels, resamples=500, seed=fresh.seed)


def test_labels_order_and_nan_dropping() -> None:
    d = np.array([0.1, 0.3, np.nan, -0.2, 0.5, 0.4])
    labels = ["doc-b", "doc-a", "doc-c", "doc-b", "doc-a", "doc-d"]
    r = clustered_mean_difference(d, labels, method="robust", unit="documents")
    assert (r.n, r.clusters) == (5, 3)  # doc-c held only the missing case
    same = clustered_mean_difference(d[[4, 1, 3, 0, 5, 2]], [labels[i] for i in (4, 1, 3, 0, 5, 2)], method="robust")
    assert same.se == pytest.approx(r.se, rel=1e-12)


def test_text_and_record() -> None:
    d, labels = _clustered_data(np.random.default_rng(8), clusters=40, size=5, icc=0.3, mu=0.05)
    r = clustered_mean_difference(d, labels, method="robust", unit="documents")
    assert r.text.startswith(f"mean difference {r.estimate:+.3f}, 95% CI [{r.ci_low:+.3f}, {r.ci_high:+.3f}]")
    assert "clustered by 40 documents (cluster-robust, t with 39 df); ignoring the clustering gives [" in r.text
    assert r.text.endswith(f"(design effect {r.design_effect:.2f}, n=200)")
    record = r.record()
    assert record["design_effect"] == r.design_effect and record["naive_se"] == r.naive_se
    assert "cluster bootstrap" in clustered_mean_difference(d, labels, resamples=200).text


def test_undefined_cases() -> None:
    empty = clustered_mean_difference([np.nan], ["a"])
    assert empty.n == 0 and math.isnan(empty.estimate) and "n/a" in empty.text and empty.reason
    one = clustered_mean_difference([0.1, 0.3, 0.2], ["a", "a", "a"], unit="topics")
    assert one.estimate == pytest.approx(0.2) and math.isnan(one.ci_low) and math.isnan(one.se)
    assert one.text == "mean difference +0.200, no clustered interval: one topic: no spread between clusters " + (
        "(n=3, 1 topics)"
    )
    flat = clustered_mean_difference([0.2, 0.2, 0.2, 0.2], [1, 1, 2, 2], method="robust")
    assert flat.se == 0.0 and flat.ci_low == flat.ci_high == pytest.approx(0.2)
    assert math.isnan(flat.design_effect) and "no spread" in flat.reason


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"diffs": [0.1, 0.2], "clusters": [1]}, "diffs and clusters must have equal lengths"),
        ({"diffs": [0.1, np.inf], "clusters": [1, 2]}, "diffs must be finite"),
        ({"diffs": [[0.1]], "clusters": [1]}, "diffs must be 1-D"),
        ({"diffs": ["x"], "clusters": [1]}, "diffs must be numbers"),
        ({"diffs": [0.1, 0.2], "clusters": [1, None]}, "clusters must not have missing labels"),
        ({"diffs": [0.1, 0.2], "clusters": [[1], [2]]}, "clusters: labels must be hashable"),
        ({"diffs": [0.1, 0.2], "clusters": "ab"}, "clusters must be a sequence"),
        ({"diffs": [0.1, 0.2], "clusters": [1, 2], "method": "cr3"}, "method must be"),
        ({"diffs": [0.1, 0.2], "clusters": [1, 2], "confidence": 1.0}, "confidence must be in"),
        ({"diffs": [0.1, 0.2], "clusters": [1, 2], "resamples": 0}, "resamples must be a positive integer"),
    ],
)
def test_bad_input(kwargs: dict, match: str) -> None:
    with pytest.raises(ValueError, match=match):
        clustered_mean_difference(**kwargs)


def test_exported_lazily() -> None:
    assert stats.clustered_mean_difference is clustered_mean_difference
    assert stats.ClusteredInterval is ClusteredInterval


def test_robust_p_value_matches_statsmodels_cluster_ols() -> None:
    rng = np.random.default_rng(11)
    for _ in range(20):
        g = int(rng.integers(3, 40))
        labels = rng.integers(0, g, size=5 * g)
        d = rng.normal(0.2, 1.0, labels.size) + rng.normal(0, 1, g)[labels]
        ours = clustered_mean_difference(d, labels, method="robust")
        fit = sm.OLS(d, np.ones(d.size)).fit(cov_type="cluster", cov_kwds={"groups": labels}, use_t=True)
        assert ours.p_value == pytest.approx(float(fit.pvalues[0]), rel=1e-6)


def test_cluster_sign_flip_holds_its_level_where_the_case_level_test_does_not() -> None:
    """Under no difference, with cases moving together in clusters (ICC 0.3), the cluster sign-flip
    test rejects at about its level; a sign-flip over single cases rejects far too often."""
    from heta_nb.stats.paired import paired_test

    rng = np.random.default_rng(5)
    reps, g, size = 400, 24, 5
    labels = np.repeat(np.arange(g), size)
    clustered = naive = 0
    for rep in range(reps):
        d = rng.normal(0, np.sqrt(0.3), g)[labels] + rng.normal(0, np.sqrt(0.7), labels.size)
        clustered += clustered_mean_difference(d, labels, resamples=400, seed=rep).p_value < 0.05
        naive += paired_test(np.zeros(d.size), d, resamples=400, seed=rep).p_value < 0.05
    assert 0.02 <= clustered / reps <= 0.08  # ~0.05
    assert naive / reps > 0.15  # the case-level test ignores the clustering
