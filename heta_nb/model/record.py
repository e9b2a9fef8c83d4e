"""The immutable record machinery behind every report type.

A record keeps the JSON object it came from (:attr:`Record.raw`) and reads its typed
attributes from it on demand. That choice is what makes heta_nb lossless and cheap:

* ``to_json()`` encodes ``raw`` directly, so a report Heta wrote is reproduced
  byte for byte, unknown keys from a newer Heta included, in their original order;
* loading a report is ``json.loads`` plus one validation walk, and a loaded report
  uses no more memory than the parsed dict (wrapper objects are made lazily);
* records built in Python (by the runner) normalise their inputs with Heta's rules
  (text stripped, blank text refused, JSON-safety) so they serialize as Heta would.

Each record class declares its fields as descriptors, in Heta's key order. A field
knows its default, how to build its JSON value from a Python value, how to validate
a loaded JSON value (reporting the JSON path), and how to present it as an attribute.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any, ClassVar, Generic, TypeVar, overload

from heta_nb.model.json import (
    copy_json,
    dumps_compact,
    freeze,
    heta_json_safe,
    json_type_name,
    to_json_value,
)

__all__ = ["MISSING", "Field", "Problems", "Record", "RichDisplay", "rich_display"]

T = TypeVar("T")
R = TypeVar("R", bound="Record")


class _Missing:
    def __repr__(self) -> str:
        return "MISSING"


MISSING: Any = _Missing()


class _TooManyProblems(Exception):
    """Raised internally once enough problems were collected."""


class Problems:
    """Collects validation problems (JSON path + message), stopping after ``limit``."""

    __slots__ = ("items", "limit", "more")

    def __init__(self, limit: int = 10) -> None:
        self.items: list[str] = []
        self.limit = limit
        self.more = False

    def add(self, path: str, message: str) -> None:
        """Record one problem; abort the walk once the limit is exceeded."""
        if len(self.items) >= self.limit:
            self.more = True
            raise _TooManyProblems
        self.items.append(f"{path}: {message}" if path else message)

    def __bool__(self) -> bool:
        return bool(self.items)


def _join(path: str, key: str) -> str:
    return f"{path}.{key}" if path else key


class Field(Generic[T]):
    """A typed, documented field of a record, stored under ``key`` in the JSON object."""

    key: str
    owner_name: str

    def __init__(self, doc: str, *, default: Any = MISSING) -> None:
        self.__doc__ = doc
        self.default = default

    def __set_name__(self, owner: type, name: str) -> None:
        self.key = name
        self.owner_name = owner.__name__

    @overload
    def __get__(self, obj: None, owner: type | None = None) -> Field[T]: ...

    @overload
    def __get__(self, obj: Record, owner: type | None = None) -> T: ...

    def __get__(self, obj: Record | None, owner: type | None = None) -> Field[T] | T:
        if obj is None:
            return self
        return self.read(obj, obj.raw[self.key])

    # -- behaviour each kind of field provides -------------------------------------
    def build(self, value: Any) -> Any:
        """Turn a Python value given to the constructor into its JSON value."""
        return value

    def check(self, raw: Any, path: str, problems: Problems) -> Any:
        """Validate a loaded JSON value; return it (or a completed copy of it)."""
        return raw

    def read(self, obj: Record, raw: Any) -> T:
        """Present the stored JSON value as the attribute's value."""
        return raw  # type: ignore[no-any-return]

    # -- helpers -------------------------------------------------------------------
    @property
    def label(self) -> str:
        """``Owner.field``, used in constructor error messages."""
        return f"{self.owner_name}.{self.key}"

    def default_json(self) -> Any:
        """A fresh JSON value for the default (mutable defaults are copied)."""
        return copy_json(self.default() if callable(self.default) else self.default)

    def cached(self, obj: Record, make: Callable[[], Any]) -> Any:
        """Return a per-record cached value for this field."""
        cache = obj._cache
        if cache is None:
            cache = {}
            object.__setattr__(obj, "_cache", cache)
        try:
            return cache[self.key]
        except KeyError:
            value = cache[self.key] = make()
            return value


