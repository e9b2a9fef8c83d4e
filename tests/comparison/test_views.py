"""A comparison's frames, plots, template data and HTML agree with its numbers."""

from __future__ import annotations

import json
import math
import warnings
import zlib
from typing import Any

import numpy as np
import pytest
from helpers import FIXTURES, report_dict

import heta_nb
import heta_nb.demo
from heta_nb.benchmark import Benchmark, BenchmarkCase
from heta_nb.comparison import SUMMARY_COLUMNS, Comparison, HetaComparisonWarning, compare, p_text
from heta_nb.model.report import EvaluationReport
from heta_nb.render.context import comparison_context
from heta_nb.testing import synthetic_report

MANIFEST = {"name": "thin", "version": "1", "split": "test", "task_type": "qa"}


def benchmark(n: int) -> Benchmark:
    return Benchmark(MANIFEST, (), [BenchmarkCase(case_id=f"c{i:02d}", query=f"question {i}") for i in range(n)])


def answer(query: str) -> dict[str, Any]:
    return {"mode": "m", "results": [{"id": "r1", "text": f"text of {query}"}], "answer": query}


def hit_all(case: Any, response: Any) -> dict[str, Any]:
    """A 0/1 *float* score (like hit@K) that is 1.0 for every case."""
    return {"name": "hit", "value": 1.0}


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


# --- 7. numbers shown ----------------------------------------------------------------------------

# Exact sign-flip p = 12 / 256 = 0.046875 (8 non-zero differences).
_D = [-0.25, 0.25, 0.5, 0.75, 0.25, 0.0, 0.0, 0.25, 0.25, 0.5]


def _near_alpha(alpha: float) -> Comparison:
    base = report({"s": [0.25] * len(_D)}, report_id="a")
    cand = report({"s": [0.25 + d for d in _D]}, report_id="b")
    return quiet(base, cand, alpha=alpha)


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


@pytest.fixture(scope="module")
def normal_report() -> EvaluationReport:
    return heta_nb.load_report(FIXTURES / "report-normal.json")


def test_a_single_pair_has_no_interval_and_its_views_still_draw() -> None:
    one_a = run(1, [hit_all], report_id="a")
    one_b = run(1, [hit_all], report_id="b")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", HetaComparisonWarning)
        c = compare(one_a, one_b, resamples=200)
    t = c.test("b", "hit")
    assert t.n == 1 and math.isnan(t.ci_low) and math.isnan(t.ci_high)
    ax = c.plot_deltas("hit")
    assert not ax.patches or all(math.isfinite(p.get_x()) for p in ax.patches)
    html = c._repr_html_()
    assert "nan" not in html.lower().replace("nanoseconds", "")


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


# --- views -----------------------------------------------------------------------------------


def test_frames_and_extremes(demo_reports: tuple[EvaluationReport, EvaluationReport]) -> None:
    poor, good = demo_reports
    c = strict_compare(poor, good, resamples=1000)
    cases = c.cases_frame("recall@5")
    assert list(cases.columns) == ["unit", "case_id", "query", "poor", "good", "delta good"]
    scored = [r.case_id for r in poor.case_results if not r.score("recall@5").skipped]
    assert list(cases["case_id"]) == scored
    np.testing.assert_allclose(cases["delta good"], cases["good"] - cases["poor"])
    assert cases["query"].iloc[0] == poor.case_results[0].query
    stacked = c.cases_frame()
    assert list(stacked["metric"].unique()) == ["recall@5", "ndcg@5"] and len(stacked) == 2 * len(scored)

    best = c.most_improved("ndcg@5", n=5)
    assert len(best) == 5 and (best["delta"] > 0).all()
    assert list(best["delta"]) == sorted(best["delta"], reverse=True)
    assert best["delta"].iloc[0] == pytest.approx(c.deltas("ndcg@5").max())
    worst = c.most_regressed("ndcg@5", n=5)
    assert worst.empty or (worst["delta"] < 0).all()
    flipped = strict_compare(good, poor, resamples=1000).most_regressed("ndcg@5", n=200)
    assert len(flipped) == c.test("good", "ndcg@5").wins
    assert list(flipped["delta"]) == sorted(flipped["delta"])


def test_plain_data_for_templates(normal_report: EvaluationReport) -> None:
    c = strict_compare(normal_report, resamples=500)
    rows = c.summary_rows()
    assert len(rows) == 2 * len(c.metrics) and all(list(r) == list(SUMMARY_COLUMNS) for r in rows)
    assert all(type(r["n"]) is int and type(r["significant"]) is bool for r in rows)
    context = c.to_context()
    assert json.loads(json.dumps(context))["baseline"] == "full_text_search"
    assert [s["is_baseline"] for s in context["systems"]] == [True, False, False]
    assert context["overlap"]["aligned"]["beir_ndcg@3"] == 8
    assert context["settings"]["family_size"] == c.family_size


def test_plots() -> None:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

    a = synthetic_report(60, modes=("m",), seed=91, report_id="a")
    b = synthetic_report(60, modes=("m",), seed=92, report_id="b")
    c = quiet_compare(a, b, resamples=500)
    ax = c.plot_paired("answer_contains")  # booleans: jittered
    assert isinstance(ax, Axes) and isinstance(ax.figure, Figure)
    offsets = ax.collections[0].get_offsets()
    assert len(offsets) == c.test("b", "answer_contains").n
    assert not np.isin(np.asarray(offsets)[:, 0], [0.0, 1.0]).all()
    assert len(ax.lines) == 1  # the diagonal

    own = Figure().subplots()
    assert c.plot_deltas("beir_ndcg@5", system="b", ax=own) is own
    t = c.test("b", "beir_ndcg@5")
    assert any(line.get_xdata()[0] == pytest.approx(t.mean_diff) for line in own.lines)
    assert c.plot_deltas("answer_contains").patches  # discrete deltas drawn as bars
