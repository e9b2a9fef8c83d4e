"""How anything evaluator-like becomes an evaluator, and the form the runner calls.

An evaluator has a ``name`` (the report's score name, so it must be unique per run)
and an ``evaluate(*, case, response)`` returning a score. The runner accepts:

* Heta evaluator objects unchanged (``name`` + ``async evaluate``);
* any object with a sync or async ``evaluate`` (``score`` is accepted too);
* a plain function ``f(case, response)`` (sync or async) returning a number, bool,
  string, mapping or ``EvaluationScore``;
* a name string such as ``"evidence_recall@5"`` (see :func:`heta_nb.evaluators.get`).

**What ``response`` is.** Built-ins score the response's report JSON. Every other
evaluator gets a response object with the documented shape (``mode``, ``results`` whose
items have ``id``, ``text``, ``score``, ``source``, ``metadata``; ``answer``,
``citations``, ``trace``, ``metadata``), whatever the KB returned:

* Heta's own ``QueryResponse`` when the KB returned one (a Heta ``KnowledgeBase`` does),
  passed unchanged, so Heta's evaluators behave exactly as in Heta's runner;
* otherwise heta_nb's :class:`~heta_nb.model.query.QueryResponse` of the normalised
  response (what the report records): for a KB returning a list of result dicts,
  ``response.results[0].source["document_id"]`` and ``response.answer`` work.

It is made once per case, shared by that case's evaluators, and only when one of them
is not a built-in (see :func:`evaluator_response`).

**The KB's raw object.** An evaluator whose signature has a parameter named ``raw`` (a
keyword, or the third positional parameter of ``f(case, response, raw)``) is also given
what the KB returned, unchanged (the very object: a list of dicts, a string, your own
class...). The signature is read once, when the evaluator is prepared.
"""

from __future__ import annotations

import inspect
import sys
from collections.abc import Callable
from typing import Any

from heta_nb._util.callables import accepts_keywords, is_async_callable
from heta_nb.evaluators.base import BuiltinEvaluator
from heta_nb.evaluators.registry import get
from heta_nb.evaluators.scores import as_score
from heta_nb.model.query import QueryResponse
from heta_nb.model.report import EvaluationScore

__all__ = [
    "KEYWORDS",
    "NATIVE",
    "POSITIONAL",
    "FunctionEvaluator",
    "PreparedEvaluator",
    "RAW_KEYWORD",
    "RAW_POSITIONAL",
    "as_evaluator",
    "evaluator_name",
    "evaluator_response",
    "raw_parameter",
]

_CALL_KEYWORDS = ("case", "response")
"""The keywords of Heta's ``evaluate(*, case, response)``."""

RAW_KEYWORD = "raw=keyword"
"""The evaluator takes the KB's raw return value as the keyword ``raw``."""
RAW_POSITIONAL = "raw=positional"
"""The evaluator takes the KB's raw return value as its third positional argument."""

_UNSET: Any = object()


def _takes_call_keywords(func: Callable[..., Any]) -> bool:
    """Whether ``func`` can be called as ``func(case=..., response=...)``.

    :func:`accepts_keywords`, except that a positional-only ``case`` or ``response``
    (``def f(case, response, /)``) cannot be passed by keyword.
    """
    if not accepts_keywords(func, _CALL_KEYWORDS):
        return False
    try:
        parameters = inspect.signature(func).parameters
    except (TypeError, ValueError):  # (accepts_keywords said False already)
        return False
    return not any(
        parameters[name].kind is inspect.Parameter.POSITIONAL_ONLY for name in _CALL_KEYWORDS if name in parameters
    )


def raw_parameter(func: Callable[..., Any], *, positional: bool) -> str | None:
    """How ``func`` takes the KB's raw return value: :data:`RAW_KEYWORD`, :data:`RAW_POSITIONAL` or None.

    Only a parameter named ``raw`` counts (``**kwargs`` does not: an evaluator written for
    Heta's ``evaluate(*, case, response, **kwargs)`` gets nothing it did not ask for).

    Args:
        func: The evaluator's function or bound ``evaluate`` method.
        positional: ``case`` and ``response`` are passed positionally; a ``raw`` among the
            first two positional parameters is then theirs, not the raw value's.

    Returns:
        None when it has no usable ``raw`` parameter, or its signature cannot be read.
    """
    try:
        parameters = list(inspect.signature(func).parameters.values())
    except (TypeError, ValueError):
        return None
    for index, parameter in enumerate(parameters):
        if parameter.name != "raw":
            continue
        kind = parameter.kind
        if kind is parameter.KEYWORD_ONLY:
            return RAW_KEYWORD
        if kind is parameter.POSITIONAL_OR_KEYWORD:
            if not positional:
                return RAW_KEYWORD
            if index == 2:
                return RAW_POSITIONAL
            return RAW_KEYWORD if index > 2 else None
        if kind is parameter.POSITIONAL_ONLY and positional and index == 2:
            return RAW_POSITIONAL
        return None
    return None


