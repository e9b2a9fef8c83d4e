"""The state of a sweep as its views show it: one :class:`PairStatus` per pair, folded from updates.

Workers (threads, processes or Dask workers) send small plain-dict updates; the driver
folds them with :func:`apply_update` into a :class:`SweepState`, stamping them with its
own clock (worker clocks are never compared). Pure: the same updates at the same times
give the same state.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any, Literal

__all__ = ["FINISHED", "PairPhase", "PairStatus", "SweepState", "apply_update"]

PairPhase = Literal["queued", "building", "running", "done", "reused", "failed", "cancelled"]
FINISHED: frozenset[str] = frozenset({"done", "reused", "failed", "cancelled"})
"""Phases a pair does not leave."""


@dataclass(frozen=True)
class PairStatus:
    """Where one (recipe, benchmark) pair is."""

    index: int
    recipe: str
    benchmark: str
    phase: PairPhase = "queued"
    done: int = 0
    """Results recorded (resumed ones included)."""
    total: int = 0
    errors: int = 0
    resumed: int = 0
    step: str | None = None
    """The recipe step being built (``building``), else None."""
    message: str | None = None
    """Why it failed, or what was reused."""
    started: float | None = None
    """Driver time the pair left the queue."""
    running_since: float | None = None
    """Driver time it started querying (rates leave the KB build out)."""
    finished: float | None = None
    report_key: str | None = None
    seq: int = 0
    """The newest worker update folded (updates may arrive out of order, e.g. from Dask)."""

    @property
    def is_finished(self) -> bool:
        """True once done, reused, failed or cancelled."""
        return self.phase in FINISHED

    def elapsed(self, now: float) -> float:
        """Seconds since the pair started (0 while queued)."""
        if self.started is None:
            return 0.0
        return (self.finished if self.finished is not None else now) - self.started

    def remaining_s(self, now: float) -> float | None:
        """Seconds this running pair still needs at its current rate (None until known)."""
        if self.is_finished:
            return 0.0
        fresh = self.done - self.resumed
        if self.phase != "running" or self.running_since is None or fresh < 1 or self.total <= 0:
            return None
        spent = now - self.running_since
        if spent <= 0:
            return None
        return (self.total - self.done) * spent / fresh


@dataclass(frozen=True)
class SweepState:
    """Every pair's status, the executor and the overall figures."""

    pairs: tuple[PairStatus, ...]
    executor: str = ""
    """How pairs run, in words: ``"2 processes"``, ``"Dask (2 workers)"``, ``"1 thread"``..."""
    workers: int = 1
    dashboard: str | None = None
    """The Dask dashboard's address, when pairs run on Dask."""
    started: float = 0.0
    now: float = 0.0

    def count(self, *phases: str) -> int:
        """Pairs in any of ``phases``."""
        return sum(1 for p in self.pairs if p.phase in phases)

    @property
    def finished(self) -> bool:
        """True when no pair is queued or running."""
        return all(p.is_finished for p in self.pairs)

    @property
    def elapsed_s(self) -> float:
        """Seconds since the sweep started."""
        return max(0.0, self.now - self.started)

    @property
    def eta_s(self) -> float | None:
        """Seconds until every pair is finished (None until a rate is known).

        Running pairs at their current rate; each queued pair as long as the mean
        finished (or projected) pair, spread over the workers.
        """
        if self.finished:
            return 0.0
        now = self.now
        running = [p for p in self.pairs if p.phase in ("building", "running")]
        queued = self.count("queued")
        left = [p.remaining_s(now) for p in running]
        durations = [p.elapsed(now) for p in self.pairs if p.phase == "done"]
        durations += [p.elapsed(now) + r for p, r in zip(running, left) if r is not None]
        if any(r is None for r in left) and not durations:
            return None
        typical = sum(durations) / len(durations) if durations else 0.0
        known = [r if r is not None else max(0.0, typical - p.elapsed(now)) for p, r in zip(running, left)]
        work = sum(known) + queued * typical
        return max(max(known, default=0.0), work / max(1, self.workers))


def apply_update(state: SweepState, update: Mapping[str, Any], now: float) -> SweepState:
    """The state after one worker update (``{"pair": i, "phase": ..., "done": ..., ...}``).

    Args:
        state: the current state.
        update: the update; unknown keys are ignored, a finished pair is not reopened.
        now: the driver's clock when it arrived.

    Returns:
        The new state.
    """
    index = int(update["pair"])
    pairs = list(state.pairs)
    pair = pairs[index]
    seq = update.get("seq")
    if pair.is_finished or (seq is not None and int(seq) <= pair.seq):
        return replace(state, now=max(state.now, now))
    phase = update.get("phase", pair.phase)
    changes: dict[str, Any] = {"phase": phase}
    if seq is not None:
        changes["seq"] = int(seq)
    for key in ("done", "total", "errors", "resumed"):
        if key in update:
            changes[key] = int(update[key])
    for key in ("step", "message", "report_key"):
        if key in update:
            changes[key] = update[key]
    if phase != "queued" and pair.started is None:
        changes["started"] = now
    if phase == "running" and pair.running_since is None:
        changes["running_since"] = now  # querying starts: rates leave the KB build out
    if phase in FINISHED:
        changes["finished"] = now
        changes["step"] = None
    pairs[index] = replace(pair, **changes)
    return replace(state, pairs=tuple(pairs), now=max(state.now, now))
