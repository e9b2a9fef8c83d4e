"""Document-level metrics against ir_measures (trec_eval conventions)."""

from __future__ import annotations

import json
import math
import random
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import pytest
from helpers import requires_heta
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from heta_nb.evaluators import get
from heta_nb.evaluators.base import response_data
from heta_nb.evaluators.ranking import (
    average_precision_at_k,
    hit_at_k,
    ndcg_at_k,
    order_by_score,
    precision_at_k,
    recall_at_k,
    reciprocal_rank_at_k,
)

IR_EXAMPLES = 150


KS = (1, 2, 3, 5, 10)


TOL = 1e-9


DIFFERENTIAL = settings(
    derandomize=True,
    database=None,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)


def _json(value: Any) -> Any:
    """``value`` as strict JSON would hold it (raises on NaN, sets, ...)."""
    return json.loads(json.dumps(value, allow_nan=False))


PARSED = ["doc_0123456789abcdef", "doc_fedcba9876543210"]  # Heta's own parsed ids


def _raw_key(document_id: str, name: str = "b") -> str:
    return f"raw/benchmarks/{name}/test/{document_id}/{document_id}.txt"


# --- document metrics against ir_measures ------------------------------------------

ID_FORMS = ("object_key", "origin", "origin_source_key", "beir_metadata", "document_id", "unmappable")


@st.composite
def judged_queries(draw: st.DrawFn) -> tuple[Any, Any, dict[str, int], list[str]]:
    """A Heta case and response plus the qrels and document ranking they stand for."""
    from heta_framework.evaluation import BenchmarkCase, BenchmarkEvidence, BenchmarkExpected
    from heta_framework.kb.search import QueryResponse, QueryResult

    pool = [f"d{i}" for i in range(12)]
    qrels: dict[str, int] = {}
    evidence = []
    for document_id in draw(st.lists(st.sampled_from(pool), max_size=6)):  # repeats keep the max grade
        if draw(st.integers(0, 4)) == 0:  # locator-only evidence: a grade-1 judgement for the trec names
            qrels[document_id] = max(1, qrels.get(document_id, 0))
            evidence.append(BenchmarkEvidence(locator={"source_key_prefix": f"raw/benchmarks/b/test/{document_id}/"}))
        else:
            grade = draw(st.integers(0, 3))
            qrels[document_id] = max(grade, qrels.get(document_id, 0))
            evidence.append(BenchmarkEvidence(reference_id=document_id, metadata={"relevance": grade}))
    results = []
    ranking: list[str] = []
    for i, document_id in enumerate(draw(st.lists(st.sampled_from(pool), max_size=15))):
        form = draw(st.sampled_from(ID_FORMS))
        source: dict[str, Any] = {"document_id": PARSED[0]}  # Heta's parsed id is never used
        metadata: dict[str, Any] = {}
        if form == "object_key":
            source["object_key"] = _raw_key(document_id)
        elif form == "origin":
            source["origin"] = {"object_key": _raw_key(document_id)}
        elif form == "origin_source_key":
            metadata["origin_source_key"] = _raw_key(document_id)
        elif form == "beir_metadata":
            metadata["beir_document_id"] = document_id
        elif form == "document_id":
            source["document_id"] = document_id
        if form != "unmappable":
            ranking.append(document_id)
        score = draw(st.sampled_from([1.0, 0.5]))  # tied and out-of-order scores: the order is the ranking
        results.append(QueryResult(id=f"ch{i}", text="t", score=score, source=source, metadata=metadata))
    case = BenchmarkCase(case_id="q", query="q", expected=BenchmarkExpected(evidence=tuple(evidence)))
    seen: dict[str, None] = dict.fromkeys(ranking)
    return case, QueryResponse(mode="m", results=tuple(results)), qrels, list(seen)


Metric = Callable[[Sequence[str], Mapping[str, float], int], float]


RR_CUTOFFS = (1, 3, 5, 10, 20)


# Ids whose descending order exercises case, digits, prefixes, length and non-ASCII.
POOL = [
    "a", "B", "b", "c", "Z", "z", "d1", "d10", "d2", "d20", "d3", "doc", "doc-1", "doc_1",
    "x", "X1", "é", "ü", "0", "9", "10", "a b", "aa", "ab", "Ab", "q", "r1", "r2", "s", "t",
]  # fmt: skip


