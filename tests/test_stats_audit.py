"""Audit of heta_nb's comparison statistics, on real report objects (no SciPy/statsmodels needed).

Reference values from SciPy / statsmodels were computed offline (in a scratch venv) and are
pasted as literals; each says how.
"""

from __future__ import annotations

import itertools
import math
import warnings
from typing import Any

import numpy as np
import pytest
from helpers import report_dict

import heta_nb
from heta_nb import stats
from heta_nb.comparison import Comparison, HetaComparisonWarning, compare, p_text
from heta_nb.model.report import EvaluationReport
from heta_nb.render import render_comparison_html
from heta_nb.render.context import comparison_context
from heta_nb.stats.paired import holm, paired_test

# --- real reports ----------------------------------------------------------------------------


def report(
    scores: dict[str, list[Any]],
    *,
    report_id: str = "r",
    mode: str = "m",
    case_ids: list[str] | None = None,
    errors: set[int] | frozenset[int] = frozenset(),
    skipped: dict[str, set[int]] | None = None,
) -> EvaluationReport:
    """A report in Heta's schema: ``scores[metric][i]`` is case i's value (``None`` = no score)."""
    n = len(next(iter(scores.values())))
    ids = case_ids or [f"q{i:04d}" for i in range(n)]
    skipped = skipped or {}
    results = []
    for i, case_id in enumerate(ids):
        failed = i in errors
        results.append(
            {
                "case_id": case_id,
                "query": f"query {case_id}?",
                "query_mode": mode,
                "scores": []
                if failed
                else [
                    {
                        "name": name,
                        "value": values[i],
                        "passed": None,
                        "metadata": {"skipped": True} if i in skipped.get(name, ()) else {},
                    }
                    for name, values in scores.items()
                    if values[i] is not None
                ],
                "response": None
                if failed
                else {"mode": mode, "results": [], "answer": None, "citations": [], "trace": [], "metadata": {}},
                "latency_ms": 1.0,
                "error": {"message": "boom", "error_type": "RuntimeError", "retryable": False, "metadata": {}}
                if failed
                else None,
                "metadata": {"benchmark_run_unit": "corpus", "knowledge_base_name": "kb"},
            }
        )
    data = report_dict(results, report_id=report_id, modes=[mode], benchmark="audit")
    return heta_nb.load_report(data)


def quiet(*args: Any, **kwargs: Any) -> Comparison:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", HetaComparisonWarning)
        return compare(*args, **kwargs)


def brute_force_p(d: np.ndarray) -> float:
    """Two-sided sign-flip p-value by enumerating every sign pattern (zeros included)."""
    observed = abs(float(d.sum()))
    slack = 1e-9 * float(np.abs(d).sum())
    patterns = list(itertools.product((1.0, -1.0), repeat=d.size))
    return sum(abs(float(np.dot(s, d))) >= observed - slack for s in patterns) / len(patterns)


# --- 1. bootstrap CI: coverage and method --------------------------------------------------------


def _coverage(n: int, kind: str, sims: int, seed: int = 7) -> float:
    rng = np.random.default_rng(seed)
    hits = 0
    for i in range(sims):
        if kind == "normal":
            a = rng.normal(0.5, 0.2, n)
            b, true = a + rng.normal(0.05, 0.2, n), 0.05
        else:  # binary 0/1 scores, P(a) = 0.5, P(b) = 0.6 independently
            a = (rng.random(n) < 0.5).astype(float)
            b, true = (rng.random(n) < 0.6).astype(float), 0.1
        t = paired_test(a, b, resamples=500, seed=i)
        hits += t.ci_low <= true <= t.ci_high
    return hits / sims


def test_bootstrap_ci_covers_at_small_n() -> None:
    # The plain percentile interval covered 0.89 (n = 10) and 0.83 (n = 5) of a nominal 95 %
    # (2,000 simulations each); the expanded percentile interval ~0.95 and ~0.91.
    assert _coverage(10, "normal", 1000) >= 0.93
    assert _coverage(5, "normal", 600) >= 0.88


@pytest.mark.parametrize(("n", "kind"), [(30, "normal"), (30, "binary"), (10, "binary")])
def test_bootstrap_ci_coverage_moderate_n(n: int, kind: str) -> None:
    assert 0.925 <= _coverage(n, kind, 500, seed=n) <= 0.985


@pytest.mark.parametrize("kind", ["normal", "binary"])
def test_bootstrap_ci_coverage_n200(kind: str) -> None:
    assert 0.93 <= _coverage(200, kind, 600, seed=200) <= 0.97


