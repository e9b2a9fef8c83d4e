"""What an evaluator returned, as a score: numbers, mappings, heta_nb's and Heta's score objects."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from heta_nb._util.values import NOT_NUMPY, numpy_item
from heta_nb.model.json import dict_is_json_object
from heta_nb.model.report import EvaluationScore

__all__ = ["as_score", "score_data"]

_SCORE_FIELDS = ("name", "value", "passed", "metadata")
_PLAIN_VALUES = frozenset((float, int, bool, str))
_NUMBER_OR_BOOL = frozenset((float, int, bool))
_HETA_SCORE_TYPES: set[type] = set()
"""heta-framework EvaluationScore classes seen so far."""


def score_data(result: Any, name: str) -> dict[str, Any]:
    """``as_score(result, name).raw`` without the detour for the common cases.

    heta_nb's and Heta's own score objects with a number or bool value are taken as
    they are: Heta's ``EvaluationScore`` is a frozen dataclass whose ``__dict__`` is
    exactly the score's JSON object (Heta validated it; the runner checks that the
    metadata is JSON when it encodes the result). Anything else goes through
    :func:`as_score`.
    """
    kind = type(result)
    if kind is EvaluationScore:
        return result.raw  # type: ignore[no-any-return]
    if kind in _HETA_SCORE_TYPES or _is_heta_score_type(kind):
        data = result.__dict__
        value = data["value"]
        passed = data["passed"]
        metadata = data["metadata"]
        if type(value) in _NUMBER_OR_BOOL and (passed is None or type(passed) is bool) and type(metadata) is dict:
            return data  # type: ignore[no-any-return]
    return as_score(result, name).raw


def _is_heta_score_type(kind: type) -> bool:
    if (
        kind.__name__ == "EvaluationScore"
        and kind.__module__.startswith("heta_framework.")
        and dict_is_json_object(kind, _SCORE_FIELDS)
    ):
        _HETA_SCORE_TYPES.add(kind)
        return True
    return False


def _plain_score_fields(fields: dict[str, Any]) -> bool:
    """Replace numpy scalars in ``fields["value"]`` / ``fields["passed"]``; whether any was."""
    changed = False
    for key in ("value", "passed"):
        if key in fields:
            item = numpy_item(fields[key])
            if item is not NOT_NUMPY:
                fields[key] = item
                changed = True
    return changed


def as_score(result: Any, name: str) -> EvaluationScore:
    """Convert what an evaluator returned into an :class:`EvaluationScore`.

    Accepts an EvaluationScore (heta_nb's or Heta's), a bare number/bool/string (named
    after the evaluator) or a mapping of score fields. numpy bool and number scalars
    (as a bare value, or as a mapping's or score object's ``value`` / ``passed``) are
    converted to plain Python ones with ``.item()``.
    """
    if type(result) in _PLAIN_VALUES:
        return EvaluationScore(name=name, value=result)
    if isinstance(result, EvaluationScore):
        return result
    item = numpy_item(result)
    if item is not NOT_NUMPY:
        return EvaluationScore(name=name, value=item)
    if isinstance(result, (bool, int, float, str)):
        return EvaluationScore(name=name, value=result)
    if isinstance(result, Mapping):
        fields = dict(result)
        fields.setdefault("name", name)
        try:
            return EvaluationScore.coerce(fields)
        except TypeError:
            if not _plain_score_fields(fields):
                raise
        return EvaluationScore.coerce(fields)
    if hasattr(result, "value") and hasattr(result, "name"):
        try:
            return EvaluationScore.coerce(result)
        except TypeError:
            fields = {key: getattr(result, key) for key in _SCORE_FIELDS if hasattr(result, key)}
            if not _plain_score_fields(fields):
                raise
        return EvaluationScore.coerce(fields)
    raise TypeError(f"evaluator {name!r} returned {type(result).__name__}, not a score")
