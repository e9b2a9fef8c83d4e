"""The pure ``RunState`` reducer every display uses: ``reduce(state, event)`` and ``replay``.

It folds events into counts, per-mode running means, errors by type, rate and ETA;
same events, same state, no clock (times come from the events themselves).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

from heta_nb.llm_judges.totals import JudgeTotal, add_judge_score
from heta_nb.model.summary import EXACT_NUMBERS, numeric_value
from heta_nb.runner.events import (
    BuildFinished,
    BuildStarted,
    BuildStep,
    CaseFinished,
    CaseRecord,
    CasesFinished,
    Event,
    RunFinished,
    RunStarted,
    RunStatus,
    RunWarning,
    UnitStarted,
)

__all__ = ["ModeProgress", "RunState", "reduce", "replay"]


@dataclass(frozen=True)
class ModeProgress:
    """Running figures of one query mode."""

    done: int = 0
    errors: int = 0
    sums: Mapping[str, float] = field(default_factory=lambda: MappingProxyType({}))
    counts: Mapping[str, int] = field(default_factory=lambda: MappingProxyType({}))
    skipped_sums: Mapping[str, float] = field(default_factory=lambda: MappingProxyType({}))
    """Of ``sums``, the part from skipped scores (``metadata.skipped``; most runs have none)."""
    skipped_counts: Mapping[str, int] = field(default_factory=lambda: MappingProxyType({}))
    answered: bool = False
    """Whether any response so far carried an answer (or its events did not say)."""
    with_results: bool = False
    """Whether any response so far returned a result (or its events did not say)."""
    evaluator_errors: Mapping[str, int] = field(default_factory=lambda: MappingProxyType({}))
    """Per metric, the scores so far whose evaluator raised (value ``"error"``): not in the means."""

    def mean(self, metric: str) -> float | None:
        """Running mean of ``metric`` with Heta's semantics: skipped scores count (None before any value)."""
        count = self.counts.get(metric, 0)
        return self.sums[metric] / count if count else None

    def mean_scored(self, metric: str) -> float | None:
        """Running mean of the scored values of ``metric`` (skipped scores left out), the
        mean every report view shows first; None before any scored value."""
        count = self.counts.get(metric, 0) - self.skipped_counts.get(metric, 0)
        if count <= 0:
            return None
        return (self.sums[metric] - self.skipped_sums.get(metric, 0.0)) / count

    def not_applicable(self, metric: str) -> str:
        """Why the mode cannot produce ``metric`` so far ("" when it can): the report's rule
        (:meth:`~heta_nb.model.columns.ReportColumns.not_applicable`) on the cases seen. An
        answer metric when no response carried an answer, a retrieval metric when none
        returned a result, and only while every score of it is 0 (these built-in metrics
        are never negative, so a zero sum says so)."""
        if not self.counts.get(metric) or self.sums[metric] != 0:
            return ""
        from heta_nb.model.columns import required_input  # numpy: at display time, not on import

        need = required_input(metric)
        if need == "answer" and not self.answered:
            return "returns no answers"
        if need == "results" and not self.with_results:
            return "returns no retrieved results"
        return ""


