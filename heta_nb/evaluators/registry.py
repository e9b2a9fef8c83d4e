"""Build heta_nb's built-in evaluators from their names."""

from __future__ import annotations

import difflib
import re

from heta_nb.errors import HetaNbUserError, HetaNbUserTypeError
from heta_nb.evaluators.answers import AnswerContains, AnswerExactMatch, AnswerF1
from heta_nb.evaluators.base import BuiltinEvaluator
from heta_nb.evaluators.documents import DOCUMENT_METRICS, DocumentMetric
from heta_nb.evaluators.evidence import EvidenceRecall
from heta_nb.llm_judges import JUDGES, JudgeEvaluator

__all__ = ["available", "get"]

_ALIASES = {"success": "hit", "rr": "mrr", "p": "precision", "r": "recall"}
_AT_K = re.compile(r"(?P<metric>[a-z_]+)@(?P<k>[0-9]+)")
_HINTS = {"f1": "answer_f1", "token_f1": "answer_f1", "em": "answer_exact_match", "exact_match": "answer_exact_match"}
_PLAIN = {"answer_contains": AnswerContains, "answer_exact_match": AnswerExactMatch, "answer_f1": AnswerF1}


def available() -> list[str]:
    """The evaluator name patterns :func:`get` understands."""
    return [*sorted(_PLAIN), "evidence_recall@K", *(f"{m}@K" for m in DOCUMENT_METRICS), *JUDGES]


def get(name: str) -> BuiltinEvaluator | JudgeEvaluator:
    """A built-in evaluator from its report name.

    ``evidence_recall@5``, ``answer_contains`` and ``answer_exact_match`` are Heta's
    evaluators (same names and numbers); ``recall@K``, ``precision@K``, ``hit@K``,
    ``mrr@K``, ``ndcg@K`` and ``map@K`` are document-level metrics with trec_eval's
    conventions; ``beir_ndcg@K`` etc. are Heta's BEIR variants; ``answer_f1`` is
    SQuAD token F1. ``faithfulness``, ``answer_correctness``, ``answer_relevance``,
    ``context_precision`` and ``context_recall`` are LLM judges (:mod:`heta_nb.llm_judges`):
    they need the run's ``judge_model=``.

    Names are case-insensitive and surrounding whitespace is ignored; ``success@K``,
    ``rr@K``, ``p@K`` and ``r@K`` are aliases of ``hit@K``, ``mrr@K``, ``precision@K``
    and ``recall@K``. ``K`` is written in ASCII digits (leading zeros are allowed:
    ``ndcg@05`` is ``ndcg@5``); anything else after the ``@`` of a known metric
    (``ndcg@0``, ``ndcg@-1``, ``ndcg@5.0``, ``ndcg@1e3``, ``ndcg@ 5``) is an error.

    Example::

        >>> from heta_nb import evaluators
        >>> evaluators.get("ndcg@10")
        DocumentMetric('ndcg@10')

    Raises:
        HetaNbUserError: (a ``ValueError``) an unknown name (the message suggests the closest known name and
            lists the known ones), or a known metric whose ``K`` is not a whole number
            >= 1.
        HetaNbUserTypeError: (a ``TypeError``) ``name`` is not a string.
    """
    if not isinstance(name, str):
        raise HetaNbUserTypeError(f"evaluator name must be a string, got {type(name).__name__}")
    key = name.strip().lower()
    if key in _PLAIN:
        return _PLAIN[key]()
    if key in JUDGES:
        return JUDGES[key]()
    metric, at, cutoff = key.partition("@")
    metric = _ALIASES.get(metric, metric)
    if at and (metric == "evidence_recall" or metric in DOCUMENT_METRICS):
        if not _AT_K.fullmatch(key) or int(cutoff) <= 0:
            raise HetaNbUserError(
                f"evaluator {name!r}: K must be a whole number >= 1 written in digits, "
                f"e.g. '{metric}@10' (got {cutoff!r})"
            )
        if metric == "evidence_recall":
            return EvidenceRecall(int(cutoff))
        return DocumentMetric(metric, int(cutoff))
    hint = _suggestion(key)
    raise HetaNbUserError(f"unknown evaluator {name!r}{hint}; known: {', '.join(available())}")


def _suggestion(key: str) -> str:
    """``"; did you mean 'ndcg@5'?"`` for a near miss of a known name, else ``""``."""
    metric, at, k = key.partition("@")
    if key in _HINTS:
        return f"; did you mean {_HINTS[key]!r}?"
    if not at:  # e.g. "recall" or "evidence_recall": the metric needs its cut-off
        if metric in DOCUMENT_METRICS or metric == "evidence_recall" or metric in _ALIASES:
            return f"; did you mean '{_ALIASES.get(metric, metric)}@10'? (this metric needs a cut-off @K)"
        close = difflib.get_close_matches(key, [*_PLAIN, *JUDGES], n=1, cutoff=0.6)
        return f"; did you mean {close[0]!r}?" if close else ""
    metrics = [*DOCUMENT_METRICS, "evidence_recall"]
    close = difflib.get_close_matches(metric, metrics, n=1, cutoff=0.6)
    if close and k.isdigit():
        return f"; did you mean '{close[0]}@{k}'?"
    return ""
