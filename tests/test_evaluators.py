"""Built-in evaluators: Heta's numbers exactly, document metrics, F1, adapters, names."""

from __future__ import annotations

import asyncio
import random
from typing import Any

import pytest
from helpers import FIXTURES, REPORT_FILES, heta_available, requires_heta

import heta_nb
from heta_nb.benchmark import BenchmarkCase, BenchmarkEvidence, BenchmarkExpected
from heta_nb.benchmark.formats.beir import load_beir
from heta_nb.evaluators import FunctionEvaluator, PreparedEvaluator, as_evaluator, as_score, get
from heta_nb.evaluators.answers import token_f1
from heta_nb.evaluators.documents import judgements, ranked_document_ids, result_document_ids
from heta_nb.model import EvaluationScore, QueryResponse

MANIFEST = {"name": "lighthouse_mini", "version": "1", "split": "test", "task_type": "multihop_qa"}


def _heta_pairs() -> list[tuple[Any, Any]]:
    from heta_framework.evaluation import AnswerContains, AnswerExactMatch, BeirRetrievalMetric, EvidenceRecallAtK

    pairs: list[tuple[Any, Any]] = []
    for k in (1, 3, 5):
        pairs.append((EvidenceRecallAtK(k=k), get(f"evidence_recall@{k}")))
        for metric in ("ndcg", "map", "recall", "precision", "mrr"):
            pairs.append((BeirRetrievalMetric(metric=metric, k=k), get(f"beir_{metric}@{k}")))
    pairs += [(AnswerContains(), get("answer_contains")), (AnswerExactMatch(), get("answer_exact_match"))]
    return pairs


@requires_heta
@pytest.mark.parametrize("path", REPORT_FILES, ids=lambda p: p.stem)
def test_same_scores_as_hetas_evaluators_on_real_responses(path: Any) -> None:
    benchmark = (
        heta_nb.load_benchmark(FIXTURES, manifest=MANIFEST)
        if "beir" not in path.name
        else (load_beir(FIXTURES / "beir_mini", dataset="mini"))
    )
    report = heta_nb.load_report(path)
    pairs = _heta_pairs()
    compared = 0
    for result in report.case_results:
        if result.response is None:
            continue
        case = benchmark.case(result.case_id)
        for theirs, ours in pairs:
            expected = asyncio.run(theirs.evaluate(case=case, response=result.response))
            got = ours.score(case, result.response.raw)
            assert (got.name, got.value, got.passed) == (expected.name, expected.value, expected.passed), (
                result.case_id,
                got.name,
            )
            assert got.metadata.get("skipped") == expected.metadata.get("skipped")
            compared += 1
    assert compared >= 3 * len(pairs)  # every evaluator on at least three real responses


