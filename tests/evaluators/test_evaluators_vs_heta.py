"""heta_nb's evaluators against heta-framework's own (differential)."""

from __future__ import annotations

import asyncio
import collections
import json
import math
import random
from collections.abc import Callable, Coroutine, Mapping, Sequence
from typing import Any

import pytest
from helpers import FIXTURES, REPORT_FILES, heta_available, requires_heta
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import heta_nb
from heta_nb.benchmark import BenchmarkCase, BenchmarkEvidence, BenchmarkExpected
from heta_nb.benchmark.formats.beir import load_beir
from heta_nb.evaluators import get
from heta_nb.evaluators.base import response_data
from heta_nb.evaluators.documents import judgements
from heta_nb.evaluators.ranking import (
    average_precision_at_k,
    heta_beir_average_precision_at_k,
    heta_beir_ndcg_at_k,
    ndcg_at_k,
    precision_at_k,
    recall_at_k,
    reciprocal_rank_at_k,
)
from heta_nb.model import QueryResponse

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


def _case(*evidence: BenchmarkEvidence, answers: tuple[str, ...] = ()) -> BenchmarkCase:
    return BenchmarkCase(case_id="c", query="q", expected=BenchmarkExpected(answers=answers, evidence=evidence))


HETA_EXAMPLES = 300


KS = (1, 2, 3, 5, 10)


DIFFERENTIAL = settings(
    derandomize=True,
    database=None,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)


def _run(coroutine: Coroutine[Any, Any, Any]) -> Any:
    """Run a coroutine that never awaits (Heta's evaluators) without an event loop."""
    try:
        coroutine.send(None)
    except StopIteration as stop:
        return stop.value
    raise AssertionError("the evaluator awaited something")  # pragma: no cover


def _json(value: Any) -> Any:
    """``value`` as strict JSON would hold it (raises on NaN, sets, ...)."""
    return json.loads(json.dumps(value, allow_nan=False))


# --- strategies: realistic Heta objects --------------------------------------------

DOCS = ["d1", "d2", "d10", "D1", "doc_5_7b98d11c9666", "é1"]


PARSED = ["doc_0123456789abcdef", "doc_fedcba9876543210"]  # Heta's own parsed ids


CHUNKS = ["c1", "c2", "c3"]


WORDS = [
    "the", "The", "a", "An", "Harrow", "harrow", "HARROW", "Point", "point.", "light,", "café", "CAFÉ", "cafe",
    "don't", "U.S.", "—", "(x)", "1,000", "naïve", "Straße", "strasse", "  ", "\t", "x",
]  # fmt: skip


def _raw_key(document_id: str, name: str = "b") -> str:
    return f"raw/benchmarks/{name}/test/{document_id}/{document_id}.txt"


doc_ids = st.sampled_from(DOCS)


raw_keys = st.one_of(
    doc_ids.map(_raw_key),
    doc_ids.map(lambda d: _raw_key(d, "beir_x")),
    doc_ids.map(lambda d: f"beir/x/{d}/f.txt"),  # Heta parses the part two after "beir"
    st.sampled_from(["raw/benchmarks/b/test", "other/key.txt", "  ", "", "raw//benchmarks/b/test/d1/x"]),
)


odd_values = st.sampled_from([None, 7, 1.0, True, "  "])


texts = st.lists(st.sampled_from(WORDS), min_size=1, max_size=6).map(" ".join).filter(str.strip)


# one container type per example for tuple-valued fields (see the evidence docstring)
containers = st.shared(st.sampled_from([tuple, list]), key="container")


heading_paths = st.tuples(containers, st.sampled_from([("a", "b"), ("a",)])).map(lambda pair: pair[0](pair[1]))