def _json_equal(a: Any, b: Any) -> bool:
    """Equality as JSON sees it: a tuple equals the list with the same items.

    The runner shares a Heta response's data, whose sequences may be tuples; after a
    save and load they are lists, and the two reports must still compare equal.
    """
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        return len(a) == len(b) and all(x == y or _json_equal(x, y) for x, y in zip(a, b))
    if isinstance(a, Mapping) and isinstance(b, Mapping):
        return a.keys() == b.keys() and all(a[k] == b[k] or _json_equal(a[k], b[k]) for k in a)
    return False


class Record:
    """Base class of the immutable report records (see the module docstring).

    ``raw`` is the record's JSON object as stored, shared and not copied: views and the
    runner read it directly (the fastest way through 100,000 results), and nothing may
    change it. ``to_dict()`` gives a copy to change; :meth:`from_raw` wraps a JSON
    object that is already valid.
    """

    __slots__ = ("raw", "_cache")

    _fields: ClassVar[tuple[Field[Any], ...]] = ()
    raw: dict[str, Any]
    """The record's JSON object (read only; see the class docstring)."""
    _cache: dict[str, Any] | None

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        cls._fields = tuple(v for v in vars(cls).values() if isinstance(v, Field))

    # -- construction ------------------------------------------------------------
    def _assign(self, values: Mapping[str, Any], extra: Mapping[str, Any] | None = None) -> None:
        """Build ``raw`` from constructor arguments (Heta's normalisation rules)."""
        data: dict[str, Any] = {}
        for field in self._fields:
            value = values.get(field.key, MISSING)
            if value is MISSING or (value is None and field.default is not MISSING and field.default is not None):
                if field.default is MISSING:
                    raise TypeError(f"{field.label} is required")
                data[field.key] = field.default_json()
            else:
                data[field.key] = field.build(value)
        if extra:
            for key, value in extra.items():
                if key not in data:
                    data[key] = to_json_value(value, f"{type(self).__name__}[{key!r}]")
        self._check_built(data)
        object.__setattr__(self, "raw", data)
        object.__setattr__(self, "_cache", None)

    def _check_built(self, data: dict[str, Any]) -> None:
        """Cross-field rules for records built in Python (override when needed)."""

    @classmethod
    def from_raw(cls: type[R], data: dict[str, Any]) -> R:
        """Wrap a JSON object that is already valid, without copying or checking it.

        For data heta_nb built or checked itself (the runner's results, a checkpoint,
        another record's ``raw``); :meth:`from_dict` checks and copies anything else.
        """
        obj = _new_object(cls)
        _set_data(obj, data)
        _set_cache(obj, None)
        return obj

    @classmethod
    def _check(cls, raw: Any, path: str, problems: Problems) -> Any:
        """Validate a loaded JSON object in place; return it (possibly completed)."""
        if type(raw) is not dict:
            problems.add(path, f"expected object, got {json_type_name(raw)}")
            return raw
        completed = False
        for field in cls._fields:
            value = raw.get(field.key, MISSING)
            if value is MISSING:
                if field.default is MISSING:
                    problems.add(_join(path, field.key), "missing required field")
                else:
                    completed = True
                continue
            checked = field.check(value, path, problems)
            if checked is not value:
                raw[field.key] = checked
        cls._check_rules(raw, path, problems)
        if completed:
            # Fill defaults for absent keys and keep Heta's key order, extras last.
            ordered = {field.key: raw[field.key] if field.key in raw else field.default_json() for field in cls._fields}
            ordered.update((k, v) for k, v in raw.items() if k not in ordered)
            return ordered
        return raw

    @classmethod
    def _check_rules(cls, raw: dict[str, Any], path: str, problems: Problems) -> None:
        """Cross-field rules for loaded data (override when needed)."""

    @classmethod
    def coerce(cls: type[R], value: Any, *, label: str | None = None) -> R:
        """Return ``value`` as this record type, normalising it with Heta's rules.

        Accepts the record itself, a mapping in the serialized form (unknown keys are
        kept), or any object with the same attribute names, such as the matching
        heta-framework class, which is read without importing heta.
        """
        if isinstance(value, cls):
            return value
        names = {field.key for field in cls._fields}
        if isinstance(value, Mapping):
            values = dict(value)
            extra = {k: v for k, v in value.items() if k not in names}
        elif isinstance(value, (str, bytes, int, float, list, tuple)) or value is None:
            raise TypeError(
                f"{label or cls.__name__} must be a {cls.__name__} or a mapping, got {type(value).__name__}"
            )
        else:
            values = {name: getattr(value, name) for name in names if hasattr(value, name)}
            extra = None
        obj = object.__new__(cls)
        obj._assign(values, extra)
        return obj

    @classmethod
    def from_dict(cls: type[R], data: Mapping[str, Any], *, source: str | None = None) -> R:
        """Validate a mapping in this record's serialized form and wrap a copy of it.

        Raises:
            ReportFormatError: naming the JSON path of the first problems.
        """
        from heta_nb.errors import ReportFormatError

        where = source or f"<{cls.__name__} dict>"
        try:
            plain = to_json_value(data, "")
        except TypeError as exc:
            raise ReportFormatError(where, [str(exc).lstrip(": ")]) from None
        problems = Problems()
        try:
            checked = cls._check(plain, "", problems)
        except _TooManyProblems:
            pass
        if problems:
            raise ReportFormatError(where, problems.items, more=problems.more)
        return cls.from_raw(checked)

    # -- the immutable-value protocol ---------------------------------------------
    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError(f"{type(self).__name__} is immutable; use .replace(...)")

    def __delattr__(self, name: str) -> None:
        raise AttributeError(f"{type(self).__name__} is immutable")

    def __eq__(self, other: object) -> bool:
        if type(other) is not type(self):
            return NotImplemented
        mine, theirs = self.raw, other.raw  # type: ignore[attr-defined]
        return bool(mine == theirs) or _json_equal(mine, theirs)

    __hash__ = None  # type: ignore[assignment]  # holds mappings, like Heta's frozen dataclasses

    def __reduce__(self) -> tuple[Any, ...]:
        return (type(self).from_raw, (self.raw,))

    def __repr__(self) -> str:
        shown = []
        for field in self._fields[:3]:
            value = self.raw.get(field.key)
            if isinstance(value, str):
                text = value if len(value) <= 40 else value[:39] + "…"
                shown.append(f"{field.key}={text!r}")
        return f"{type(self).__name__}({', '.join(shown)})"

    def replace(self: R, **changes: Any) -> R:
        """Return a copy with some fields changed (unknown keys are kept)."""
        names = {field.key for field in self._fields}
        unknown = set(changes) - names
        if unknown:
            raise TypeError(f"{type(self).__name__} has no field(s): {', '.join(sorted(unknown))}")
        data = dict(self.raw)
        for field in self._fields:
            if field.key in changes:
                value = changes[field.key]
                if value is None and field.default not in (MISSING, None):
                    data[field.key] = field.default_json()
                else:
                    data[field.key] = field.build(value)
        self._check_built(data)
        return type(self).from_raw(data)

    @property
    def extra(self) -> Mapping[str, Any]:
        """Keys this version of heta_nb does not know (kept and written back unchanged)."""
        names = {field.key for field in self._fields}
        return freeze({k: v for k, v in self.raw.items() if k not in names})

    def to_dict(self) -> dict[str, Any]:
        """A deep copy of the serialized form (Heta's ``to_dict()`` shape)."""
        return copy_json(self.raw)  # type: ignore[no-any-return]

    def to_json(self) -> str:
        """Heta's compact JSON encoding of this record."""
        return dumps_compact(self.raw)


