"""Document ids and document-metric values and metadata."""

from __future__ import annotations

import pytest

from heta_nb.benchmark import BenchmarkCase, BenchmarkEvidence, BenchmarkExpected
from heta_nb.evaluators import get
from heta_nb.evaluators.documents import judgements, ranked_document_ids, result_document_ids


def _case(*evidence: BenchmarkEvidence, answers: tuple[str, ...] = ()) -> BenchmarkCase:
    return BenchmarkCase(case_id="c", query="q", expected=BenchmarkExpected(answers=answers, evidence=evidence))


def test_document_ids_from_keys_benchmark_ids_and_not_hetas_parsed_ids() -> None:
    assert result_document_ids({"source": {"object_key": "raw/benchmarks/x/test/d7/a.txt"}}) == ["d7"]
    assert result_document_ids({"source": {"document_id": "d9"}}) == ["d9"]  # a non-Heta KB's own id
    assert result_document_ids({"source": {"document_id": "doc_0123456789abcdef"}}) == []  # Heta's parsed id
    assert result_document_ids({"source": {}, "metadata": {"beir_document_id": "b1"}}) == ["b1"]
    results = [
        {"source": {"document_id": "a"}},
        {"source": {"document_id": "a"}},
        {"source": {}},
        {"source": {"document_id": "b"}},
    ]
    assert ranked_document_ids(results, 10) == ["a", "b"]  # de-duplicated; unmappable results take no rank
    graded = _case(
        BenchmarkEvidence(reference_id="a", metadata={"relevance": 2}),
        BenchmarkEvidence(locator={"source_key_prefix": "raw/benchmarks/x/test/c/"}),
        BenchmarkEvidence(reference_id="z", metadata={"relevance": 0}),
    )
    assert judgements(graded) == {"a": 2.0, "c": 1.0}


def test_document_metrics_values_and_metadata() -> None:
    case = _case(BenchmarkEvidence(reference_id="a", metadata={"relevance": 2}), BenchmarkEvidence(reference_id="b"))
    response = {
        "results": [
            {"id": "1", "text": "x", "source": {"document_id": "b"}},
            {"id": "2", "text": "y", "source": {"document_id": "x"}},
        ]
    }
    assert get("recall@2").score(case, response).value == 0.5
    assert get("precision@2").score(case, response).value == 0.5
    assert get("hit@1").score(case, response).value == 1.0
    assert get("mrr@2").score(case, response).value == 1.0
    ndcg = get("ndcg@2").score(case, response)
    assert ndcg.value == pytest.approx(1 / (2 + 1 / 1.584962500721156))
    assert list(ndcg.metadata["matched_documents"]) == ["b"]
    assert list(ndcg.metadata["missing_documents"]) == ["a"]
    skipped = get("ndcg@2").score(_case(), response)
    assert skipped.value == 0.0 and skipped.metadata["skipped"] is True