def _sources() -> st.SearchStrategy[dict[str, Any]]:
    return st.fixed_dictionaries(
        {},
        optional={
            "object_key": st.one_of(raw_keys, odd_values),
            "source_key": st.one_of(raw_keys, odd_values),
            "object_keys": st.one_of(st.lists(st.one_of(raw_keys, odd_values), max_size=3), raw_keys, odd_values),
            "source_keys": st.one_of(st.lists(raw_keys, max_size=3), st.tuples(raw_keys)),
            "document_id": st.one_of(st.sampled_from(PARSED), doc_ids, odd_values),
            "document_ids": st.lists(st.one_of(st.sampled_from(PARSED), doc_ids), max_size=2),
            "chunk_ids": st.one_of(st.lists(st.sampled_from(CHUNKS), max_size=2), st.sampled_from([("c1",), "c1c2"])),
            "page_index": st.sampled_from([0, 1, "1", None]),
            "heading_path": heading_paths,
            "origin": st.one_of(
                st.fixed_dictionaries({}, optional={"object_key": raw_keys, "document_id": doc_ids}),
                st.just("not a mapping"),
            ),
            "beir_document_id": doc_ids,
        },
    )


result_metadata = st.fixed_dictionaries(
    {},
    optional={
        "origin_source_key": st.one_of(raw_keys, odd_values),
        "beir_document_id": doc_ids,
        "benchmark_document_id": doc_ids,
        "benchmark_document_ids": st.lists(doc_ids, max_size=2),
    },
)


@st.composite
def heta_results(draw: st.DrawFn) -> Any:
    from heta_framework.kb.search import QueryResult

    if draw(st.booleans()):  # a non-Heta KB: only its own document id
        source: dict[str, Any] = {"document_id": draw(doc_ids)}
        metadata: dict[str, Any] = {}
    else:
        source, metadata = draw(_sources()), draw(result_metadata)
    return QueryResult(
        id=draw(st.sampled_from([*CHUNKS, "d1"])),
        text=draw(texts),
        score=draw(st.one_of(st.none(), st.sampled_from([1.0, 0.5, 0.5, 0.0]))),  # ties
        source=source,
        metadata=metadata,
    )


@st.composite
def heta_responses(draw: st.DrawFn) -> Any:
    from heta_framework.kb.search import QueryResponse

    results = draw(st.lists(heta_results(), max_size=8))
    if results and draw(st.booleans()):
        results.append(results[0])  # a repeated chunk
    return QueryResponse(mode="m", results=tuple(results), answer=draw(st.one_of(st.none(), texts)))


locators = st.fixed_dictionaries(
    {},
    optional={
        "source_key_prefix": st.one_of(
            doc_ids.map(lambda d: f"raw/benchmarks/b/test/{d}/"),
            st.sampled_from(["raw/", "raw/benchmarks/b/test/d1", ""]),
        ),
        "source_key": raw_keys,
        "object_key": raw_keys,
        "document_id": st.one_of(doc_ids, st.sampled_from(PARSED)),
        "chunk_id": st.sampled_from([*CHUNKS, "d1", "c"]),
        "page_index": st.sampled_from([0, 1, "1"]),
        "heading_path": heading_paths,
    },
)


grades = st.sampled_from([0, 1, 2, 3, "2", "x", None, 2.7, -1, True, "nan"])


@st.composite
def heta_evidence(draw: st.DrawFn) -> Any:
    from heta_framework.evaluation import BenchmarkEvidence

    reference = draw(st.one_of(st.none(), doc_ids, raw_keys.filter(str.strip), st.sampled_from(CHUNKS)))
    locator = draw(st.one_of(st.just({}), locators))
    text = draw(st.one_of(st.none(), texts))
    metadata = draw(st.one_of(st.just({}), st.builds(lambda grade: {"relevance": grade}, grades)))
    if reference is None and not locator and text is None:
        reference = "d1"
    return BenchmarkEvidence(reference_id=reference, locator=locator, text=text, metadata=metadata)


@st.composite
def heta_cases(draw: st.DrawFn) -> Any:
    from heta_framework.evaluation import BenchmarkCase, BenchmarkExpected

    evidence = draw(st.lists(heta_evidence(), max_size=4))
    answers = draw(st.lists(texts, max_size=3))
    expected = BenchmarkExpected(answers=tuple(answers), evidence=tuple(evidence))
    return BenchmarkCase(case_id="c", query="q", expected=expected)


