"""Pure document-ranking metrics with trec_eval semantics (and Heta's BEIR variants).

Every metric takes a *ranking* (document ids, best first), graded *qrels*
(``Mapping[str, int | float]``: document id -> relevance) and a cut-off ``k``, and
returns a float. Nothing here does I/O or depends on anything beyond the standard
library, so the functions can score stored reports offline.

Conventions
-----------

* **Relevant** means ``relevance > 0``. A relevance ``<= 0`` is "judged non-relevant";
  a document absent from the qrels counts as non-relevant too (relevance 0).
* **De-duplication.** A RAG response often returns several chunks of one document.
  Every metric first applies :func:`dedupe_ranking` (first occurrence wins), so a
  document is counted once, at its best position.
* **Rank** is the 1-based position in the de-duplicated document list.
* **Cut-off.** Only the first ``k`` de-duplicated documents are scored; ``k`` must be an
  integer ``>= 1`` (``ValueError`` below 1, ``TypeError`` if not integral). ``k``
  larger than the ranking is fine.
* **Precision@k** divides by ``k`` even when fewer than ``k`` documents were retrieved
  (trec_eval ``P_k``).
* **Recall@k** is ``|relevant ∩ top-k| / |relevant|`` (trec_eval ``recall_k``).
* **Hit@k** is 1.0 if any relevant document is in the top k, else 0.0 (trec_eval
  ``success_k``; ir_measures ``Success@k``).
* **Reciprocal rank@k** is ``1 / rank`` of the first relevant document within the top
  k, else 0.0.
* **nDCG@k** (trec_eval ``ndcg_cut_k``): linear gain ``gain = relevance`` (gain 0 for
  relevance ``<= 0``, as trec_eval does for negative grades), discount
  ``log2(rank + 1)``; the ideal DCG ranks *all* relevant judged documents by relevance,
  descending, and is cut at the same ``k``.
* **AP@k** (trec_eval ``map_cut_k``): the sum of precision@rank over the ranks ``<= k``
  holding a relevant document, divided by the total number of relevant documents
  ``|R|`` (not by ``min(|R|, k)``), so AP@k cannot reach 1 when ``|R| > k``.
* **No relevant documents.** When the qrels hold no document with relevance ``> 0`` the
  metric is undefined and every function returns ``math.nan``. Callers treat such a
  query as *skipped*: leave it out of means (trec_eval and ir_measures report 0.0
  instead, which pulls means down; Heta reports 0.0 with ``metadata["skipped"]``).
* **Tie-breaking.** Metrics take the ranking as given. :func:`order_by_score` turns
  ``(doc_id, score)`` pairs into a ranking, by score descending, with either
  ``"stable"`` ties (input order: what the user saw) or ``"trec_eval"`` ties, which
  reproduce trec_eval's sort (``comp_sim_docno``): scores are first rounded to 32-bit
  floats (trec_eval stores them as C ``float``, so ``1.0`` and ``1.00000001`` tie, and
  scores beyond ~3.4e38 become infinite and tie), then sorted descending, and equal
  scores are ordered by document id in *descending* lexicographic order (trec_eval
  compares ``strcmp(b, a)``; for UTF-8 strings byte order equals Python's code-point
  order, so ``"é" > "x" > "b" > "a" > "B"`` and ``"d2" > "d10" > "d1"``). Verified
  against pytrec_eval in ``tests/evaluators/test_documents_vs_ir_measures.py``.
* Relevance values may be floats here; trec_eval/pytrec_eval only accept integer grades.

Heta's BEIR variants
--------------------

heta-framework 0.1.2's ``BeirRetrievalMetric`` follows BEIR rather than trec_eval for
two metrics, reproduced by :func:`heta_beir_ndcg_at_k` and
:func:`heta_beir_average_precision_at_k`:

* nDCG uses the *exponential* gain ``2**relevance - 1`` and an ideal DCG over the ``k``
  largest relevance values (the same ideal ordering as trec_eval's, with the other gain);
  with binary qrels both nDCGs coincide.
* MAP divides by ``min(|R|, k)`` instead of ``|R|``; both coincide when ``|R| <= k``.

Heta's precision, recall and MRR equal :func:`precision_at_k`, :func:`recall_at_k` and
:func:`reciprocal_rank_at_k`. (Heta reads grades with ``int()`` and drops grades
``<= 0``; pass integer grades to reproduce it exactly.)

Worked example: qrels ``{"a": 2, "b": 1, "c": 1}``, ranking ``["b", "x", "a"]``
(``x`` is unjudged), values rounded to 6 places:

* k=3: nDCG 0.638788 (trec_eval) vs 0.605191 (Heta BEIR); AP 0.555556 for both.
  Linear gains give DCG = 1/log2(2) + 0 + 2/log2(4) = 2 over the ideal ``[a, b, c]``
  DCG = 2 + 1/log2(3) + 1/2 = 3.130930; exponential gains give 2.5 / 4.130930. AP sums
  the precisions 1/1 and 2/3 and divides by |R| = 3 = min(|R|, k): 5/9.
* k=2: nDCG 0.380094 (1 / 2.630930) vs 0.275412 (1 / 3.630930); AP 0.333333 (1/3)
  vs 0.5 (1/2, Heta divides by min(3, 2)).
* k=1: nDCG 0.5 (1/2) vs 0.333333 (1/3); AP 0.333333 vs 1.0.

Cross-checking with ir_measures 0.4.3 (see the tests): ``R@k``, ``P@k``, ``Success@k``,
``nDCG@k`` and ``AP@k`` run pytrec_eval (trec_eval). ``RR@k`` does not: its pytrec_eval
provider only offers ``RR`` without a cut-off (trec_eval ``recip_rank``), so ir_measures
serves ``RR@k`` with its MS MARCO provider, which breaks score ties by *ascending*
document id and can therefore disagree with trec_eval's ordering on tied runs. For
judged queries with nothing relevant, and for judged queries missing from the run,
ir_measures reports 0.0 (the latter as every measure's default).
"""