@dataclass(frozen=True)
class RunState:
    """Everything a progress display shows, derived from the events alone."""

    status: RunStatus = "pending"
    report_id: str = ""
    knowledge_base_name: str = ""
    benchmark: Mapping[str, str] = field(default_factory=lambda: MappingProxyType({}))
    modes: tuple[str, ...] = ()
    metrics: tuple[str, ...] = ()
    total: int = 0
    done: int = 0
    """Results recorded, resumed ones included."""
    resumed: int = 0
    errors: int = 0
    errors_by_type: Mapping[str, int] = field(default_factory=lambda: MappingProxyType({}))
    last_errors: tuple[tuple[str, str, str, str], ...] = ()
    """Newest last: ``(mode, case_id, error_type, message)``, at most five."""
    per_mode: Mapping[str, ModeProgress] = field(default_factory=lambda: MappingProxyType({}))
    units: int = 0
    unit_index: int = -1
    unit_id: str | None = None
    build_steps: tuple[tuple[str, str], ...] = ()
    """``(step name, status)`` of the KB being built, in recipe order."""
    build_status: str | None = None
    warnings: tuple[str, ...] = ()
    started_t: float | None = None
    first_case_t: float | None = None
    last_t: float = 0.0
    error: str | None = None
    report_key: str | None = None
    judges: tuple[str, ...] = ()
    """The run's LLM judges (score names)."""
    judge_totals: Mapping[str, JudgeTotal] = field(default_factory=lambda: MappingProxyType({}))
    """Each judge's calls, tokens and cost so far (the same sums as :func:`judge_totals` of the report)."""

    @property
    def remaining(self) -> int:
        """Results still to record."""
        return max(0, self.total - self.done)

    @property
    def fraction(self) -> float:
        """Progress in [0, 1]."""
        return self.done / self.total if self.total else (1.0 if self.finished else 0.0)

    @property
    def finished(self) -> bool:
        """True once the run completed, was cancelled or failed."""
        return self.status in ("complete", "cancelled", "failed")

    @property
    def rate(self) -> float | None:
        """Results per second in this session, measured between the first and the
        latest finished result (so KB build time does not dilute it)."""
        fresh = self.done - self.resumed
        if self.first_case_t is None or fresh < 2:
            return None
        elapsed = self.last_t - self.first_case_t
        return (fresh - 1) / elapsed if elapsed > 0 else None

    @property
    def eta_s(self) -> float | None:
        """Seconds until done at the current rate (None until a rate is known)."""
        rate = self.rate
        if self.finished:
            return 0.0
        return self.remaining / rate if rate else None

    @property
    def elapsed_s(self) -> float:
        """Seconds since the run started."""
        return self.last_t - self.started_t if self.started_t is not None else 0.0

    def mean(self, mode: str, metric: str) -> float | None:
        """Running mean of one metric in one mode with Heta's semantics (skipped scores count)."""
        progress = self.per_mode.get(mode)
        return progress.mean(metric) if progress else None

    def mean_scored(self, mode: str, metric: str) -> float | None:
        """Running mean of the scored values of one metric in one mode (skipped scores out)."""
        progress = self.per_mode.get(mode)
        return progress.mean_scored(metric) if progress else None

    def evaluator_errors(self, mode: str, metric: str) -> int:
        """Scores of ``metric`` in ``mode`` so far whose evaluator raised."""
        progress = self.per_mode.get(mode)
        return progress.evaluator_errors.get(metric, 0) if progress else 0

    def not_applicable(self, mode: str, metric: str) -> str:
        """Why ``mode`` cannot produce ``metric`` (so far), or ""; see :meth:`ModeProgress.not_applicable`."""
        progress = self.per_mode.get(mode)
        return f"{mode} {reason}" if progress and (reason := progress.not_applicable(metric)) else ""


def _frozen(mapping: dict[str, Any]) -> Mapping[str, Any]:
    return MappingProxyType(mapping)


def _replace(state: RunState, **changes: Any) -> RunState:
    """``dataclasses.replace`` without re-running ``__init__`` (about 10x faster)."""
    new = object.__new__(RunState)
    fields = new.__dict__
    fields.update(state.__dict__)
    fields.update(changes)
    return new