def test_expanded_percentile_level_matches_scipy() -> None:
    # 2 * scipy.stats.norm.cdf(-sqrt(n / (n - 1)) * scipy.stats.t.ppf(1 - alpha / 2, n - 1))
    reference = {
        (0.05, 5): 0.0019082011037649814,
        (0.05, 10): 0.017101278048812733,
        (0.05, 30): 0.03750780055644108,
        (0.05, 400): 0.04902325952453517,
        (0.1, 10): 0.05332610386446916,
        (0.1, 30): 0.0839570269839585,
    }
    for (alpha, n), value in reference.items():
        assert stats.expanded_percentile_alpha(alpha, n) == pytest.approx(value, rel=1e-9)
    assert stats.expanded_percentile_alpha(0.05, 1) == 0.05


def test_bootstrap_ci_is_the_expanded_percentile_of_the_resampled_means() -> None:
    d = np.random.default_rng(3).normal(0.1, 1.0, 12)
    t = paired_test(np.zeros(12), d, resamples=4000, seed=1)
    assert "expanded-percentile" in t.method
    # Wider than the plain percentile interval of the same resamples, and holds the mean.
    plain = 1.96 * np.std(d) / math.sqrt(12)
    assert t.ci_high - t.ci_low > 2 * plain
    assert t.ci_low < t.mean_diff < t.ci_high


def test_degenerate_inputs() -> None:
    assert paired_test([], []).n == 0
    one = paired_test([0.2], [0.7])
    assert one.n == 1 and one.p_value == 1.0
    two = paired_test([0.2, 0.3], [0.7, 0.9])
    assert (two.ci_low, two.ci_high) == pytest.approx((0.5, 0.6)) and two.p_value == 0.5  # min/max of d; exact 2/4
    same = paired_test(np.linspace(0, 1, 10), np.linspace(0, 1, 10) + 0.25)
    assert same.ci_low == same.ci_high == pytest.approx(0.25) and same.p_value == pytest.approx(2 / 1024)
    ties = paired_test([0.5] * 9, [0.5] * 9)
    assert ties.p_value == 1.0 and (ties.wins, ties.ties, ties.losses) == (0, 9, 0)
    booleans = paired_test(np.array([True, False, True, False]), np.array([True, True, True, True]))
    assert booleans.mean_diff == 0.5 and booleans.p_value == 0.5
    with pytest.raises(ValueError, match="finite"):
        paired_test([0.0, math.inf], [1.0, 1.0])


# --- 2. permutation p-values ------------------------------------------------------------------


def test_exact_p_matches_brute_force_enumeration() -> None:
    rng = np.random.default_rng(3)
    for trial in range(120):
        n = int(rng.integers(1, 11))
        if trial % 3 == 0:
            d = rng.normal(0.3, 1.0, n)
        elif trial % 3 == 1:
            d = rng.integers(-2, 3, n).astype(float)
        else:  # quarter steps: exact ties between sign patterns
            d = rng.integers(0, 5, n) / 4 - rng.integers(0, 5, n) / 4
        t = paired_test(np.zeros(n), d)
        if np.any(d != 0):
            assert "exact" in t.method
        assert t.p_value == pytest.approx(brute_force_p(d), abs=1e-12), d


def test_monte_carlo_p_is_never_zero_and_valid_under_the_null() -> None:
    rng = np.random.default_rng(11)
    ps = []
    for i in range(400):
        a, b = rng.normal(size=40), rng.normal(size=40)
        ps.append(paired_test(a, b, resamples=199, seed=i).p_value)
    p = np.asarray(ps)
    assert p.min() >= 1 / 200
    assert np.mean(p <= 0.05) <= 0.08 and np.mean(p <= 0.5) <= 0.56  # ~uniform (binomial 4 sd)
    huge = paired_test(np.zeros(200), np.full(200, 0.5), resamples=999)
    assert huge.p_value == 1 / 1000  # (0 + 1) / (999 + 1)
    a, b = rng.random(300), rng.random(300)
    assert paired_test(a, b, seed=5) == paired_test(a, b, seed=5, workers=1)


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


# --- 5. "not comparable" warnings -----------------------------------------------------------------


