"""Judges of the answer: is it right, does it address the query, and custom rubrics.

* :class:`AnswerCorrectness`: the answer's claims judged against the expected answers
  (``supported``, ``contradicted``, ``not_found``) and the expected answers' claims judged
  ``covered`` or ``missing`` in the answer; the score is the F1 of the two shares.
* :class:`AnswerRelevance`: ``relevant`` (1.0), ``partial`` (0.5) or ``not_relevant`` (0.0).
* :func:`judge`: a rubric of your own, ``binary`` (a bool), ``"1-5"`` (an int) or named labels.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from heta_nb.llm_judges.base import JudgeEvaluator, NotJudgeable, answer_of, chunks_of, expected_answers
from heta_nb.llm_judges.grounding import CLAIM_VERDICTS, checked_claims, text_field
from heta_nb.llm_judges.prompts import PromptTemplate
from heta_nb.llm_judges.session import VerdictError

__all__ = ["AnswerCorrectness", "AnswerRelevance", "RubricJudge", "judge"]


class AnswerCorrectness(JudgeEvaluator):
    """F1 of the answer's claims against the expected answers (see the module docstring)."""

    kind = "answer_correctness"
    template = PromptTemplate(
        "answer_correctness",
        "You grade an answer against expected (reference) answers. Split the answer into its atomic "
        "factual claims and judge each against the references: 'supported' (a reference states or "
        "implies it), 'contradicted' (a reference states the opposite) or 'not_found'. Then split the "
        "references into their key claims and judge each: 'covered' (the answer states it) or 'missing'. "
        "Any one of several references is enough: use the one the answer is closest to.",
        '{"answer_claims": [{"claim": "<claim>", "verdict": "supported|contradicted|not_found", '
        '"reason": "<one sentence>"}], "reference_claims": [{"claim": "<claim>", "verdict": '
        '"covered|missing", "reason": "<one sentence>"}]}',
    )

    def material(self, case: Any, response: Any) -> dict[str, Any]:
        """The query, the answer and the expected answers."""
        expected = expected_answers(case)
        return {"query": str(getattr(case, "query", "")), "answer": answer_of(response), "expected_answers": expected}

    def validate(self, data: dict[str, Any], material: dict[str, Any]) -> dict[str, list[dict[str, Any]]]:
        """Both lists of claims."""
        return {
            "answer_claims": checked_claims(data, "answer_claims", CLAIM_VERDICTS, None),
            "reference_claims": checked_claims(data, "reference_claims", ("covered", "missing"), None),
        }

    def outcome(
        self, verdict: dict[str, list[dict[str, Any]]], material: dict[str, Any]
    ) -> tuple[Any, str, dict[str, Any]]:
        """F1 of precision (supported answer claims) and recall (covered reference claims)."""
        answer_claims, reference_claims = verdict["answer_claims"], verdict["reference_claims"]
        if not answer_claims:
            raise NotJudgeable("the answer makes no factual claims")
        if not reference_claims:
            raise NotJudgeable("the expected answers yielded no claims")
        supported = sum(1 for c in answer_claims if c["verdict"] == "supported")
        covered = sum(1 for c in reference_claims if c["verdict"] == "covered")
        precision, recall = supported / len(answer_claims), covered / len(reference_claims)
        f1 = 0.0 if precision + recall == 0 else 2 * precision * recall / (precision + recall)
        reason = (
            f"{supported} of {len(answer_claims)} answer claims supported by the expected answers; "
            f"{covered} of {len(reference_claims)} expected claims covered"
        )
        details = {
            "claims": answer_claims,
            "reference_claims": reference_claims,
            "precision": precision,
            "recall": recall,
        }
        return f1, reason, details


_RELEVANCE = {"relevant": 1.0, "partial": 0.5, "not_relevant": 0.0}


class AnswerRelevance(JudgeEvaluator):
    """Does the answer address the query: 1.0, 0.5 or 0.0 (see the module docstring)."""

    kind = "answer_relevance"
    template = PromptTemplate(
        "answer_relevance",
        "You judge whether an answer addresses the question asked, not whether it is true. "
        "'relevant': it answers the question asked; 'partial': it answers part of it or drifts; "
        "'not_relevant': it answers something else, or declines without addressing the question.",
        '{"verdict": "relevant|partial|not_relevant", "reason": "<one sentence>"}',
    )

    def material(self, case: Any, response: Any) -> dict[str, Any]:
        """The query and the answer."""
        return {"query": str(getattr(case, "query", "")), "answer": answer_of(response)}

    def validate(self, data: dict[str, Any], material: dict[str, Any]) -> dict[str, str]:
        """One verdict and its reason."""
        if data.get("verdict") not in _RELEVANCE:
            raise VerdictError("'verdict' must be relevant, partial or not_relevant")
        return {"verdict": data["verdict"], "reason": text_field(data, "reason", "the answer", required=False)}

    def outcome(self, verdict: dict[str, str], material: dict[str, Any]) -> tuple[Any, str, dict[str, Any]]:
        """The verdict's value."""
        return _RELEVANCE[verdict["verdict"]], verdict["reason"] or verdict["verdict"], {"verdict": verdict["verdict"]}


_SCALE = re.compile(r"(?P<low>[0-9]+)\s*-\s*(?P<high>[0-9]+)")
_MATERIALS = ("query", "answer", "chunks", "expected_answers")


