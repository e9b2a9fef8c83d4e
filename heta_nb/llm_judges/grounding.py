"""Judges of grounding: is the answer supported by what was retrieved, and was the right thing retrieved.

* :class:`Faithfulness`: the answer split into claims, each ``supported``, ``contradicted``
  or ``not_found`` in the retrieved chunks, with the chunks that support it; the score is
  supported / claims. An answer with no claims is n/a, never 1.0.
* :class:`ContextPrecision`: each retrieved chunk ``relevant`` or ``not_relevant`` to
  answering the query; the score is average precision over the ranks (1.0 when the
  relevant chunks come first; 0.0 when none is relevant).
* :class:`ContextRecall`: the expected answer's claims, each ``supported`` by the chunks or
  ``not_found``; the score is supported / claims.
"""

from __future__ import annotations

from typing import Any

from heta_nb.llm_judges.base import JudgeEvaluator, NotJudgeable, answer_of, chunks_of, expected_answers
from heta_nb.llm_judges.prompts import PromptTemplate
from heta_nb.llm_judges.session import VerdictError

__all__ = ["ContextPrecision", "ContextRecall", "Faithfulness", "checked_claims", "text_field"]

CLAIM_VERDICTS = ("supported", "contradicted", "not_found")


def text_field(item: dict[str, Any], key: str, where: str, *, required: bool = True) -> str:
    """``item[key]`` as a non-blank string (``""`` when optional and absent)."""
    value = item.get(key)
    if value is None and not required:
        return ""
    if not isinstance(value, str) or (required and not value.strip()):
        raise VerdictError(f"{where}: {key!r} must be a non-empty string")
    return value.strip()[:2000]


def _chunk_ids(value: Any, known: set[str], where: str) -> list[str]:
    if value is None:
        return []
    if not isinstance(value, list) or not all(isinstance(c, str) for c in value):
        raise VerdictError(f"{where}: 'chunks' must be a list of chunk ids")
    unknown = [c for c in value if c not in known]
    if unknown:
        raise VerdictError(f"{where}: chunk id {unknown[0][:20]!r} is not one of the material's chunks")
    return list(dict.fromkeys(value))


def checked_claims(
    data: dict[str, Any], key: str, verdicts: tuple[str, ...], known_chunks: set[str] | None
) -> list[dict[str, Any]]:
    """The answer's list of claims, each ``{claim, verdict, chunks?, reason}``, checked strictly."""
    claims = data.get(key)
    if not isinstance(claims, list):
        raise VerdictError(f"{key!r} must be a list")
    checked = []
    for index, item in enumerate(claims):
        where = f"{key}[{index}]"
        if not isinstance(item, dict):
            raise VerdictError(f"{where} must be an object")
        verdict = item.get("verdict")
        if verdict not in verdicts:
            raise VerdictError(f"{where}: 'verdict' must be one of {', '.join(verdicts)}")
        claim = {"claim": text_field(item, "claim", where), "verdict": verdict}
        if known_chunks is not None:
            claim["chunks"] = _chunk_ids(item.get("chunks"), known_chunks, where)
        claim["reason"] = text_field(item, "reason", where, required=False)
        checked.append(claim)
    return checked