def _random_query(rng: random.Random) -> tuple[dict[str, int], dict[str, float]]:
    """Draw qrels (grades 0..3) and a scored run covering the interesting cases."""
    docs = rng.sample(POOL, rng.randint(1, 24))
    judged = rng.sample(docs, rng.randint(1, len(docs)))
    scenario = rng.random()
    if scenario < 0.1:  # judged, but nothing relevant
        qrels = {d: 0 for d in judged}
    else:
        qrels = {d: rng.choice((0, 0, 1, 1, 2, 3)) for d in judged}
    if scenario < 0.05:
        candidates: list[str] = []  # empty run
    elif scenario < 0.2:  # every relevant document is missing from the run
        candidates = [d for d in docs if qrels.get(d, 0) <= 0]
    else:
        candidates = docs  # includes unjudged docs; some judged ones left out below
    retrieved = rng.sample(candidates, rng.randint(0, len(candidates))) if candidates else []
    style = rng.random()
    if style < 0.4:
        levels = [0.0, 0.5, 1.0, 2.0]
        run = {d: rng.choice(levels) for d in retrieved}
    elif style < 0.55:
        run = dict.fromkeys(retrieved, 1.0)  # everything tied
    elif style < 0.7:  # distinct as doubles, tied once trec_eval rounds them to float32
        run = {d: 1.0 + rng.choice((0.0, 1e-9, 2e-9, 0.25)) for d in retrieved}
    else:
        run = {d: rng.random() for d in retrieved}
    return qrels, run


def _make_dataset(seed: int, n: int) -> tuple[dict[str, dict[str, int]], dict[str, dict[str, float]]]:
    rng = random.Random(seed)
    all_qrels: dict[str, dict[str, int]] = {}
    all_runs: dict[str, dict[str, float]] = {}
    for i in range(n):
        qrels, run = _random_query(rng)
        all_qrels[f"q{i}"] = qrels
        if run:  # pytrec_eval wants no empty run entries; the query is simply missing
            all_runs[f"q{i}"] = run
    return all_qrels, all_runs


def _by_query(metrics: object) -> dict[tuple[str, str], float]:
    return {(m.query_id, str(m.measure)): m.value for m in metrics}  # type: ignore[attr-defined]


def _check(ours: float, theirs: float | None, label: str) -> None:
    if math.isnan(ours):
        # documented: we say "skipped"; ir_measures says 0.0 (or omits the query)
        assert theirs in (None, 0.0), label
    else:
        assert theirs is not None, label
        assert abs(ours - theirs) <= TOL, f"{label}: ours={ours!r} ir_measures={theirs!r}"


@requires_heta  # the cases and responses are built as heta objects
@settings(DIFFERENTIAL, max_examples=IR_EXAMPLES)
@given(query=judged_queries())
def test_document_metrics_equal_ir_measures(query: tuple[Any, Any, dict[str, int], list[str]]) -> None:
    """recall/precision/hit/mrr/ndcg/map@K equal ir_measures' R/P/Success/RR/nDCG/AP@K."""
    ir_measures = pytest.importorskip("ir_measures")
    from ir_measures import AP, RR, P, R, Success, nDCG

    case, response, qrels, ranking = query
    data = response_data(response)
    names = {"recall": R, "precision": P, "hit": Success, "mrr": RR, "ndcg": nDCG, "map": AP}
    measures = [measure @ k for measure in names.values() for k in KS]
    run = {"q": {d: float(len(ranking) - rank) for rank, d in enumerate(ranking)}} if ranking else {}
    theirs = {str(m.measure): m.value for m in ir_measures.iter_calc(measures, {"q": qrels or {"none": 0}}, run)}
    relevant = any(grade > 0 for grade in qrels.values())
    for metric, measure in names.items():
        for k in KS:
            score = get(f"{metric}@{k}").score(case, data)
            metadata = _json(dict(score.metadata))
            if not relevant:
                assert score.value == 0.0 and metadata == {"skipped": True, "reason": "case has no relevant documents"}
                continue
            expected = theirs.get(str(measure @ k), 0.0)  # a query missing from the run scores 0.0
            assert abs(score.value - expected) <= TOL, (metric, k, qrels, ranking, score.value, expected)
            assert metadata["retrieved_documents"] == len(ranking[:k])
            assert metadata["matched_documents"] == [d for d in ranking[:k] if qrels.get(d, 0) > 0]
            assert metadata["relevant_documents"] == sum(1 for grade in qrels.values() if grade > 0)


