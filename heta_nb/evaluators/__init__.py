"""Evaluators: Heta's built-ins reimplemented exactly, trec_eval-style document
metrics, answer F1, and adapters that accept Heta evaluators, objects and functions.

``heta_nb.evaluators.get("ndcg@10")`` builds one from its name. Modules, low to high:
``ranking`` and ``normalize`` (pure functions), ``base`` (the protocol and the
built-ins' base class), ``scores`` (anything returned -> a score), the built-ins
``evidence``, ``documents`` and ``answers``, ``registry`` (name -> built-in) and
``adapters`` (anything evaluator-like -> the runner's :class:`PreparedEvaluator`).
"""

from __future__ import annotations

from heta_nb._util.callables import is_async_callable
from heta_nb._util.values import NOT_NUMPY, numpy_item
from heta_nb.evaluators.adapters import KEYWORDS, NATIVE, FunctionEvaluator, PreparedEvaluator, as_evaluator
from heta_nb.evaluators.answers import AnswerContains, AnswerExactMatch, AnswerF1
from heta_nb.evaluators.base import BuiltinEvaluator, Evaluator
from heta_nb.evaluators.documents import DocumentMetric
from heta_nb.evaluators.evidence import EvidenceRecall
from heta_nb.evaluators.registry import available, get
from heta_nb.evaluators.scores import as_score, score_data

__all__ = [
    "KEYWORDS",
    "NATIVE",
    "NOT_NUMPY",
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
    "is_async_callable",
    "numpy_item",
    "score_data",
]
