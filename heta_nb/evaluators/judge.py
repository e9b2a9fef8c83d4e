"""Marking a case's retrieved results relevant, not relevant or not judged, from the
benchmark's judgements (Heta's evidence rule and graded document judgements).

The one rule every view uses: the explorer's case panel and the exported pages' case
details both mark results with :func:`judge_results`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from itertools import islice
from types import SimpleNamespace
from typing import Any

from heta_nb.evaluators.documents import judgements, result_document_ids
from heta_nb.evaluators.evidence import EvidenceRecall

__all__ = ["MARK_CODES", "Judgement", "judge_results"]

_ONE = EvidenceRecall(1)
_MATCHED_KEYS = ("matched_reference_ids", "matched_documents", "matched_document_ids")
MARK_CODES = {"relevant": "r", "not relevant": "n", "not judged": "u"}
"""The one-letter form of each mark (the exported pages' case data)."""


@dataclass(frozen=True)
class Judgement:
    """One result's mark: ``relevant``, ``not relevant`` or ``not judged``, and why."""

    mark: str
    why: str

    @property
    def cls(self) -> str:
        """The CSS class of the mark."""
        return {"relevant": "hx-rel", "not relevant": "hx-nonrel"}.get(self.mark, "hx-unjudged")


_UNJUDGED_NO_GOLD = Judgement("not judged", "report.json keeps no judgements; pass benchmark= to judge it")


def _evidence_hits(case: Any, result: Mapping[str, Any]) -> list[int]:
    """Which of the case's evidence items ``result`` matches (Heta's ``evidence_recall`` rule)."""
    hits = []
    for index, evidence in enumerate(case.expected.evidence):
        one = SimpleNamespace(expected=SimpleNamespace(evidence=(evidence,)))
        if _ONE.score_json(one, {"results": [result]})["value"] > 0:
            hits.append(index)
    return hits


def _reported_by_evaluators(scores: Sequence[Mapping[str, Any]], keys: tuple[str, ...]) -> set[str]:
    """The ids the evaluators' score metadata lists under ``keys``."""
    found: set[str] = set()
    for score in scores:
        if type(score) is not dict and not isinstance(score, Mapping):
            continue
        metadata = score.get("metadata")
        if not metadata or (type(metadata) is not dict and not isinstance(metadata, Mapping)):
            continue
        for key in keys:
            ids = metadata.get(key)
            if ids and isinstance(ids, (list, tuple)):
                found.update(str(i) for i in islice(ids, 1000))
    return found


def judge_results(case_result: Mapping[str, Any], benchmark_case: Any, limit: int) -> list[Judgement]:
    """A :class:`Judgement` for each of the first ``limit`` results of a case result.

    With the benchmark's case: *relevant* when the result matches an expected evidence
    item (Heta's rule: locator, text or reference id) or comes from a document the
    evidence grades above 0; *not relevant* when the case has evidence and the result
    matches none; *not judged* when the case has no expected evidence. Without the
    benchmark (``report.json`` keeps no gold data), a result whose document an evaluator
    reported as matched is *relevant* and every other one is *not judged*: an evaluator's
    missing ids do not make a result not relevant (nor relevant: a result from an expected
    document may still not match a text or locator evidence item).

    Args:
        case_result: the case result's JSON (``raw``).
        benchmark_case: the benchmark's case (``expected.evidence``), or None.
        limit: how many results to judge.

    Returns:
        One judgement per result, in rank order.
    """
    response = case_result.get("response")
    found = response.get("results") if type(response) is dict or isinstance(response, Mapping) else None
    results = [r if type(r) is dict or isinstance(r, Mapping) else {} for r in islice(found or (), limit)]
    if benchmark_case is None:
        scores = case_result.get("scores") or ()
        matched = _reported_by_evaluators(scores, _MATCHED_KEYS)
        if not matched:  # (nothing to look up: every result unjudged)
            return [_UNJUDGED_NO_GOLD] * len(results)
        marks = []
        for result in results:
            if str(result.get("id")) in matched or not matched.isdisjoint(result_document_ids(result)):
                marks.append(Judgement("relevant", "an evaluator matched it to the expected evidence"))
            else:
                marks.append(_UNJUDGED_NO_GOLD)
        return marks
    evidence = tuple(benchmark_case.expected.evidence)
    if not evidence:
        return [Judgement("not judged", "the benchmark case has no expected evidence")] * len(results)
    grades = judgements(benchmark_case)
    marks = []
    for result in results:
        hits = _evidence_hits(benchmark_case, result)
        graded = [(d, grades[d]) for d in result_document_ids(result) if d in grades]
        if hits:
            names = ", ".join(
                f"#{i + 1}" + (f" ({evidence[i].reference_id})" if evidence[i].reference_id else "") for i in hits
            )
            marks.append(Judgement("relevant", f"matches expected evidence {names}"))
        elif graded:
            document, grade = graded[0]
            marks.append(Judgement("relevant", f"document {document} is judged relevant (grade {grade:g})"))
        else:
            marks.append(Judgement("not relevant", f"matches none of the case's {len(evidence)} evidence item(s)"))
    return marks
