"""compare()'s statistics against scipy and independently aligned arrays."""

from __future__ import annotations

import math
import warnings
from typing import Any

import numpy as np
import pytest
from helpers import report_dict
from scipy import stats

import heta_nb
import heta_nb.demo
from heta_nb.comparison import Comparison, HetaComparisonWarning, compare
from heta_nb.model.report import EvaluationReport
from heta_nb.stats.batch import paired_tests
from heta_nb.stats.paired import PairedTest, paired_test
from heta_nb.testing import synthetic_report

SYNTH_METRICS = ("evidence_recall@5", "answer_contains", "beir_ndcg@5")


# --- helpers ---------------------------------------------------------------------------------


def quiet_compare(*args: Any, **kwargs: Any) -> Comparison:
    """compare() with HetaComparisonWarning silenced (for tests that check .warnings)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", HetaComparisonWarning)
        return compare(*args, **kwargs)


def strict_compare(*args: Any, **kwargs: Any) -> Comparison:
    """compare() that fails on any warning."""
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        return compare(*args, **kwargs)


def usable(report: EvaluationReport, case_id: str, mode: str, metric: str, include_skipped: bool) -> float | None:
    """A score read straight from the report (independent of compare's arrays)."""
    try:
        result = report.case(case_id, mode)
    except KeyError:
        return None
    if not result.ok:
        return None
    score = result.score(metric)
    if score is None or score.numeric is None or (score.skipped and not include_skipped):
        return None
    return score.numeric


def aligned_by_hand(
    reports: list[EvaluationReport], mode: str, metric: str, include_skipped: bool = False
) -> tuple[list[str], list[np.ndarray]]:
    """Case ids (baseline order) and per-report values where every report has a usable score."""
    ids = list(dict.fromkeys(r.case_id for r in reports[0].case_results if r.query_mode == mode))
    kept, columns = [], [[] for _ in reports]
    for case_id in ids:
        values = [usable(r, case_id, mode, metric, include_skipped) for r in reports]
        if all(v is not None for v in values):
            kept.append(case_id)
            for column, value in zip(columns, values):
                column.append(value)
    return kept, [np.asarray(c, dtype=float) for c in columns]


def fast_report_dict(
    n: int,
    *,
    metrics: tuple[str, ...] = ("m1", "m2", "m3", "m4", "m5"),
    modes: tuple[str, ...] = ("full_text_search",),
    shift: float = 0.0,
    seed: int = 0,
    report_id: str = "r",
) -> dict[str, Any]:
    """A small-response report dict in the real schema (fast to build at 10,000 cases)."""
    rng = np.random.default_rng(seed)
    values = np.clip(rng.random((len(modes), n, len(metrics))) + shift, 0.0, 1.0).round(4).tolist()
    results = []
    for i in range(n):
        for k, mode in enumerate(modes):
            results.append(
                {
                    "case_id": f"q{i:05d}",
                    "query": f"query {i}?",
                    "query_mode": mode,
                    "scores": [
                        {"name": m, "value": values[k][i][j], "passed": None, "metadata": {}}
                        for j, m in enumerate(metrics)
                    ],
                    "response": {
                        "mode": mode,
                        "results": [],
                        "answer": None,
                        "citations": [],
                        "trace": [],
                        "metadata": {},
                    },
                    "latency_ms": 1.0,
                    "error": None,
                    "metadata": {"benchmark_run_unit": "corpus", "knowledge_base_name": "kb"},
                }
            )
    return report_dict(results, report_id=report_id, modes=modes, benchmark="fast")


def test_matches_batched_tests_on_independently_aligned_arrays() -> None:
    a = synthetic_report(150, modes=("m",), seed=11, error_rate=0.05, report_id="a")
    b = synthetic_report(150, modes=("m",), seed=12, error_rate=0.05, report_id="b")
    c = quiet_compare(a, b, resamples=2000, seed=7)
    ids_all = list(dict.fromkeys(r.case_id for r in a.case_results if r.query_mode == "m"))
    by_metric = {metric: aligned_by_hand([a, b], "m", metric) for metric in SYNTH_METRICS}
    # one set of resamples: every case of the comparison (errored ones too: the number of cases is the
    # benchmark's whatever is compared), each metric's cases picked out by a mask
    universe = ids_all
    rows_a, rows_b, masks = [], [], []
    for metric in SYNTH_METRICS:
        ids, (x, y) = by_metric[metric]
        assert c.overlap.aligned[metric] == len(ids)
        assert list(c.cases_frame(metric)["case_id"]) == ids
        np.testing.assert_array_equal(c.deltas(metric), y - x)
        where = {case: k for k, case in enumerate(ids)}
        masks.append([case in where for case in universe])
        rows_a.append([x[where[case]] if case in where else 0.0 for case in universe])
        rows_b.append([y[where[case]] if case in where else 0.0 for case in universe])
    expected = paired_tests(rows_a, rows_b, masks, resamples=2000, seed=7, tie_tolerance=1e-9)
    for metric, want in zip(SYNTH_METRICS, expected):
        got = c.test("b", metric)
        assert got == PairedTest(**{**want.__dict__, "p_value_adjusted": got.p_value_adjusted})
        # the one-pair test draws its own resamples: the same statistics within Monte Carlo error
        _, (x, y) = by_metric[metric]
        single = paired_test(x, y, resamples=2000, seed=7, tie_tolerance=1e-9)
        assert (got.n, got.mean_diff, got.wins, got.ties, got.losses) == (
            single.n, single.mean_diff, single.wins, single.ties, single.losses,
        )  # fmt: skip
        se = float(np.std(y - x, ddof=1) / math.sqrt(got.n))
        assert got.p_value == pytest.approx(single.p_value, abs=0.05)
        assert got.ci_low == pytest.approx(single.ci_low, abs=0.4 * se)
        assert got.ci_high == pytest.approx(single.ci_high, abs=0.4 * se)


def test_agrees_with_scipy_resampling() -> None:
    base = fast_report_dict(400, metrics=("s",), seed=1, report_id="base")
    cand = fast_report_dict(400, metrics=("s",), seed=2, shift=0.02, report_id="cand")
    c = strict_compare(heta_nb.load_report(base), heta_nb.load_report(cand), resamples=20_000, seed=3)
    t = c.test("cand", "s")
    values = c.aligned_values("s")
    d = values["cand"] - values["base"]

    perm = stats.permutation_test(
        (d,), lambda x, axis: np.mean(x, axis=axis), permutation_type="samples", n_resamples=20_000, rng=5
    )
    # Both Monte Carlo with 20k resamples: each standard error <= 0.0036.
    assert 0.02 < t.p_value < 0.98
    assert t.p_value == pytest.approx(perm.pvalue, abs=0.02)

    boot = stats.bootstrap((d,), np.mean, method="percentile", n_resamples=20_000, rng=5)
    se = float(np.std(d, ddof=1) / math.sqrt(d.size))
    assert t.ci_low == pytest.approx(boot.confidence_interval.low, abs=0.05 * se)
    assert t.ci_high == pytest.approx(boot.confidence_interval.high, abs=0.05 * se)
    assert t.mean_diff == pytest.approx(float(np.mean(d)))
