"""compare(): verdicts, names, baseline, Holm, seeds and p-values."""

from __future__ import annotations

import warnings
import zlib
from dataclasses import replace
from typing import Any

import numpy as np
import pandas as pd
import pytest
from helpers import report_dict

import heta_nb
import heta_nb.demo
from heta_nb.benchmark import Benchmark, BenchmarkCase
from heta_nb.comparison import SUMMARY_COLUMNS, Comparison, HetaComparisonWarning, compare
from heta_nb.model.report import EvaluationReport
from heta_nb.render import render_comparison_html
from heta_nb.stats.paired import PairedTest, holm
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


# --- 7. numbers shown ----------------------------------------------------------------------------

# Exact sign-flip p = 12 / 256 = 0.046875 (8 non-zero differences).
_D = [-0.25, 0.25, 0.5, 0.75, 0.25, 0.0, 0.0, 0.25, 0.25, 0.5]


def _near_alpha(alpha: float) -> Comparison:
    base = report({"s": [0.25] * len(_D)}, report_id="a")
    cand = report({"s": [0.25 + d for d in _D]}, report_id="b")
    return quiet(base, cand, alpha=alpha)


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


def _tests(c: Comparison) -> list[PairedTest]:
    return [c.test(s, m) for s in c.systems if s != c.baseline for m in c.metrics]


def test_p_column_is_called_adjusted_only_when_it_is() -> None:
    a, b = run(8, [hit_all], report_id="a"), run(8, [hit_all], report_id="b")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", HetaComparisonWarning)
        holm = compare(a, b, resamples=200)._repr_html_()
        none = compare(a, b, resamples=200, correction="none")._repr_html_()
    assert '<th class="heta-n">p (adj.)</th>' in holm
    assert '<th class="heta-n">p</th>' in none and "p (adj.)" not in none


def test_an_uncorrected_comparison_does_not_call_its_p_values_adjusted() -> None:
    a, b = paired_reports()
    c = compare(a, b, resamples=2000, correction="none", alpha=0.1)
    [text] = comparison_markdown(c)
    assert "uncorrected p-values" in text and "adjusted p=" not in text and "after correction" not in text
    if not any(r["significant"] for r in c.summary_rows()):
        assert "at the 10% level." in text
    else:
        assert " p=" in text


def test_verdict_p_is_not_rounded_onto_alpha() -> None:
    c = _near_alpha(0.05)
    t = c.test("b", "s")
    assert t.p_value == pytest.approx(12 / 256) and c.significant("b", "s")
    assert c.verdict("b", "s") == "better (p=0.047)"  # was "better (p=0.05)" at alpha 0.05
    assert "better (p=0.047)" in render_comparison_html(c) and "p=0.05)" not in repr(c)


def test_better_kb_is_better(demo_reports: tuple[EvaluationReport, EvaluationReport]) -> None:
    poor, good = demo_reports
    c = strict_compare(poor, good, resamples=5000)  # same benchmark, settings, corpus: no warning
    assert c.systems == ("poor", "good") and c.baseline == "poor"
    assert c.metrics == ("recall@5", "ndcg@5")
    assert c.warnings == []
    scored = sum(1 for r in good.case_results if not r.score("recall@5").skipped)  # cases without evidence skip
    assert 80 < scored < 95 and c.overlap.aligned == {"recall@5": scored, "ndcg@5": scored}
    for metric in c.metrics:
        t = c.test("good", metric)
        assert t.mean_diff > 0.3 and t.ci_low > 0
        assert t.p_value_adjusted < 0.05 and t.p_value_adjusted >= t.p_value
        assert c.significant("good", metric)
        assert c.verdict("good", metric).startswith("better (p")
    frame = c.summary_frame()
    assert list(frame.columns) == list(SUMMARY_COLUMNS)
    assert frame["verdict"].str.startswith("better").all() and frame["significant"].all()
    assert "better" in repr(c) and "poor" in repr(c)

    reverse = strict_compare(poor, good, baseline="good", resamples=5000)
    assert [v.split(" ")[0] for v in reverse.summary_frame()["verdict"]] == ["worse", "worse"]
    assert reverse.test("poor", "recall@5").mean_diff == pytest.approx(-c.test("good", "recall@5").mean_diff)


# --- alignment edge cases --------------------------------------------------------------------


def test_identical_reports_are_ties() -> None:
    r = synthetic_report(80, modes=("m",), seed=41)
    with pytest.warns(HetaComparisonWarning, match="are the same report"):
        c = compare(r, r, resamples=1000)
    assert c.systems == ("synthetic", "synthetic#2")
    for row in c.summary_rows():
        assert row["wins"] == row["losses"] == 0 and row["ties"] == row["n"] > 0
        assert row["p_value"] == row["p_adjusted"] == 1.0
        assert row["mean_diff"] == row["ci_low"] == row["ci_high"] == 0.0
        assert row["verdict"].startswith("no detectable difference") and not row["significant"]
    assert c.most_improved("beir_ndcg@5").empty and c.most_regressed("beir_ndcg@5").empty