@requires_heta
def test_same_evidence_recall_as_heta_on_random_locators() -> None:
    from heta_framework.evaluation import EvidenceRecallAtK

    rng = random.Random(11)
    keys = [f"raw/benchmarks/b/test/d{i}/d{i}.txt" for i in range(6)]
    for trial in range(300):
        results = []
        for rank in range(rng.randint(0, 6)):
            doc = rng.randrange(6)
            source: dict[str, Any] = {
                "object_key": keys[doc],
                "document_id": f"doc_{doc:016x}",
                "chunk_ids": [f"ch{doc}"],
                "page_index": rng.choice([0, 1, "1"]),
            }
            if rng.random() < 0.3:
                source["origin"] = {"object_key": keys[(doc + 1) % 6]}
            if rng.random() < 0.2:  # plural keys, blank and non-string values
                source[rng.choice(["source_keys", "object_keys"])] = rng.choice(
                    [[keys[(doc + 2) % 6], " ", None], keys[(doc + 3) % 6], (7,)]
                )
            if rng.random() < 0.1:
                source[rng.choice(["source_key", "object_key"])] = rng.choice(["  ", 42, None])
            results.append(
                {
                    "id": f"ch{doc}",
                    "text": f"text of d{doc} rank {rank}",
                    "source": source,
                    "metadata": {"origin_source_key": keys[doc]} if rng.random() < 0.2 else {},
                }
            )
        evidence = []
        for _ in range(rng.randint(1, 3)):
            doc = rng.randrange(6)
            locator = rng.choice(
                [
                    {"source_key_prefix": f"raw/benchmarks/b/test/d{doc}/"},
                    {"source_key": keys[doc]},
                    {"document_id": f"doc_{doc:016x}"},
                    {"chunk_id": f"ch{doc}"},
                    {"page_index": 1},
                    {},
                    {},
                ]
            )
            text = rng.choice(
                [None, None, f"text of d{doc}", "TEXT  OF d", f"longer passage with text of d{doc} rank 0"]
            )
            reference = rng.choice([None, f"d{doc}", keys[doc], f"ch{doc}"])
            if not locator and text is None and reference is None:
                reference = f"ch{doc}"
            evidence.append(BenchmarkEvidence(reference_id=reference, locator=locator, text=text))
        case = BenchmarkCase(case_id=f"t{trial}", query="q", expected=BenchmarkExpected(evidence=tuple(evidence)))
        response = QueryResponse(mode="m", results=results)
        for k in (1, 3, 5):
            theirs = asyncio.run(EvidenceRecallAtK(k=k).evaluate(case=case, response=response))
            ours = get(f"evidence_recall@{k}").score(case, response.raw)
            assert ours.value == theirs.value, (trial, k)
            assert list(ours.metadata["matched_reference_ids"]) == list(theirs.metadata["matched_reference_ids"])


@requires_heta
def test_same_evidence_recall_as_heta_for_prefix_locators_on_odd_sources() -> None:
    """The prefix-only locator (Heta's UDA and BEIR adapters) has its own fast path."""
    from heta_framework.evaluation import EvidenceRecallAtK

    rng = random.Random(23)
    keys = ["raw/b/d1/a.txt", "raw/b/d2/b.txt", "  ", "", "raw/b/d1"]
    values = [*keys, None, 7, ["raw/b/d2/x", None, "  "], ("raw/b/d1/y",), ["", " "]]
    loop = asyncio.new_event_loop()
    differs = 0
    try:
        for trial in range(1500):
            results = []
            for rank in range(rng.randint(0, 3)):
                source: dict[str, Any] = {}
                for key in ("object_key", "source_key", "source_keys", "object_keys"):
                    if rng.random() < (0.7 if key == "object_key" else 0.2):
                        source[key] = rng.choice(values)
                if rng.random() < 0.15:
                    source["origin"] = rng.choice([{"object_key": rng.choice(keys)}, "not a mapping", None])
                metadata = {"origin_source_key": rng.choice(values)} if rng.random() < 0.15 else {}
                results.append({"id": f"r{rank}", "text": "t", "source": source, "metadata": metadata})
            prefix = rng.choice(["raw/b/d1", "raw/b/d1/", "raw/b/d2/", "", " ", "7"])
            evidence = BenchmarkEvidence(reference_id=rng.choice([None, "d1"]), locator={"source_key_prefix": prefix})
            case = BenchmarkCase(case_id=f"p{trial}", query="q", expected=BenchmarkExpected(evidence=(evidence,)))
            response = QueryResponse(mode="m", results=results)
            for k in (1, 3):
                theirs = loop.run_until_complete(EvidenceRecallAtK(k=k).evaluate(case=case, response=response))
                ours = get(f"evidence_recall@{k}").score(case, response.raw)
                assert ours.value == theirs.value, (trial, k, results, prefix)
                differs += theirs.value == 0.0
    finally:
        loop.close()
    assert 500 < differs < 2500  # both outcomes are well represented


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


