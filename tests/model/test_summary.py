"""The score summary beside Heta's mean: n, errors, skipped, and honest intervals."""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from helpers import FIXTURES, requires_heta
from hypothesis import strategies as st

import heta_nb
from heta_nb import stats
from heta_nb.benchmark import Benchmark, BenchmarkCase
from heta_nb.model import (
    EvaluationCaseResult,
    EvaluationReport,
    EvaluationScore,
    heta_score_summary,
)
from heta_nb.model.summary import as_float, numeric_value
from heta_nb.render.env import format_number
from heta_nb.tables import summary_frame
from heta_nb.tables.distributions import interval

json_scalar = st.one_of(
    st.none(), st.booleans(), st.integers(-(2**53), 2**53), st.floats(allow_nan=True), st.text(max_size=10)
)


json_value = st.recursive(
    json_scalar,
    lambda children: st.lists(children, max_size=3) | st.dictionaries(st.text(max_size=5), children, max_size=3),
    max_leaves=8,
)


metadata = st.dictionaries(st.text(max_size=6), json_value, max_size=3)


MANIFEST = {"name": "thin", "version": "1", "split": "test", "task_type": "qa"}


def benchmark(n: int) -> Benchmark:
    return Benchmark(MANIFEST, (), [BenchmarkCase(case_id=f"c{i:02d}", query=f"question {i}") for i in range(n)])


def answer(query: str) -> dict[str, Any]:
    return {"mode": "m", "results": [{"id": "r1", "text": f"text of {query}"}], "answer": query}


def hit_all(case: Any, response: Any) -> dict[str, Any]:
    """A 0/1 *float* score (like hit@K) that is 1.0 for every case."""
    return {"name": "hit", "value": 1.0}


def judge(case: Any, response: Any) -> dict[str, Any]:
    """Fails on every other case (an LLM judge that times out, say)."""
    if int(case.case_id[1:]) % 2:
        raise RuntimeError("judge unavailable")
    return {"name": "judge", "value": 0.5}


def always_fails(case: Any, response: Any) -> dict[str, Any]:
    raise RuntimeError("broken evaluator")


def run(n: int, evaluators: list[Any], **kwargs: Any) -> heta_nb.EvaluationReport:
    return heta_nb.evaluate(
        benchmark(n),
        kb=answer,
        query_modes=["m"],
        evaluators=evaluators,
        knowledge_base_name="kb",
        progress=False,
        lint=False,
        **kwargs,
    )


BASE = json.loads((FIXTURES / "report-normal.json").read_text(encoding="utf-8"))


MODE = "full_text_search"


METRIC = "evidence_recall@3"


def _report(change: Callable[[dict[str, Any]], None]) -> heta_nb.EvaluationReport:
    data = copy.deepcopy(BASE)
    change(data)
    return heta_nb.load_report(json.dumps(data))


def _cases(data: dict[str, Any]) -> list[dict[str, Any]]:
    return [c for c in data["case_results"] if c["query_mode"] == MODE]


def _score(case: dict[str, Any], name: str = METRIC) -> dict[str, Any]:
    return next(s for s in case["scores"] if s["name"] == name)


def _huge_integer(data: dict[str, Any]) -> None:
    _score(_cases(data)[0])["value"] = 10**400


def test_fixture_summary_recomputes_bit_for_bit(fixture_path: Path) -> None:
    report = heta_nb.load_report(fixture_path)
    assert report.recomputed_score_summary() == dict(report.score_summary)


@requires_heta
def test_score_summary_equals_hetas_bit_for_bit_on_random_results() -> None:
    """Random modes (some dotted, so two (mode, score) pairs share a key), names and
    values of every kind, against Heta's own ``_score_summary``."""
    import random

    from heta_framework.evaluation import EvaluationCaseResult as HetaResult
    from heta_framework.evaluation import EvaluationScore as HetaScore
    from heta_framework.evaluation.runner import _score_summary
    from heta_framework.kb.search import QueryResponse as HetaResponse

    rng = random.Random(5)
    for trial in range(60):
        modes = rng.sample(["hybrid", "a.b", "a", "naive"], k=rng.randint(1, 4))
        names = rng.sample(["recall", "b.recall", "f1", "x"], k=rng.randint(1, 4))
        ours, theirs = [], []
        for i in range(rng.randint(1, 40)):
            mode = rng.choice(modes)
            scores = []
            for name in rng.sample(names, k=rng.randint(0, len(names))):
                value = rng.choice([rng.random(), rng.random() * 1e6, True, False, rng.randint(0, 3), "good", 1e-300])
                scores.append({"name": name, "value": value, "passed": None, "metadata": {}})
            ours.append(
                EvaluationCaseResult.from_raw(
                    {"case_id": f"c{i}", "query": "q", "query_mode": mode, "scores": scores, "response": {}}
                )
            )
            theirs.append(
                HetaResult(
                    case_id=f"c{i}",
                    query="q",
                    query_mode=mode,
                    scores=tuple(HetaScore(name=s["name"], value=s["value"]) for s in scores),
                    response=HetaResponse(mode=mode),
                )
            )
        expected = _score_summary(tuple(theirs))
        got = heta_score_summary(ours)
        assert list(got) == list(expected), trial
        assert all(got[k] == expected[k] for k in expected), trial  # ==, not approx: same order of sums


