"""Real runs whose reports hold every kind of number an output can get wrong: n/a metrics,
skipped scores, KB errors, evaluator errors on some cases and on every case."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest
from runner_support import MANIFEST, exact_kb, toy_benchmark

import heta_nb
from heta_nb.benchmark import Benchmark, BenchmarkExpected

NO_GOLD = (5, 17)
"""Cases without expected evidence or answers: their scores are skipped (Heta averages them in as 0)."""


def benchmark(n_cases: int = 36) -> Benchmark:
    """The toy benchmark with two cases that have no gold data."""
    base = toy_benchmark(n_cases)
    cases = list(base.cases)
    for i in NO_GOLD:
        cases[i] = dataclasses.replace(cases[i], expected=BenchmarkExpected(answers=(), evidence=()))
    return Benchmark(MANIFEST, base.documents, cases)


def _doc(query: str) -> int:
    return int(query.rstrip("?").split()[-1])


def kb(query: str, *, mode: str, top_k: int) -> dict[str, Any]:
    """Mode "answer" answers (wrongly about document 2), mode "search" returns no answer (its
    answer metrics are n/a); both fail on document 4 (KB errors); "search" ranks worse."""
    doc = _doc(query)
    if doc == 4:
        raise RuntimeError("index shard 4 is down")
    out = exact_kb(query, mode="good" if mode == "answer" else "poor", top_k=top_k)
    if mode == "answer" and doc == 2:
        out["answer"] = "I do not know."
    return {**out, "mode": mode}


def worse_kb(query: str, *, mode: str, top_k: int) -> dict[str, Any]:
    """Like :func:`kb`, but its answers are right only about documents 0 and 1 (a real regression)."""
    out = kb(query, mode=mode, top_k=top_k)
    if mode == "answer" and _doc(query) not in (0, 1):
        out["answer"] = "I do not know."
    return out


def flaky_judge(case: Any, response: Any) -> float:
    """An evaluator that times out on a third of the cases (evaluator errors beside a number)."""
    if int(case.case_id[1:]) % 3 == 1:
        raise TimeoutError("the judge did not answer")
    return min(1.0, len(response.results) / 3)


def broken_judge(case: Any, response: Any) -> float:
    """An evaluator that fails on every case (no number at all: "errored")."""
    raise KeyError("grade")


EVALUATORS = ["evidence_recall@3", "ndcg@3", "answer_contains", "answer_f1", flaky_judge, broken_judge]
MODES = ["answer", "search"]


def run(kb_function: Any = kb, report_id: str = "truth", **kwargs: Any) -> heta_nb.EvaluationReport:
    """A real run of ``kb_function`` on :func:`benchmark` (no store)."""
    options: dict[str, Any] = {
        "kb": kb_function,
        "knowledge_base_name": "truth kb",
        "query_modes": MODES,
        "evaluators": EVALUATORS,
        "store": None,
        "progress": False,
        "report_id": report_id,
        "retries": 0,
        **kwargs,
    }
    with pytest.warns(heta_nb.HetaRunWarning):  # the cases without gold data are said
        return heta_nb.evaluate(benchmark(), **options)