from __future__ import annotations

import math
import operator
import struct
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Literal

__all__ = [
    "TieBreak",
    "average_precision_at_k",
    "dedupe_ranking",
    "heta_beir_average_precision_at_k",
    "heta_beir_ndcg_at_k",
    "hit_at_k",
    "ndcg_at_k",
    "order_by_score",
    "precision_at_k",
    "recall_at_k",
    "reciprocal_rank_at_k",
]

TieBreak = Literal["stable", "trec_eval"]

_NAN = math.nan
_FLOAT32 = struct.Struct("f")


def dedupe_ranking(doc_ids: Iterable[str]) -> list[str]:
    """Keep the first occurrence of each document id, preserving order.

    Args:
        doc_ids: Document ids, best first; may repeat (several chunks of one document).

    Returns:
        The de-duplicated document ids; a document's rank is its index + 1 here.
    """
    seen: set[str] = set()
    ranking: list[str] = []
    for doc_id in doc_ids:
        if doc_id not in seen:
            seen.add(doc_id)
            ranking.append(doc_id)
    return ranking


def order_by_score(
    pairs: Iterable[tuple[str, float]],
    *,
    tie_break: TieBreak = "stable",
) -> list[str]:
    """Order ``(doc_id, score)`` pairs by score, descending, into a de-duplicated ranking.

    Args:
        pairs: Scored documents in response order.
        tie_break: ``"stable"`` compares the scores as given and keeps the input order
            among equal ones; ``"trec_eval"`` compares the scores rounded to 32-bit floats
            and orders equal ones by document id, descending (as trec_eval does).

    Returns:
        Document ids, best first; a repeated id keeps its best-ranked occurrence.

    Raises:
        ValueError: For an unknown ``tie_break`` or a NaN score.
    """
    items = list(pairs)
    if any(math.isnan(score) for _, score in items):
        raise ValueError("scores must not be NaN")
    if tie_break == "stable":
        # sorted() stays stable with reverse=True: equal scores keep their input order.
        ordered = sorted(items, key=lambda pair: pair[1], reverse=True)
    elif tie_break == "trec_eval":
        ordered = sorted(items, key=lambda pair: (_as_float32(pair[1]), pair[0]), reverse=True)
    else:
        raise ValueError(f"tie_break must be 'stable' or 'trec_eval', not {tie_break!r}")
    return dedupe_ranking(doc_id for doc_id, _ in ordered)


