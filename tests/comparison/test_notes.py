"""Comparability warnings and notes."""

from __future__ import annotations

import math
import warnings
import zlib
from typing import Any

import numpy as np
import pytest
from helpers import report_dict

import heta_nb
import heta_nb.demo
from heta_nb.comparison import Comparison, HetaComparisonWarning, compare
from heta_nb.model.report import EvaluationReport
from heta_nb.testing import synthetic_report_dict


def answer(query: str) -> dict[str, Any]:
    return {"mode": "m", "results": [{"id": "r1", "text": f"text of {query}"}], "answer": query}


def paired_reports() -> tuple[heta_nb.EvaluationReport, heta_nb.EvaluationReport]:
    """Two 60-case reports with four metrics; the second is about 0.08 better on each."""

    def make(seed: int, shift: float, report_id: str) -> heta_nb.EvaluationReport:
        rng = np.random.default_rng(seed)
        results = [
            {
                "case_id": f"q{i:03d}",
                "query": f"q{i}?",
                "query_mode": "m",
                "scores": [
                    {"name": f"m{j}", "value": float(np.clip(rng.random() + shift, 0, 1)), "passed": None}
                    | {"metadata": {}}
                    for j in range(4)
                ],
                "response": {"mode": "m", "results": [], "answer": None, "citations": [], "trace": [], "metadata": {}},
                "latency_ms": 1.0,
                "error": None,
                "metadata": {"benchmark_run_unit": "corpus", "knowledge_base_name": "kb"},
            }
            for i in range(60)
        ]
        return heta_nb.load_report(report_dict(results, report_id=report_id, modes=["m"], benchmark="b"))

    return make(1000, 0.0, "a"), make(1, 0.08, "b")


def comparison_markdown(c: Any) -> list[str]:
    """The markdown cell of ``heta_nb.sections(c)`` that states the method."""
    return [cell.source for cell in heta_nb.sections(c) if cell.cell_type == "markdown" and "Paired by" in cell.source]


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


# --- real runs on the demo benchmark ---------------------------------------------------------

DEMO_PREFIX = "raw/benchmarks/saltmarsh_isles/test"


def _demo_kbs() -> tuple[Any, Any]:
    bench = heta_nb.demo.load_benchmark()
    evidence: dict[str, list[str]] = {}
    for case in bench.cases:
        docs = evidence.setdefault(case.query, [])
        docs.extend(e.reference_id for e in case.expected.evidence if e.reference_id not in docs)
    all_docs = sorted({d.document_id for d in bench.documents})

    def hit(doc: str, rank: int) -> dict[str, Any]:
        return {
            "id": f"{doc}-{rank}",
            "text": doc,
            "score": 1.0 / (rank + 1),
            "source": {"object_key": f"{DEMO_PREFIX}/{doc}/x.txt"},
        }

    def distractors(query: str, count: int) -> list[str]:
        wrong = [d for d in all_docs if d not in evidence[query]]
        start = zlib.crc32(query.encode()) % len(wrong)
        return [wrong[(start + i) % len(wrong)] for i in range(count)]

    def good_kb(query: str, *, mode: str, top_k: int) -> dict[str, Any]:
        docs = (evidence[query] + distractors(query, 5))[:5]
        return {"mode": mode, "results": [hit(d, r) for r, d in enumerate(docs)]}

    def poor_kb(query: str, *, mode: str, top_k: int) -> dict[str, Any]:
        # Finds the evidence (ranked last) for about one query in three, else only distractors.
        docs = distractors(query, 4) + (evidence[query][:1] if zlib.crc32(query.encode()) % 3 == 0 else [])
        return {"mode": mode, "results": [hit(d, r) for r, d in enumerate(docs)]}

    return good_kb, poor_kb


@pytest.fixture(scope="module")
def demo_reports() -> tuple[EvaluationReport, EvaluationReport]:
    """(poor, good): two real runs of the runner on the demo benchmark."""
    good_kb, poor_kb = _demo_kbs()
    out = []
    for name, kb in (("poor", poor_kb), ("good", good_kb)):
        out.append(
            heta_nb.evaluate(
                heta_nb.demo.load_benchmark(),
                kb=kb,
                query_modes=["m"],
                store=None,
                progress=False,
                evaluators=["recall@5", "ndcg@5"],
                knowledge_base_name=name,
                report_id=name,
            )
        )
    return out[0], out[1]