def test_names_and_baseline() -> None:
    reports = [heta_nb.load_report(fast_report_dict(30, seed=i, shift=0.1 * i, report_id=f"r{i}")) for i in range(3)]
    c = strict_compare(*reports, names=["base", "mid", "top"], baseline="mid", metrics=["m1"], resamples=500)
    assert c.systems == ("base", "mid", "top") and c.baseline == "mid"
    assert [row["system"] for row in c.summary_rows()] == ["base", "top"]
    assert strict_compare(reports, resamples=200).systems == ("r0", "r1", "r2")  # a list of reports
    assert strict_compare(*reports, baseline=-1, resamples=200).baseline == "r2"
    with pytest.raises(ValueError, match="unique"):
        compare(*reports, names=["a", "a", "b"])
    with pytest.raises(ValueError, match="expected 3 names"):
        compare(*reports, names=["a", "b"])
    with pytest.raises(ValueError, match="baseline"):
        compare(*reports, baseline="nope")
    with pytest.raises(ValueError, match="is a baseline"):
        c.test("mid", "m1")
    with pytest.raises(ValueError, match="not compared"):
        c.test("top", "m9")


# --- statistics ------------------------------------------------------------------------------


def test_holm_over_each_system_s_metrics_against_its_baseline() -> None:
    """One family per tested system (its metrics against its baseline), as check and the leaderboard."""
    reports = [synthetic_report(150, modes=("m",), seed=70 + i, report_id=f"s{i}") for i in range(4)]
    c = quiet_compare(*reports, resamples=2000)
    assert c.family_size == len(SYNTH_METRICS)
    for system in c.candidates:
        family = c.family(system)
        assert family.size == len(SYNTH_METRICS) and family.metrics == c.metrics
        assert family.text == f"Holm over the {len(SYNTH_METRICS)} metrics of m ({system} vs s0)"
        tests = [c.test(system, m) for m in c.metrics]
        raw = [t.p_value for t in tests]
        adjusted = [t.p_value_adjusted for t in tests]
        assert adjusted == pytest.approx(holm(raw))
        assert all(adj >= p for p, adj in zip(raw, adjusted))
        # the pair alone gives the same numbers: nothing outside the pair enters its tests
        alone = quiet_compare(reports[0], reports[int(system[1:])], resamples=2000)
        assert [alone.test(system, m) for m in c.metrics] == tests
    frame = c.summary_frame()
    assert (frame["significant"] == (frame["p_adjusted"] < 0.05)).all()
    assert set(frame["family"]) == {c.family(s).text for s in c.candidates}

    uncorrected = quiet_compare(*reports, resamples=2000, correction="none")
    assert [t.p_value_adjusted for t in _tests(uncorrected)] == [t.p_value for t in _tests(uncorrected)]


def test_reproducible_with_a_seed() -> None:
    a = synthetic_report(100, modes=("m",), seed=81, error_rate=0.0, report_id="a")
    b = synthetic_report(100, modes=("m",), seed=82, error_rate=0.0, report_id="b")
    first = quiet_compare(a, b, resamples=3000, seed=123)
    again = quiet_compare(a, b, resamples=3000, seed=123)
    pd.testing.assert_frame_equal(first.summary_frame(), again.summary_frame())
    fresh = quiet_compare(a, b, resamples=3000, seed=None)
    replay = quiet_compare(a, b, resamples=3000, seed=fresh.seed)
    pd.testing.assert_frame_equal(fresh.summary_frame(), replay.summary_frame())
    # On the same aligned cases, a pair gives the same test whatever else is compared.
    c = synthetic_report(100, modes=("m",), seed=83, error_rate=0.0, report_id="c")
    wider = quiet_compare(a, b, c, resamples=3000, seed=123)
    narrow, wide = first.test("b", "beir_ndcg@5"), wider.test("b", "beir_ndcg@5")
    assert wide == replace(narrow, p_value_adjusted=wide.p_value_adjusted)


def test_a_pair_reads_the_same_alone_batched_and_in_the_gate_bit_for_bit() -> None:
    """1,200 cases (the Poisson bootstrap), errors that differ by report and mode: the pair b vs a
    gets the same numbers alone, beside a third recipe, and in check(), to the last bit."""
    a, b, c = (
        synthetic_report(1200, modes=("m1", "m2"), seed=s, error_rate=0.03, report_id=r)
        for s, r in ((21, "a"), (22, "b"), (23, "c"))
    )
    alone = quiet_compare(a, b, resamples=500)
    beside = quiet_compare(a, b, c, resamples=500)
    gate = heta_nb.check(b, a, resamples=500)
    for mode in ("m1", "m2"):
        for metric in alone.metrics:
            want = alone.test(f"b/{mode}", metric)
            assert beside.test(f"b/{mode}", metric) == want
            row = next(r for r in gate.rows if (r.mode, r.metric) == (mode, metric))
            assert (row.n, row.diff, row.ci_low, row.ci_high, row.p_value, row.p_adjusted) == (
                want.n, want.mean_diff, want.ci_low, want.ci_high, want.p_value, want.p_value_adjusted,
            )  # fmt: skip
    assert "Poisson" in alone.test("b/m1", alone.metrics[0]).method
