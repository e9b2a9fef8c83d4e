"""Evaluators: Heta's built-ins reimplemented exactly, trec_eval-style document
metrics, answer F1, and adapters that accept Heta evaluators, objects and functions.

``heta_nb.evaluators.get("ndcg@10")`` builds one from its name.
"""

from __future__ import annotations

from heta_nb.evaluators.answers import AnswerContains, AnswerExactMatch, AnswerF1
from heta_nb.evaluators.base import (
    BuiltinEvaluator,
    Evaluator,
    FunctionEvaluator,
    PreparedEvaluator,
    as_evaluator,
    as_score,
)
from heta_nb.evaluators.documents import DocumentMetric
from heta_nb.evaluators.evidence import EvidenceRecall
from heta_nb.evaluators.registry import available, get

__all__ = [
    "AnswerContains",
    "AnswerExactMatch",
    "AnswerF1",
    "BuiltinEvaluator",
    "DocumentMetric",
    "Evaluator",
    "EvidenceRecall",
    "FunctionEvaluator",
    "PreparedEvaluator",
    "as_evaluator",
    "as_score",
    "available",
    "get",
]