def test_trec_eval_tie_break_is_descending_doc_id() -> None:
    """Recover pytrec_eval's order of fully tied documents, one relevant doc at a time."""
    ir_measures = pytest.importorskip("ir_measures")
    run = {"q": dict.fromkeys(POOL, 1.0)}
    qrels = {f"q_{d}": {d: 1} for d in POOL}
    runs = {f"q_{d}": run["q"] for d in POOL}
    values = _by_query(ir_measures.iter_calc([ir_measures.RR], qrels, runs))
    rank_of = {d: round(1 / values[(f"q_{d}", "RR")]) for d in POOL}
    observed = sorted(POOL, key=rank_of.__getitem__)
    assert observed == sorted(POOL, reverse=True)
    assert observed == order_by_score(run["q"].items(), tie_break="trec_eval")
    assert observed[:3] == ["ü", "é", "z"]
    assert observed[-5:] == ["B", "Ab", "9", "10", "0"]
    assert observed.index("d2") < observed.index("d10") < observed.index("d1")  # not numeric
    assert observed.index("b") < observed.index("a b") < observed.index("a") < observed.index("B")


@pytest.mark.parametrize(
    ("score_a", "score_b", "a_first"),
    [
        (0.1 + 1e-10, 0.1, False),  # equal as float32: tie, "b" > "a" wins
        (0.1 + 1e-7, 0.1, True),  # still distinct as float32
        (1.0 + 1e-8, 1.0, False),
        (16777217.0, 16777216.0, False),  # 2**24 + 1 is not a float32
        (1e40, 1e39, False),  # both overflow float32 to inf: tie
        (-1e40, -1e39, False),  # both -inf: tie
        (2.0, 1.0, True),
    ],
)
def test_trec_eval_compares_scores_as_float32(score_a: float, score_b: float, a_first: bool) -> None:
    pytrec_eval = pytest.importorskip("pytrec_eval")
    evaluator = pytrec_eval.RelevanceEvaluator({"q": {"a": 1}}, {"recip_rank"})
    rr = evaluator.evaluate({"q": {"a": score_a, "b": score_b}})["q"]["recip_rank"]
    assert rr == (1.0 if a_first else 0.5)
    ranking = order_by_score([("a", score_a), ("b", score_b)], tie_break="trec_eval")
    assert ranking == (["a", "b"] if a_first else ["b", "a"])
    stable = order_by_score([("a", score_a), ("b", score_b)], tie_break="stable")
    assert stable[0] == ("a" if score_a >= score_b else "b")  # plain double comparison


