"""The runner's events: small frozen objects tagged by ``kind``, their JSON form, their delivery.

``to_dict``/``event_from_dict`` turn events into JSON lines (so any run can be recorded
and replayed); finished cases arrive in batches of at most 32 (:class:`CasesFinished`).
Each :class:`RunWarning` of a run also goes to :mod:`warnings` and :mod:`logging`
(:func:`announce_warning`).
"""

from __future__ import annotations

import contextlib
import dataclasses
import logging
import warnings
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from heta_nb._util.text import describe_error, one_line
from heta_nb.model.report import EvaluationCaseResult
from heta_nb.model.summary import numeric_value

__all__ = [
    "BuildFinished",
    "BuildStarted",
    "BuildStep",
    "CaseFinished",
    "CaseRecord",
    "CasesFinished",
    "Event",
    "HetaRunWarning",
    "RunFinished",
    "RunStarted",
    "RunStatus",
    "RunWarning",
    "UnitStarted",
    "announce_warning",
    "case_finished",
    "event_from_dict",
    "subscriber_guard",
    "to_dict",
]

RunStatus = Literal["pending", "running", "complete", "cancelled", "failed"]

logger = logging.getLogger("heta_nb.runner")
"""Where run warnings are logged (level WARNING)."""
if not any(isinstance(h, logging.NullHandler) for h in logging.getLogger("heta_nb").handlers):
    # the library's loggers print nothing unless the application configures logging (here, not in
    # heta_nb/__init__.py: ``import heta_nb`` stays light, and only the runner logs)
    logging.getLogger("heta_nb").addHandler(logging.NullHandler())


class HetaRunWarning(UserWarning):
    """A warning an evaluation run gave: something to know before trusting its numbers.

    The text is a :class:`RunWarning` event's message, also kept in the report's
    ``metadata.heta_nb.warnings`` and logged by the ``heta_nb.runner`` logger.
    """


@dataclass(frozen=True)
class RunStarted:
    """The run validated its inputs and is about to build or query."""

    report_id: str
    knowledge_base_name: str
    benchmark: Mapping[str, str]
    """``name``, ``version``, ``split`` and ``task_type``."""
    modes: tuple[str, ...]
    evaluators: tuple[str, ...]
    total: int
    """Case × mode results this run will have when complete (resumed ones included)."""
    resumed: int
    """Results taken over from a checkpoint."""
    units: int
    concurrency: int
    started_at: str
    t: float = 0.0
    """Seconds since the run started (monotonic)."""
    kind: Literal["run_started"] = "run_started"
    judges: tuple[str, ...] = ()
    """The evaluators that are LLM judges (their calls, tokens and cost are counted as cases finish)."""


@dataclass(frozen=True)
class UnitStarted:
    """A benchmark run unit starts (one KB per unit when a recipe is built)."""

    unit_id: str
    index: int
    knowledge_base_name: str
    cases: int
    t: float = 0.0
    kind: Literal["unit_started"] = "unit_started"


@dataclass(frozen=True)
class BuildStarted:
    """A knowledge base is being built from the recipe."""

    unit_id: str
    knowledge_base_name: str
    steps: tuple[str, ...]
    documents: int
    t: float = 0.0
    kind: Literal["build_started"] = "build_started"


@dataclass(frozen=True)
class BuildStep:
    """One recipe step changed status (``running``, ``succeeded``, ``failed``, ``skipped``)."""

    unit_id: str
    index: int
    name: str
    step_type: str
    status: str
    error: str | None = None
    t: float = 0.0
    kind: Literal["build_step"] = "build_step"


@dataclass(frozen=True)
class BuildFinished:
    """The KB build ended (``succeeded``, ``failed``, or ``reused`` when loaded).

    ``note``: what the build did instead of the usual, said with its line (e.g. document
    tokens counted as words offline), not a warning.
    """

    unit_id: str
    knowledge_base_name: str
    status: str
    seconds: float
    note: str | None = None
    t: float = 0.0
    kind: Literal["build_finished"] = "build_finished"


