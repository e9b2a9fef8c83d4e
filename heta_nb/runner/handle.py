"""``EvaluationRun``: a run in the background, with state, cancel and result.

The engine runs on its own thread and event loop, so the caller (a notebook kernel
included) stays free: other cells run while the evaluation does. No nest_asyncio.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import threading
import time
from collections.abc import Callable, Generator
from typing import Any

from heta_nb._util.text import describe_error
from heta_nb.model.record import RichDisplay
from heta_nb.model.report import EvaluationReport
from heta_nb.runner.config import RunConfig
from heta_nb.runner.engine import Engine
from heta_nb.runner.errors import RunFailedError
from heta_nb.runner.events import Event, RunFinished, subscriber_guard
from heta_nb.runner.partial import partial_report
from heta_nb.runner.state import RunState, reduce

__all__ = ["EvaluationRun"]

_WAIT_SLICE = 0.1
"""Longest single wait (seconds) in ``EvaluationRun.result`` on the main thread."""


class EvaluationRun(RichDisplay):
    """A handle on a running (or finished) evaluation.

    ``state`` is the live :class:`~heta_nb.runner.state.RunState`; ``cancel()`` stops
    it and the result is the partial report; ``result(timeout)`` waits for the
    report; ``await run`` works too, on any event loop. Only ``cancel()`` stops the
    run: a wait that ends early (a ``result`` timeout, ``asyncio.wait_for(run, t)``, a
    cancelled awaiting task) leaves it running, and a later wait still gets its
    report. Created by :func:`heta_nb.start`.
    """

    def __init__(
        self,
        config: RunConfig,
        subscribers: list[Callable[[Event], None]] | None = None,
        *,
        record_events: bool = False,
    ) -> None:
        self._lock = threading.Lock()
        self._changed = threading.Condition(self._lock)  # notified when the state changes
        self._state = RunState()
        self._subscribers: list[Callable[[Event], None]] = [self._track, *(subscribers or [])]
        self.events: list[Event] | None = [] if record_events else None
        self._future: concurrent.futures.Future[EvaluationReport] = concurrent.futures.Future()
        # running from the start: a cancelled ``await run`` (asyncio.wrap_future cancels the
        # future it wraps) must not cancel it, or every later wait would get CancelledError
        self._future.set_running_or_notify_cancel()
        self._start_lock = threading.Lock()
        self._engine = Engine(config, emit=subscriber_guard(self._subscribers))
        self._thread: threading.Thread | None = None
        self.report_id = self._engine.target.report_id
        self.report_id_given = config.report_id is not None
        """Whether the caller named the report (else its id is a generated ``eval_…``)."""
        self.knowledge_base_name = self._engine.target.knowledge_base_name

    def _track(self, event: Event) -> None:
        with self._lock:
            self._state = reduce(self._state, event)
            if self.events is not None:
                self.events.append(event)
            self._changed.notify_all()

    def subscribe(self, subscriber: Callable[[Event], None]) -> None:
        """Add an event subscriber (it receives events from the run's thread)."""
        self._subscribers.append(subscriber)

    def start(self) -> EvaluationRun:
        """Start the run on a background thread (idempotent, also from several threads)."""
        with self._start_lock:
            if self._thread is None:
                self._thread = threading.Thread(target=self._main, name=f"heta_nb-run-{self.report_id}", daemon=True)
                self._thread.start()
        return self

    def _main(self) -> None:
        try:
            report = asyncio.run(self._engine.run())
        except BaseException as exc:  # delivered to whoever waits on the result
            self._engine.release(abandoned=True)  # before the waiter wakes: it may resume this report at once
            self._finish_state(exc)
            self._future.set_exception(exc)
        else:
            self._future.set_result(report)

    def _finish_state(self, exc: BaseException) -> None:
        """After a run that ended without its ``RunFinished`` (a ``SystemExit`` or
        ``KeyboardInterrupt`` raised by KB code), tell the state and the views it failed."""
        state = self.state
        if state.finished:
            return
        seconds = self._engine.now()
        self._engine.emit(
            RunFinished(
                status="failed",
                done=state.done,
                total=state.total,
                errors=state.errors,
                seconds=seconds,
                error=f"{type(exc).__name__}: {describe_error(exc)}",
                t=seconds,
            )
        )

    # -- inspection ------------------------------------------------------------------
    @property
    def state(self) -> RunState:
        """The current progress (a consistent snapshot)."""
        with self._lock:
            return self._state

    @property
    def status(self) -> str:
        """``pending``, ``running``, ``complete``, ``cancelled`` or ``failed``."""
        return self.state.status

    def done(self) -> bool:
        """True once the report (or an error) is available."""
        return self._future.done()

    def wait(self, results: int, timeout: float | None = None) -> RunState:
        """Wait until at least ``results`` results are finished (or the run has ended); the state then.

        A notebook's "Run All" runs the cell after :func:`heta_nb.start` at once: ``run.wait(20)``
        before :meth:`partial_report` lets it show results. Starts the run if needed; the wait is
        sliced, so Ctrl-C ends it (the run goes on).

        Raises:
            TimeoutError: fewer results after ``timeout`` seconds; the run goes on.
        """
        self.start()
        deadline = None if timeout is None else time.monotonic() + timeout
        with self._changed:
            while self._state.done < results and not self._future.done():
                wait = _WAIT_SLICE if deadline is None else min(_WAIT_SLICE, deadline - time.monotonic())
                if wait <= 0:
                    done = self._state.done
                    raise TimeoutError(
                        f"evaluation {self.report_id!r} has {done} of {results} results after {timeout} s"
                    )
                self._changed.wait(wait)
            return self._state

    def partial_report(self) -> EvaluationReport:
        """The report of the cases finished so far; the final report once the run has ended.

        Safe from any thread, at any moment: the results are copied on the run's own event
        loop, so the report never holds half a batch. It is a valid, immutable report
        (summary, frames, views, export and ``compare`` work on it) whose
        ``metadata["heta_nb"]`` says ``status: "running"`` and ``partial: {"done", "total"}``;
        it is never saved (the store only holds the final report). While the benchmark is
        still loading, this waits for it.

        Raises:
            RuntimeError: the run was never started.
            Exception: what stopped the run before its first query (as :meth:`result`).
        """
        return partial_report(self._engine, started=self._thread is not None, ended=self.done, final=self._final)

    def _final(self) -> EvaluationReport:
        """The ended run's report: the final one, or what a failed run finished."""
        try:
            return self._future.result()
        except RunFailedError as exc:
            return exc.report

    # -- control -----------------------------------------------------------------------
    def cancel(self) -> None:
        """Stop the run: finished cases are kept and the partial report is saved.

        Safe from any thread, more than once, and before the run has started (it then
        stops before its first query); no effect once the run has finished.
        """
        self._engine.cancel_threadsafe()

    def result(self, timeout: float | None = None) -> EvaluationReport:
        """Wait for the report (partial if cancelled); Ctrl-C while waiting cancels the run.

        Starts the run if :meth:`start` was not called. Safe from several threads at once
        (each gets the same report). After Ctrl-C the run is cancelled and the partial
        report is waited for without a timeout (a second Ctrl-C stops that wait).
        On the main thread the wait is sliced (:data:`_WAIT_SLICE` seconds at most per
        wait), so a SIGINT whose C handler ran on another thread (``signal.raise_signal``
        from a timer, a signal delivered to a worker thread) still reaches Python's
        handler promptly. Each slice wakes the moment the run finishes.

        Raises:
            TimeoutError: not finished within ``timeout`` seconds; the run goes on (call
                ``result`` again for its report, or :meth:`cancel`).
            RunFailedError: the run failed after it started (``.report`` has what finished).
            Exception: what stopped the run before its first query, with its own type
                (a benchmark that cannot be loaded: ``FileNotFoundError``,
                ``BenchmarkFormatError``...).
        """
        self.start()
        try:
            return self._wait(timeout)
        except KeyboardInterrupt:
            self.cancel()
            return self._wait(None)

    def _wait(self, timeout: float | None) -> EvaluationReport:
        """``Future.result(timeout)``, in slices on the main thread so signal handlers run."""
        future = self._future
        sliced = threading.current_thread() is threading.main_thread()  # only it runs signal handlers
        deadline = None if timeout is None else time.monotonic() + timeout
        while True:
            wait = None if deadline is None else deadline - time.monotonic()
            if sliced:
                wait = _WAIT_SLICE if wait is None else min(wait, _WAIT_SLICE)
            if wait is not None and wait <= 0 and not future.done():
                raise TimeoutError(f"evaluation {self.report_id!r} still running after {timeout} s")
            try:
                return future.result(None if wait is None else max(wait, 0.0))
            except concurrent.futures.TimeoutError:
                if future.done():  # finished meanwhile, or the run itself raised a TimeoutError
                    return future.result()
                if not sliced:
                    raise TimeoutError(f"evaluation {self.report_id!r} still running after {timeout} s") from None
                # not finished yet: back to the loop, where Python runs pending signal handlers

    def __await__(self) -> Generator[Any, None, EvaluationReport]:
        """``await run``: :meth:`result` without blocking the awaiting event loop.

        Cancelling the awaiting task (``asyncio.wait_for`` timing out, say) ends only
        that wait, as a ``result`` timeout does: the run goes on until :meth:`cancel`.
        """
        self.start()
        return asyncio.wrap_future(self._future).__await__()

    def __repr__(self) -> str:
        state = self.state
        return (
            f"EvaluationRun({self.report_id!r}, status={state.status!r}, "
            f"done={state.done}/{state.total}, errors={state.errors})"
        )
