"""One case result of a report (a case × query mode) with its scores or its error."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from heta_nb.model.fields import Flag, Items, JsonObject, Nested, Number, ScoreValue, Text
from heta_nb.model.query import QueryResponse
from heta_nb.model.record import Problems, Record, RichDisplay
from heta_nb.model.summary import numeric_value
from heta_nb.model.valid import is_canonical_result

__all__ = ["EvaluationCaseResult", "EvaluationError", "EvaluationScore"]


class EvaluationScore(RichDisplay, Record):
    """The score one evaluator gave one response."""

    __slots__ = ()

    name: Text[str] = Text("Evaluator name, e.g. ``evidence_recall@5`` (the summary key suffix).")
    value: ScoreValue = ScoreValue(
        "Score value: number, bool, or non-blank string (Heta does not check the type; heta_nb does)."
    )
    passed: Flag[bool | None] = Flag(
        "Pass/fail verdict, or null when the metric has none.", optional=True, default=None
    )
    metadata: JsonObject = JsonObject("Evaluator details (matched ids, ``skipped`` and ``reason``...).")

    def __init__(
        self,
        *,
        name: str,
        value: float | bool | str,
        passed: bool | None = None,
        metadata: Mapping[str, Any] | None = None,
    ) -> None:
        self._assign({"name": name, "value": value, "passed": passed, "metadata": metadata})

    @property
    def numeric(self) -> float | None:
        """The value as Heta's summary counts it: bool -> 1.0/0.0, number -> float, str -> None."""
        return numeric_value(self.raw["value"])

    @property
    def skipped(self) -> bool:
        """True when the evaluator had nothing to score (``metadata.skipped``).

        Heta still records a 0.0/False value for skipped scores and averages it in.
        """
        return self.raw["metadata"].get("skipped") is True


class EvaluationError(Record):
    """Why one case × mode has no response."""

    __slots__ = ()

    message: Text[str] = Text("Error message (``str(exc)`` or the class name).")
    error_type: Text[str] = Text("Unqualified exception class name, e.g. ``LookupError``.")
    retryable: Flag[bool] = Flag("Whether retrying could succeed (Heta 0.1.2 never sets it).", default=False)
    metadata: JsonObject = JsonObject("Details (heta_nb adds ``traceback``, ``attempts``...).")

    def __init__(
        self,
        *,
        message: str,
        error_type: str,
        retryable: bool = False,
        metadata: Mapping[str, Any] | None = None,
    ) -> None:
        self._assign({"message": message, "error_type": error_type, "retryable": retryable, "metadata": metadata})


class EvaluationCaseResult(RichDisplay, Record):
    """One benchmark case × one query mode: a response with scores, or an error."""

    __slots__ = ()

    case_id: Text[str] = Text("Benchmark case id.")
    query: Text[str] = Text("The case's query text (not an engine's rewrite).")
    query_mode: Text[str] = Text("Query mode that was called.")
    scores: Items[EvaluationScore] = Items("Scores, in evaluator order (empty for errors).", EvaluationScore)
    response: Nested[QueryResponse | None] = Nested("The response, or null for an error.", QueryResponse, optional=True)
    latency_ms: Number[float | None] = Number(
        "Query plus evaluation time in milliseconds (Heta includes evaluator time).",
        optional=True,
        minimum=0,
        default=None,
    )
    error: Nested[EvaluationError | None] = Nested("The error, or null.", EvaluationError, optional=True)
    metadata: JsonObject = JsonObject("``benchmark_run_unit`` and the per-unit ``knowledge_base_name``.")

    def __init__(
        self,
        *,
        case_id: str,
        query: str,
        query_mode: str,
        scores: Iterable[EvaluationScore | Mapping[str, Any]] = (),
        response: QueryResponse | Mapping[str, Any] | None = None,
        latency_ms: float | None = None,
        error: EvaluationError | Mapping[str, Any] | None = None,
        metadata: Mapping[str, Any] | None = None,
    ) -> None:
        self._assign(
            {
                "case_id": case_id,
                "query": query,
                "query_mode": query_mode,
                "scores": scores,
                "response": response,
                "latency_ms": latency_ms,
                "error": error,
                "metadata": metadata,
            }
        )

    def _check_built(self, data: dict[str, Any]) -> None:
        if data["response"] is None and data["error"] is None:
            raise ValueError("EvaluationCaseResult: either response or error must be set")

    @classmethod
    def _check_rules(cls, raw: dict[str, Any], path: str, problems: Problems) -> None:
        if raw.get("response") is None and raw.get("error") is None:
            problems.add(path, "either response or error must be set")

    is_canonical = staticmethod(is_canonical_result)

    # -- a case result of a lazily read report (heta_nb.model.lazy) --------------------
    @classmethod
    def _lazy(cls, results: Any, row: int) -> EvaluationCaseResult:
        """Case result ``row`` of ``results`` (a ``LazyResults``), parsed when first opened."""
        obj = object.__new__(cls)
        object.__setattr__(obj, "_cache", {_LAZY: (results, row)})
        return obj

    def _materialize(self) -> dict[str, Any]:
        cache = self._cache
        if not cache or _LAZY not in cache:
            return super()._materialize()
        results, row = cache[_LAZY]
        loaded: dict[str, Any] = results.load(row)
        return loaded

    def _lazy_field(self, key: str) -> Mapping[str, Any]:
        if key in _LIGHT_FIELDS:
            results, row = self._cache[_LAZY]  # type: ignore[index]
            return {key: results.light(row, key)}
        return self.raw

    def _light(self, key: str) -> Any:
        """``ok`` or ``unit_id`` of a lazily read case result, without parsing it; else ``_HEAVY``."""
        cache = self._cache
        if cache is None or _LAZY not in cache:
            return _HEAVY
        results, row = cache[_LAZY]
        return results.light(row, key)

    @property
    def ok(self) -> bool:
        """True when the case produced a response (no error)."""
        light = self._light("ok")
        return bool(light) if light is not _HEAVY else self.raw["error"] is None

    @property
    def status(self) -> str:
        """``"ok"`` or ``"error"``."""
        return "ok" if self.ok else "error"

    def score(self, name: str) -> EvaluationScore | None:
        """The score named ``name``, or None."""
        for score in self.scores:
            if score.name == name:
                return score
        return None

    @property
    def unit_id(self) -> str | None:
        """The benchmark run unit this result belongs to (``metadata.benchmark_run_unit``)."""
        unit = self._light("unit_id")
        if unit is _HEAVY:
            unit = self.raw["metadata"].get("benchmark_run_unit")
        return unit if isinstance(unit, str) else None


_LAZY = "_lazy"
"""The key of a lazily read case result's ``(LazyResults, row)`` in its ``_cache``."""

_LIGHT_FIELDS = frozenset(("case_id", "query", "query_mode"))
"""Fields a lazily read case result gives without being parsed."""

_HEAVY: Any = object()
"""What :meth:`EvaluationCaseResult._light` says of a record that is not lazily read."""
