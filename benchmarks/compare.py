"""Time ``heta_nb.comparison.compare``: three recipes × 10,000 cases × 5 metrics, and two
synthetic reports of 100,000 results (3 modes, so 15 paired tests).

Targets (issue 2/7): the first <= 1.0 s; ``compare(a, b)`` at 100,000 results <= 4 s.
Issue 5/7: two 10,000-case reports compared with clustering (5 cases per cluster), then asked
for their stages and 20 slices, take <= 1.5x the plain ``compare(a, b)`` of the same reports
(power and McNemar are part of every comparison, so of both sides), timed side by side.

Usage::

    python benchmarks/compare.py [--cases 10000] [--reports 3] [--metrics 5] [--resamples 10000] [--repeat 3]

Builds ``--reports`` reports (one query mode, ``--metrics`` numeric metrics, small
responses, 2% errors per report and 5% of cases skipped on one metric, so alignment has
work to do), loads them with ``load_report`` (not timed), then times
``compare(*reports)``. The time spent inside the batched paired tests
(``paired_tests``) is measured by wrapping it; the rest is alignment (numpy, from each
report's columns), Holm and bookkeeping. Prints the median of ``--repeat`` runs.
"""

from __future__ import annotations

import argparse
import statistics
import time
import warnings
from typing import Any

import numpy as np
from _data import report_bytes
from _targets import Targets

import heta_nb
import heta_nb.comparison as compare_module
import heta_nb.comparison.significance as tests_module
from heta_nb.model.report import EvaluationCaseResult
from heta_nb.model.summary import heta_score_summary


def report_dict(n: int, metrics: int, *, seed: int, shift: float, report_id: str) -> dict[str, Any]:
    """A valid report dict: ``n`` cases × one mode, ``metrics`` scores per case."""
    rng = np.random.default_rng(seed)
    values = np.clip(rng.random((n, metrics)) + shift, 0.0, 1.0).round(4).tolist()
    errors = (rng.random(n) < 0.02).tolist()
    skipped = (np.random.default_rng(12345).random(n) < 0.05).tolist()  # no gold data: same cases in every report
    names = [f"metric_{j}@5" for j in range(metrics)]
    results = []
    for i in range(n):
        base = {
            "case_id": f"q{i:05d}",
            "query": f"query number {i}?",
            "query_mode": "full_text_search",
            "latency_ms": 1.0,
            "metadata": {"benchmark_run_unit": "corpus", "knowledge_base_name": report_id},
        }
        if errors[i]:
            error = {"message": "boom", "error_type": "RuntimeError", "retryable": False, "metadata": {}}
            results.append({**base, "scores": [], "response": None, "error": error})
            continue
        scores = [
            {
                "name": name,
                "value": 0.0 if skipped[i] and j == 0 else values[i][j],
                "passed": None,
                "metadata": {"skipped": True} if skipped[i] and j == 0 else {},
            }
            for j, name in enumerate(names)
        ]
        response = {"mode": "full_text_search", "results": [], "answer": None, "citations": [], "trace": []}
        results.append({**base, "scores": scores, "response": {**response, "metadata": {}}, "error": None})
    return {
        "schema_version": "1",
        "report_id": report_id,
        "report_key": None,
        "benchmark": {"name": "bench", "version": "1", "split": "test", "task_type": "qa"},
        "knowledge_base_name": report_id,
        "knowledge_base_manifest": {},
        "recipe_manifest": {},
        "query_modes": ["full_text_search"],
        "score_summary": heta_score_summary(EvaluationCaseResult.from_raw(r) for r in results),
        "case_results": results,
        "started_at": "2026-01-01T00:00:00+00:00",
        "finished_at": "2026-01-01T00:10:00+00:00",
        "metadata": {},
    }


