"""LLM judges: answer and grounding scores from a language model, cached, costed and limited.

Not to be confused with :mod:`heta_nb.evaluators.judge`, which marks retrieved results
relevant from the benchmark's own judgements (no model). Modules, low to high:
``models`` (Heta's ``LanguageModelProtocol`` or a function -> one call), ``limits``,
``cache``, ``costs``, ``prompts``, ``session`` (one run's calls: cache, limits, repair,
budget), ``base`` (what every judge shares), the judges ``grounding`` (faithfulness,
context precision and recall) and ``answers`` (answer correctness and relevance,
custom rubrics), ``standin`` (a deterministic stand-in model for offline runs),
``binding`` (a run's judges get their sessions), ``totals`` (a report's judge calls,
tokens and cost).
"""

from __future__ import annotations

from heta_nb.llm_judges.answers import AnswerCorrectness, AnswerRelevance, RubricJudge, judge
from heta_nb.llm_judges.base import JudgeEvaluator
from heta_nb.llm_judges.binding import JudgeSettings, bind_judges, judges_record
from heta_nb.llm_judges.cache import CacheMissError, JudgeCache
from heta_nb.llm_judges.costs import PriceTable
from heta_nb.llm_judges.grounding import ContextPrecision, ContextRecall, Faithfulness
from heta_nb.llm_judges.limits import JudgeLimits
from heta_nb.llm_judges.models import JudgeModel
from heta_nb.llm_judges.session import JudgeOutputError
from heta_nb.llm_judges.standin import STANDIN_NAME, standin_model

__all__ = [
    "JUDGES",
    "STANDIN_NAME",
    "AnswerCorrectness",
    "AnswerRelevance",
    "CacheMissError",
    "ContextPrecision",
    "ContextRecall",
    "Faithfulness",
    "JudgeCache",
    "JudgeEvaluator",
    "JudgeLimits",
    "JudgeModel",
    "JudgeOutputError",
    "JudgeSettings",
    "PriceTable",
    "RubricJudge",
    "answer_correctness",
    "answer_relevance",
    "bind_judges",
    "context_precision",
    "context_recall",
    "faithfulness",
    "judge",
    "judges_record",
    "standin_model",
]

JUDGES: dict[str, type[JudgeEvaluator]] = {
    "faithfulness": Faithfulness,
    "answer_correctness": AnswerCorrectness,
    "answer_relevance": AnswerRelevance,
    "context_precision": ContextPrecision,
    "context_recall": ContextRecall,
}
"""The built-in judges by name (``evaluators=["faithfulness"]`` works with ``judge_model=``)."""

faithfulness = Faithfulness
answer_correctness = AnswerCorrectness
answer_relevance = AnswerRelevance
context_precision = ContextPrecision
context_recall = ContextRecall
