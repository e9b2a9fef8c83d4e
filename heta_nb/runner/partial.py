"""The report of the cases finished so far, while the run goes on (``run.partial_report()``).

The engine records results on its own event loop (the run's thread). A snapshot of them is
taken on that loop (``call_soon_threadsafe``), so it never sees a batch half recorded, and
the report is built on the caller's thread, so the run is not held up while it is. The report
is marked as a cancelled run's report is: ``metadata.heta_nb.status`` is ``"running"``, with
its ``done``, ``total`` and ``remaining``, plus ``partial: {"done", "total"}``. It has no
``report_key`` and is never written to the store: the store only ever holds the final report.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from heta_nb.model.report import EvaluationCaseResult, EvaluationReport
from heta_nb.runner.assemble import RunTally, build_report

if TYPE_CHECKING:  # pragma: no cover
    from heta_nb.runner.engine import Engine
    from heta_nb.runner.plan import RunPlan

__all__ = ["PARTIAL_KEY", "WAIT_SLICE", "Snapshot", "build_partial", "is_partial", "partial_report", "take_snapshot"]

PARTIAL_KEY = "partial"
"""The key in ``metadata.heta_nb`` that marks a report of a run still going: ``{"done", "total"}``."""

WAIT_SLICE = 0.05
"""Longest single wait (seconds) for the run's loop; between two, the wait checks the run has not ended."""


@dataclass(frozen=True)
class Snapshot:
    """What a partial report is built from: the results so far and the run's tally, or the final report."""

    results: list[EvaluationCaseResult]
    tally: RunTally | None
    plan: RunPlan | None
    final: EvaluationReport | None = None


def take_snapshot(engine: Engine) -> Snapshot:
    """The engine's results so far (call on its loop, or while nothing runs it)."""
    if engine.report is not None:  # set before RunFinished is emitted: from then on, the final report
        return Snapshot([], None, engine.plan, engine.report)
    results, tally = engine.results_so_far()
    return Snapshot(results, tally, engine.plan)


def _on_loop(engine: Engine, ended: Callable[[], bool]) -> Snapshot | None:
    """A snapshot taken on the engine's loop; None when the loop has ended (or is about to end)."""
    loop = engine.loop
    if loop is None:
        return None
    try:
        if asyncio.get_running_loop() is loop:  # an event subscriber: already on the loop
            return take_snapshot(engine)
    except RuntimeError:
        pass
    future: concurrent.futures.Future[Snapshot] = concurrent.futures.Future()

    def capture() -> None:
        if not future.set_running_or_notify_cancel():
            return
        try:
            future.set_result(take_snapshot(engine))
        except BaseException as exc:  # noqa: BLE001 - handed to the waiting thread
            future.set_exception(exc)

    try:
        loop.call_soon_threadsafe(capture)
    except RuntimeError:  # the loop is closed: the run has ended
        return None
    while True:
        try:
            return future.result(WAIT_SLICE)
        except concurrent.futures.TimeoutError:
            # a loop that closes before running the callback never runs it
            if (ended() or loop.is_closed()) and future.cancel():
                return None


def partial_report(
    engine: Engine,
    *,
    started: bool,
    ended: Callable[[], bool],
    final: Callable[[], EvaluationReport],
) -> EvaluationReport:
    """The report of the cases finished so far (see the module docstring), or the final one once it exists.

    Args:
        engine: the run's engine.
        started: whether the run's thread was started.
        ended: whether the run has ended (its final report, or its error, is ready).
        final: the final report (raises what stopped the run when there is none).

    Raises:
        RuntimeError: the run was never started (there is nothing to report yet).
        Exception: what stopped the run before its first query (as ``run.result()`` raises it).
    """
    while True:
        if ended():
            return final()
        if not started:
            raise RuntimeError("partial_report: the run has not started (call run.start())")
        snapshot = _on_loop(engine, ended)
        if snapshot is not None and (snapshot.final is not None or snapshot.plan is not None):
            return build_partial(engine, snapshot)
        # the loop has not started yet, is loading the benchmark, or has just ended
        if snapshot is not None and _on_engine_loop(engine):
            raise RuntimeError("partial_report: the benchmark is still loading (called on the run's own loop)")
        time.sleep(WAIT_SLICE)


def _on_engine_loop(engine: Engine) -> bool:
    """Whether the caller runs on the engine's own loop (it cannot wait for the loop there)."""
    try:
        return asyncio.get_running_loop() is engine.loop
    except RuntimeError:
        return False


def build_partial(engine: Engine, snapshot: Snapshot) -> EvaluationReport:
    """The report of a snapshot: the final report, or the results so far marked partial."""
    if snapshot.final is not None:
        return snapshot.final
    assert snapshot.tally is not None
    report = build_report(engine.config, engine.target, snapshot.plan, snapshot.results, snapshot.tally)
    metadata = report.raw["metadata"]
    info = metadata["heta_nb"]
    info = {**info, PARTIAL_KEY: {"done": info["done"], "total": info["total"]}}
    return report.replace(metadata={**metadata, "heta_nb": info})


def is_partial(report: EvaluationReport) -> bool:
    """Whether ``report`` is a partial report of a run still going (``metadata.heta_nb.partial``)."""
    info = report.raw.get("metadata", {}).get("heta_nb")
    return isinstance(info, dict) and isinstance(info.get(PARTIAL_KEY), dict)
