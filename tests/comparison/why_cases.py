"""Runs with failures put in on purpose, for the "why it changed" tests (stages, slices, clusters)
and their browser views: a KB that answers from what it retrieved, broken in retrieval,
generation or both for chosen cases, and an evaluator whose score moves with the output unchanged."""

from __future__ import annotations

import warnings
from typing import Any

import heta_nb
from heta_nb.benchmark import Benchmark, BenchmarkCase
from heta_nb.benchmark.records import BenchmarkEvidence, BenchmarkExpected

N = 60
PREFIX = "raw/benchmarks/why/test"
TOPICS = ("tides", "lighthouses", "ferries", "birds")
FLAKY: set[str] = set()
"""Case ids the flaky evaluator scores 0 (its score moves while the output does not)."""


def docs(i: int) -> list[str]:
    """Case i cites two documents, shared with its neighbour (clusters of two cases)."""
    return [f"d{i // 2:02d}a", f"d{i // 2:02d}b"]


def bench() -> Benchmark:
    cases = [
        BenchmarkCase(
            case_id=f"c{i:02d}",
            query=f"what is fact {i}?",
            expected=BenchmarkExpected(
                answers=(f"fact {i} is true",),
                evidence=tuple(BenchmarkEvidence(reference_id=d) for d in docs(i)),
            ),
            labels={"topic": TOPICS[i % 4]},
        )
        for i in range(N)
    ]
    return Benchmark({"name": "why", "version": "1", "split": "test", "task_type": "qa"}, (), cases)


def _index(query: str) -> int:
    return int(query.split()[3].rstrip("?"))


def _hit(doc: str, text: str) -> dict[str, Any]:
    return {"id": doc, "text": text, "source": {"object_key": f"{PREFIX}/{doc}/x.txt"}}


def kb_with(broken: str, which: Any) -> Any:
    """A KB that answers from what it retrieved; ``broken`` says what fails for the cases ``which`` picks."""

    def kb(query: str, *, mode: str, top_k: int) -> dict[str, Any]:
        i = _index(query)
        cited = docs(i)
        fact = f"fact {i} is true"
        results = [_hit(cited[0], fact), _hit(cited[1], fact)]
        answer = fact
        if which(i):
            if broken == "retrieval":  # the evidence is gone, so is the answer
                results, answer = [_hit("zz", "nothing here")], "nothing here"
            elif broken == "generation":  # the evidence is there, the answer is wrong
                answer = "no idea"
            elif broken == "both":  # one of the two documents lost, and the answer wrong
                results, answer = results[:1], "no idea"
        if mode == "search":
            return {"mode": mode, "results": results}
        return {"mode": mode, "results": results, "answer": answer}

    return kb


def flaky(case: Any, response: Any) -> dict[str, Any]:
    """A 0/1 score that depends on a list outside the output: it can move while the output does not."""
    return {"name": "flaky", "value": 0.0 if case.case_id in FLAKY else 1.0}


def run(name: str, kb: Any, flaky_cases: set[str] = frozenset()) -> heta_nb.EvaluationReport:  # type: ignore[assignment]
    FLAKY.clear()
    FLAKY.update(flaky_cases)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return heta_nb.evaluate(
            bench(),
            kb=kb,
            query_modes=["search", "answer"],
            evaluators=["evidence_recall@5", "answer_contains", "answer_f1", flaky],
            knowledge_base_name=name,
            report_id=name,
            progress=False,
            lint=False,
        )