class RubricJudge(JudgeEvaluator):
    """A custom rubric (made by :func:`judge`)."""

    kind = "rubric"

    def __init__(
        self,
        name: str,
        *,
        criteria: str,
        scale: str | Sequence[str] = "binary",
        include: Sequence[str] = ("query", "answer"),
        passing: Sequence[str] | None = None,
        threshold: float | None = None,
        model: Any = None,
        repeats: int | None = None,
    ) -> None:
        if not isinstance(criteria, str) or not criteria.strip():
            raise ValueError("judge(): criteria must be a non-empty string")
        unknown = [m for m in include if m not in _MATERIALS]
        if unknown or not include:
            raise ValueError(f"judge(): include must name some of {_MATERIALS}, got {list(include)!r}")
        self.criteria = criteria.strip()
        self.include = tuple(include)
        self.low = self.high = 0
        self.labels: tuple[str, ...] = ()
        if scale == "binary":
            shape, default_threshold = '{"verdict": true, "reason": "<one sentence>"}', 0.5
        elif isinstance(scale, str) and (match := _SCALE.fullmatch(scale.strip())):
            self.low, self.high = int(match["low"]), int(match["high"])
            if self.high <= self.low:
                raise ValueError(f"judge(): scale {scale!r} needs low < high")
            shape = f'{{"score": <a whole number from {self.low} to {self.high}>, "reason": "<one sentence>"}}'
            default_threshold = (self.low + self.high) / 2
        elif not isinstance(scale, str) and len(scale) >= 2 and all(isinstance(s, str) and s.strip() for s in scale):
            self.labels = tuple(s.strip() for s in scale)
            shape = f'{{"label": "{"|".join(self.labels)}", "reason": "<one sentence>"}}'
            default_threshold = 0.5
        else:
            raise ValueError(
                f"judge(): scale must be 'binary', 'LOW-HIGH' (e.g. '1-5') or a list of labels, not {scale!r}"
            )
        self.scale = scale if isinstance(scale, str) else list(self.labels)
        self.passing = tuple(passing) if passing is not None else self.labels[:1]
        if self.labels and not set(self.passing) <= set(self.labels):
            raise ValueError(f"judge(): passing labels {list(self.passing)} must be among {list(self.labels)}")
        self.template = PromptTemplate(
            f"rubric:{name}",
            f"You grade a response to a question by this rubric, and by nothing else:\n{self.criteria}",
            shape,
        )
        super().__init__(
            name, model=model, threshold=default_threshold if threshold is None else threshold, repeats=repeats
        )

    def settings(self) -> dict[str, Any]:
        """The scale, materials and passing rule too."""
        return {**super().settings(), "scale": self.scale, "include": list(self.include), "passing": list(self.passing)}

    def material(self, case: Any, response: Any) -> dict[str, Any]:
        """The materials the rubric asked for."""
        material: dict[str, Any] = {}
        if "query" in self.include:
            material["query"] = str(getattr(case, "query", ""))
        if "answer" in self.include:
            material["answer"] = answer_of(response)
        if "chunks" in self.include:
            material["chunks"] = [{"id": c["id"], "text": c["text"]} for c in chunks_of(response)]
        if "expected_answers" in self.include:
            material["expected_answers"] = expected_answers(case)
        return material

    def validate(self, data: dict[str, Any], material: dict[str, Any]) -> dict[str, Any]:
        """The verdict, score or label, within the scale."""
        reason = text_field(data, "reason", "the answer", required=False)
        if self.labels:
            if data.get("label") not in self.labels:
                raise VerdictError(f"'label' must be one of {', '.join(self.labels)}")
            return {"value": data["label"], "reason": reason}
        if self.high:
            score = data.get("score")
            if isinstance(score, float) and score.is_integer():
                score = int(score)
            if not isinstance(score, int) or isinstance(score, bool) or not self.low <= score <= self.high:
                raise VerdictError(f"'score' must be a whole number from {self.low} to {self.high}")
            return {"value": score, "reason": reason}
        if not isinstance(data.get("verdict"), bool):
            raise VerdictError("'verdict' must be true or false")
        return {"value": data["verdict"], "reason": reason}

    def outcome(self, verdict: dict[str, Any], material: dict[str, Any]) -> tuple[Any, str, dict[str, Any]]:
        """The value as given."""
        return verdict["value"], verdict["reason"] or str(verdict["value"]), {}

    def passed(self, value: Any) -> bool | None:
        """Labels pass when among ``passing``; numbers against the threshold."""
        if self.labels and isinstance(value, str):
            return value in self.passing
        return super().passed(value)


def judge(
    name: str,
    criteria: str,
    scale: str | Sequence[str] = "binary",
    *,
    include: Sequence[str] = ("query", "answer"),
    passing: Sequence[str] | None = None,
    threshold: float | None = None,
    model: Any = None,
    repeats: int | None = None,
) -> RubricJudge:
    """A custom LLM judge: ``criteria`` in plain words, on a ``scale``.

    Args:
        name: the score's name.
        criteria: what the judge checks ("The answer cites a source for every number").
        scale: ``"binary"`` (value True/False), ``"1-5"`` or any ``"LOW-HIGH"`` (an int;
            passes at the midpoint unless ``threshold``), or a list of labels (passes when
            among ``passing``, default the first label).
        include: what the judge reads: ``query``, ``answer``, ``chunks``, ``expected_answers``.
        passing: the labels that pass (label scales only).
        threshold: the value that passes (numbers).
        model: this judge's own model (default: the run's ``judge_model=``).
        repeats: judge each case this many times (default: the run's).

    Example::

        cites = heta_nb.judge("cites_sources", "Every number in the answer comes with its source.")
    """
    return RubricJudge(
        name,
        criteria=criteria,
        scale=scale,
        include=include,
        passing=passing,
        threshold=threshold,
        model=model,
        repeats=repeats,
    )
