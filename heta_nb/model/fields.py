"""The kinds of record field (text, choices, flags, numbers, score values, JSON objects,
nested records): how each builds, checks and reads its JSON value.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, TypeVar

from heta_nb._util.text import shorten
from heta_nb.model.json import freeze, heta_json_safe, json_type_name, to_json_value
from heta_nb.model.record import MISSING, Field, Problems, Record, cached_on, join_path

__all__ = [
    "Choice",
    "Field",
    "Flag",
    "Items",
    "JsonObject",
    "Nested",
    "Number",
    "NumberMapping",
    "ScoreValue",
    "Text",
    "TextList",
]

T = TypeVar("T")
RecordT = TypeVar("RecordT", bound=Record)


class Text(Field[T]):
    """Heta's required text (``optional=False``) or optional text field."""

    def __init__(self, doc: str, *, optional: bool = False, default: Any = MISSING) -> None:
        super().__init__(doc, default=None if optional and default is MISSING else default)
        self.optional = optional

    def build(self, value: Any) -> Any:
        if value is None and self.optional:
            return None
        if not isinstance(value, str):
            raise TypeError(f"{self.label} must be a string, got {type(value).__name__}")
        stripped = value.strip()
        if not stripped:
            raise ValueError(f"{self.label} must not be empty")
        return stripped

    def check(self, raw: Any, path: str, problems: Problems) -> Any:
        if type(raw) is str:
            if raw.strip():
                return raw
            problems.add(join_path(path, self.key), "must not be empty")
        elif raw is None and self.optional:
            return raw
        else:
            wanted = "string or null" if self.optional else "string"
            problems.add(join_path(path, self.key), f"expected {wanted}, got {json_type_name(raw)}")
        return raw


class Choice(Field[str]):
    """A text field limited to a closed set of values."""

    def __init__(self, doc: str, choices: Sequence[str], *, default: Any = MISSING) -> None:
        super().__init__(doc, default=default)
        self.choices = tuple(choices)

    def build(self, value: Any) -> Any:
        if value not in self.choices:
            raise ValueError(f"{self.label} must be one of: {', '.join(self.choices)}")
        return value

    def check(self, raw: Any, path: str, problems: Problems) -> Any:
        if raw not in self.choices or not isinstance(raw, str):
            problems.add(
                join_path(path, self.key),
                shorten(f"expected one of {', '.join(map(repr, self.choices))}, got {raw!r}", 200, ellipsis=""),
            )
        return raw


class Flag(Field[T]):
    """A boolean field (``optional=True`` also allows null)."""

    def __init__(self, doc: str, *, optional: bool = False, default: Any = MISSING) -> None:
        super().__init__(doc, default=default)
        self.optional = optional

    def build(self, value: Any) -> Any:
        if value is None and self.optional:
            return None
        if not isinstance(value, bool):
            raise TypeError(f"{self.label} must be a bool, got {type(value).__name__}")
        return value

    def check(self, raw: Any, path: str, problems: Problems) -> Any:
        if raw is True or raw is False or (raw is None and self.optional):
            return raw
        wanted = "boolean or null" if self.optional else "boolean"
        problems.add(join_path(path, self.key), f"expected {wanted}, got {json_type_name(raw)}")
        return raw


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


class Number(Field[T]):
    """A number field, optionally nullable and bounded below.

    The bound is Heta's ``value < minimum`` test: NaN and infinity pass it (Heta
    0.1.2 accepts ``latency_ms=NaN``), negative numbers and ``-inf`` do not. Heta
    checks no type; here a bool or a non-number is refused (stricter on purpose).
    """

    def __init__(
        self,
        doc: str,
        *,
        optional: bool = False,
        minimum: float | None = None,
        default: Any = MISSING,
    ) -> None:
        super().__init__(doc, default=default)
        self.optional = optional
        self.minimum = minimum

    def build(self, value: Any) -> Any:
        if value is None and self.optional:
            return None
        if not _is_number(value):
            raise TypeError(f"{self.label} must be a number, got {type(value).__name__}")
        # ``<``, as Heta's own check: NaN is not less than the minimum, so it is kept
        if self.minimum is not None and value < self.minimum:
            raise ValueError(f"{self.label} must not be less than {self.minimum:g}, got {value!r}")
        return value

    def check(self, raw: Any, path: str, problems: Problems) -> Any:
        if raw is None and self.optional:
            return raw
        if not _is_number(raw):
            wanted = "number or null" if self.optional else "number"
            problems.add(join_path(path, self.key), f"expected {wanted}, got {json_type_name(raw)}")
        elif self.minimum is not None and raw < self.minimum:  # NaN passes, as in Heta
            problems.add(join_path(path, self.key), f"must not be less than {self.minimum:g}, got {raw!r}")
        return raw