def _heta_pairs_with_metadata() -> list[tuple[Any, Any]]:
    from heta_framework.evaluation import AnswerContains, AnswerExactMatch, BeirRetrievalMetric, EvidenceRecallAtK

    pairs: list[tuple[Any, Any]] = [
        (AnswerContains(), get("answer_contains")),
        (AnswerExactMatch(), get("answer_exact_match")),
    ]
    for k in KS:
        pairs.append((EvidenceRecallAtK(k=k), get(f"evidence_recall@{k}")))
        for metric in ("ndcg", "map", "recall", "precision", "mrr"):
            pairs.append((BeirRetrievalMetric(metric=metric, k=k), get(f"beir_{metric}@{k}")))
    return pairs


_COUNTS: collections.Counter[str] = collections.Counter()


# --- minimal examples of the disagreements found (each fails on the old code) ------


def _heta_case(*evidence: Any, answers: tuple[str, ...] = ()) -> Any:
    from heta_framework.evaluation import BenchmarkCase, BenchmarkExpected

    return BenchmarkCase(case_id="c", query="q", expected=BenchmarkExpected(answers=answers, evidence=evidence))


def _heta_response(*sources: dict[str, Any], answer: str | None = None) -> Any:
    from heta_framework.kb.search import QueryResponse, QueryResult

    results = tuple(QueryResult(id=f"r{i}", text="t", source=s) for i, s in enumerate(sources))
    return QueryResponse(mode="m", results=results, answer=answer)


Metric = Callable[[Sequence[str], Mapping[str, float], int], float]


TOL = 1e-9


# ------------------------------------------------------------------ heta-framework agreement


def _heta_objects(rng: random.Random, case_id: str) -> tuple[dict[str, int], list[str], object, object]:
    from heta_framework.evaluation import BenchmarkCase, BenchmarkEvidence, BenchmarkExpected
    from heta_framework.kb.search import QueryResponse, QueryResult

    docs = [f"d{i}" for i in range(rng.randint(1, 15))]
    judged = rng.sample(docs, rng.randint(1, len(docs)))
    if rng.random() < 0.1:
        qrels = {d: 0 for d in judged}
    elif rng.random() < 0.3:
        qrels = {d: rng.choice((0, 1)) for d in judged}  # binary
    else:
        qrels = {d: rng.choice((0, 1, 1, 2, 3)) for d in judged}
    # chunks in response order; a document may come back several times
    chunk_docs = [rng.choice(docs + ["u1", "u2"]) for _ in range(rng.randint(0, 25))]
    case = BenchmarkCase(
        case_id=case_id,
        query=f"query {case_id}",
        expected=BenchmarkExpected(
            evidence=tuple(BenchmarkEvidence(reference_id=d, metadata={"relevance": r}) for d, r in qrels.items())
        ),
    )
    response = QueryResponse(
        mode="test",
        results=tuple(
            QueryResult(
                id=f"{case_id}-chunk{i}",
                text=f"chunk {i} of {d}",
                score=1.0 / (i + 1),
                source={"object_key": f"raw/benchmarks/mini/test/{d}/{d}.txt"},
            )
            for i, d in enumerate(chunk_docs)
        ),
    )
    return qrels, chunk_docs, case, response


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