def _as_float32(score: float) -> float:
    """Round a score to the nearest 32-bit float, as C's ``(float)`` cast does."""
    try:
        return float(_FLOAT32.unpack(_FLOAT32.pack(score))[0])
    except OverflowError:  # finite, but beyond the float32 range: the cast gives inf
        return math.copysign(math.inf, score)


def _check_k(k: int) -> int:
    """Return k as an int; ``TypeError`` unless integral, ``ValueError`` unless >= 1."""
    cutoff = operator.index(k)
    if cutoff < 1:
        raise ValueError(f"k must be >= 1, got {cutoff}")
    return cutoff


def _top_k(ranking: Sequence[str], k: int) -> list[str]:
    """Return the first k documents of the de-duplicated ranking (k validated)."""
    return dedupe_ranking(ranking)[: _check_k(k)]


def _relevant(qrels: Mapping[str, float]) -> set[str]:
    """Return the ids judged relevant (relevance > 0)."""
    return {doc_id for doc_id, rel in qrels.items() if rel > 0}


def recall_at_k(ranking: Sequence[str], qrels: Mapping[str, float], k: int) -> float:
    """Fraction of the relevant documents found in the top k (trec_eval ``recall_k``).

    Args:
        ranking: Document ids, best first (duplicates are ignored after the first).
        qrels: Document id -> relevance; relevant means relevance > 0.
        k: Cut-off, >= 1.

    Returns:
        ``|relevant ∩ top-k| / |relevant|``, or NaN when nothing is relevant.
    """
    top = _top_k(ranking, k)
    relevant = _relevant(qrels)
    if not relevant:
        return _NAN
    return sum(1 for doc_id in top if doc_id in relevant) / len(relevant)


def precision_at_k(ranking: Sequence[str], qrels: Mapping[str, float], k: int) -> float:
    """Relevant documents in the top k divided by k (trec_eval ``P_k``).

    Args:
        ranking: Document ids, best first (duplicates are ignored after the first).
        qrels: Document id -> relevance; relevant means relevance > 0.
        k: Cut-off, >= 1; also the divisor, even if fewer than k were retrieved.

    Returns:
        The precision, or NaN when nothing is relevant.
    """
    top = _top_k(ranking, k)
    relevant = _relevant(qrels)
    if not relevant:
        return _NAN
    return sum(1 for doc_id in top if doc_id in relevant) / _check_k(k)


def hit_at_k(ranking: Sequence[str], qrels: Mapping[str, float], k: int) -> float:
    """1.0 if any relevant document is in the top k, else 0.0 (trec_eval ``success_k``).

    Args:
        ranking: Document ids, best first (duplicates are ignored after the first).
        qrels: Document id -> relevance; relevant means relevance > 0.
        k: Cut-off, >= 1.

    Returns:
        1.0 or 0.0, or NaN when nothing is relevant.
    """
    top = _top_k(ranking, k)
    relevant = _relevant(qrels)
    if not relevant:
        return _NAN
    return 1.0 if any(doc_id in relevant for doc_id in top) else 0.0


def reciprocal_rank_at_k(ranking: Sequence[str], qrels: Mapping[str, float], k: int) -> float:
    """Reciprocal rank of the first relevant document within the top k.

    Args:
        ranking: Document ids, best first (duplicates are ignored after the first).
        qrels: Document id -> relevance; relevant means relevance > 0.
        k: Cut-off, >= 1.

    Returns:
        ``1 / rank`` of the first relevant document, 0.0 if none is in the top k, or NaN
        when nothing is relevant.
    """
    top = _top_k(ranking, k)
    relevant = _relevant(qrels)
    if not relevant:
        return _NAN
    for rank, doc_id in enumerate(top, start=1):
        if doc_id in relevant:
            return 1.0 / rank
    return 0.0


def _dcg(gains: Iterable[float]) -> float:
    """Discounted cumulative gain with discount log2(rank + 1), summed in rank order."""
    return sum(gain / math.log2(rank + 1) for rank, gain in enumerate(gains, start=1))