class JsonObject(Field[Mapping[str, Any]]):
    """A free-form JSON object (metadata, source, manifests), read as a frozen mapping.

    ``heta_safe=True`` applies Heta's lenient ``_json_safe`` conversion when built in
    Python (where Heta does); otherwise the value must already be JSON-serializable,
    which Heta only finds out when it writes the report at the very end.
    """

    def __init__(self, doc: str, *, heta_safe: bool = False, default: Any = dict) -> None:
        super().__init__(doc, default=default)
        self.heta_safe = heta_safe

    def build(self, value: Any) -> Any:
        if not isinstance(value, Mapping):
            raise TypeError(f"{self.label} must be a mapping, got {type(value).__name__}")
        if self.heta_safe:
            value = heta_json_safe(value)
        return to_json_value(value, self.label)

    def check(self, raw: Any, path: str, problems: Problems) -> Any:
        if type(raw) is not dict:
            problems.add(join_path(path, self.key), f"expected object, got {json_type_name(raw)}")
        return raw

    def read(self, obj: Record, raw: Any) -> Mapping[str, Any]:
        frozen: Mapping[str, Any] = cached_on(obj, self.key, lambda: freeze(raw))
        return frozen


class Nested(Field[T]):
    """A nested record (``optional=True`` allows null)."""

    def __init__(self, doc: str, record: type[Record], *, optional: bool = False) -> None:
        super().__init__(doc, default=None if optional else MISSING)
        self.record = record
        self.optional = optional

    def build(self, value: Any) -> Any:
        if value is None and self.optional:
            return None
        return _record_json(self.record, value, self.label)

    def check(self, raw: Any, path: str, problems: Problems) -> Any:
        if raw is None and self.optional:
            return raw
        return self.record.check_json(raw, join_path(path, self.key), problems)

    def read(self, obj: Record, raw: Any) -> T:
        if raw is None:
            return None  # type: ignore[return-value]  # null is stored only where T is optional
        nested: T = cached_on(obj, self.key, lambda: self.record.from_raw(raw))
        return nested


class Items(Field[tuple[RecordT, ...]]):
    """A JSON array of nested records, read as a tuple."""

    def __init__(self, doc: str, record: type[RecordT]) -> None:
        super().__init__(doc, default=list)
        self.record = record

    def build(self, value: Any) -> Any:
        items = _as_sequence(value, self.label)
        return [_record_json(self.record, item, f"{self.label}[{i}]") for i, item in enumerate(items)]

    def check(self, raw: Any, path: str, problems: Problems) -> Any:
        here = join_path(path, self.key)
        if type(raw) is not list:
            problems.add(here, f"expected array, got {json_type_name(raw)}")
            return raw
        check = self.record.check_json
        canonical = self.record.is_canonical
        for index, item in enumerate(raw):
            if canonical(item):  # every field there and valid: nothing to complete or report
                continue
            checked = check(item, f"{here}[{index}]", problems)
            if checked is not item:
                raw[index] = checked
        return raw

    def read(self, obj: Record, raw: Any) -> tuple[RecordT, ...]:
        if type(raw) is not list:  # a lazily read report's case results (heta_nb.model.lazy)
            lazy: tuple[RecordT, ...] = cached_on(obj, self.key, raw.records)
            return lazy
        wrap = self.record.from_raw
        items: tuple[RecordT, ...] = cached_on(obj, self.key, lambda: tuple(wrap(item) for item in raw))
        return items