@requires_heta
@settings(DIFFERENTIAL, max_examples=HETA_EXAMPLES)
@given(case=heta_cases(), response=heta_responses())
def test_hetas_names_equal_hetas_own_evaluators(case: Any, response: Any) -> None:
    """Value, passed and Heta's metadata keys are equal; heta_nb's metadata is JSON."""
    data = response_data(response)
    _COUNTS["examples"] += 1
    for theirs, ours in _heta_pairs_with_metadata():
        expected = _run(theirs.evaluate(case=case, response=response))
        got = ours.score(case, data)
        label = f"{theirs.name} on {case!r} / {response!r}"
        assert got.name == expected.name, label
        assert type(got.value) is type(expected.value) and got.value == expected.value, label
        assert got.passed == expected.passed, label
        metadata = _json(dict(got.metadata))
        theirs_metadata = _json(dict(expected.metadata))
        assert {key: metadata.get(key) for key in theirs_metadata} == theirs_metadata, label
        extra = set(metadata) - set(theirs_metadata)
        assert extra <= {"missing_reference_ids", "missing_documents"}, (label, extra)  # documented additions
        if expected.metadata.get("skipped"):
            _COUNTS["skipped"] += 1
        elif isinstance(expected.value, float) and 0 < expected.value < 1:
            _COUNTS["partial"] += 1


def test_the_heta_differential_covers_the_interesting_cases() -> None:
    """Runs after the test above (file order) and checks its data was not degenerate."""
    if not _COUNTS["examples"]:
        pytest.skip("the differential test did not run (no heta)")
    assert _COUNTS["examples"] == HETA_EXAMPLES
    assert _COUNTS["skipped"] > 100 and _COUNTS["partial"] > 100, _COUNTS


@requires_heta
def test_beir_names_take_judgements_from_reference_ids_only() -> None:
    """Heta skips a case whose evidence has only a locator; heta_nb's beir_* used to score it."""
    from heta_framework.evaluation import BeirRetrievalMetric, BenchmarkEvidence

    case = _heta_case(BenchmarkEvidence(locator={"source_key_prefix": "raw/benchmarks/b/test/d1/"}))
    response = _heta_response({"object_key": _raw_key("d1")})
    theirs = _run(BeirRetrievalMetric(metric="recall", k=5).evaluate(case=case, response=response))
    ours = get("beir_recall@5").score(case, response_data(response))
    assert (theirs.value, dict(theirs.metadata)) == (0.0, {"skipped": True, "reason": "case has no BEIR qrels"})
    assert (ours.value, _json(dict(ours.metadata))) == (0.0, {"skipped": True, "reason": "case has no BEIR qrels"})
    assert get("recall@5").score(case, response_data(response)).value == 1.0  # heta_nb's own name: documented


@requires_heta
def test_beir_names_do_not_rank_by_document_id() -> None:
    """Heta never maps ``source.document_id``; heta_nb's beir_* used to (its fallback)."""
    from heta_framework.evaluation import BeirRetrievalMetric, BenchmarkEvidence

    case = _heta_case(BenchmarkEvidence(reference_id="d1"))
    response = _heta_response({"document_id": "d1"})
    theirs = _run(BeirRetrievalMetric(metric="mrr", k=5).evaluate(case=case, response=response))
    ours = get("beir_mrr@5").score(case, response_data(response))
    assert theirs.value == ours.value == 0.0
    assert ours.metadata["retrieved_documents"] == theirs.metadata["retrieved_documents"] == 0
    assert get("mrr@5").score(case, response_data(response)).value == 1.0  # documented fallback


@requires_heta
def test_tuple_locator_values_compare_in_json_form() -> None:
    """A tuple locator value matches the same tuple in a source (the report stores lists)."""
    from heta_framework.evaluation import BenchmarkEvidence, EvidenceRecallAtK

    case = _heta_case(BenchmarkEvidence(locator={"heading_path": ("a", "b")}))
    response = _heta_response({"heading_path": ("a", "b")})
    theirs = _run(EvidenceRecallAtK(k=1).evaluate(case=case, response=response))
    assert theirs.value == get("evidence_recall@1").score(case, response_data(response)).value == 1.0
    # documented difference: mixed containers (Heta: list != tuple; the stored report has lists on both sides)
    mixed = _heta_case(BenchmarkEvidence(locator={"heading_path": ["a", "b"]}))
    assert _run(EvidenceRecallAtK(k=1).evaluate(case=mixed, response=response)).value == 0.0
    assert get("evidence_recall@1").score(mixed, response_data(response)).value == 1.0


