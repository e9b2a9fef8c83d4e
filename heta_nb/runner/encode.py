"""A result's JSON bytes, encoded once: non-finite scores kept as Heta writes them, foreign values converted.

A response that cannot be written as JSON at all becomes that case's ``InvalidResponseError``.
"""

from __future__ import annotations

import math
import operator
from typing import Any

from heta_nb._util.text import describe_error
from heta_nb.model.json import ORJSON_DUMPS, dumps_bytes, dumps_bytes_exact, to_json_value
from heta_nb.runner.case import error_data, error_score
from heta_nb.runner.kb import normalize_response

__all__ = ["encode_case", "encode_result", "has_non_finite", "unencodable"]

_SCORE_VALUE = operator.itemgetter("value")
_RESULT_SCORE = operator.itemgetter("score")
_NULL_VALUE = b'"value":null'
_NULL_SCORE = b'"score":null'


def has_non_finite(data: dict[str, Any]) -> bool:
    """Whether a score value or a result score is NaN or infinite (orjson would write null).

    A finite sum of the numbers proves every one finite; only a sum that is not (or text,
    None, a missing key) needs the term-by-term check.
    """
    response = data["response"]
    try:  # two C-level sums: 0.6 us for 3 scores and 10 results, not 0.9 us (2 % of a lean case)
        total = sum(map(_SCORE_VALUE, data["scores"]))
        if response is not None:
            total += sum(map(_RESULT_SCORE, response["results"]))
        if math.isfinite(total):
            return False
    except (TypeError, KeyError, OverflowError):
        pass
    for score in data["scores"]:
        value = score.get("value")
        if isinstance(value, float) and not math.isfinite(value):
            return True
    if response is not None:
        for result in response["results"]:
            value = result.get("score")
            if isinstance(value, float) and not math.isfinite(value):
                return True
    return False


def encode_result(data: dict[str, Any], raw: Any, mode: str) -> tuple[dict[str, Any], bytes]:
    """The result and its JSON; converts what is not plain JSON the way Heta would.

    The fast path shares the KB's dicts and lets orjson check them. When that
    fails (a foreign object, a non-string key), the response is rebuilt with
    Heta's ``_json_safe`` rules; a result that still cannot be encoded becomes an
    ``InvalidResponseError`` for this case. NaN and infinities among the scores and
    result scores are kept (written as ``NaN`` like Heta does, not as null).
    """
    try:
        encoded = ORJSON_DUMPS(data) if ORJSON_DUMPS is not None else dumps_bytes(data)
    except TypeError:
        return _encode_converted(data, raw, mode)
    # orjson writes NaN and infinities as null: only a score's "value" or a result's "score"
    # written as null can be one (JSON text cannot hold these bytes unescaped in a string)
    if (_NULL_VALUE in encoded or _NULL_SCORE in encoded) and has_non_finite(data):
        return _encode_converted(data, raw, mode)
    return data, encoded


def _encode_converted(data: dict[str, Any], raw: Any, mode: str) -> tuple[dict[str, Any], bytes]:
    if data["response"] is not None:
        data["response"] = normalize_response(raw, mode, safe=True).raw
    scores = []
    for score in data["scores"]:
        try:
            scores.append(to_json_value(score, f"score {score.get('name')!r}"))
        except (TypeError, ValueError, RecursionError) as exc:  # the evaluator's metadata: its error
            data["metadata"]["heta_nb"].setdefault("evaluator_errors", []).append(score.get("name"))
            scores.append(error_score(score.get("name"), type(exc).__name__, describe_error(exc)))
    data["scores"] = scores
    try:
        safe = to_json_value(data, "result")
    except TypeError as exc:
        return unencodable(data, exc)
    return safe, dumps_bytes_exact(safe)


def unencodable(data: dict[str, Any], exc: BaseException) -> tuple[dict[str, Any], bytes]:
    """The result as an ``InvalidResponseError`` case: its response cannot be written as JSON."""
    data["response"] = None
    data["scores"] = []
    attempts = data["metadata"]["heta_nb"]["attempts"]
    message = f"the response cannot be written as JSON: {exc}"
    data["error"] = error_data("InvalidResponseError", message, False, attempts)
    safe = to_json_value(data, "result")
    return safe, dumps_bytes_exact(safe)


def encode_case(data: dict[str, Any]) -> bytes:
    """A result's JSON for the report when its checkpoint line was not kept (a resumed result)."""
    return dumps_bytes_exact(data) if has_non_finite(data) else dumps_bytes(data)
