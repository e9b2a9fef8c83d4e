"""Synthetic reports shaped like Heta's, for tests, benchmarks and demos of big runs.

``synthetic_report`` builds a report whose case results look like what Heta's
full-text engine produces (results with ``source`` and ``metadata`` provenance,
citations, scores of several kinds), at any size, deterministically from a seed.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from typing import Any

from heta_nb.model.io import decode_report
from heta_nb.model.json import dumps_compact
from heta_nb.model.report import EvaluationCaseResult, EvaluationReport
from heta_nb.model.summary import heta_score_summary

__all__ = ["assert_no_regression", "synthetic_report", "synthetic_report_dict"]

_WORDS = (
    "harbour lighthouse keeper granite tower ferry island village storm signal lamp "
    "survey engineer regatta wool cliff tide channel beacon archive guild mast current"
).split()


def _sentence(rng: random.Random, words: int) -> str:
    return " ".join(rng.choice(_WORDS) for _ in range(words)).capitalize() + "."


def synthetic_report_dict(
    n_cases: int = 100,
    *,
    modes: Sequence[str] = ("full_text_search", "extractive_answer", "sql_text_search"),
    results_per_case: int = 5,
    text_words: int = 20,
    error_rate: float = 0.02,
    seed: int = 0,
    report_id: str = "synthetic",
    knowledge_base_name: str = "synthetic kb",
) -> dict[str, Any]:
    """A report as a plain dict: ``n_cases`` cases × ``modes``, Heta's shapes and order."""
    rng = random.Random(seed)
    case_results: list[dict[str, Any]] = []
    for index in range(n_cases):
        case_id = f"q{index:05d}"
        query = _sentence(rng, 8).rstrip(".") + "?"
        for mode_index, mode in enumerate(modes):
            if rng.random() < error_rate:
                case_results.append(
                    {
                        "case_id": case_id,
                        "query": query,
                        "query_mode": mode,
                        "scores": [],
                        "response": None,
                        "latency_ms": round(rng.uniform(0.01, 0.2), 3),
                        "error": {
                            "message": f"{mode} requires missing search asset(s): vector_index",
                            "error_type": rng.choice(["LookupError", "TimeoutError", "RuntimeError"]),
                            "retryable": False,
                            "metadata": {},
                        },
                        "metadata": {
                            "benchmark_run_unit": "corpus",
                            "knowledge_base_name": knowledge_base_name,
                        },
                    }
                )
                continue
            results = []
            citations = []
            skill = 0.35 + 0.2 * mode_index
            for rank in range(results_per_case):
                doc = f"d{rng.randrange(max(10, n_cases // 2)):05d}"
                chunk = f"chunk_{rng.getrandbits(64):016x}"
                key = f"raw/benchmarks/synthetic/test/{doc}/{doc}.txt"
                source = {
                    "document_id": f"doc_{rng.getrandbits(64):016x}",
                    "object_key": key,
                    "object_name": f"{doc}.txt",
                    "object_type": "txt",
                    "chunk_ids": [chunk],
                    "page_index": 0,
                    "chunk_index": rank,
                    "token_start": rank * 100,
                    "token_end": rank * 100 + 99,
                }
                text = _sentence(rng, text_words)
                results.append(
                    {
                        "id": chunk,
                        "text": text,
                        "score": round(10.0 / (rank + 1) + rng.random(), 6),
                        "kind": "chunk",
                        "source": source,
                        "metadata": {
                            "document_id": source["document_id"],
                            "source_key": key,
                            "source_name": f"{doc}.txt",
                            "ranking": "bm25",
                            "retrieval_method": mode,
                            "index": "chunk_full_text",
                        },
                    }
                )
                citations.append(
                    {
                        "id": f"citation_{rank + 1}",
                        "result_id": chunk,
                        "source": source,
                        "text": text,
                        "metadata": {"rank": rank + 1},
                    }
                )
            recall = round(min(1.0, max(0.0, rng.gauss(skill, 0.3))), 4)
            contains = rng.random() < skill
            skipped = rng.random() < 0.05
            scores = [
                {
                    "name": "evidence_recall@5",
                    "value": 0.0 if skipped else recall,
                    "passed": None,
                    "metadata": {"skipped": True, "reason": "case has no expected evidence"}
                    if skipped
                    else {"matched": int(recall * 2), "expected": 2, "matched_reference_ids": []},
                },
                {
                    "name": "answer_contains",
                    "value": contains,
                    "passed": contains,
                    "metadata": {"matched_answers": ["x"] if contains else []},
                },
                {
                    "name": "beir_ndcg@5",
                    "value": round(min(1.0, max(0.0, rng.gauss(skill, 0.25))), 6),
                    "passed": None,
                    "metadata": {
                        "relevant_documents": 2,
                        "retrieved_documents": results_per_case,
                        "matched_documents": [],
                    },
                },
            ]
            case_results.append(
                {
                    "case_id": case_id,
                    "query": query,
                    "query_mode": mode,
                    "scores": scores,
                    "response": {
                        "mode": mode,
                        "results": results,
                        "answer": results[0]["text"] if mode == "extractive_answer" and results else None,
                        "citations": citations,
                        "trace": [],
                        "metadata": {
                            "index": "chunk_full_text",
                            "retrieval_method": mode,
                            "answer_generation": "disabled",
                        },
                    },
                    "latency_ms": round(rng.lognormvariate(0, 0.6), 3),
                    "error": None,
                    "metadata": {"benchmark_run_unit": "corpus", "knowledge_base_name": knowledge_base_name},
                }
            )
    summary = heta_score_summary(EvaluationCaseResult.from_raw(r) for r in case_results)
    return {
        "schema_version": "1",
        "report_id": report_id,
        "report_key": None,
        "benchmark": {
            "name": "synthetic",
            "version": "1",
            "split": "test",
            "task_type": "multihop_qa",
            "build_scope": "corpus",
            "homepage": None,
            "license": None,
            "citation": None,
            "metadata": {},
        },
        "knowledge_base_name": knowledge_base_name,
        "knowledge_base_manifest": {"schema_version": "1", "name": knowledge_base_name, "description": None},
        "recipe_manifest": {
            "schema_version": "1",
            "steps": [
                {"index": 0, "name": "parse_documents", "type": "ParseDocuments"},
                {"index": 1, "name": "split_documents", "type": "SplitDocuments"},
                {"index": 2, "name": "index_full_text", "type": "IndexFullText"},
            ],
        },
        "query_modes": list(modes),
        "score_summary": summary,
        "case_results": case_results,
        "started_at": "2026-12-01T07:00:00.000000+00:00",
        "finished_at": "2026-12-01T07:05:00.000000+00:00",
        "metadata": {"generator": "heta_nb.testing.synthetic_report", "seed": seed},
    }


def synthetic_report(n_cases: int = 100, **kwargs: Any) -> EvaluationReport:
    """:func:`synthetic_report_dict` as a validated :class:`EvaluationReport`."""
    return decode_report(dumps_compact(synthetic_report_dict(n_cases, **kwargs)), source="<synthetic>")


def assert_no_regression(new: Any, baseline: Any, **settings: Any) -> Any:
    """Fail a pytest test when ``new`` regressed against ``baseline`` (see :func:`heta_nb.check`).

    Args:
        new: The new report (an ``EvaluationReport``, a path, URL or ``STORE:KB/ID``).
        baseline: The baseline report, likewise.
        **settings: :func:`heta_nb.check`'s settings (``metrics``, ``max_drop``, ``floors``, ...).

    Returns:
        The :class:`~heta_nb.gate.CheckResult`, when nothing regressed.

    Raises:
        AssertionError: A regression, or a pair that cannot be compared; the message is the check's text table.
    """
    __tracebackhide__ = True  # pytest shows the caller's line
    from heta_nb.gate import check

    return check(new, baseline, **settings).assert_ok()