_heta_response_class: Any = None
"""heta-framework's ``QueryResponse`` class, once heta is imported (never imported here)."""


def _heta_response_type() -> Any:
    """Heta's ``QueryResponse`` class if heta-framework is imported, else None (no import: a
    response of Heta's class cannot exist before its module is imported)."""
    global _heta_response_class
    if _heta_response_class is None:
        module = sys.modules.get("heta_framework.kb")
        found = getattr(module, "QueryResponse", None) if module is not None else None
        if isinstance(found, type):
            _heta_response_class = found
    return _heta_response_class


def evaluator_response(raw_response: Any, response: QueryResponse | dict[str, Any]) -> Any:
    """The response a non-built-in evaluator gets (see the module docstring).

    Args:
        raw_response: What the KB returned.
        response: The normalised response: its report JSON, or heta_nb's QueryResponse of it.

    Returns:
        ``raw_response`` itself when it is Heta's ``QueryResponse`` (an instance of Heta's
        class) or heta_nb's; otherwise heta_nb's :class:`QueryResponse` wrapping
        ``response`` (not a copy).
    """
    kind = type(raw_response)
    if kind is _heta_response_class or kind is QueryResponse:  # (the common cases, first)
        return raw_response
    if isinstance(raw_response, QueryResponse):
        return raw_response
    heta = _heta_response_type()
    if heta is not None and isinstance(raw_response, heta):
        return raw_response
    if isinstance(response, QueryResponse):
        return response
    return QueryResponse.from_raw(response)


class FunctionEvaluator:
    """A plain function ``f(case, response)`` (sync or async) used as an evaluator.

    In a heta_nb run ``response`` is a response object with the documented shape (see
    :mod:`heta_nb.evaluators.adapters`): Heta's own ``QueryResponse`` when the KB returned
    one (a Heta ``KnowledgeBase``), otherwise heta_nb's
    :class:`~heta_nb.model.query.QueryResponse`, whatever the KB returned (a list of result
    dicts, a mapping, a string...), so ``response.results[0].source["document_id"]`` and
    ``response.answer`` work. A function that also wants the KB's raw return value (the very
    object) names a parameter ``raw``: ``f(case, response, raw)`` or
    ``f(*, case, response, raw)``. ``raw_as`` says how it is passed (None: not at all).
    Called by another runner (Heta's) without ``raw``, it gets ``response`` as ``raw``.
    """

    native = False

    def __init__(self, func: Callable[..., Any], name: str | None = None) -> None:
        self.func = func
        self.name = name or getattr(func, "__name__", None) or type(func).__name__
        if self.name == "<lambda>":
            raise ValueError("give a lambda evaluator a name: FunctionEvaluator(func, name='...')")
        self.is_async = is_async_callable(func)
        self.keywords = _takes_call_keywords(func)
        self.raw_as = raw_parameter(func, positional=not self.keywords)

    def __repr__(self) -> str:
        return f"FunctionEvaluator({self.name!r})"

    async def evaluate(self, *, case: Any, response: Any, raw: Any = _UNSET) -> Any:
        """Call the function (keyword or positional, as it accepts; ``raw`` too if it takes it)."""
        func, raw_as = self.func, self.raw_as
        if raw_as is None:
            result = func(case=case, response=response) if self.keywords else func(case, response)
        else:
            if raw is _UNSET:
                raw = response
            if self.keywords:
                result = func(case=case, response=response, raw=raw)
            elif raw_as is RAW_POSITIONAL:
                result = func(case, response, raw)
            else:
                result = func(case, response, raw=raw)
        if inspect.isawaitable(result):
            result = await result
        return result


NATIVE = "native"
"""A built-in: ``fn(case, response_json)``, synchronous, returns the score's JSON object."""
KEYWORDS = "keywords"
"""Heta's protocol: ``fn(case=case, response=response)`` (``response``: :func:`evaluator_response`)."""
POSITIONAL = "positional"
"""``fn(case, response)`` (``response``: :func:`evaluator_response`)."""


