"""Ranking metrics: tie breaks, duplicates, cutoffs, invariants."""

from __future__ import annotations

import math
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


def _by_query(metrics: object) -> dict[tuple[str, str], float]:
    return {(m.query_id, str(m.measure)): m.value for m in metrics}  # type: ignore[attr-defined]


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
