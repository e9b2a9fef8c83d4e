"""Tests for heta_nb.evaluators.ranking against ir_measures (trec_eval) and heta-framework.

ir_measures 0.4.3 facts these tests rely on (checked here, not assumed):

* ``R@k``, ``P@k``, ``Success@k``, ``nDCG@k`` and ``AP@k`` are served by pytrec_eval
  (trec_eval ``recall_k``, ``P_k``, ``success_k``, ``ndcg_cut_k``, ``map_cut_k``).
* ``RR@k`` is served by the MS MARCO provider, which sorts ties by ascending doc id, so
  it is compared on a tie-free copy of the run; trec_eval's ``recip_rank`` (``RR``) is
  compared on the run truncated to its trec_eval top k.
* A judged query with no relevant document, or missing from the run, gets 0.0; our
  functions return NaN for the former ("skipped").
"""

from __future__ import annotations

import asyncio
import math
import random
from collections.abc import Callable, Mapping, Sequence

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from heta_nb.evaluators.ranking import (
    average_precision_at_k,
    dedupe_ranking,
    heta_beir_average_precision_at_k,
    heta_beir_ndcg_at_k,
    hit_at_k,
    ndcg_at_k,
    order_by_score,
    precision_at_k,
    recall_at_k,
    reciprocal_rank_at_k,
)

Metric = Callable[[Sequence[str], Mapping[str, float], int], float]

KS = (1, 3, 5, 10, 20)
TOL = 1e-9
ALL_METRICS: tuple[Metric, ...] = (
    recall_at_k,
    precision_at_k,
    hit_at_k,
    reciprocal_rank_at_k,
    ndcg_at_k,
    average_precision_at_k,
    heta_beir_ndcg_at_k,
    heta_beir_average_precision_at_k,
)
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
    for k in KS:
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
    rr_cut = _by_query(ir_measures.iter_calc([RR @ k for k in KS], all_qrels, tie_free))
    for k in KS:
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
    k=st.sampled_from(KS),
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


def test_stable_and_trec_eval_tie_breaks_differ() -> None:
    pairs = [("a", 1.0), ("c", 0.5), ("b", 1.0), ("d", 0.5)]
    assert order_by_score(pairs) == ["a", "b", "c", "d"]
    assert order_by_score(pairs, tie_break="stable") == ["a", "b", "c", "d"]
    assert order_by_score(pairs, tie_break="trec_eval") == ["b", "a", "d", "c"]
    qrels = {"a": 1}
    stable = order_by_score(pairs, tie_break="stable")
    trec = order_by_score(pairs, tie_break="trec_eval")
    assert reciprocal_rank_at_k(stable, qrels, 1) == 1.0
    assert reciprocal_rank_at_k(trec, qrels, 1) == 0.0
    assert reciprocal_rank_at_k(trec, qrels, 2) == 0.5
    with pytest.raises(ValueError):
        order_by_score(pairs, tie_break="random")  # type: ignore[arg-type]
    with pytest.raises(ValueError):
        order_by_score([("a", math.nan)])


def test_order_by_score_duplicates_keep_best_occurrence() -> None:
    pairs = [("a", 0.2), ("b", 0.5), ("a", 0.9), ("b", 0.1)]
    assert order_by_score(pairs) == ["a", "b"]
    assert order_by_score(pairs, tie_break="trec_eval") == ["a", "b"]
    assert order_by_score([("a", 0.5), ("b", 0.5), ("a", 0.5)]) == ["a", "b"]
    assert order_by_score([]) == []


@settings(max_examples=200, deadline=None)
@given(
    pairs=st.lists(
        st.tuples(st.sampled_from(POOL), st.sampled_from([0.0, 0.5, 1.0, -1.0, math.inf])),
        max_size=20,
    )
)
def test_order_by_score_properties(pairs: list[tuple[str, float]]) -> None:
    best: dict[str, float] = {}
    first_seen: dict[str, int] = {}
    for i, (d, s) in enumerate(pairs):
        best[d] = max(best.get(d, -math.inf), s)
        first_seen.setdefault(d, i)
    trec = order_by_score(pairs, tie_break="trec_eval")
    assert trec == sorted(best, key=lambda d: (best[d], d), reverse=True)
    stable = order_by_score(pairs, tie_break="stable")
    assert sorted(stable) == sorted(best)
    scores = [best[d] for d in stable]
    assert scores == sorted(scores, reverse=True)
    for a, b in zip(stable, stable[1:]):
        if best[a] == best[b]:  # ties keep the order in which their best scores appeared
            ia = min(i for i, p in enumerate(pairs) if p == (a, best[a]))
            ib = min(i for i, p in enumerate(pairs) if p == (b, best[b]))
            assert ia < ib