def test_a_ci_that_excludes_zero_beside_no_detectable_difference_is_explained() -> None:
    a, b = paired_reports()
    c = compare(a, b, resamples=2000)
    [note] = [n for n in c.notes if n.startswith("the CI excludes 0")]
    assert "not adjusted for the other tests of its family" in note and "Holm-adjusted p-value" in note
    flagged = [m for m in c.metrics if f"b {m}" in note]
    assert flagged
    for metric in flagged:
        t = c.test("b", metric)
        assert (t.ci_low > 0 or t.ci_high < 0) and not c.significant("b", metric)
    for metric in set(c.metrics) - set(flagged):  # the others agree
        t = c.test("b", metric)
        assert (t.ci_low > 0 or t.ci_high < 0) == c.significant("b", metric)
    assert f"p {c.family_text}" in c._repr_html_() and c.family_text.startswith("Holm over the 4 metrics of")
    [text] = comparison_markdown(c)
    assert "95 % bootstrap CIs per test (not adjusted)" in text and "- Note: the CI excludes 0" in text


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


def test_different_benchmark_version_warns() -> None:
    first = synthetic_report_dict(40, modes=("m",), seed=51, error_rate=0.0, report_id="v1")
    second = synthetic_report_dict(40, modes=("m",), seed=52, error_rate=0.0, report_id="v2")
    second["benchmark"]["version"] = "2"
    with pytest.warns(HetaComparisonWarning, match="benchmarks differ in version") as caught:
        c = compare(first, second, resamples=500)  # dicts go through load_report
    assert len(caught) == len(c.warnings) == 1
    assert "synthetic:1:test" in c.warnings[0] and "synthetic:2:test" in c.warnings[0]
    assert c.overlap.common == 40 and c.test("v2", "beir_ndcg@5").n > 0


def test_query_modes_differ() -> None:
    a = heta_nb.load_report(fast_report_dict(20, modes=("x", "y"), seed=1, report_id="a"))
    b = heta_nb.load_report(fast_report_dict(20, modes=("y",), seed=2, report_id="b"))
    with pytest.warns(HetaComparisonWarning, match="different query modes"):
        c = compare(a, b, resamples=500)
    assert c.systems == ("a", "b") and {s.mode for s in c.system_info} == {"y"}

    only_x = heta_nb.load_report(fast_report_dict(20, modes=("x",), seed=3, report_id="c"))
    with pytest.warns(HetaComparisonWarning, match="mix the recipe and the mode"):
        mixed = compare(only_x, b, resamples=500)
    assert [s.mode for s in mixed.system_info] == ["x", "y"]
    with pytest.raises(ValueError, match="share no query mode"):
        compare(a, heta_nb.load_report(fast_report_dict(5, modes=("z", "w"), report_id="d")))

    with pytest.warns(HetaComparisonWarning, match="'a' and 'a#2' are the same report"):
        both = compare(a, a, modes=["x", "y"], names=["one", "two"], resamples=500)
    assert both.systems == ("one/x", "one/y", "two/x", "two/y")


def test_evaluator_settings_and_incomplete_runs_warn(demo_reports: tuple[EvaluationReport, EvaluationReport]) -> None:
    poor, good = demo_reports
    changed = good.to_dict()
    changed["metadata"]["heta_nb"]["top_k"] = 5
    changed["metadata"]["heta_nb"]["status"] = "cancelled"
    with pytest.warns(HetaComparisonWarning) as caught:
        c = compare(poor, changed, resamples=500)
    text = " | ".join(c.warnings)
    assert "top_k" in text and "'poor': 10" in text and "'good': 5" in text
    assert "is cancelled" in text
    assert len(caught) == len(c.warnings)


def test_metric_only_in_some_systems_is_not_compared() -> None:
    a = heta_nb.load_report(fast_report_dict(20, metrics=("m1", "m2"), seed=1, report_id="a"))
    b = heta_nb.load_report(fast_report_dict(20, metrics=("m1",), seed=2, report_id="b"))
    with pytest.warns(HetaComparisonWarning, match="'m2' has numeric scores only in"):
        c = compare(a, b, resamples=500)
    assert c.metrics == ("m1",)
    with pytest.raises(ValueError, match="'m2'"):
        compare(a, b, metrics=["m2"])
    chosen = quiet_compare(a, b, metrics="m1")
    assert chosen.metrics == ("m1",)