def test_answer_metrics() -> None:
    case = _case(answers=("Mirela Ostrand", "Ostrand"))
    response = {"answer": "It was  mirela ostrand, the engineer.", "results": []}
    contains = get("answer_contains").score(case, response)
    assert contains.value is True and list(contains.metadata["matched_answers"]) == ["Mirela Ostrand", "Ostrand"]
    assert get("answer_exact_match").score(case, response).value is False
    assert get("answer_exact_match").score(case, {"answer": " MIRELA   OSTRAND "}).value is True
    f1 = get("answer_f1").score(case, response)
    assert f1.value == pytest.approx(token_f1("It was mirela ostrand, the engineer.", "Mirela Ostrand")[0])
    assert token_f1("The Eiffel tower", "eiffel tower!")[0] == 1.0  # articles and punctuation ignored
    assert token_f1("Paris France", "Paris")[0] == pytest.approx(2 / 3)
    assert get("answer_f1").score(case, {"answer": None}).value == 0.0
    assert get("answer_contains").score(_case(), response).metadata["skipped"] is True


def test_names_and_errors() -> None:
    assert get("NDCG@10").name == "ndcg@10"
    assert get("success@3").name == "hit@3" and get("rr@5").name == "mrr@5"
    for bad in ("ndcg", "ndcg@0", "bleu@3", "evidence_recall@x"):
        with pytest.raises(ValueError, match="evaluator"):
            get(bad)


def test_adapters_for_functions_objects_and_heta_style_evaluators() -> None:
    case = _case(answers=("x",))
    response = QueryResponse(mode="m", answer="x")

    def positional(c: Any, r: Any) -> float:
        return 1.0

    async def keywords(*, case: Any, response: Any) -> dict[str, Any]:
        return {"value": True, "passed": True, "metadata": {"why": "async"}}

    class SyncScore:
        name = "sync_score"

        def score(self, case: Any, response: Any) -> str:
            return "label"

    for evaluator, expected in ((positional, 1.0), (keywords, True), (SyncScore(), "label"), ("answer_contains", True)):
        prepared = PreparedEvaluator(as_evaluator(evaluator))
        score = asyncio.run(prepared.run(case, response, response))
        assert isinstance(score, EvaluationScore) and score.value == expected
    with pytest.raises(ValueError, match="give a lambda evaluator a name"):
        FunctionEvaluator(lambda c, r: 1)
    assert FunctionEvaluator(lambda c, r: 1, name="one").name == "one"
    with pytest.raises(TypeError, match="not a score"):
        as_score(object(), "x")
    with pytest.raises(TypeError):
        as_evaluator(42)


def test_a_builtin_subclass_that_only_overrides_score_still_runs() -> None:
    """Built-ins now implement score_json (the runner records it as it is); a subclass
    written against score() alone keeps working, in the runner and on its own."""
    from runner_support import exact_kb, toy_benchmark

    from heta_nb.evaluators import BuiltinEvaluator

    class Legacy(BuiltinEvaluator):
        name = "legacy"

        def score(self, case: Any, response: dict[str, Any]) -> EvaluationScore:
            return EvaluationScore(name=self.name, value=len(response["results"]) / 10, metadata={"n": 1})

    legacy = Legacy()
    assert legacy.score_json(_case(), {"results": [{}] * 3}) == {
        "name": "legacy",
        "value": 0.3,
        "passed": None,
        "metadata": {"n": 1},
    }
    report = heta_nb.evaluate(
        toy_benchmark(4),
        kb=exact_kb,
        query_modes=["good"],
        evaluators=[legacy, "answer_contains"],
        store=None,
        knowledge_base_name="k",
        progress=False,
    )
    assert [r.score("legacy").metadata["n"] for r in report.case_results] == [1] * 4
    assert all(r.score("answer_contains") is not None for r in report.case_results)
    assert get("answer_contains").score(_case(answers=("x",)), {"answer": "X"}).value is True


@pytest.mark.skipif(not heta_available(), reason="needs heta")
def test_builtins_work_inside_hetas_own_protocol() -> None:
    """heta_nb's evaluators have Heta's async evaluate(case=, response=) too."""
    from heta_framework.kb.search import QueryResponse as HetaResponse
    from heta_framework.kb.search import QueryResult

    heta_response = HetaResponse(mode="m", results=(QueryResult(id="r", text="t", source={"document_id": "a"}),))
    score = asyncio.run(
        get("recall@3").evaluate(case=_case(BenchmarkEvidence(reference_id="a")), response=heta_response)
    )
    assert score.value == 1.0
