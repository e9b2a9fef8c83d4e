"""A KB response whose result scores are numpy numbers (``np.float32``...), made plain for validation.

:func:`heta_nb.runner.kb.normalize_response` calls :func:`without_numpy_scores` only after a
response failed validation, so valid responses pay nothing for it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from heta_nb._util.values import NOT_NUMPY, numpy_item
from heta_nb.model.query import QueryResponse

__all__ = ["RESPONSE_FIELDS", "RESULT_FIELDS", "without_numpy_scores"]

RESULT_FIELDS = ("id", "text", "score", "kind", "source", "metadata")
RESPONSE_FIELDS = ("mode", "results", "answer", "citations", "trace", "metadata")


def _plain_result(item: Any) -> dict[str, Any] | None:
    """``item`` (a result mapping or object) as a dict with its numpy score made plain; None if not numpy."""
    is_mapping = isinstance(item, Mapping)
    score = item.get("score") if is_mapping else getattr(item, "score", None)
    plain = numpy_item(score)
    if plain is NOT_NUMPY:
        return None
    data = dict(item) if is_mapping else {k: getattr(item, k) for k in RESULT_FIELDS if hasattr(item, k)}
    data["score"] = plain
    return data


def _plain_results(items: Any) -> list[Any] | None:
    """``items`` with numpy scores made plain, or None when none was numpy."""
    changed = False
    results: list[Any] = []
    for item in items:
        plain = _plain_result(item)
        if plain is None:
            results.append(item)
        else:
            results.append(plain)
            changed = True
    return results if changed else None


def without_numpy_scores(raw: Any) -> Any:
    """What the KB returned with numpy result scores as plain numbers, or None if it had none.

    Only called after a response failed validation, so it costs nothing when responses
    are valid; it follows :func:`normalize_response`'s order of shapes.
    """
    if isinstance(raw, (QueryResponse, str)):
        return None
    if isinstance(raw, Mapping):
        results = raw.get("results")
        if isinstance(results, (list, tuple)):
            plain = _plain_results(results)
            if plain is not None:
                return {**raw, "results": plain}
        return None
    if isinstance(raw, (list, tuple)):
        return _plain_results(raw)
    if hasattr(raw, "id") and hasattr(raw, "text") and not hasattr(raw, "results"):
        result = _plain_result(raw)
        return None if result is None else [result]
    if hasattr(raw, "results") and hasattr(raw, "mode"):
        results = raw.results
        if isinstance(results, (list, tuple)):
            plain = _plain_results(results)
            if plain is not None:
                data = {k: getattr(raw, k) for k in RESPONSE_FIELDS if hasattr(raw, k)}
                data["results"] = plain
                return data
    return None
