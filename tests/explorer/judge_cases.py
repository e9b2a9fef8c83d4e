"""Case results with LLM judge scores in the shapes the judges record (faithfulness, context
precision, answer relevance and correctness; repeats; n/a; errors; unknown and cached
costs), for the explorer's and the report view's tests."""

from __future__ import annotations

import copy
from typing import Any

from helpers import report_dict

from heta_nb.model import EvaluationReport

MODEL = "openai/gpt-4o-mini"


def capital_kb(query: str) -> dict[str, Any]:
    """A KB for judged browser reports: an answer half right (its first claim is in the result at rank 2,
    rank 1 is off topic; its second claim is nowhere)."""
    i = query.split()[-1].rstrip("?")
    return {
        "answer": f"The capital of country {i} is City{i}. It has a large harbour.",
        "results": [
            {"id": "cats", "text": "Cats sleep most of the day and rarely think about capitals."},
            {"id": f"doc-{i}", "text": f"City{i} is the capital of country {i}, on the northern coast."},
        ],
    }


def judge(kind: str, repeats: int = 1, model: str = MODEL) -> dict[str, Any]:
    """A score's ``metadata.judge``."""
    return {
        "kind": kind,
        "model": model,
        "template": kind,
        "template_version": "1aa0c78f5ac4",
        "version": "0b17afbc2417",
        "threshold": 0.5,
        "repeats": repeats,
    }


def usage(calls: int = 1, cached: int = 0, cost: float | None = 0.00012, **extra: Any) -> dict[str, Any]:
    """A score's usage fields."""
    return {
        "calls": calls,
        "cached_calls": cached,
        "tokens_in": 190 * calls,
        "tokens_out": 13 * calls,
        "cost": cost,
        **extra,
    }


def faithfulness(claims: list[dict[str, Any]] | None = None, **metadata: Any) -> dict[str, Any]:
    """A faithfulness score: one claim supported by chunk c1, one not found (by default)."""
    claims = (
        claims
        if claims is not None
        else [
            {
                "claim": "The capital is City0.",
                "verdict": "supported",
                "chunks": ["c1"],
                "result_ids": ["d1"],
                "reason": "chunk 1 says so",
            },
            {
                "claim": "It is large.",
                "verdict": "not_found",
                "chunks": [],
                "result_ids": [],
                "reason": "no chunk says",
            },
        ]
    )
    supported = sum(1 for c in claims if c.get("verdict") == "supported")
    value = supported / len(claims) if claims else 0.0
    return {
        "name": "faithfulness",
        "value": value,
        "passed": value >= 0.5,
        "metadata": {
            "judge": judge("faithfulness"),
            "reason": f"{supported} of {len(claims)} claims supported by the retrieved chunks",
            "claims": claims,
            **usage(),
            **metadata,
        },
    }


def context_precision(**metadata: Any) -> dict[str, Any]:
    """A context precision score: chunk 1 relevant, chunk 2 not."""
    return {
        "name": "context_precision",
        "value": 1.0,
        "passed": True,
        "metadata": {
            "judge": judge("context_precision"),
            "reason": "1 of 2 retrieved chunks relevant",
            "chunks": [
                {"id": "c1", "rank": 1, "result_id": "d1", "verdict": "relevant", "reason": "names the capital"},
                {"id": "c2", "rank": 2, "result_id": "d2", "verdict": "not_relevant", "reason": "about cats"},
            ],
            **usage(),
            **metadata,
        },
    }


def answer_relevance(**metadata: Any) -> dict[str, Any]:
    """An answer relevance score (partial)."""
    return {
        "name": "answer_relevance",
        "value": 0.5,
        "passed": True,
        "metadata": {
            "judge": judge("answer_relevance"),
            "reason": "answers half",
            "verdict": "partial",
            **usage(),
            **metadata,
        },
    }


def answer_correctness() -> dict[str, Any]:
    """An answer correctness score with the expected answer's claims."""
    return {
        "name": "answer_correctness",
        "value": 0.667,
        "passed": True,
        "metadata": {
            "judge": judge("answer_correctness"),
            "reason": "1 of 1 answer claims supported; 1 of 2 expected claims covered",
            "claims": [{"claim": "The capital is City0.", "verdict": "supported", "reason": "as expected"}],
            "reference_claims": [
                {"claim": "The capital is City0.", "verdict": "covered", "reason": "said"},
                {"claim": "It has a harbour.", "verdict": "missing", "reason": "not said"},
            ],
            "precision": 1.0,
            "recall": 0.5,
            **usage(),
        },
    }


def not_applicable() -> dict[str, Any]:
    """An n/a judge score: the response had no answer."""
    return {
        "name": "faithfulness",
        "value": 0.0,
        "passed": None,
        "metadata": {"skipped": True, "reason": "the response has no answer", "judge": judge("faithfulness")},
    }


def errored() -> dict[str, Any]:
    """A judge score whose model answers stayed unusable."""
    return {
        "name": "answer_relevance",
        "value": "error",
        "passed": None,
        "metadata": {
            "error": {"type": "JudgeOutputError", "message": "the model's answer is not JSON"},
            "judge": judge("answer_relevance"),
            "raw_answers": ["The answer is relevant, I think.", "Still not JSON."],
            **usage(calls=2, cost=None, cost_unknown="no price for model 'openai/gpt-4o-mini'"),
        },
    }


def repeated(values: list[float], agreement: float) -> dict[str, Any]:
    """A faithfulness score judged ``len(values)`` times."""
    score = faithfulness()
    score["metadata"]["judge"]["repeats"] = len(values)
    score["metadata"]["repeats"] = [{"value": v, "reason": "r", "claims": []} for v in values]
    score["metadata"]["agreement"] = agreement
    score["metadata"].update(usage(calls=len(values)))
    score["value"] = sum(values) / len(values)
    return score


def case(
    case_id: str,
    scores: list[dict[str, Any]],
    *,
    answer: str | None = "The capital is City0. It is large.",
    results: int = 2,
) -> dict[str, Any]:
    """A case result with ``results`` retrieved results ``d1``, ``d2``... and ``scores``."""
    return {
        "case_id": case_id,
        "query": f"What is the capital? ({case_id})",
        "query_mode": "m",
        "scores": copy.deepcopy(scores),
        "response": {
            "mode": "m",
            "results": [
                {
                    "id": f"d{i}",
                    "text": f"text of result {i}",
                    "score": 1.0 / i,
                    "kind": "chunk",
                    "source": {},
                    "metadata": {},
                }
                for i in range(1, results + 1)
            ],
            "answer": answer,
            "citations": [],
            "trace": [],
            "metadata": {},
        },
        "latency_ms": 10.0,
        "error": None,
        "metadata": {},
    }


def judge_report(results: list[dict[str, Any]], report_id: str = "judged") -> EvaluationReport:
    """A report around ``results``."""
    return EvaluationReport.from_raw(report_dict(results, report_id=report_id, modes=["m"], benchmark="capitals"))