def _fold_cases(state: RunState, cases: Iterable[CaseFinished | CaseRecord], t: float) -> RunState:
    """The state after a run of finished cases: one copy of the state, however many cases.

    ``cases`` holds :class:`CaseFinished` events or the engine's records (read
    straight from the result's JSON).
    """
    per_mode = dict(state.per_mode)
    modes = state.modes
    metrics = state.metrics
    done = state.done
    errors = state.errors
    by_type: dict[str, int] | None = None
    last_errors = state.last_errors
    # mode -> [done, errors, sums, counts, skipped sums, skipped counts, answered, with results,
    # evaluator errors], copied from the state on first use
    running: dict[str, list[Any]] = {}
    earliest = t
    pairs: Iterable[tuple[str, float | None]]
    skipped: tuple[tuple[str, float | None], ...]
    failure: tuple[str | None, str, str | None] | None
    for case in cases:
        if isinstance(case, tuple):  # an engine record: read the result's JSON
            data = case[1].raw
            mode = data["query_mode"]
            case_t = case[2]
            scores = data["scores"]
            pairs = ()
            skipped = ()
            error = data["error"]
            failure = (error["error_type"], data["case_id"], error["message"]) if error is not None else None
            response = data["response"]
            answered = response is not None and bool(response["answer"])
            with_results = response is not None and bool(response["results"])
        else:
            mode = case.mode
            case_t = case.t
            scores = ()
            pairs = case.scores.items()
            skipped = tuple((name, case.scores.get(name)) for name in case.skipped) if case.skipped else ()
            failure = None if case.ok else (case.error_type, case.case_id, case.error_message)
            answered = case.answered is not False  # not known: never call the metric n/a
            with_results = case.n_results is None or case.n_results > 0
        figures = running.get(mode)
        if figures is None:
            progress = per_mode.get(mode)
            if progress is None:
                progress = ModeProgress()
                if mode not in modes:
                    modes = (*modes, mode)
            figures = running[mode] = [
                progress.done,
                progress.errors,
                dict(progress.sums),
                dict(progress.counts),
                progress.skipped_sums,
                progress.skipped_counts,
                progress.answered,
                progress.with_results,
                progress.evaluator_errors,
            ]
        figures[0] += 1
        if answered:
            figures[6] = True
        if with_results:
            figures[7] = True
        sums = figures[2]
        counts = figures[3]
        for score in scores:  # a record's score JSON; a number adds to a running sum
            name = score["name"]
            value = score["value"]
            if type(value) in EXACT_NUMBERS and name in sums:  # the common case, first
                try:
                    sums[name] += value
                except OverflowError:  # an integer beyond the float range
                    sums[name] += numeric_value(value)
                counts[name] += 1
            else:
                pairs = (*pairs, (name, numeric_value(value)))
                if value == "error" and isinstance(score["metadata"].get("error"), Mapping):  # the evaluator raised
                    _count_error(figures, name)
            # Heta's skipped scores are 0.0 or False: only a zero score is looked at (cheap)
            if not value and score["metadata"].get("skipped") is True:
                skipped = (*skipped, (name, numeric_value(value)))
        for name, value in pairs:
            if value is not None:
                if name in sums:
                    sums[name] += value
                    counts[name] += 1
                else:
                    sums[name] = value
                    counts[name] = 1
            if name not in metrics:
                metrics = (*metrics, name)
        if skipped:  # rare: a skipped score's value leaves the scored mean
            _fold_skipped(figures, skipped)
        done += 1
        if failure is not None:
            figures[1] += 1
            errors += 1
            if by_type is None:
                by_type = dict(state.errors_by_type)
            error_type = failure[0] or "Error"
            by_type[error_type] = by_type.get(error_type, 0) + 1
            last_errors = (*last_errors, (mode, failure[1], error_type, failure[2] or ""))[-5:]
        if case_t > t:
            t = case_t
        elif case_t < earliest:
            earliest = case_t
    if not running:
        return state
    for mode, figures in running.items():
        mode_done, mode_errors, sums, counts, skip_sums, skip_counts, answered, results, failed = figures
        progress = object.__new__(ModeProgress)
        progress.__dict__.update(
            done=mode_done,
            errors=mode_errors,
            sums=_frozen(sums),
            counts=_frozen(counts),
            skipped_sums=skip_sums if isinstance(skip_sums, MappingProxyType) else _frozen(skip_sums),
            skipped_counts=skip_counts if isinstance(skip_counts, MappingProxyType) else _frozen(skip_counts),
            answered=answered,
            with_results=results,
            evaluator_errors=failed if isinstance(failed, MappingProxyType) else _frozen(failed),
        )
        per_mode[mode] = progress
    changes: dict[str, Any] = {
        "done": done,
        "per_mode": _frozen(per_mode),
        "metrics": metrics,
        "modes": modes,
        "last_t": max(state.last_t, t),
        "first_case_t": state.first_case_t if state.first_case_t is not None else earliest,
    }
    if by_type is not None:
        changes.update(errors=errors, errors_by_type=_frozen(by_type), last_errors=last_errors)
    return _replace(state, **changes)


def _count_error(figures: list[Any], name: str) -> None:
    """Count one evaluator error of metric ``name`` in ``figures`` (the mapping copied on first change)."""
    if not isinstance(figures[8], dict):
        figures[8] = dict(figures[8])
    figures[8][name] = figures[8].get(name, 0) + 1