# -- field kinds ---------------------------------------------------------------------


_new_object = object.__new__
# the slots' own descriptors: storing through them skips object.__setattr__'s lookup
_set_data: Callable[[Any, Any], None] = vars(Record)["raw"].__set__
_set_cache: Callable[[Any, Any], None] = vars(Record)["_cache"].__set__


def _blank(value: str) -> bool:
    return not value.strip()


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
            if raw and not raw[0].isspace() or raw.strip():
                return raw
            problems.add(_join(path, self.key), "must not be empty")
        elif raw is None and self.optional:
            return raw
        else:
            wanted = "string or null" if self.optional else "string"
            problems.add(_join(path, self.key), f"expected {wanted}, got {json_type_name(raw)}")
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
                _join(path, self.key),
                f"expected one of {', '.join(map(repr, self.choices))}, got {raw!r}"[:200],
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
        problems.add(_join(path, self.key), f"expected {wanted}, got {json_type_name(raw)}")
        return raw


def _is_number(value: Any) -> bool:
    return (type(value) is float or type(value) is int) or (
        isinstance(value, (int, float)) and not isinstance(value, bool)
    )


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
            problems.add(_join(path, self.key), f"expected {wanted}, got {json_type_name(raw)}")
        elif self.minimum is not None and raw < self.minimum:  # NaN passes, as in Heta
            problems.add(_join(path, self.key), f"must not be less than {self.minimum:g}, got {raw!r}")
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
            problems.add(_join(path, self.key), f"expected object, got {json_type_name(raw)}")
        return raw

    def read(self, obj: Record, raw: Any) -> Mapping[str, Any]:
        return self.cached(obj, lambda: freeze(raw))  # type: ignore[no-any-return]


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
        return self.record._check(raw, _join(path, self.key), problems)

    def read(self, obj: Record, raw: Any) -> T:
        if raw is None:
            return None  # type: ignore[return-value]
        return self.cached(obj, lambda: self.record.from_raw(raw))  # type: ignore[no-any-return]


