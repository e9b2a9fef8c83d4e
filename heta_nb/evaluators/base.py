"""What an evaluator is, and how anything evaluator-like becomes one.

An evaluator has a ``name`` (the report's score name, so it must be unique per run)
and an ``evaluate(*, case, response)`` returning a score. The runner accepts:

* Heta evaluator objects unchanged (``name`` + ``async evaluate``);
* any object with a sync or async ``evaluate`` (``score`` is accepted too);
* a plain function ``f(case, response)`` (sync or async) returning a number, bool,
  string, mapping or ``EvaluationScore``;
* a name string such as ``"evidence_recall@5"`` (see :func:`heta_nb.evaluators.get`).

heta_nb's built-in evaluators subclass :class:`BuiltinEvaluator`: they score the
heta_nb ``QueryResponse`` synchronously (no coroutine per score), which is part of
why the runner is faster than Heta's.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Mapping
from typing import Any, Protocol, runtime_checkable

from heta_nb.model.json import dict_is_json_object
from heta_nb.model.query import QueryResponse
from heta_nb.model.report import EvaluationScore

__all__ = [
    "BuiltinEvaluator",
    "Evaluator",
    "FunctionEvaluator",
    "PreparedEvaluator",
    "as_evaluator",
    "as_score",
    "response_data",
    "score_data",
]


@runtime_checkable
class Evaluator(Protocol):
    """Heta's ``BenchmarkEvaluatorProtocol``: a name and an async evaluate."""

    @property
    def name(self) -> str:  # pragma: no cover - protocol
        """The score name written to the report."""
        ...

    async def evaluate(self, *, case: Any, response: Any) -> Any:  # pragma: no cover - protocol
        """Score one response for one case."""
        ...


def response_data(response: Any) -> dict[str, Any]:
    """The serialized (JSON) form of a response, converting heta objects if needed."""
    if isinstance(response, QueryResponse):
        return response.raw
    return QueryResponse.coerce(response).raw


class BuiltinEvaluator:
    """Base class of heta_nb's own evaluators: a synchronous score of JSON data.

    A subclass implements :meth:`score_json`, which returns the score's JSON object
    (the runner records it as it is); :meth:`score` wraps it. Older subclasses that
    override only :meth:`score` still work.
    """

    name: str = "builtin"
    native = True
    """The runner passes the response's report JSON (not the KB's raw object)."""

    def score_json(self, case: Any, response: dict[str, Any]) -> dict[str, Any]:
        """Score the serialized response ``response`` for ``case``: the score's JSON object."""
        if type(self).score is BuiltinEvaluator.score:  # pragma: no cover - a subclass implements one
            raise NotImplementedError
        return self.score(case, response).raw  # type: ignore[no-any-return]

    def score(self, case: Any, response: dict[str, Any]) -> EvaluationScore:
        """Score the serialized response ``response`` for ``case``."""
        return EvaluationScore.from_raw(self.score_json(case, response))

    async def evaluate(self, *, case: Any, response: Any) -> EvaluationScore:
        """Heta's evaluator protocol, so built-ins also work inside Heta's own runner."""
        return self.score(case, response_data(response))

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.name!r})"

    def _skipped(self, value: float | bool, reason: str) -> dict[str, Any]:
        return {
            "name": self.name,
            "value": value,
            "passed": None,
            "metadata": {"skipped": True, "reason": reason},
        }


class FunctionEvaluator:
    """A plain function ``f(case, response)`` (sync or async) used as an evaluator."""

    native = False

    def __init__(self, func: Callable[..., Any], name: str | None = None) -> None:
        self.func = func
        self.name = name or getattr(func, "__name__", None) or type(func).__name__
        if self.name == "<lambda>":
            raise ValueError("give a lambda evaluator a name: FunctionEvaluator(func, name='...')")
        self.is_async = is_async_callable(func)
        self.keywords = _accepts_keywords(func)

    def __repr__(self) -> str:
        return f"FunctionEvaluator({self.name!r})"

    async def evaluate(self, *, case: Any, response: Any) -> Any:
        """Call the function (keyword or positional, as it accepts)."""
        result = self.func(case=case, response=response) if self.keywords else self.func(case, response)
        if inspect.isawaitable(result):
            result = await result
        return result


def is_async_callable(func: Any) -> bool:
    """True for ``async def`` functions and objects whose ``__call__`` is ``async def``."""
    return inspect.iscoroutinefunction(func) or inspect.iscoroutinefunction(type(func).__call__)


def _accepts_keywords(func: Callable[..., Any]) -> bool:
    try:
        parameters = inspect.signature(func).parameters
    except (TypeError, ValueError):
        return False
    names = set(parameters)
    return {"case", "response"} <= names or any(p.kind is p.VAR_KEYWORD for p in parameters.values())


NATIVE = "native"
"""A built-in: ``fn(case, response_json)``, synchronous, returns the score's JSON object."""
KEYWORDS = "keywords"
"""Heta's protocol: ``fn(case=case, response=raw_response)``."""
POSITIONAL = "positional"
"""``fn(case, raw_response)``."""