def _ndcg(
    ranking: Sequence[str],
    qrels: Mapping[str, float],
    k: int,
    gain: Callable[[float], float],
) -> float:
    """nDCG@k with the given gain of a positive relevance; non-positive grades gain 0."""
    top = _top_k(ranking, k)
    grades = sorted((rel for rel in qrels.values() if rel > 0), reverse=True)
    if not grades:
        return _NAN
    dcg = _dcg(gain(qrels[doc_id]) if qrels.get(doc_id, 0) > 0 else 0.0 for doc_id in top)
    ideal = _dcg(gain(rel) for rel in grades[: _check_k(k)])
    return dcg / ideal


def _linear_gain(relevance: float) -> float:
    """trec_eval's gain: the relevance grade itself."""
    return float(relevance)


def _exponential_gain(relevance: float) -> float:
    """BEIR / Heta gain: ``2**relevance - 1``."""
    return 2.0**relevance - 1.0


def ndcg_at_k(ranking: Sequence[str], qrels: Mapping[str, float], k: int) -> float:
    """nDCG@k as trec_eval ``ndcg_cut_k``: linear gain, log2(rank + 1) discount.

    Args:
        ranking: Document ids, best first (duplicates are ignored after the first).
        qrels: Document id -> relevance (the gain); grades <= 0 gain nothing.
        k: Cut-off, >= 1, applied to both the ranking and the ideal ranking.

    Returns:
        DCG@k divided by the DCG@k of all relevant documents sorted by relevance, or NaN
        when nothing is relevant.
    """
    return _ndcg(ranking, qrels, k, _linear_gain)


def _ap_sum(top: Sequence[str], relevant: set[str]) -> float:
    """Sum of precision@rank over the ranks holding a relevant document."""
    hits = 0
    total = 0.0
    for rank, doc_id in enumerate(top, start=1):
        if doc_id in relevant:
            hits += 1
            total += hits / rank
    return total


def average_precision_at_k(ranking: Sequence[str], qrels: Mapping[str, float], k: int) -> float:
    """Average precision cut at k, as trec_eval ``map_cut_k`` (divisor ``|R|``).

    Args:
        ranking: Document ids, best first (duplicates are ignored after the first).
        qrels: Document id -> relevance; relevant means relevance > 0.
        k: Cut-off, >= 1.

    Returns:
        The sum of precision at each relevant rank <= k over the number of relevant
        documents, or NaN when nothing is relevant.
    """
    top = _top_k(ranking, k)
    relevant = _relevant(qrels)
    if not relevant:
        return _NAN
    return _ap_sum(top, relevant) / len(relevant)


def heta_beir_ndcg_at_k(ranking: Sequence[str], qrels: Mapping[str, float], k: int) -> float:
    """nDCG@k as heta-framework 0.1.2's ``BeirRetrievalMetric("ndcg")`` computes it.

    Args:
        ranking: Document ids, best first (duplicates are ignored after the first).
        qrels: Document id -> relevance; grades <= 0 gain nothing.
        k: Cut-off, >= 1.

    Returns:
        nDCG with exponential gain ``2**rel - 1`` and the ideal DCG of the k largest
        relevance values, or NaN when nothing is relevant (Heta reports 0.0, skipped).
    """
    return _ndcg(ranking, qrels, k, _exponential_gain)


def heta_beir_average_precision_at_k(
    ranking: Sequence[str],
    qrels: Mapping[str, float],
    k: int,
) -> float:
    """MAP@k as heta-framework 0.1.2's ``BeirRetrievalMetric("map")`` computes it.

    Args:
        ranking: Document ids, best first (duplicates are ignored after the first).
        qrels: Document id -> relevance; relevant means relevance > 0.
        k: Cut-off, >= 1.

    Returns:
        The sum of precision at each relevant rank <= k over ``min(|R|, k)``, or NaN when
        nothing is relevant (Heta reports 0.0, skipped).
    """
    top = _top_k(ranking, k)
    relevant = _relevant(qrels)
    if not relevant:
        return _NAN
    return _ap_sum(top, relevant) / min(len(relevant), _check_k(k))