def _fold_skipped(figures: list[Any], skipped: Iterable[tuple[str, float | None]]) -> None:
    """Add one case's skipped ``(metric, value)`` scores to the skipped sums and counts in
    ``figures`` (the mappings are copied on first change)."""
    if not isinstance(figures[4], dict):
        figures[4] = dict(figures[4])
        figures[5] = dict(figures[5])
    skip_sums = figures[4]
    skip_counts = figures[5]
    for name, value in skipped:
        if value is not None:
            skip_sums[name] = skip_sums.get(name, 0.0) + value
            skip_counts[name] = skip_counts.get(name, 0) + 1


def _fold_judges(state: RunState, cases: Iterable[CaseFinished | CaseRecord]) -> RunState:
    """Count the finished cases' judge scores in :attr:`RunState.judge_totals` (with :func:`add_judge_score`)."""
    names = frozenset(state.judges)
    totals = {name: dataclasses.replace(total) for name, total in state.judge_totals.items()}
    for case in cases:
        result = case[1] if isinstance(case, tuple) else case.result
        if result is None:
            continue
        for score in result.raw["scores"]:
            name = score["name"]
            if name in names:
                total = totals.get(name)
                if total is None:
                    total = totals[name] = JudgeTotal(name)
                add_judge_score(total, score)
    return _replace(state, judge_totals=_frozen(totals))


def reduce(state: RunState, event: Event) -> RunState:
    """The state after ``event`` (pure: ``state`` is not changed)."""
    replace = _replace
    kind = event.kind
    if kind == "cases_finished":
        assert isinstance(event, CasesFinished)
        records = event.records
        cases: Any = records if records is not None else event.cases
        folded = _fold_cases(state, cases, event.t)
        return _fold_judges(folded, cases) if state.judges else folded
    if kind == "case_finished":
        assert isinstance(event, CaseFinished)
        folded = _fold_cases(state, (event,), event.t)
        return _fold_judges(folded, (event,)) if state.judges else folded
    if kind == "run_started":
        assert isinstance(event, RunStarted)
        return replace(
            state,
            status="running",
            report_id=event.report_id,
            knowledge_base_name=event.knowledge_base_name,
            benchmark=_frozen(dict(event.benchmark)),
            modes=tuple(event.modes),
            metrics=tuple(event.evaluators),
            judges=tuple(getattr(event, "judges", ())),
            total=event.total,
            done=event.resumed,
            resumed=event.resumed,
            units=event.units,
            started_t=event.t,
            last_t=event.t,
        )
    if kind == "unit_started":
        assert isinstance(event, UnitStarted)
        return replace(state, unit_index=event.index, unit_id=event.unit_id, last_t=max(state.last_t, event.t))
    if kind == "build_started":
        assert isinstance(event, BuildStarted)
        return replace(
            state,
            build_steps=tuple((name, "pending") for name in event.steps),
            build_status="running",
            last_t=max(state.last_t, event.t),
        )
    if kind == "build_step":
        assert isinstance(event, BuildStep)
        steps = list(state.build_steps)
        if 0 <= event.index < len(steps):
            steps[event.index] = (steps[event.index][0], event.status)
        else:
            steps.append((event.name, event.status))
        return replace(state, build_steps=tuple(steps), last_t=max(state.last_t, event.t))
    if kind == "build_finished":
        assert isinstance(event, BuildFinished)
        return replace(state, build_status=event.status, last_t=max(state.last_t, event.t))
    if kind == "warning":
        assert isinstance(event, RunWarning)
        return replace(state, warnings=(*state.warnings, event.message), last_t=max(state.last_t, event.t))
    if kind == "run_finished":
        assert isinstance(event, RunFinished)
        return replace(
            state,
            status=event.status,
            error=event.error,
            report_key=event.report_key,
            total=event.total,
            # The run's own totals: a display that missed events (one attached late) catches up.
            done=max(state.done, event.done),
            errors=max(state.errors, event.errors),
            last_t=max(state.last_t, event.t),
        )
    return state


def replay(events: Iterable[Event], state: RunState | None = None) -> RunState:
    """Fold a sequence of events into a state."""
    current = state or RunState()
    for event in events:
        current = reduce(current, event)
    return current