class TextList(Field[tuple[str, ...]]):
    """A JSON array of required-text strings, read as a tuple."""

    def __init__(self, doc: str) -> None:
        super().__init__(doc, default=list)

    def build(self, value: Any) -> Any:
        items = _as_sequence(value, self.label)
        result = []
        for index, item in enumerate(items):
            if not isinstance(item, str):
                raise TypeError(f"{self.label}[{index}] must be a string, got {type(item).__name__}")
            if not item.strip():
                raise ValueError(f"{self.label}[{index}] must not be empty")
            result.append(item.strip())
        return result

    def check(self, raw: Any, path: str, problems: Problems) -> Any:
        here = join_path(path, self.key)
        if type(raw) is not list:
            problems.add(here, f"expected array, got {json_type_name(raw)}")
            return raw
        for index, item in enumerate(raw):
            if type(item) is not str:
                problems.add(f"{here}[{index}]", f"expected string, got {json_type_name(item)}")
            elif not item.strip():
                problems.add(f"{here}[{index}]", "must not be empty")
        return raw

    def read(self, obj: Record, raw: Any) -> tuple[str, ...]:
        return tuple(raw)


class ScoreValue(Field[float | bool | str]):
    """An evaluator's value: a number, a bool, or a non-blank string."""

    def build(self, value: Any) -> Any:
        if isinstance(value, str):
            if not value.strip():
                raise ValueError(f"{self.label} must not be empty")
            return value.strip()
        if isinstance(value, (bool, int, float)):
            return value
        raise TypeError(f"{self.label} must be a number, bool or string, got {type(value).__name__}")

    def check(self, raw: Any, path: str, problems: Problems) -> Any:
        if type(raw) is str:
            if not raw.strip():
                problems.add(join_path(path, self.key), "must not be empty")
        elif not isinstance(raw, (bool, int, float)):
            problems.add(
                join_path(path, self.key),
                f"expected number, bool or string, got {json_type_name(raw)}",
            )
        return raw


class NumberMapping(Field[Mapping[str, float]]):
    """A JSON object of numbers, read as a frozen mapping (a report's ``score_summary``)."""

    def build(self, value: Any) -> Any:
        if not isinstance(value, Mapping):
            raise TypeError(f"{self.label} must be a mapping, got {type(value).__name__}")
        result = {}
        for key, item in value.items():
            if not isinstance(key, str):
                raise TypeError(f"{self.label} keys must be strings, got {type(key).__name__}")
            if isinstance(item, bool) or not isinstance(item, (int, float)):
                raise TypeError(f"{self.label}[{key!r}] must be a number, got {type(item).__name__}")
            result[key] = item
        return result

    def check(self, raw: Any, path: str, problems: Problems) -> Any:
        here = join_path(path, self.key)
        if type(raw) is not dict:
            problems.add(here, f"expected object, got {json_type_name(raw)}")
            return raw
        for key, item in raw.items():
            if isinstance(item, bool) or not isinstance(item, (int, float)):
                problems.add(f"{here}[{key!r}]", f"expected number, got {json_type_name(item)}")
        return raw

    def read(self, obj: Record, raw: Any) -> Mapping[str, float]:
        frozen: Mapping[str, float] = cached_on(obj, self.key, lambda: freeze(raw))
        return frozen


def _as_sequence(value: Any, label: str) -> Sequence[Any]:
    if isinstance(value, (str, bytes, Mapping)):
        raise TypeError(f"{label} must be a sequence, got {type(value).__name__}")
    try:
        return list(value)
    except TypeError:
        raise TypeError(f"{label} must be a sequence, got {type(value).__name__}") from None


def _record_json(record: type[Record], value: Any, label: str) -> Any:
    """The JSON form of ``value`` for a nested ``record`` field (see ``Record.coerce``)."""
    return record.coerce(value, label=label).raw
