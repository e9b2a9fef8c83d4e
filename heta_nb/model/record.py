"""The immutable record machinery behind every report type: :class:`Record`, :class:`Field`,
validation :class:`Problems` and the lazy rich-display hook (the field kinds are in ``fields``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, ClassVar, Generic, TypeVar, overload

from heta_nb._util.text import shorten
from heta_nb.errors import ReportFormatError
from heta_nb.model.json import copy_json, dumps_compact, freeze, json_type_name, to_json_value
from heta_nb.model.views import view

__all__ = [
    "MISSING",
    "Field",
    "Problems",
    "Record",
    "RichDisplay",
    "TooManyProblems",
    "cached_on",
    "join_path",
    "rich_display",
]

T = TypeVar("T")
R = TypeVar("R", bound="Record")


class _Missing:
    def __repr__(self) -> str:
        return "MISSING"


MISSING: Any = _Missing()
"""A field's default when it has none (the field is required), and "key absent"."""


class TooManyProblems(Exception):
    """Raised by :meth:`Problems.add` past the limit; whoever starts a validation walk catches it."""


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
            raise TooManyProblems
        self.items.append(f"{path}: {message}" if path else message)

    def __bool__(self) -> bool:
        return bool(self.items)


def join_path(path: str, key: str) -> str:
    """The JSON path of ``key`` inside the object at ``path`` (``""`` is the top level)."""
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
        data: Mapping[str, Any]
        try:
            data = _raw_slot(obj)
        except AttributeError:  # a lazily read record: it knows some fields without opening
            data = obj._lazy_field(self.key)
        return self.read(obj, data[self.key])

    # -- behaviour each kind of field provides -------------------------------------
    def build(self, value: Any) -> Any:
        """Turn a Python value given to the constructor into its JSON value."""
        return value

    def check(self, raw: Any, path: str, problems: Problems) -> Any:
        """Validate a loaded JSON value; return it (or a completed copy of it)."""
        return raw

    def read(self, obj: Record, raw: Any) -> T:
        """Present the stored JSON value as the attribute's value."""
        value: T = raw  # check() or build() made sure it is one
        return value

    # -- helpers -------------------------------------------------------------------
    @property
    def label(self) -> str:
        """``Owner.field``, used in constructor error messages."""
        return f"{self.owner_name}.{self.key}"

    def default_json(self) -> Any:
        """A fresh JSON value for the default (mutable defaults are copied)."""
        return copy_json(self.default() if callable(self.default) else self.default)