def test_report_constructor_computes_heta_summary() -> None:
    results = [
        EvaluationCaseResult(
            case_id="c1",
            query="q1",
            query_mode="m",
            scores=[EvaluationScore(name="hit", value=True), EvaluationScore(name="label", value="x")],
            response={"mode": "m"},
        ),
        EvaluationCaseResult(
            case_id="c2",
            query="q2",
            query_mode="m",
            scores=[EvaluationScore(name="hit", value=False, metadata={"skipped": True})],
            response={"mode": "m"},
        ),
        EvaluationCaseResult(case_id="c3", query="q3", query_mode="m", error={"message": "boom", "error_type": "E"}),
    ]
    report = EvaluationReport(
        report_id="r",
        benchmark={"name": "b", "version": "1", "split": "t", "task_type": "qa"},
        knowledge_base_name="kb",
        query_modes=["m"],
        case_results=results,
        started_at="2026-01-01T00:00:00+00:00",
        finished_at="2026-01-01T00:00:02+00:00",
    )
    assert dict(report.score_summary) == {"m.hit": 0.5}
    assert report.duration_s == 2.0
    counts = report.mode_counts()["m"]
    assert (counts.cases, counts.errors, counts.skipped_scores, counts.ok) == (3, 1, 1, 2)
    assert report.case("c2").scores[0].skipped
    with pytest.raises(KeyError, match="no case 'zz'"):
        report.case("zz")
    with pytest.raises(KeyError, match="has no result for mode 'other'"):
        report.case("c1", "other")


def test_zero_one_float_scores_get_a_wilson_interval_not_a_zero_width_t_interval() -> None:
    report = run(10, [hit_all])
    [summary] = report.metric_summaries()
    assert summary.kind == "number" and summary.mean == 1.0
    # t would be [1, 1] (zero spread): it claims certainty from ten cases
    assert (summary.ci_low, summary.ci_high) == pytest.approx(stats.wilson_interval(10, 10))
    assert summary.ci_low < 0.75 and summary.ci_high == 1.0
    # the per-label tables use the same rule, so they agree with the summary
    assert interval([1.0] * 10, "number", 0.95) == pytest.approx((summary.ci_low, summary.ci_high))


def test_other_numbers_keep_the_t_interval() -> None:
    values = [0.0, 1.0, 0.5, 1.0]
    assert not stats.is_binary(values) and stats.is_binary([0.0, 1.0, 1.0]) and stats.is_binary([True, False])


def test_evaluator_errors_are_counted_and_named_in_the_summary() -> None:
    report = run(6, [judge, always_fails])
    by_metric = {s.metric: s for s in report.metric_summaries()}
    half, broken = by_metric["judge"], by_metric["always_fails"]
    assert (half.n, half.cases, half.errors, half.evaluator_errors) == (3, 6, 0, 3)
    assert half.note == "3 evaluator errors not counted"
    assert broken.kind == "text" and broken.evaluator_errors == 6 and broken.n == 0
    frame = summary_frame(report).set_index("metric")
    assert frame.loc["judge", "evaluator_errors"] == 3 and frame["evaluator_errors"].dtype == "int64"
    assert frame.loc["judge", "note"] == "3 evaluator errors not counted"
    assert (broken.status, broken.reason, broken.error_text) == (
        "errored",
        "every score is an evaluator error (6)",
        "6 evaluator errors",
    )
    assert (frame.loc["always_fails", "status"], frame.loc["always_fails", "n"]) == ("errored", 0)
    html = report._repr_html_()
    assert 'title="errored: every score is an evaluator error (6); 6 evaluator errors"' in html
    assert "3 evaluator errors not counted" in html and ">3 evaluator errors</div>" in html


@pytest.mark.hostile
def test_integers_beyond_the_float_range_count_as_infinities() -> None:
    assert as_float(10**400) == float("inf") and as_float(-(10**400)) == float("-inf")
    assert as_float(3) == 3.0 and numeric_value(10**400) == float("inf")
    report = _report(_huge_integer)
    summary = next(s for s in report.metric_summaries() if (s.mode, s.metric) == (MODE, METRIC))
    assert summary.mean == float("inf")
    assert format_number(10**400) == "1.00e+400" and format_number(12345) == "12,345"  # exact digits, never ∞