@dataclass(frozen=True)
class CaseFinished:
    """One case × mode is recorded (a response with scores, or an error).

    :func:`case_finished` builds it with positional arguments (cheaper when a
    subscriber reads a batch's ``cases``): keep the fields in this order.
    """

    unit_id: str
    case_id: str
    mode: str
    ok: bool
    latency_ms: float | None
    attempts: int
    scores: Mapping[str, float | None]
    """Each score's value as Heta's summary counts it (None for text scores)."""
    error_type: str | None = None
    error_message: str | None = None
    result: EvaluationCaseResult | None = field(default=None, compare=False, repr=False)
    """The full result (not serialized with the event; the checkpoint keeps it)."""
    t: float = 0.0
    kind: Literal["case_finished"] = "case_finished"
    skipped: tuple[str, ...] = ()
    """The metrics whose score has ``metadata.skipped`` true."""
    answered: bool | None = None
    """Whether the response carries an answer (None: not known, an older event)."""
    n_results: int | None = None
    """How many results the response returned (None: not known)."""


CaseRecord = tuple[str, EvaluationCaseResult, float]
"""What the engine hands a batch per case: ``(unit_id, result, t)``."""


class CasesFinished:
    """Cases recorded since the previous batch, in completion order.

    ``cases`` are :class:`CaseFinished` events. The engine passes ``records``
    instead (``(unit_id, result, t)`` per case, see :data:`CaseRecord`): the reducer
    reads those directly, and the per-case events are only built, once, when
    something reads ``cases``. Immutable, like the other events.
    """

    __slots__ = ("t", "_cases", "_records")
    kind: Literal["cases_finished"] = "cases_finished"
    t: float
    _cases: tuple[CaseFinished, ...] | None
    _records: tuple[CaseRecord, ...] | None

    def __init__(
        self, cases: Iterable[CaseFinished] = (), t: float = 0.0, *, records: tuple[CaseRecord, ...] | None = None
    ) -> None:
        object.__setattr__(self, "t", t)
        object.__setattr__(self, "_records", records)
        object.__setattr__(self, "_cases", None if records is not None else tuple(cases))

    @property
    def cases(self) -> tuple[CaseFinished, ...]:
        """One :class:`CaseFinished` per case, in completion order."""
        cases = self._cases
        if cases is None:
            cases = tuple(case_finished(*record) for record in self._records or ())
            object.__setattr__(self, "_cases", cases)
        return cases

    @property
    def records(self) -> tuple[CaseRecord, ...] | None:
        """The engine's ``(unit_id, result, t)`` per case, or None for a batch built from events."""
        return self._records

    def __setattr__(self, name: str, value: Any) -> None:
        raise dataclasses.FrozenInstanceError(f"cannot assign to field {name!r}")

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, CasesFinished):
            return NotImplemented
        return self.t == other.t and self.cases == other.cases

    __hash__ = None  # type: ignore[assignment]  # unhashable, as the frozen dataclasses with a mapping field are

    def __reduce__(self) -> tuple[Any, ...]:
        return (CasesFinished, (self.cases, self.t))

    def __repr__(self) -> str:
        return f"CasesFinished(cases=<{len(self.cases)} cases>, t={self.t!r})"


def case_finished(unit_id: str, result: EvaluationCaseResult, t: float) -> CaseFinished:
    """The :class:`CaseFinished` event of a recorded result."""
    data = result.raw
    error = data["error"]
    run_info = (data.get("metadata") or {}).get("heta_nb") or {}
    return CaseFinished(
        unit_id,
        data["case_id"],
        data["query_mode"],
        error is None,
        data["latency_ms"],
        int(run_info.get("attempts", 1)),
        {s["name"]: numeric_value(s["value"]) for s in data["scores"]},
        error["error_type"] if error else None,
        error["message"] if error else None,
        result,
        t,
        skipped=tuple(s["name"] for s in data["scores"] if (s["metadata"] or {}).get("skipped") is True),
        answered=bool(response["answer"]) if (response := data["response"]) is not None else False,
        n_results=len(response["results"]) if response is not None else 0,
    )


@dataclass(frozen=True)
class RunWarning:
    """Something the user should know before trusting the numbers."""

    code: str
    message: str
    t: float = 0.0
    kind: Literal["warning"] = "warning"


