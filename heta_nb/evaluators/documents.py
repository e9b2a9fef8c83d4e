"""Document-level retrieval metrics: ``recall@K``, ``precision@K``, ``hit@K``, ``mrr@K``,
``ndcg@K``, ``map@K`` (trec_eval conventions) and Heta's ``beir_*@K`` variants.

**Relevance judgements** come from the case's expected evidence: each item with a
``reference_id`` is a relevant benchmark document, graded by ``metadata.relevance``
(default 1; a grade that is not a number counts as 1; values <= 0 are judged
non-relevant; repeated ids keep the maximum). For the trec_eval-style names, an item
with only a locator whose ``source_key``/``source_key_prefix`` is a raw key
``raw/benchmarks/{name}/{split}/{document_id}/...`` counts for that document too.

**Ranking**: a response returns chunks, judgements are per document, so each result
is mapped to benchmark document ids and the list is de-duplicated (first occurrence
wins); rank = position in that document list, cut at K. The results' ``score`` is not
used: the response order is the ranking, ties included (trec_eval would re-sort a run
by score; :func:`heta_nb.evaluators.ranking.order_by_score` does that when wanted). A
result's ids come from its provenance (``source``, ``source.origin``,
``metadata.origin_source_key`` and then ``metadata``), in order:
``beir_document_id``/``benchmark_document_id`` (and their list forms); the document id
parsed from a raw key (``source_key``/``object_key``); then, for the trec_eval-style
names only and only when nothing else was found, ``document_id``/``document_ids``
*unless* it is Heta's internal parsed id (``doc_`` + 16 hex digits), so a non-Heta KB
that reports the benchmark's own id works directly. A result with no mappable id takes
no rank (as in Heta).

**Heta's names** ``beir_ndcg@K``, ``beir_map@K``, ``beir_recall@K``, ``beir_precision@K``
and ``beir_mrr@K`` reproduce heta-framework 0.1.2's ``BeirRetrievalMetric`` exactly
(value, ``passed`` None and Heta's metadata keys, tested against Heta's own evaluator):
judgements come from reference ids only, grades are read with ``int()``, and a
result's ``document_id`` is never used. For example, evidence
``{"locator": {"source_key_prefix": "raw/benchmarks/b/test/d1/"}}`` without a
reference id is a judgement for ``recall@5`` (document ``d1``) but not for
``beir_recall@5``, which is skipped as in Heta; and a result whose only provenance is
``{"document_id": "d1"}`` is ranked by ``recall@5`` but takes no rank in
``beir_recall@5``.

**Formulas** (see :mod:`heta_nb.evaluators.ranking`, tested against ir_measures):
trec_eval's ``ndcg_cut`` uses linear gain (``rel``) and ``map_cut`` divides by the
number of relevant documents. Heta's ``beir_ndcg`` uses exponential gain (``2**rel-1``)
and ``beir_map`` divides by ``min(|R|, K)``; both are offered under Heta's names so
numbers compare with Heta's reports. They agree for binary judgements with |R| <= K.
Example (judgements ``{a: 2, b: 1, c: 1}``, ranking ``[b, x, a]``, K = 2): ``ndcg@2`` =
0.380 but ``beir_ndcg@2`` = 0.275; ``map@2`` = 0.333 but ``beir_map@2`` = 0.5.

**Metadata** (JSON): ``relevant_documents`` (number of judged-relevant documents),
``retrieved_documents`` (length of the cut ranking), ``matched_documents`` (the ranked
relevant ids, in rank order) — Heta's three keys — plus heta_nb's
``missing_documents`` (relevant ids not in the cut ranking, in evidence order).

Cases without relevant documents score 0.0 with ``skipped: true`` (reason ``"case has
no relevant documents"``; for the ``beir_*`` names Heta's ``"case has no BEIR
qrels"``), which Heta's summary averages in.
"""

from __future__ import annotations

import functools
import math
import re
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from heta_nb.evaluators import ranking
from heta_nb.evaluators.base import BuiltinEvaluator
from heta_nb.evaluators.evidence import as_sequence, result_source_candidates

__all__ = ["DOCUMENT_METRICS", "DocumentMetric", "judgements", "ranked_document_ids", "result_document_ids"]

_HETA_PARSED_ID = re.compile(r"^doc_[0-9a-f]{16}$")

Metric = Callable[[Sequence[str], Mapping[str, float], int], float]

DOCUMENT_METRICS: dict[str, Metric] = {
    "recall": ranking.recall_at_k,
    "precision": ranking.precision_at_k,
    "hit": ranking.hit_at_k,
    "mrr": ranking.reciprocal_rank_at_k,
    "ndcg": ranking.ndcg_at_k,
    "map": ranking.average_precision_at_k,
    # Heta 0.1.2's BeirRetrievalMetric, same names as Heta so reports compare
    "beir_ndcg": ranking.heta_beir_ndcg_at_k,
    "beir_map": ranking.heta_beir_average_precision_at_k,
    "beir_recall": ranking.recall_at_k,
    "beir_precision": ranking.precision_at_k,
    "beir_mrr": ranking.reciprocal_rank_at_k,
}