@settings(max_examples=200, deadline=None)
@given(
    ranking=st.lists(st.sampled_from(POOL), max_size=25),
    qrels=st.dictionaries(st.sampled_from(POOL), st.integers(-1, 3), max_size=12),
    k=st.integers(1, 30),
)
def test_metric_invariants(ranking: list[str], qrels: dict[str, int], k: int) -> None:
    values = {f.__name__: f(ranking, qrels, k) for f in ALL_METRICS}
    if not any(v > 0 for v in qrels.values()):
        assert all(math.isnan(v) for v in values.values())
        return
    assert all(0.0 <= v <= 1.0 + TOL for v in values.values()), values
    assert values["hit_at_k"] >= values["reciprocal_rank_at_k"] > 0 or values["hit_at_k"] == 0
    assert (values["hit_at_k"] == 0) == (values["recall_at_k"] == 0)
    # duplicates change nothing
    for f in ALL_METRICS:
        assert f(dedupe_ranking(ranking), qrels, k) == values[f.__name__]
    # recall and hit never decrease with k
    for f in (recall_at_k, hit_at_k):
        assert f(ranking, qrels, k + 1) >= values[f.__name__]


def test_worked_example_from_module_docstring() -> None:
    """The numbers quoted in the module docstring, and trec_eval's agreement on them."""
    qrels = {"a": 2, "b": 1, "c": 1}
    ranking = ["b", "x", "a"]
    idcg_lin = 2 + 1 / math.log2(3) + 1 / 2
    idcg_exp = 3 + 1 / math.log2(3) + 1 / 2
    assert ndcg_at_k(ranking, qrels, 3) == pytest.approx(2 / idcg_lin, abs=TOL)
    assert heta_beir_ndcg_at_k(ranking, qrels, 3) == pytest.approx(2.5 / idcg_exp, abs=TOL)
    assert round(ndcg_at_k(ranking, qrels, 3), 6) == 0.638788
    assert round(heta_beir_ndcg_at_k(ranking, qrels, 3), 6) == 0.605191
    assert average_precision_at_k(ranking, qrels, 3) == pytest.approx(5 / 9, abs=TOL)
    assert heta_beir_average_precision_at_k(ranking, qrels, 3) == pytest.approx(5 / 9, abs=TOL)
    assert round(ndcg_at_k(ranking, qrels, 2), 6) == 0.380094
    assert round(heta_beir_ndcg_at_k(ranking, qrels, 2), 6) == 0.275412
    assert average_precision_at_k(ranking, qrels, 2) == pytest.approx(1 / 3, abs=TOL)
    assert heta_beir_average_precision_at_k(ranking, qrels, 2) == pytest.approx(1 / 2, abs=TOL)
    assert ndcg_at_k(ranking, qrels, 1) == pytest.approx(1 / 2, abs=TOL)
    assert heta_beir_ndcg_at_k(ranking, qrels, 1) == pytest.approx(1 / 3, abs=TOL)
    assert heta_beir_average_precision_at_k(ranking, qrels, 1) == 1.0

    ir_measures = pytest.importorskip("ir_measures")
    from ir_measures import AP, nDCG

    run = {"q": {d: float(-i) for i, d in enumerate(ranking)}}
    values = _by_query(ir_measures.iter_calc([nDCG @ 3, nDCG @ 2, AP @ 3, AP @ 2], {"q": qrels}, run))
    assert values[("q", "nDCG@3")] == pytest.approx(ndcg_at_k(ranking, qrels, 3), abs=TOL)
    assert values[("q", "nDCG@2")] == pytest.approx(ndcg_at_k(ranking, qrels, 2), abs=TOL)
    assert values[("q", "AP@3")] == pytest.approx(5 / 9, abs=TOL)
    assert values[("q", "AP@2")] == pytest.approx(1 / 3, abs=TOL)