class Items(Field[tuple[T, ...]]):
    """A JSON array of nested records, read as a tuple."""

    def __init__(self, doc: str, record: type[Record]) -> None:
        super().__init__(doc, default=list)
        self.record = record

    def build(self, value: Any) -> Any:
        items = _as_sequence(value, self.label)
        return [_record_json(self.record, item, f"{self.label}[{i}]") for i, item in enumerate(items)]

    def check(self, raw: Any, path: str, problems: Problems) -> Any:
        here = _join(path, self.key)
        if type(raw) is not list:
            problems.add(here, f"expected array, got {json_type_name(raw)}")
            return raw
        check = self.record._check
        for index, item in enumerate(raw):
            checked = check(item, f"{here}[{index}]", problems)
            if checked is not item:
                raw[index] = checked
        return raw

    def read(self, obj: Record, raw: Any) -> tuple[T, ...]:
        wrap = self.record.from_raw
        return self.cached(obj, lambda: tuple(wrap(item) for item in raw))  # type: ignore[no-any-return]


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
        here = _join(path, self.key)
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


def rich_display(obj: Any, include: Any = None, exclude: Any = None) -> dict[str, str]:
    """IPython's mime bundle for ``obj`` from :mod:`heta_nb.render`, imported only now.

    Never raises: without a working renderer the bundle is just ``text/plain``.
    """
    try:
        from heta_nb.render import repr_mimebundle

        return repr_mimebundle(obj, include, exclude)
    except Exception:  # noqa: BLE001 - a repr must never raise
        try:
            return {"text/plain": repr(obj)}
        except Exception:  # noqa: BLE001
            return {"text/plain": f"<{type(obj).__name__}>"}


class RichDisplay:
    """Mixin: IPython rich display (text/plain + the HTML view), rendering imported lazily."""

    __slots__ = ()

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> dict[str, str]:
        """A concise ``text/plain`` and the static HTML view (never raises)."""
        return rich_display(self, include, exclude)

    def _repr_html_(self) -> str | None:
        """The HTML view alone (or a short note if it could not be rendered)."""
        return rich_display(self, ("text/html",)).get("text/html")