class PreparedEvaluator:
    """An evaluator normalised for the runner: a name and one way to call it.

    ``fn`` is the method to call and ``convention`` how (:data:`NATIVE`,
    :data:`KEYWORDS` or :data:`POSITIONAL`); the runner calls it directly, without a
    wrapper per call. Built-ins score the response's report JSON; the others get
    :func:`evaluator_response` (Heta's own ``QueryResponse`` when the KB returned one, so
    Heta's evaluators behave exactly as in Heta's runner; heta_nb's otherwise), made once
    per case. ``raw_as`` (:data:`RAW_KEYWORD`, :data:`RAW_POSITIONAL` or None) says how an
    evaluator that asks for the KB's raw return value gets it; such a call goes through
    :meth:`invoke`. ``is_async``: the result must be awaited; otherwise a non-native
    evaluator may still hand back an awaitable, which is awaited too.
    """

    __slots__ = ("name", "original", "is_async", "fn", "convention", "raw_as", "own_deadline")

    def __init__(self, original: Any) -> None:
        self.original = original
        self.name = evaluator_name(original)
        self.own_deadline = getattr(original, "own_deadline", False) is True
        """Its calls keep their own time limits (an LLM judge's): the run's evaluator timeout does not apply."""
        self.fn: Callable[..., Any]
        if isinstance(original, BuiltinEvaluator):
            self.fn = original.score_json
            self.convention = NATIVE
            self.is_async = False
            self.raw_as = None
            return
        method = getattr(original, "evaluate", None) or getattr(original, "score", None)
        if method is None:
            raise TypeError(f"{original!r} has no evaluate() method")
        self.fn = method
        if isinstance(original, FunctionEvaluator):
            self.is_async = True
        else:
            self.is_async = inspect.iscoroutinefunction(method)
        self.convention = KEYWORDS if _takes_call_keywords(method) else POSITIONAL
        if isinstance(original, FunctionEvaluator):  # its evaluate forwards raw as the function takes it
            self.raw_as = None if original.raw_as is None else RAW_KEYWORD
        else:
            self.raw_as = raw_parameter(method, positional=self.convention is POSITIONAL)

    @property
    def native(self) -> bool:
        """A heta_nb built-in (convention :data:`NATIVE`)."""
        return self.convention is NATIVE

    def invoke(self, case: Any, response: Any, raw_response: Any) -> Any:
        """Call a non-native evaluator with ``response`` (:func:`evaluator_response`), and
        ``raw_response`` if it takes ``raw`` (an awaitable when it is async)."""
        raw_as = self.raw_as
        if self.convention is KEYWORDS:
            if raw_as is None:
                return self.fn(case=case, response=response)
            return self.fn(case=case, response=response, raw=raw_response)
        if raw_as is None:
            return self.fn(case, response)
        if raw_as is RAW_POSITIONAL:
            return self.fn(case, response, raw_response)
        return self.fn(case, response, raw=raw_response)

    def call(self, case: Any, raw_response: Any, response: QueryResponse | dict[str, Any], *, given: Any = None) -> Any:
        """Invoke the evaluator (an awaitable when it is async; a built-in returns its score's JSON).

        Args:
            case: The benchmark case.
            raw_response: What the KB returned.
            response: The normalised response (its report JSON, or heta_nb's QueryResponse of it).
            given: :func:`evaluator_response` of the two, when the caller already made it
                (once per case); made here otherwise.
        """
        if self.convention is NATIVE:
            return self.fn(case, response.raw if isinstance(response, QueryResponse) else response)
        if given is None:
            given = evaluator_response(raw_response, response)
        return self.invoke(case, given, raw_response)

    async def run(
        self, case: Any, raw_response: Any, response: QueryResponse | dict[str, Any], *, given: Any = None
    ) -> EvaluationScore:
        """Invoke and await if needed, then convert the outcome to an EvaluationScore."""
        result = self.call(case, raw_response, response, given=given)
        if inspect.isawaitable(result):
            result = await result
        return as_score(result, self.name)


def evaluator_name(evaluator: Any) -> str:
    """The evaluator's score name, stripped (``name`` may be a method).

    Raises:
        TypeError: It has no name, or a blank one.
    """
    name = getattr(evaluator, "name", None)
    if callable(name):
        name = name()
    if not isinstance(name, str) or not name.strip():
        raise TypeError(f"evaluator {evaluator!r} has no usable name (a non-blank 'name' string)")
    return name.strip()


def as_evaluator(value: Any) -> Any:
    """Return ``value`` as an evaluator object (see the module docstring).

    Args:
        value: A built-in's name, an object with ``evaluate`` (or ``score``) and a
            ``name``, or a function.

    Returns:
        The built-in for a name, the object itself, or a :class:`FunctionEvaluator`.

    Raises:
        ValueError: An unknown name, or a lambda (it needs a name).
        TypeError: An object without a usable name, or nothing evaluator-like.
    """
    if isinstance(value, str):
        return get(value)
    if hasattr(value, "evaluate") or hasattr(value, "score"):
        evaluator_name(value)
        return value
    if callable(value):
        return FunctionEvaluator(value)
    raise TypeError(f"cannot use {type(value).__name__} {value!r} as an evaluator")
