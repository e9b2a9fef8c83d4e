"""What an evaluator is: Heta's protocol, and the base class of heta_nb's built-ins.

heta_nb's built-in evaluators subclass :class:`BuiltinEvaluator`: they score the
heta_nb ``QueryResponse`` synchronously (no coroutine per score), which is part of
why the runner is faster than Heta's.
"""

from __future__ import annotations

from typing import Any, Protocol, runtime_checkable

from heta_nb.model.query import QueryResponse
from heta_nb.model.report import EvaluationScore

__all__ = ["BuiltinEvaluator", "Evaluator", "response_data"]


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
        return self.score(case, response).raw

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