def test_negative_grades_gain_nothing_like_trec_eval() -> None:
    pytrec_eval = pytest.importorskip("pytrec_eval")
    qrels = {"a": -1, "b": 2, "c": 1}
    ranking = ["a", "b", "c"]
    evaluator = pytrec_eval.RelevanceEvaluator({"q": qrels}, {"ndcg_cut_3", "map_cut_3", "P_3"})
    result = evaluator.evaluate({"q": {"a": 3.0, "b": 2.0, "c": 1.0}})["q"]
    assert ndcg_at_k(ranking, qrels, 3) == pytest.approx(result["ndcg_cut_3"], abs=TOL)
    assert average_precision_at_k(ranking, qrels, 3) == pytest.approx(result["map_cut_3"], abs=TOL)
    assert precision_at_k(ranking, qrels, 3) == pytest.approx(result["P_3"], abs=TOL)


# --------------------------------------------------------------------------- edge cases


def test_duplicates_in_ranking_count_once_at_first_position() -> None:
    qrels = {"a": 1, "b": 1}
    ranking = ["a", "a", "a", "b"]
    assert dedupe_ranking(ranking) == ["a", "b"]
    assert precision_at_k(ranking, qrels, 2) == 1.0
    assert recall_at_k(ranking, qrels, 2) == 1.0
    assert average_precision_at_k(ranking, qrels, 2) == 1.0
    assert ndcg_at_k(ranking, qrels, 2) == pytest.approx(1.0)
    assert precision_at_k(["x", "x", "a"], qrels, 2) == 0.5
    assert reciprocal_rank_at_k(["x", "x", "x", "a"], qrels, 2) == 0.5


def test_k_equal_one() -> None:
    qrels = {"a": 3, "b": 1}
    assert precision_at_k(["b", "a"], qrels, 1) == 1.0
    assert recall_at_k(["b", "a"], qrels, 1) == 0.5
    assert hit_at_k(["x", "a"], qrels, 1) == 0.0
    assert reciprocal_rank_at_k(["x", "a"], qrels, 1) == 0.0
    assert ndcg_at_k(["b", "a"], qrels, 1) == pytest.approx(1 / 3)
    assert heta_beir_ndcg_at_k(["b", "a"], qrels, 1) == pytest.approx(1 / 7)
    assert average_precision_at_k(["a"], qrels, 1) == 0.5
    assert heta_beir_average_precision_at_k(["a"], qrels, 1) == 1.0


def test_empty_ranking_scores_zero() -> None:
    qrels = {"a": 1}
    for f in ALL_METRICS:
        assert f([], qrels, 5) == 0.0
    assert precision_at_k(["a"], qrels, 10) == 0.1  # divisor k, not the run length


@pytest.mark.parametrize("k", [0, -1])
@pytest.mark.parametrize("func", ALL_METRICS)
def test_k_below_one_is_rejected(func: Metric, k: int) -> None:
    with pytest.raises(ValueError):
        func(["a"], {"a": 1}, k)


@pytest.mark.parametrize("func", ALL_METRICS)
def test_non_integer_k_is_rejected(func: Metric) -> None:
    with pytest.raises(TypeError):
        func(["a"], {"a": 1}, 2.0)  # type: ignore[arg-type]


@pytest.mark.parametrize("qrels", [{}, {"a": 0}, {"a": 0, "b": -1}])
@pytest.mark.parametrize("func", ALL_METRICS)
def test_no_relevant_documents_is_nan(func: Metric, qrels: dict[str, int]) -> None:
    assert math.isnan(func(["a", "b"], qrels, 3))
    assert math.isnan(func([], qrels, 3))
    with pytest.raises(ValueError):  # k is still validated first
        func(["a"], qrels, 0)


def test_float_grades_are_accepted() -> None:
    qrels = {"a": 0.5, "b": 1.5, "c": 0.0}
    assert precision_at_k(["c", "a"], qrels, 2) == 0.5
    assert ndcg_at_k(["b", "a"], qrels, 2) == pytest.approx(1.0)


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