def document_id_from_key(key: Any) -> str | None:
    """The benchmark document id inside a raw key (Heta's parsing), or None."""
    if key is None:
        return None
    return _document_id_from_key(key if type(key) is str else str(key))


@functools.lru_cache(maxsize=65_536)
def _document_id_from_key(key: str) -> str | None:
    """:func:`document_id_from_key` of a string (the same chunk keys recur across a report's cases)."""
    parts = [part for part in key.split("/") if part]
    if "beir" in parts:
        index = parts.index("beir")
        if len(parts) > index + 2:
            return parts[index + 2]
    if len(parts) >= 5 and parts[0] == "raw" and parts[1] == "benchmarks":
        return parts[4]
    return None


def result_document_ids(result: Mapping[str, Any], *, heta: bool = False) -> list[str]:
    """Benchmark document ids of one serialized result (see the module docstring).

    Args:
        result: One serialized result (``id``, ``source``, ``metadata``).
        heta: Heta's ``BeirRetrievalMetric`` mapping, which never falls back to
            ``document_id``/``document_ids``.

    Returns:
        The result's document ids, de-duplicated, in provenance order.
    """
    found: dict[str, None] = {}

    def add(value: Any) -> None:
        if value is not None:
            text = str(value).strip()
            if text:
                found.setdefault(text, None)

    candidates = [*result_source_candidates(result), result.get("metadata") or {}]
    for candidate in candidates:
        for key in ("beir_document_id", "benchmark_document_id"):
            add(candidate.get(key))
        for key in ("beir_document_ids", "benchmark_document_ids"):
            for value in as_sequence(candidate.get(key)):
                add(value)
        for key in ("source_key", "object_key"):
            add(document_id_from_key(candidate.get(key)))
        for key in ("source_keys", "object_keys"):
            for value in as_sequence(candidate.get(key)):
                add(document_id_from_key(value))
    if not found and not heta:
        for candidate in candidates:
            for value in (candidate.get("document_id"), *as_sequence(candidate.get("document_ids"))):
                if value is not None and not _HETA_PARSED_ID.match(str(value)):
                    add(value)
    return list(found)


def ranked_document_ids(results: Sequence[Mapping[str, Any]], k: int, *, heta: bool = False) -> list[str]:
    """The de-duplicated document ranking of a response (in response order), cut at ``k``."""
    ranked: dict[str, None] = {}
    for result in results:
        for document_id in result_document_ids(result, heta=heta):
            if document_id not in ranked:
                ranked[document_id] = None
                if len(ranked) >= k:
                    return list(ranked)
    return list(ranked)


def judgements(case: Any, *, heta: bool = False) -> dict[str, float]:
    """Relevance judgements of a case (document id -> grade > 0), from its evidence.

    Args:
        case: A benchmark case (heta_nb's or Heta's).
        heta: Heta's ``BeirRetrievalMetric`` reading: grades through ``int()`` and
            judgements from reference ids only (a locator-only item is no judgement).

    Returns:
        Document id -> grade, only grades > 0.
    """
    qrels: dict[str, float] = {}
    for evidence in case.expected.evidence:
        document_id = evidence.reference_id
        if not document_id and not heta:
            locator = evidence.locator or {}
            document_id = document_id_from_key(locator.get("source_key") or locator.get("source_key_prefix"))
        if not document_id:
            continue
        grade: Any = (evidence.metadata or {}).get("relevance", 1)
        try:
            value = float(int(grade)) if heta else float(grade)
        except (TypeError, ValueError):
            value = 1.0
        if not math.isfinite(value):  # "nan" / "inf": not a grade (Heta's int() rejects them too)
            value = 1.0
        if value > 0:
            qrels[document_id] = max(value, qrels.get(document_id, 0.0))
    return qrels


class DocumentMetric(BuiltinEvaluator):
    """One document-level metric at one cut-off, e.g. ``DocumentMetric("ndcg", 10)``."""

    def __init__(self, metric: str, k: int = 10) -> None:
        if metric not in DOCUMENT_METRICS:
            raise ValueError(f"unknown document metric {metric!r}; choose from {', '.join(DOCUMENT_METRICS)}")
        if isinstance(k, bool) or not isinstance(k, int) or k <= 0:
            raise ValueError(f"{metric}: k must be a positive integer, got {k!r}")
        self.metric = metric
        self.k = k
        self.name = f"{metric}@{k}"
        self._function = DOCUMENT_METRICS[metric]
        self._heta = metric.startswith("beir_")

    def score_json(self, case: Any, response: dict[str, Any]) -> dict[str, Any]:
        """Score one serialized response against the case's judgements."""
        qrels = judgements(case, heta=self._heta)
        if not qrels:
            return self._skipped(0.0, "case has no BEIR qrels" if self._heta else "case has no relevant documents")
        ranked = ranked_document_ids(response["results"], self.k, heta=self._heta)
        value = self._function(ranked, qrels, self.k)
        matched = [d for d in ranked if d in qrels]
        return {
            "name": self.name,
            "value": value,
            "passed": None,
            "metadata": {
                "relevant_documents": len(qrels),
                "retrieved_documents": len(ranked),
                "matched_documents": matched,
                "missing_documents": [d for d in qrels if d not in ranked],
            },
        }
