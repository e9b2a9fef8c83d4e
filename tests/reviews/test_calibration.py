"""Metrics against people (accuracy, rates, kappa, calibrated or not and why), people against each
other, and prediction-powered estimates from a report and its reviews — with scikit-learn,
krippendorff and ppi-python as oracles."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pandas as pd
import pytest

import heta_nb
from heta_nb.benchmark import Benchmark
from heta_nb.reviews.calibration import calibrate, reviewer_agreement
from heta_nb.reviews.estimates import ppi, ppi_difference
from heta_nb.stats.ppi import ppi_mean

MANIFEST = {"name": "truth", "version": "1", "split": "test", "task_type": "qa"}


def known_truth(n: int, seed: int) -> tuple[Any, dict[str, bool], dict[str, bool]]:
    """A report whose ``judge_like`` agrees with a known truth on ~90% of cases (``noisy`` on ~55%)."""
    rng = np.random.default_rng(seed)
    truth = {f"c{i:04d}": bool(rng.random() < 0.7) for i in range(n)}
    good = {c: (t if rng.random() < 0.9 else not t) for c, t in truth.items()}
    noisy = {c: (t if rng.random() < 0.55 else not t) for c, t in truth.items()}
    bench = Benchmark.from_frame(
        pd.DataFrame([{"case_id": c, "query": f"question {c}", "answers": ["x"]} for c in truth]), manifest=MANIFEST
    )

    def judge_like(case: Any, response: Any) -> dict[str, Any]:
        return {"value": good[case.case_id], "passed": good[case.case_id]}

    def noisy_metric(case: Any, response: Any) -> float:
        return 1.0 if noisy[case.case_id] else 0.0

    def kb(query: str) -> dict[str, Any]:
        return {"answer": "an answer of " + "word " * (len(query) % 7), "results": [{"id": "d", "text": "t"}]}

    report = heta_nb.evaluate(bench, kb=kb, evaluators=[judge_like, noisy_metric], store=None, progress=False)
    return report, truth, good


def reviews_of(
    truth: dict[str, bool], cases: list[str], reviewer: str = "ana", flip: float = 0.0, seed: int = 0
) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    rows = []
    for case in cases:
        verdict = truth[case] if rng.random() >= flip else not truth[case]
        rows.append({"case_id": case, "query_mode": "full_text_search", "reviewer": reviewer,
                     "verdict": "correct" if verdict else "wrong", "value": 1.0 if verdict else 0.0})  # fmt: skip
    return pd.DataFrame(rows)


def test_a_good_judge_is_calibrated_and_a_noisy_metric_is_not_with_sklearns_kappa() -> None:
    from sklearn.metrics import cohen_kappa_score

    report, truth, good = known_truth(300, seed=1)
    reviewed = sorted(truth)[:80]
    calibration = calibrate(report, reviews_of(truth, reviewed))
    judge_row = calibration.metrics["judge_like"]
    assert judge_row.n == 80 and judge_row.calibrated
    expected = cohen_kappa_score([good[c] for c in reviewed], [truth[c] for c in reviewed])
    assert judge_row.agreement is not None and judge_row.agreement.kappa.value == pytest.approx(expected, abs=1e-12)
    agreement = judge_row.agreement
    assert agreement.accuracy == pytest.approx(np.mean([good[c] == truth[c] for c in reviewed]))
    assert agreement.true_positive + agreement.false_negative == sum(truth[c] for c in reviewed)
    noisy = calibration.metrics["noisy_metric"]
    assert not noisy.calibrated and "below the floor 0.6" in noisy.reason
    few = calibrate(report, reviews_of(truth, reviewed[:30]))
    assert not few.is_calibrated("judge_like") and few.why("judge_like").startswith("30 reviewed of the 50 needed")
    assert "judge_like: calibrated (kappa" in repr(calibration)
    assert set(calibration.table()["metric"]) == {"judge_like", "noisy_metric"}
    assert math.isfinite(judge_row.length_bias["metric"]) or math.isnan(judge_row.length_bias["metric"])


def test_reviewers_against_each_other_kappa_for_two_alpha_for_more() -> None:
    import krippendorff
    from sklearn.metrics import cohen_kappa_score

    _, truth, _ = known_truth(120, seed=2)
    cases = sorted(truth)[:100]
    two = pd.concat([reviews_of(truth, cases, "ana", 0.1, 1), reviews_of(truth, cases, "bo", 0.2, 2)])
    agreement, table = reviewer_agreement(two)
    a = two[two.reviewer == "ana"].set_index("case_id")["value"]
    b = two[two.reviewer == "bo"].set_index("case_id")["value"]
    assert agreement is not None and agreement.value == pytest.approx(cohen_kappa_score(a[cases], b[cases]), abs=1e-12)
    assert table["spread"].iloc[0] == 1.0 and table["spread"].is_monotonic_decreasing  # disagreements first
    three = pd.concat([two, reviews_of(truth, cases[:60], "cy", 0.3, 3)])
    agreement, _ = reviewer_agreement(three)
    wide = three.pivot_table(index="case_id", columns="reviewer", values="value", aggfunc="last").reindex(cases)
    expected = krippendorff.alpha(reliability_data=wide.to_numpy().T, level_of_measurement="ordinal")
    assert agreement is not None and agreement.statistic == "krippendorff_alpha"
    assert agreement.value == pytest.approx(expected, abs=1e-9)


def test_ppi_from_a_report_and_its_reviews_is_the_estimate_of_its_arrays() -> None:
    """The report-level call feeds the right arrays (tests/stats/test_ppi.py holds ppi_mean to ppi-python)."""
    report, truth, good = known_truth(600, seed=3)
    reviewed = sorted(truth)[::6]
    found = ppi(report, "judge_like", reviews_of(truth, reviewed))
    y = np.array([float(truth[c]) for c in reviewed])
    yhat = np.array([float(good[c]) for c in reviewed])
    unlabeled = np.array([float(good[c]) for c in sorted(truth) if c not in set(reviewed)])
    ours = ppi_mean(y, yhat, unlabeled)
    assert (found.estimate, found.ci_low, found.ci_high) == (ours.estimate, ours.ci_low, ours.ci_high)
    assert found.n_labeled == len(reviewed) and found.n_unlabeled == 600 - len(reviewed)
    assert found.classical_estimate == pytest.approx(y.mean())
    assert found.ci_high - found.ci_low < found.classical_ci_high - found.classical_ci_low  # a good judge helps
    with pytest.raises(ValueError, match="at least 2 are needed"):
        ppi(report, "judge_like", reviews_of(truth, reviewed[:1]))


def test_the_paired_difference_of_two_recipes() -> None:
    report_a, truth, _ = known_truth(300, seed=4)
    report_b, _, _ = known_truth(300, seed=4)
    reviewed = sorted(truth)[:60]
    found = ppi_difference(report_a, report_b, "judge_like", reviews_of(truth, reviewed), reviews_of(truth, reviewed))
    assert found.kind == "difference" and found.estimate == pytest.approx(0.0, abs=1e-12)
    assert found.ci_low <= 0.0 <= found.ci_high


def test_the_calibration_shows_escaped_in_a_notebook() -> None:
    report, truth, _ = known_truth(120, seed=6)
    reviews = reviews_of(truth, sorted(truth)[:60])
    html = calibrate(report, reviews)._repr_html_()
    assert "kappa &gt;= 0.6 on &gt;= 50" in html and "<td>judge_like</td>" in html