class PreparedEvaluator:
    """An evaluator normalised for the runner: a name and one way to call it.

    ``fn`` is the method to call and ``convention`` how (:data:`NATIVE`,
    :data:`KEYWORDS` or :data:`POSITIONAL`); the runner calls it directly, without a
    wrapper per call. ``raw_response`` is what the KB returned (Heta evaluators get
    Heta's own objects, so they behave exactly as in Heta's runner); built-ins score
    the response's report JSON. ``is_async``: the result must be awaited; otherwise
    a non-native evaluator may still hand back an awaitable, which is awaited too.
    """

    __slots__ = ("name", "original", "is_async", "fn", "convention")

    def __init__(self, original: Any) -> None:
        self.original = original
        self.name = _evaluator_name(original)
        self.fn: Callable[..., Any]
        if isinstance(original, BuiltinEvaluator):
            self.fn = original.score_json
            self.convention = NATIVE
            self.is_async = False
            return
        method = getattr(original, "evaluate", None) or getattr(original, "score", None)
        if method is None:
            raise TypeError(f"{original!r} has no evaluate() method")
        self.fn = method
        if isinstance(original, FunctionEvaluator):
            self.is_async = True
        else:
            self.is_async = inspect.iscoroutinefunction(method)
        self.convention = KEYWORDS if _accepts_keywords(method) else POSITIONAL

    @property
    def native(self) -> bool:
        """A heta_nb built-in (convention :data:`NATIVE`)."""
        return self.convention is NATIVE

    def call(self, case: Any, raw_response: Any, response: QueryResponse | dict[str, Any]) -> Any:
        """Invoke the evaluator (an awaitable when it is async; a built-in returns its score's JSON)."""
        if self.convention is NATIVE:
            return self.fn(case, response.raw if isinstance(response, QueryResponse) else response)
        if self.convention is KEYWORDS:
            return self.fn(case=case, response=raw_response)
        return self.fn(case, raw_response)

    async def run(self, case: Any, raw_response: Any, response: QueryResponse | dict[str, Any]) -> EvaluationScore:
        """Invoke and await if needed, then convert the outcome to an EvaluationScore."""
        result = self.call(case, raw_response, response)
        if inspect.isawaitable(result):
            result = await result
        return as_score(result, self.name)


def _evaluator_name(evaluator: Any) -> str:
    name = getattr(evaluator, "name", None)
    if callable(name):
        name = name()
    if not isinstance(name, str) or not name.strip():
        raise TypeError(f"evaluator {evaluator!r} has no usable name (a non-blank 'name' string)")
    return name.strip()


def as_evaluator(value: Any) -> Any:
    """Return ``value`` as an evaluator object (see the module docstring)."""
    if isinstance(value, str):
        from heta_nb.evaluators.registry import get

        return get(value)
    if hasattr(value, "evaluate") or hasattr(value, "score"):
        _evaluator_name(value)
        return value
    if callable(value):
        return FunctionEvaluator(value)
    raise TypeError(f"cannot use {type(value).__name__} {value!r} as an evaluator")


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


_SCORE_FIELDS = ("name", "value", "passed", "metadata")


def _is_heta_score_type(kind: type) -> bool:
    if (
        kind.__name__ == "EvaluationScore"
        and kind.__module__.startswith("heta_framework.")
        and dict_is_json_object(kind, _SCORE_FIELDS)
    ):
        _HETA_SCORE_TYPES.add(kind)
        return True
    return False


_PLAIN_VALUES = frozenset((float, int, bool, str))
NOT_NUMPY: Any = object()
"""What :func:`numpy_item` returns for anything but a numpy bool or number scalar."""
_NUMPY_ITEMS = frozenset((bool, int, float))


def numpy_item(value: Any) -> Any:
    """``value.item()`` (a plain bool, int or float) for a numpy scalar, else ``NOT_NUMPY``.

    ``np.bool_`` becomes ``bool``, ``np.integer`` ``int`` and ``np.floating`` ``float``
    (NaN stays NaN). numpy is not imported: a numpy scalar is an object whose type
    comes from the ``numpy`` module, derives from ``numpy.generic`` (so arrays, even
    0-d ones, are not scalars) and has ``item()``. Other scalars (complex, datetime,
    strings, ``longdouble``) are not converted either. Only for the slow paths: the
    callers try their exact type checks first.
    """
    kind = type(value)
    if kind.__module__ != "numpy" or not hasattr(value, "item"):
        return NOT_NUMPY
    if not any(base.__name__ == "generic" and base.__module__ == "numpy" for base in kind.__mro__):
        return NOT_NUMPY
    try:
        item = value.item()
    except Exception:  # noqa: BLE001 - not a scalar we understand
        return NOT_NUMPY
    return item if type(item) in _NUMPY_ITEMS else NOT_NUMPY


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
