"""The quick validity test of a case result's JSON object (:func:`is_canonical_result`).

The record walk (``Record.check_json``) names every problem with its JSON path, at a
few Python calls per field. Reading a large report, almost every case result is valid
and complete; this one function, with the fields' rules spelled out inline, says so
about five times faster. Whatever it does not vouch for takes the walk, which finds
and names the problem (or completes a missing default).
"""

from __future__ import annotations

from typing import Any

__all__ = ["is_canonical_result"]


def _text(value: Any) -> bool:
    """Heta's required text: a string that is not blank."""
    return type(value) is str and bool(value) and not value.isspace()


def _optional_text(value: Any) -> bool:
    return value is None or (type(value) is str and bool(value) and not value.isspace())


def _scores(scores: Any) -> bool:
    if type(scores) is not list:
        return False
    for score in scores:
        if type(score) is not dict or not _text(score["name"]) or type(score["metadata"]) is not dict:
            return False
        value = score["value"]
        kind = type(value)
        if kind is str:
            if not value or value.isspace():
                return False
        elif kind is not float and kind is not bool and kind is not int:
            return False
        passed = score["passed"]
        if passed is not None and passed is not True and passed is not False:
            return False
    return True


def _results(results: Any) -> bool:
    if type(results) is not list:
        return False
    for result in results:
        if type(result) is not dict:
            return False
        if not (_text(result["id"]) and _text(result["text"]) and _text(result["kind"])):
            return False
        score = result["score"]
        if score is not None and type(score) is not float and type(score) is not int:
            return False
        if type(result["source"]) is not dict or type(result["metadata"]) is not dict:
            return False
    return True


def _citations(citations: Any) -> bool:
    if type(citations) is not list:
        return False
    for citation in citations:
        if type(citation) is not dict or not _text(citation["id"]):
            return False
        if not (_optional_text(citation["result_id"]) and _optional_text(citation["text"])):
            return False
        if type(citation["source"]) is not dict or type(citation["metadata"]) is not dict:
            return False
    return True


def _trace(events: Any) -> bool:
    if type(events) is not list:
        return False
    for event in events:
        if type(event) is not dict or type(event["metadata"]) is not dict:
            return False
        if not (_text(event["stage"]) and _text(event["message"])):
            return False
    return True


def _response(response: Any) -> bool:
    if type(response) is not dict or not _text(response["mode"]) or type(response["metadata"]) is not dict:
        return False
    if not _optional_text(response["answer"]):
        return False
    return _results(response["results"]) and _citations(response["citations"]) and _trace(response["trace"])


def _error(error: Any) -> bool:
    if type(error) is not dict or type(error["metadata"]) is not dict:
        return False
    retryable = error["retryable"]
    return (retryable is True or retryable is False) and _text(error["message"]) and _text(error["error_type"])


def is_canonical_result(raw: Any) -> bool:
    """Whether ``raw`` is a case result's JSON object with every field present and valid.

    True promises that ``EvaluationCaseResult.check_json`` accepts ``raw`` and returns it
    unchanged; False promises nothing (a missing default, an error to name: the walk
    decides). Unknown keys are allowed at every level, as the walk allows them.

    Args:
        raw: A value parsed from JSON (exact ``dict``/``list``/``str``... types).

    Returns:
        True when nothing needs checking closer.
    """
    if type(raw) is not dict:
        return False
    try:
        if not (_text(raw["case_id"]) and _text(raw["query"]) and _text(raw["query_mode"])):
            return False
        if type(raw["metadata"]) is not dict or not _scores(raw["scores"]):
            return False
        latency = raw["latency_ms"]
        if latency is not None:
            kind = type(latency)
            if (kind is not float and kind is not int) or latency < 0:
                return False
        response, error = raw["response"], raw["error"]
        if error is not None:
            if not _error(error):
                return False
        elif response is None:
            return False
        return response is None or _response(response)
    except KeyError:  # a field left out: the walk fills in its default or names it
        return False