def cached_on(record: Record, key: str, make: Callable[[], Any]) -> Any:
    """``make()``, computed once per record and kept under ``key`` (records never change).

    Args:
        record: The record the value is derived from.
        key: The value's name in the record's cache (a field's key, ``"modes"``...).
        make: Computes the value from ``record.raw``, on the first call only.

    Returns:
        The value (the same object on every call): a field's wrappers, a report's indexes.
    """
    cache = record._cache
    if cache is None:
        cache = {}
        object.__setattr__(record, "_cache", cache)
    try:
        return cache[key]
    except KeyError:
        value = cache[key] = make()
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
    """Base class of the immutable report records.

    A record keeps the JSON object it came from (:attr:`raw`) and reads its typed
    attributes from it on demand. That choice is what makes heta_nb lossless and cheap:

    * ``to_json()`` encodes ``raw`` directly, so a report Heta wrote is reproduced
      byte for byte, unknown keys from a newer Heta included, in their original order;
    * loading a report is ``json.loads`` plus one validation walk, and a loaded report
      uses no more memory than the parsed dict (wrapper objects are made lazily);
    * records built in Python (by the runner) normalise their inputs with Heta's rules
      (text stripped, blank text refused, JSON-safety) so they serialize as Heta would.

    Each record class declares its fields as :class:`Field` descriptors, in Heta's key
    order. A field knows its default, how to build its JSON value from a Python value,
    how to validate a loaded JSON value (reporting the JSON path), and how to present
    it as an attribute.

    ``raw`` is the record's JSON object as stored, shared and not copied: views and the
    runner read it directly, and nothing may change it. ``to_dict()`` gives a copy to
    change; :meth:`from_raw` wraps a JSON object that is already valid, :meth:`from_dict`
    checks and copies one.

    A report read from a file keeps its case results as JSON bytes until they are opened
    (:mod:`heta_nb.model.lazy`): such a record fills ``raw`` on first use (parsing), and
    reads the fields it knows without it (a case result's id, query and mode).
    """

    __slots__ = ("raw", "_cache")

    _fields: ClassVar[tuple[Field[Any], ...]] = ()
    raw: dict[str, Any]
    """The record's JSON object (read only; see the class docstring)."""
    _cache: dict[str, Any] | None

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        cls._fields = tuple(v for v in vars(cls).values() if isinstance(v, Field))

    # -- lazily read records ---------------------------------------------------------
    if not TYPE_CHECKING:  # hidden from type checkers, which would take every attribute as existing

        def __getattr__(self, name: str) -> Any:
            """Fill ``raw`` of a lazily read record on first use (only ``raw`` is ever missing)."""
            if name != "raw":
                raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")
            data = self._materialize()
            object.__setattr__(self, "raw", data)
            return data

    def _materialize(self) -> dict[str, Any]:
        """The JSON object of a lazily read record (parsed now); other records have ``raw``."""
        raise AttributeError(f"{type(self).__name__} has no raw JSON object")

    def _lazy_field(self, key: str) -> Mapping[str, Any]:
        """A mapping holding field ``key`` of a lazily read record (default: :meth:`_lazy_data`)."""
        return self._lazy_data()

    def _lazy_data(self) -> dict[str, Any]:
        """What a lazily read record holds in place of ``raw`` (default: ``raw``, parsed now)."""
        data: dict[str, Any] = self.raw
        return data

    def _data(self) -> dict[str, Any]:
        """``raw``, or for a lazily read report, its JSON object with the case results unopened."""
        try:
            data: dict[str, Any] = _raw_slot(self)
        except AttributeError:
            data = self._lazy_data()
        return data

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

        Args:
            data: The record's JSON object; it becomes :attr:`raw` itself (not a copy).

        Returns:
            The record, sharing ``data``.
        """
        obj = object.__new__(cls)
        object.__setattr__(obj, "raw", data)
        object.__setattr__(obj, "_cache", None)
        return obj

    @classmethod
    def check_json(cls, raw: Any, path: str, problems: Problems) -> Any:
        """Validate a loaded JSON object in place; return it (possibly completed).

        Args:
            raw: The JSON object (a ``dict`` from ``json.loads``); defaults are filled in.
            path: Its JSON path, for the messages (``""`` at the top level).
            problems: Collects what is wrong; it raises :class:`TooManyProblems` when full.

        Returns:
            ``raw``, or a copy in Heta's key order with absent defaults filled in.
        """
        if type(raw) is not dict:
            problems.add(path, f"expected object, got {json_type_name(raw)}")
            return raw
        completed = False
        for field in cls._fields:
            value = raw.get(field.key, MISSING)
            if value is MISSING:
                if field.default is MISSING:
                    problems.add(join_path(path, field.key), "missing required field")
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

    @staticmethod
    def is_canonical(raw: Any) -> bool:
        """A quick test that :meth:`check_json` would accept ``raw`` unchanged: every field
        present and valid. False only means "look closer" (the default says it always)."""
        return False

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
        where = source or f"<{cls.__name__} dict>"
        try:
            plain = to_json_value(data, "")
        except TypeError as exc:
            raise ReportFormatError(where, [str(exc).lstrip(": ")]) from None
        problems = Problems()
        try:
            checked = cls.check_json(plain, "", problems)
        except TooManyProblems:
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
        mine, theirs = self.raw, other.raw
        return bool(mine == theirs) or _json_equal(mine, theirs)

    __hash__ = None  # type: ignore[assignment]  # holds mappings, like Heta's frozen dataclasses

    def __reduce__(self) -> tuple[Any, ...]:
        return (type(self).from_raw, (self.raw,))

    def __repr__(self) -> str:
        shown = []
        for field in self._fields[:3]:
            value = field.__get__(self)
            if isinstance(value, str):
                shown.append(f"{field.key}={shorten(value, 40)!r}")
        return f"{type(self).__name__}({', '.join(shown)})"

    def replace(self: R, **changes: Any) -> R:
        """Return a copy with some fields changed (unknown keys are kept)."""
        names = {field.key for field in self._fields}
        unknown = set(changes) - names
        if unknown:
            raise TypeError(f"{type(self).__name__} has no field(s): {', '.join(sorted(unknown))}")
        data = dict(self._data())
        for field in self._fields:
            if field.key in changes:
                value = changes[field.key]
                if value is None and field.default not in (MISSING, None):
                    data[field.key] = field.default_json()
                else:
                    data[field.key] = field.build(value)
        self._check_built(data)
        return type(self)._from_data(data)

    @classmethod
    def _from_data(cls: type[R], data: dict[str, Any]) -> R:
        """A record of what :meth:`_data` gave, changed (a lazily read report stays lazy)."""
        return cls.from_raw(data)

    @property
    def extra(self) -> Mapping[str, Any]:
        """Keys this version of heta_nb does not know (kept and written back unchanged)."""
        names = {field.key for field in self._fields}
        frozen: Mapping[str, Any] = freeze({k: v for k, v in self._data().items() if k not in names})
        return frozen

    def to_dict(self) -> dict[str, Any]:
        """A deep copy of the serialized form (Heta's ``to_dict()`` shape)."""
        copied: dict[str, Any] = copy_json(self.raw)
        return copied

    def to_json(self) -> str:
        """Heta's compact JSON encoding of this record."""
        return dumps_compact(self.raw)


_raw_slot: Callable[[Record], dict[str, Any]] = Record.__dict__["raw"].__get__
"""``record.raw`` where it is set; AttributeError (never parsing) for a lazily read record."""


def rich_display(obj: Any, include: Any = None, exclude: Any = None) -> dict[str, str]:
    """IPython's mime bundle for ``obj`` from :mod:`heta_nb.render`, imported only now (by
    name, through :mod:`heta_nb.model.views`).

    Never raises: without a working renderer the bundle is just ``text/plain``.
    """
    try:
        bundle: dict[str, str] = view("repr_mimebundle")(obj, include, exclude)
        return bundle
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