@dataclass(frozen=True)
class RunFinished:
    """The run ended: ``complete``, ``cancelled`` (partial report) or ``failed``."""

    status: RunStatus
    done: int
    total: int
    errors: int
    seconds: float
    report_key: str | None = None
    error: str | None = None
    t: float = 0.0
    kind: Literal["run_finished"] = "run_finished"


def announce_warning(event: RunWarning) -> None:
    """Log a run's warning (``heta_nb.runner``, WARNING) and issue it as a :class:`HetaRunWarning`.

    The warning is issued as from ``heta_nb:0`` without a registry: it prints as one line
    with no source line, and each run shows its warnings (none is suppressed as already shown
    by an earlier run). It never raises: an ``"error"`` filter (or a ``showwarning`` or log
    handler that fails) cannot stop a run midway and lose its cases; the warning is still
    kept in the report, listed by the widget and, unless that failed, logged.
    """
    message = one_line(event.message)
    with contextlib.suppress(Exception):  # a warning must never stop the run (see the docstring)
        logger.warning(message, extra={"heta_nb_warning_code": event.code})
    with contextlib.suppress(Exception):
        warnings.warn_explicit(message, HetaRunWarning, filename="heta_nb", lineno=0, module="heta_nb.runner")


Event = (
    RunStarted
    | UnitStarted
    | BuildStarted
    | BuildStep
    | BuildFinished
    | CaseFinished
    | CasesFinished
    | RunWarning
    | RunFinished
)

_KINDS: dict[str, type[Any]] = {
    str(cls.kind): cls
    for cls in (
        RunStarted,
        UnitStarted,
        BuildStarted,
        BuildStep,
        BuildFinished,
        CaseFinished,
        CasesFinished,
        RunWarning,
        RunFinished,
    )
}


def to_dict(event: Event) -> dict[str, Any]:
    """The JSON form of an event (``CaseFinished.result`` is left out)."""
    if isinstance(event, CasesFinished):
        return {"cases": [to_dict(case) for case in event.cases], "t": event.t, "kind": event.kind}
    data = {}
    for item in dataclasses.fields(event):
        if item.name == "result":
            continue
        value = getattr(event, item.name)
        if isinstance(value, tuple):
            value = list(value)
        elif isinstance(value, Mapping):
            value = dict(value)
        data[item.name] = value
    return data


def event_from_dict(data: Mapping[str, Any]) -> Event:
    """Rebuild an event from :func:`to_dict` output (for replays)."""
    cls = _KINDS.get(str(data.get("kind")))
    if cls is None:
        raise ValueError(f"unknown event kind {data.get('kind')!r}")
    if cls is CasesFinished:
        cases = [event_from_dict({**case, "kind": "case_finished"}) for case in data.get("cases") or ()]
        return CasesFinished([c for c in cases if isinstance(c, CaseFinished)], float(data.get("t") or 0.0))
    values = {}
    for item in dataclasses.fields(cls):
        if item.name in data:
            value = data[item.name]
            if isinstance(value, list):
                value = tuple(value)
            values[item.name] = value
    event: Event = cls(**values)
    return event


def subscriber_guard(subscribers: list[Callable[[Event], None]]) -> Callable[[Event], None]:
    """One emit function calling every subscriber; one that raises is warned about and detached.

    Any ``BaseException`` counts (``sys.exit()``, gevent's ``Timeout``, trio's ``Cancelled``);
    only a ``KeyboardInterrupt`` is let through (on the main thread it may be the user's).
    """

    def emit(event: Event) -> None:
        for subscriber in list(subscribers):
            try:
                subscriber(event)
            except KeyboardInterrupt:
                raise
            except BaseException as exc:  # noqa: BLE001 - a display must never stop the run
                subscribers.remove(subscriber)
                warnings.warn(
                    f"heta_nb: event subscriber {subscriber!r} raised {type(exc).__name__}: {describe_error(exc)}; "
                    "it was detached",
                    RuntimeWarning,
                    stacklevel=2,
                )

    return emit