def _with_result_ids(claims: list[dict[str, Any]], chunks: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Each claim's chunk ids (``c2``) given with the result ids they stand for."""
    result_of = {c["id"]: c["result_id"] for c in chunks}
    return [{**claim, "result_ids": [result_of[c] for c in claim.get("chunks", ())]} for claim in claims]


class Faithfulness(JudgeEvaluator):
    """Share of the answer's claims the retrieved chunks support (see the module docstring)."""

    kind = "faithfulness"
    template = PromptTemplate(
        "faithfulness",
        "You check whether an answer is grounded in retrieved text. Split the answer into its atomic "
        "factual claims (statements that can be true or false; leave out greetings, hedges and "
        "restatements of the question). For each claim decide, using only the chunks: 'supported' "
        "(a chunk states it or it follows directly), 'contradicted' (a chunk states the opposite) or "
        "'not_found' (the chunks do not say). List the ids of the chunks that support or contradict it. "
        "An answer that only declines or says it does not know has no claims: return an empty list.",
        '{"claims": [{"claim": "<one claim>", "verdict": "supported|contradicted|not_found", '
        '"chunks": ["c1"], "reason": "<one sentence>"}]}',
    )

    def material(self, case: Any, response: Any) -> dict[str, Any]:
        """The query, the answer and the chunks."""
        answer = answer_of(response)
        chunks = chunks_of(response)
        return {
            "query": str(getattr(case, "query", "")),
            "answer": answer,
            "chunks": [{"id": c["id"], "text": c["text"]} for c in chunks],
            "_chunks": chunks,
        }

    def validate(self, data: dict[str, Any], material: dict[str, Any]) -> list[dict[str, Any]]:
        """The claims, with chunk ids that exist."""
        return checked_claims(data, "claims", CLAIM_VERDICTS, {c["id"] for c in material["chunks"]})

    def outcome(self, verdict: list[dict[str, Any]], material: dict[str, Any]) -> tuple[Any, str, dict[str, Any]]:
        """Supported / claims."""
        if not verdict:
            raise NotJudgeable("the answer makes no factual claims")
        supported = sum(1 for c in verdict if c["verdict"] == "supported")
        contradicted = sum(1 for c in verdict if c["verdict"] == "contradicted")
        reason = f"{supported} of {len(verdict)} claims supported by the retrieved chunks"
        if contradicted:
            reason += f", {contradicted} contradicted"
        return supported / len(verdict), reason, {"claims": _with_result_ids(verdict, material["_chunks"])}


class ContextPrecision(JudgeEvaluator):
    """Average precision of the retrieved chunks judged relevant to the query (see the module docstring)."""

    kind = "context_precision"
    template = PromptTemplate(
        "context_precision",
        "You judge retrieved chunks for a question. For every chunk decide whether it is 'relevant' "
        "(it contains information needed to answer the question) or 'not_relevant'. When expected "
        "answers are given, a chunk is relevant if it supports one of them. Judge every chunk once, "
        "by its id.",
        '{"chunks": [{"id": "c1", "verdict": "relevant|not_relevant", "reason": "<one sentence>"}]}',
    )

    def material(self, case: Any, response: Any) -> dict[str, Any]:
        """The query, the expected answers if any, the chunks."""
        chunks = chunks_of(response)
        material: dict[str, Any] = {"query": str(getattr(case, "query", ""))}
        try:
            material["expected_answers"] = expected_answers(case)
        except NotJudgeable:
            pass
        material["chunks"] = [{"id": c["id"], "text": c["text"]} for c in chunks]
        material["_chunks"] = chunks
        return material

    def validate(self, data: dict[str, Any], material: dict[str, Any]) -> list[dict[str, Any]]:
        """One verdict per chunk, every chunk judged once."""
        items = data.get("chunks")
        if not isinstance(items, list):
            raise VerdictError("'chunks' must be a list")
        ids = [c["id"] for c in material["chunks"]]
        seen: dict[str, dict[str, Any]] = {}
        for index, item in enumerate(items):
            where = f"chunks[{index}]"
            if not isinstance(item, dict):
                raise VerdictError(f"{where} must be an object")
            chunk = item.get("id")
            if not isinstance(chunk, str) or chunk not in ids:
                raise VerdictError(f"{where}: id {str(chunk)[:20]!r} is not one of the material's chunks")
            if chunk in seen:
                raise VerdictError(f"{where}: chunk {chunk!r} is judged twice")
            if item.get("verdict") not in ("relevant", "not_relevant"):
                raise VerdictError(f"{where}: 'verdict' must be relevant or not_relevant")
            seen[chunk] = {"verdict": item["verdict"], "reason": text_field(item, "reason", where, required=False)}
        missing = [c for c in ids if c not in seen]
        if missing:
            raise VerdictError(f"chunk {missing[0]!r} is not judged")
        return [{"id": c, **seen[c]} for c in ids]

    def outcome(self, verdict: list[dict[str, Any]], material: dict[str, Any]) -> tuple[Any, str, dict[str, Any]]:
        """Average precision over the ranks."""
        hits, total = 0, 0.0
        for rank, item in enumerate(verdict, start=1):
            if item["verdict"] == "relevant":
                hits += 1
                total += hits / rank
        value = total / hits if hits else 0.0
        result_of = {c["id"]: c["result_id"] for c in material["_chunks"]}
        chunks = [{**item, "rank": rank, "result_id": result_of[item["id"]]} for rank, item in enumerate(verdict, 1)]
        return value, f"{hits} of {len(verdict)} retrieved chunks relevant", {"chunks": chunks}


class ContextRecall(JudgeEvaluator):
    """Share of the expected answer's claims the retrieved chunks support (see the module docstring)."""

    kind = "context_recall"
    template = PromptTemplate(
        "context_recall",
        "You check whether retrieved chunks contain what is needed for the expected answer. Split the "
        "expected answers into their atomic factual claims. For each claim decide, using only the "
        "chunks: 'supported' (a chunk states it) or 'not_found'. List the ids of the chunks that support it.",
        '{"claims": [{"claim": "<one claim of the expected answer>", "verdict": "supported|not_found", '
        '"chunks": ["c1"], "reason": "<one sentence>"}]}',
    )

    def material(self, case: Any, response: Any) -> dict[str, Any]:
        """The query, the expected answers and the chunks."""
        expected = expected_answers(case)
        chunks = chunks_of(response)
        return {
            "query": str(getattr(case, "query", "")),
            "expected_answers": expected,
            "chunks": [{"id": c["id"], "text": c["text"]} for c in chunks],
            "_chunks": chunks,
        }

    def validate(self, data: dict[str, Any], material: dict[str, Any]) -> list[dict[str, Any]]:
        """The expected answer's claims, with chunk ids that exist."""
        return checked_claims(data, "claims", ("supported", "not_found"), {c["id"] for c in material["chunks"]})

    def outcome(self, verdict: list[dict[str, Any]], material: dict[str, Any]) -> tuple[Any, str, dict[str, Any]]:
        """Supported / claims."""
        if not verdict:
            raise NotJudgeable("the expected answer yielded no claims")
        supported = sum(1 for c in verdict if c["verdict"] == "supported")
        reason = f"{supported} of {len(verdict)} claims of the expected answer found in the retrieved chunks"
        return supported / len(verdict), reason, {"claims": _with_result_ids(verdict, material["_chunks"])}
