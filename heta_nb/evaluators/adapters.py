"""How anything evaluator-like becomes an evaluator, and the form the runner calls.

An evaluator has a ``name`` (the report's score name, so it must be unique per run)
and an ``evaluate(*, case, response)`` returning a score. The runner accepts:

* Heta evaluator objects unchanged (``name`` + ``async evaluate``);
* any object with a sync or async ``evaluate`` (``score`` is accepted too);
* a plain function ``f(case, response)`` (sync or async) returning a number, bool,
  string, mapping or ``EvaluationScore``;
* a name string such as ``"evidence_recall@5"`` (see :func:`heta_nb.evaluators.get`).
"""

from __future__ import annotations

import inspect
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
    "as_evaluator",
    "evaluator_name",
]

_CALL_KEYWORDS = ("case", "response")
"""The keywords of Heta's ``evaluate(*, case, response)``."""


class FunctionEvaluator:
    """A plain function ``f(case, response)`` (sync or async) used as an evaluator."""

    native = False

    def __init__(self, func: Callable[..., Any], name: str | None = None) -> None:
        self.func = func
        self.name = name or getattr(func, "__name__", None) or type(func).__name__
        if self.name == "<lambda>":
            raise ValueError("give a lambda evaluator a name: FunctionEvaluator(func, name='...')")
        self.is_async = is_async_callable(func)
        self.keywords = accepts_keywords(func, _CALL_KEYWORDS)

    def __repr__(self) -> str:
        return f"FunctionEvaluator({self.name!r})"

    async def evaluate(self, *, case: Any, response: Any) -> Any:
        """Call the function (keyword or positional, as it accepts)."""
        result = self.func(case=case, response=response) if self.keywords else self.func(case, response)
        if inspect.isawaitable(result):
            result = await result
        return result


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
        self.name = evaluator_name(original)
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
        self.convention = KEYWORDS if accepts_keywords(method, _CALL_KEYWORDS) else POSITIONAL

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