@pytest.mark.parametrize("bad", ["error", math.nan, math.inf, None])
def test_unscored_cases_left_out_are_warned_about(bad: Any) -> None:
    # An evaluator that raised records "error"; NaN / inf / missing scores are left out too.
    # All of them drop the case for every system, like errored cases, which are warned about.
    base = report({"s": [0.1, 0.2, 0.3, 0.4, 0.5, 0.6]}, report_id="a")
    cand = report({"s": [0.5, bad, 0.7, 0.8, 0.9, 1.0]}, report_id="b")
    with pytest.warns(HetaComparisonWarning, match=r"without a numeric 's' score.*'b' 1 of 6"):
        c = compare(base, cand)
    assert c.overlap.aligned["s"] == 5 and c.overlap.systems[1].metrics["s"].unscored == 1


def test_clean_reports_and_skipped_scores_give_no_warning() -> None:
    base = report({"s": [0.1, 0.2, 0.3, 0.4]}, report_id="a", skipped={"s": {0}})
    cand = report({"s": [0.5, 0.6, 0.7, 0.8]}, report_id="b")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        c = compare(base, cand)
    assert c.warnings == [] and c.notes and c.overlap.aligned["s"] == 3


def test_case_sets_errors_and_duplicates_are_warned_about() -> None:
    base = report({"s": [0.0, 0.1, 0.2, 0.3]}, report_id="a", case_ids=["x", "x", "y", "z"], errors={3})
    cand = report({"s": [0.5, 0.6, 0.7, 0.8]}, report_id="b", case_ids=["x", "y", "z", "w"])
    c = quiet(base, cand)
    text = " | ".join(c.warnings)
    assert "case sets differ" in text and "errored cases" in text and "repeated result" in text
    assert c.test("b", "s").n == 2  # x (first result) and y


# --- 7. numbers shown ----------------------------------------------------------------------------

# Exact sign-flip p = 12 / 256 = 0.046875 (8 non-zero differences).
_D = [-0.25, 0.25, 0.5, 0.75, 0.25, 0.0, 0.0, 0.25, 0.25, 0.5]


def _near_alpha(alpha: float) -> Comparison:
    base = report({"s": [0.25] * len(_D)}, report_id="a")
    cand = report({"s": [0.25 + d for d in _D]}, report_id="b")
    return quiet(base, cand, alpha=alpha)


def test_verdict_p_is_not_rounded_onto_alpha() -> None:
    c = _near_alpha(0.05)
    t = c.test("b", "s")
    assert t.p_value == pytest.approx(12 / 256) and c.significant("b", "s")
    assert c.verdict("b", "s") == "better (p=0.047)"  # was "better (p=0.05)" at alpha 0.05
    assert "better (p=0.047)" in render_comparison_html(c) and "p=0.05)" not in repr(c)


def test_html_p_is_on_the_same_side_of_alpha_as_the_verdict() -> None:
    c = _near_alpha(0.04688)  # p = 0.046875 < alpha, but "0.0469" (3 digits) is not
    row = comparison_context(c)["rows"][0]
    assert row["significant"] and row["verdict"].startswith("better")
    assert float(row["p"]) < c.alpha and row["p"] == "0.046875"
    assert p_text(0.0504, 0.05) == "0.05" and p_text(0.0496, 0.05) == "0.0496"
    assert p_text(0.0496) == "0.05" and p_text(0.0004, 0.05) == "<0.001"


def test_html_ci_and_sign_agree_with_the_frame() -> None:
    rng = np.random.default_rng(2)
    a = rng.random(60).round(3)
    base = report({"s": a.tolist(), "t": a.tolist()}, report_id="a")
    cand = report({"s": np.clip(a + rng.normal(0.1, 0.2, 60), 0, 1).round(3).tolist(), "t": a.tolist()}, report_id="b")
    c = quiet(base, cand, resamples=2000)
    frame = c.summary_frame().set_index("metric")
    rows = {r["metric"]: r for r in comparison_context(c)["rows"]}
    for metric, row in rows.items():
        f = frame.loc[metric]
        assert f["ci_low"] <= f["mean_diff"] <= f["ci_high"]
        assert row["diff"] == f"{f['mean_diff']:+.3f}" and row["ci"] == f"[{f['ci_low']:+.3f}, {f['ci_high']:+.3f}]"
        assert row["significant"] == (f["p_adjusted"] < c.alpha)
        if row["bar"] is not None:
            assert row["bar"]["lo"] <= row["bar"]["mid"] <= row["bar"]["hi"]
    assert rows["s"]["verdict"].startswith("better") and rows["t"]["verdict"].startswith("no detectable")