def numpy_floor(cases: int, pairs: int, masks: int, resamples: int) -> float:
    """Seconds of the bare matrix products the batched tests cannot avoid (no random draws,
    no bookkeeping): ``resamples`` rows of float32 weights over ``cases`` times ``pairs + masks``
    columns, and as many float64 sign rows times ``pairs`` columns, in blocks as the tests use."""
    rng = np.random.default_rng(0)
    step = max(8, min(1024, (1 << 23) // cases))
    weights = rng.integers(0, 4, size=(step, cases)).astype(np.float32)
    signs = np.where(rng.random((max(8, min(1024, (1 << 21) // cases)), cases)) < 0.5, -1.0, 1.0)
    by_weight = rng.random((cases, pairs + masks)).astype(np.float32)
    by_sign = rng.random((cases, pairs))
    start = time.perf_counter()
    for done in range(0, resamples, step):
        weights[: min(step, resamples - done)] @ by_weight
    for done in range(0, resamples, signs.shape[0]):
        signs[: min(signs.shape[0], resamples - done)] @ by_sign
    return time.perf_counter() - start


def main() -> None:
    """Build the reports, run compare() ``--repeat`` times and print the timings."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", type=int, default=10_000)
    parser.add_argument("--reports", type=int, default=3)
    parser.add_argument("--metrics", type=int, default=5)
    parser.add_argument("--resamples", type=int, default=10_000)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()

    start = time.perf_counter()
    reports = [
        heta_nb.load_report(report_dict(args.cases, args.metrics, seed=i, shift=0.01 * i, report_id=f"recipe_{i}"))
        for i in range(args.reports)
    ]
    print(f"built and validated {args.reports} reports in {(time.perf_counter() - start) * 1000:.0f} ms (not timed)")

    original = tests_module.paired_tests
    in_tests = [0.0]

    def timed_paired_test(*a: Any, **kw: Any) -> Any:
        t0 = time.perf_counter()
        try:
            return original(*a, **kw)
        finally:
            in_tests[0] += time.perf_counter() - t0

    tests_module.paired_tests = timed_paired_test  # type: ignore[assignment]
    warnings.simplefilter("ignore", compare_module.HetaComparisonWarning)  # the errored cases, expected here
    runs: list[tuple[float, float]] = []
    try:
        for _ in range(args.repeat):
            in_tests[0] = 0.0
            t0 = time.perf_counter()
            comparison = compare_module.compare(*reports, resamples=args.resamples)
            runs.append((time.perf_counter() - t0, in_tests[0]))
    finally:
        tests_module.paired_tests = original
    total, tests = sorted(runs)[len(runs) // 2]
    n_tests = comparison.family_size
    rest = total - tests
    print(
        f"compare(): {args.cases} cases x {args.reports} reports x {args.metrics} metrics, "
        f"{args.resamples} resamples, {n_tests} paired tests (median of {args.repeat})"
    )
    print(f"  total              {total * 1000:8.1f} ms")
    print(
        f"  paired_tests       {tests * 1000:8.1f} ms  ({tests / total:5.1%}; {tests / n_tests * 1000:.1f} ms per test)"
    )
    print(f"  alignment & rest   {rest * 1000:8.1f} ms  ({rest / total:5.1%})")
    aligned = sorted(set(comparison.overlap.aligned.values()))
    print(f"  aligned cases per metric: {aligned}")
    union = max(aligned)  # every metric's aligned cases lie in the largest set here
    floor = numpy_floor(union, n_tests, len(aligned), args.resamples)
    print(
        f"  bare matrix products of that size ({union} cases, no draws): "
        f"{floor * 1000:.0f} ms; paired_tests / products = {tests / floor:.2f}"
    )
    targets = Targets(__file__)
    label = f"{args.cases:,} cases x {args.reports} reports x {args.metrics} metrics"
    targets.check(f"compare(), {label}", total, 1.0, unit=" s")
    del reports
    big = [heta_nb.load_report(report_bytes(100_000, results_per_case=1, seed=seed)) for seed in (0, 1)]
    times = []
    for _ in range(max(1, args.repeat)):
        t0 = time.perf_counter()
        comparison = compare_module.compare(*big, resamples=args.resamples)
        times.append(time.perf_counter() - t0)
    took = statistics.median(times)
    print(f"compare(a, b), 100,000 results each, {comparison.family_size} paired tests: {took:.2f} s")
    aligned = sorted(set(comparison.overlap.aligned.values()))
    floor = numpy_floor(max(aligned), comparison.family_size, len(aligned), args.resamples)
    print(f"  bare matrix products of that size ({max(aligned)} cases): {floor:.2f} s ({took / floor:.2f}x)")
    targets.check("compare(a, b), 100,000 results", took, 4.0, unit=" s")
    del big
    why_it_changed(targets, args.cases, args.resamples, max(3, args.repeat))
    targets.report()


WHY_METRICS = ("evidence_recall@5", "answer_f1", "ndcg@5", "mrr@5", "answer_contains")


def why_report(n: int, seed: int, report_id: str) -> Any:
    """A report with an answer metric, an evidence metric and answers (what stages read)."""
    raw = report_dict(n, len(WHY_METRICS), seed=seed, shift=0.01 * seed, report_id=report_id)
    for result in raw["case_results"]:
        for score, name in zip(result["scores"], WHY_METRICS):
            score["name"] = name
        if result["response"]:
            result["response"]["answer"] = f"answer {seed} to {result['case_id']}"
    raw["score_summary"] = heta_score_summary(EvaluationCaseResult.from_raw(r) for r in raw["case_results"])
    return heta_nb.load_report(raw)


def why_it_changed(targets: Targets, cases: int, resamples: int, repeat: int) -> None:
    """compare(a, b) against compare(a, b, cluster_by=...) + stages() + slices(), alternated."""
    a, b = why_report(cases, 0, "a"), why_report(cases, 1, "b")
    clusters = {f"q{i:05d}": i // 5 for i in range(cases)}
    topics = {f"q{i:05d}": f"topic {i % 20}" for i in range(cases)}
    for report in (a, b):  # decode the text columns stages read once, before timing (not a per-call cost)
        report.columns.answers, report.columns.top_texts  # noqa: B018
    plain, full = [], []
    for _ in range(repeat):
        t0 = time.perf_counter()
        compare_module.compare(a, b, resamples=resamples)
        t1 = time.perf_counter()
        c = compare_module.compare(a, b, resamples=resamples, cluster_by=clusters)
        stages = c.stages()
        slices = c.slices(topics)
        t2 = time.perf_counter()
        plain.append(t1 - t0)
        full.append(t2 - t1)
    ratios = sorted(f / p for f, p in zip(full, plain))
    ratio = ratios[len(ratios) // 2]
    print(
        f"why it changed, {cases:,} cases x 2 reports: compare {statistics.median(plain):.2f} s; clustered + "
        f"stages ({len(stages):,} changed cases) + slices ({len(slices)} tests) {statistics.median(full):.2f} s; "
        f"median ratio {ratio:.2f}x"
    )
    targets.check("why it changed (clustered, stages, 20 slices) / compare", ratio, 1.5, unit="x")


if __name__ == "__main__":
    main()