@requires_heta
def test_null_chunk_ids_are_no_chunk_ids_where_heta_raises() -> None:
    """Documented difference: Heta raises TypeError on ``chunk_ids: null``."""
    from heta_framework.evaluation import BenchmarkEvidence, EvidenceRecallAtK

    case = _heta_case(BenchmarkEvidence(locator={"chunk_id": "c2"}))
    response = _heta_response({"chunk_ids": None})
    with pytest.raises(TypeError):
        _run(EvidenceRecallAtK(k=1).evaluate(case=case, response=response))
    assert get("evidence_recall@1").score(case, response_data(response)).value == 0.0


def test_non_finite_grades_count_as_one_like_heta() -> None:
    """A grade "nan" used to drop the judgement (NaN > 0 is false); Heta counts it as 1."""
    from heta_nb.benchmark import BenchmarkCase, BenchmarkEvidence, BenchmarkExpected

    for grade in ("nan", "inf", float("nan")):
        evidence = BenchmarkEvidence(reference_id="d1", metadata={"relevance": grade})
        case = BenchmarkCase(case_id="c", query="q", expected=BenchmarkExpected(evidence=(evidence,)))
        assert judgements(case) == {"d1": 1.0}, grade
        score = get("ndcg@3").score(case, {"results": [{"id": "r", "text": "t", "source": {"document_id": "d1"}}]})
        assert score.value == 1.0 and _json(dict(score.metadata))["matched_documents"] == ["d1"]


def test_heta_beir_metrics_agree() -> None:
    """Heta's BeirRetrievalMetric equals heta_beir_* (nDCG, MAP) and our recall/P/MRR."""
    pytest.importorskip("heta_framework")
    from heta_framework.evaluation import BeirRetrievalMetric

    ours: dict[str, Metric] = {
        "ndcg": heta_beir_ndcg_at_k,
        "map": heta_beir_average_precision_at_k,
        "recall": recall_at_k,
        "precision": precision_at_k,
        "mrr": reciprocal_rank_at_k,
    }
    metrics = [BeirRetrievalMetric(metric=name, k=k) for name in ours for k in (1, 3, 5, 10)]
    rng = random.Random(7)
    cases = [_heta_objects(rng, f"c{i}") for i in range(150)]

    async def score_all() -> list[list[object]]:
        rows = []
        for _, _, case, response in cases:  # no nested async comprehension: Python 3.10 refuses it
            rows.append([await m.evaluate(case=case, response=response) for m in metrics])  # type: ignore[arg-type]
        return rows

    scores = asyncio.run(score_all())
    compared = skipped = differs_ndcg = differs_map = 0
    for (qrels, ranking, _, _), row in zip(cases, scores):
        for metric, score in zip(metrics, row):
            value = ours[metric.metric](ranking, qrels, metric.k)
            label = f"{metric.name} qrels={qrels} ranking={ranking}"
            if math.isnan(value):
                assert score.value == 0.0, label  # type: ignore[attr-defined]
                assert score.metadata.get("skipped") is True, label  # type: ignore[attr-defined]
                skipped += 1
                continue
            assert abs(value - score.value) <= TOL, label  # type: ignore[attr-defined]
            compared += 1
            # where Heta and trec_eval coincide, and where they do not
            if metric.metric == "ndcg":
                trec = ndcg_at_k(ranking, qrels, metric.k)
                if all(r in (0, 1) for r in qrels.values()):
                    assert abs(trec - value) <= TOL, label
                differs_ndcg += abs(trec - value) > TOL
            if metric.metric == "map":
                trec = average_precision_at_k(ranking, qrels, metric.k)
                n_rel = sum(r > 0 for r in qrels.values())
                if n_rel <= metric.k:
                    assert abs(trec - value) <= TOL, label
                differs_map += abs(trec - value) > TOL
    assert compared > 2000 and skipped > 0
    assert differs_ndcg > 20 and differs_map > 20