def test_agreement_with_ir_measures_randomized() -> None:
    """Our trec_eval-style metrics equal ir_measures on 400 random tied/graded queries."""
    ir_measures = pytest.importorskip("ir_measures")
    from ir_measures import AP, RR, P, R, Success, nDCG

    all_qrels, all_runs = _make_dataset(seed=20240601, n=400)
    pairs: list[tuple[Metric, object]] = []
    for k in RR_CUTOFFS:
        pairs += [
            (recall_at_k, R @ k),
            (precision_at_k, P @ k),
            (hit_at_k, Success @ k),
            (ndcg_at_k, nDCG @ k),
            (average_precision_at_k, AP @ k),
        ]
    theirs = _by_query(ir_measures.iter_calc([m for _, m in pairs], all_qrels, all_runs))
    rankings = {qid: order_by_score(all_runs.get(qid, {}).items(), tie_break="trec_eval") for qid in all_qrels}

    # RR@k, two ways: trec_eval's recip_rank on the run truncated to its top k, and the
    # MS MARCO provider behind RR@k on a tie-free copy of the run (score = -rank).
    tie_free = {qid: {d: -float(rank) for rank, d in enumerate(rankings[qid])} for qid in all_runs}
    rr_cut = _by_query(ir_measures.iter_calc([RR @ k for k in RR_CUTOFFS], all_qrels, tie_free))
    for k in RR_CUTOFFS:
        truncated = {qid: {d: run[d] for d in rankings[qid][:k]} for qid, run in all_runs.items()}
        rr_trec = _by_query(ir_measures.iter_calc([RR], all_qrels, truncated))
        for qid, qrels in all_qrels.items():
            ours = reciprocal_rank_at_k(rankings[qid], qrels, k)
            _check(ours, rr_trec.get((qid, "RR")), f"{qid} recip_rank@{k}")
            _check(ours, rr_cut.get((qid, f"RR@{k}")), f"{qid} RR@{k}")

    checked = 0
    for qid, qrels in all_qrels.items():
        for func, measure in pairs:
            k = measure["cutoff"]  # type: ignore[index]
            ours = func(rankings[qid], qrels, k)
            _check(ours, theirs.get((qid, str(measure))), f"{qid} {measure}")
            checked += 1
    assert checked == 400 * len(pairs)

    # the data really covered the cases the brief asks for
    no_rel = [q for q, qr in all_qrels.items() if not any(v > 0 for v in qr.values())]
    all_missing = [
        q
        for q, qr in all_qrels.items()
        if any(v > 0 for v in qr.values()) and not any(qr.get(d, 0) > 0 for d in all_runs.get(q, {}))
    ]
    tied = [q for q, run in all_runs.items() if len(set(run.values())) < len(run)]
    unjudged = [q for q, run in all_runs.items() if any(d not in all_qrels[q] for d in run)]
    short = [q for q, run in all_runs.items() if len(run) < 20]
    assert min(len(no_rel), len(all_missing), len(tied), len(unjudged), len(short)) >= 20
    assert len(all_qrels) - len(all_runs) >= 10  # queries with an empty run


@settings(max_examples=60, deadline=None)
@given(
    grades=st.dictionaries(st.sampled_from(POOL), st.integers(0, 3), min_size=1, max_size=12),
    run=st.dictionaries(st.sampled_from(POOL), st.sampled_from([0.0, 0.25, 0.5, 1.0]), max_size=15),
    k=st.sampled_from(RR_CUTOFFS),
)
def test_agreement_with_ir_measures_hypothesis(grades: dict[str, int], run: dict[str, float], k: int) -> None:
    """Hypothesis-driven single-query agreement (heavily tied scores)."""
    ir_measures = pytest.importorskip("ir_measures")
    from ir_measures import AP, P, R, Success, nDCG

    pairs: list[tuple[Metric, object]] = [
        (recall_at_k, R @ k),
        (precision_at_k, P @ k),
        (hit_at_k, Success @ k),
        (ndcg_at_k, nDCG @ k),
        (average_precision_at_k, AP @ k),
    ]
    runs = {"q": run} if run else {}
    theirs = _by_query(ir_measures.iter_calc([m for _, m in pairs], {"q": grades}, runs))
    ranking = order_by_score(run.items(), tie_break="trec_eval")
    for func, measure in pairs:
        _check(func(ranking, grades, k), theirs.get(("q", str(measure))), str(measure))


def test_ir_measures_rr_cutoff_breaks_ties_ascending() -> None:
    """Documented quirk: ir_measures RR@k (MS MARCO provider) orders ties a < b."""
    ir_measures = pytest.importorskip("ir_measures")
    from ir_measures import RR

    qrels = {"q": {"b": 1}}
    run = {"q": {"a": 1.0, "b": 1.0}}
    values = _by_query(ir_measures.iter_calc([RR, RR @ 2], qrels, run))
    assert values[("q", "RR")] == 1.0  # trec_eval: b before a
    assert values[("q", "RR@2")] == 0.5  # MS MARCO provider: a before b
    ranking = order_by_score(run["q"].items(), tie_break="trec_eval")
    assert reciprocal_rank_at_k(ranking, qrels["q"], 2) == 1.0
