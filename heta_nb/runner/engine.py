"""The evaluation engine: query every case × mode, score it, record it, never lose it.

Compared with Heta 0.1.2's ``BenchmarkRunner`` (spec section 5):

* every input is validated before the first query (names, store, JSON-safety of the
  metadata, evaluator names, modes), where Heta finds problems only at the end;
* a bounded pool of ``concurrency`` workers pulls tasks lazily (memory stays flat;
  Heta creates every coroutine up front);
* each query has a timeout, and retryable errors and timeouts are retried with
  exponential backoff;
* an evaluator that raises is recorded in that score (value ``"error"``, details in
  ``metadata.error``) and the response is kept; Heta drops the whole result;
* every finished case goes to a checkpoint at once; cancelling returns a partial
  report, and ``resume=True`` finishes an interrupted run;
* events report progress; ``case_results`` keep Heta's order (unit, case, mode)
  whatever the completion order, and ``score_summary`` has Heta's keys and values.

The engine runs the worker pool and records results; :mod:`.plan` decides the work,
:mod:`.case` runs one case, :mod:`.encode` encodes it and :mod:`.assemble` builds the report.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Callable, Iterator, Sequence
from typing import Any

from heta_nb._util.text import describe_error
from heta_nb.model.report import EvaluationCaseResult, EvaluationReport
from heta_nb.runner.assemble import RunTally, build_report, save_report, utc_now
from heta_nb.runner.case import EXITS, CaseRunner
from heta_nb.runner.checkpoint import BATCH_LINES, CheckpointWriter
from heta_nb.runner.collector import FreezeHold
from heta_nb.runner.config import RunConfig
from heta_nb.runner.distributed import DaskCases, RemoteUnit
from heta_nb.runner.encode import encode_result, unencodable
from heta_nb.runner.errors import RunFailedError
from heta_nb.runner.events import (
    CaseRecord,
    CasesFinished,
    Event,
    RunFinished,
    RunStarted,
    RunStatus,
    RunWarning,
    UnitStarted,
    announce_warning,
)
from heta_nb.runner.interrupts import InterruptWatch, users_interrupt
from heta_nb.runner.judging import judge_names, start_judges
from heta_nb.runner.plan import CaseTask, ResultKey, RunPlan, RunTarget, make_plan
from heta_nb.runner.user_calls import as_exception, callee_error

__all__ = ["Engine"]

BATCH_SECONDS = 0.05
"""A batch of finished cases is also flushed once its first case is this old: a KB that never
yields to the event loop (CPU-bound async code) would otherwise hold progress to 32-case steps."""


class Engine:
    """Runs one evaluation on the current event loop (see the module docstring).

    Args:
        config: the run's settings.
        emit: receives every event (see :func:`subscriber_guard`).

    Raises:
        RunError: a setting that does not fit the KB or the store (see :meth:`RunTarget.resolve`).
        HetaNbError: an unsafe name, an unusable store, or an existing report or checkpoint.
    """

    def __init__(self, config: RunConfig, emit: Callable[[Event], None]) -> None:
        self.config = config
        self._emit_to = emit
        self._t0 = time.perf_counter()
        self.target = RunTarget.resolve(config)
        """The KB, names and store, checked against the world before anything runs."""
        self.plan: RunPlan | None = None
        """What the run does; set once its checkpoint is open (from then on a failure still gives a report)."""
        self.started_at = ""
        self.status: RunStatus | None = None
        """How the run ended, once it has (``failed`` too when the report could not be saved)."""
        self.failure: str | None = None
        """Why a failed run failed."""
        self.report: EvaluationReport | None = None
        self._cancelled = False
        self._abandoned = False
        """Set once the loop that ran this engine is gone (see :meth:`release`)."""
        self._loop: asyncio.AbstractEventLoop | None = None
        self._cases: CaseRunner | None = None
        self._workers: list[asyncio.Task[None]] = []
        self._remote: DaskCases | None = None
        """Where the cases run with ``executor=`` (None: in this process)."""
        self._results: dict[ResultKey, EvaluationCaseResult] = {}
        self._encoded: dict[ResultKey, bytes] = {}
        """Each result's JSON, as written to the checkpoint, reused by the final save (keeping the bytes
        costs ~1 us a case; encoding again at the end would cost 8-9 us each, the dicts out of cache)."""
        self._batch: list[tuple[ResultKey, str, dict[str, Any], Any, float]] = []
        """Cases finished since the last flush, not yet encoded (see :meth:`_flush`)."""
        self._checkpoint: CheckpointWriter | None = None
        self._document_keys: list[str] = []
        self._warnings: list[str] = []
        self._errors = 0
        self._failure: Exception | None = None
        """What failed in an event-loop callback (see :meth:`_flush_soon`) or a worker."""
        self.interrupts = InterruptWatch(self.cancel_threadsafe)
        """The user's Ctrl-C while the run is active on the main thread (``evaluate_async``)."""
        if self.target.kb_adapter is not None:  # (its manifest(), read for the report, may raise a Ctrl-C too)
            self.target.kb_adapter.interrupted = lambda: self.interrupts.count > 0
        self._freeze = FreezeHold()
        self._judges: list[Any] = []
        self._stop_reason: str | None = None
        """Why the run stopped itself (its judges' budget), if it did."""
        """Kept results out of the garbage collector's full collections (see :mod:`heta_nb.runner.collector`)."""

    # -- events ----------------------------------------------------------------------
    def now(self) -> float:
        """Seconds since the engine was created."""
        return time.perf_counter() - self._t0

    def emit(self, event: Event) -> None:
        """Hand an event to the subscribers (their failures never stop the run)."""
        self._emit_to(event)

    def _builder_event(self, event: Event) -> None:
        """An event of the recipe builder: its warnings are the runner's (see :meth:`warn`)."""
        if isinstance(event, RunWarning):
            self.warn(event.code, event.message, t=event.t)
        else:
            self.emit(event)

    def warn(self, code: str, message: str, *, t: float | None = None) -> None:
        """Keep a warning for the report, emit it, then log and issue it (displays first: a progress line ends)."""
        self._warnings.append(message)
        event = RunWarning(code=code, message=message, t=self.now() if t is None else t)
        self.emit(event)
        announce_warning(event)

    # -- cancellation ------------------------------------------------------------------
    def _stop_for(self, reason: str) -> None:
        """Take no new case, for ``reason`` (the judges' budget is spent); the cases in flight finish (their
        calls are paid for or under way), so the report holds every cost. Warned; the report says why."""
        if self._stop_reason is None:
            self._stop_reason = reason
            self._cancelled = True
            self.warn("judge_budget", reason)

    def cancel(self) -> None:
        """Stop taking new cases and cancel those in flight (call on the engine's loop)."""
        self._cancelled = True
        for task in self._workers:
            task.cancel()

    def cancel_threadsafe(self) -> None:
        """:meth:`cancel` from another thread."""
        self._cancelled = True
        loop = self._loop
        if loop is not None and not loop.is_closed():
            with contextlib.suppress(RuntimeError):  # loop already closed
                loop.call_soon_threadsafe(self.cancel)

    # -- results so far (see heta_nb.runner.partial) -------------------------------------
    @property
    def loop(self) -> asyncio.AbstractEventLoop | None:
        """The event loop the engine runs on (None before :meth:`run`)."""
        return self._loop

    def results_so_far(self) -> tuple[list[EvaluationCaseResult], RunTally]:
        """The results recorded so far, in Heta's order, and a ``running`` tally (call on the engine's loop)."""
        results = [self._results[key] for key in sorted(self._results)]
        tally = RunTally(
            status="running",
            failure=None,
            errors=self._errors,
            warnings=list(self._warnings),
            document_keys=list(self._document_keys),
            started_at=self.started_at,
            elapsed_s=round(self.now(), 3),
        )
        return results, tally

    # -- the run -----------------------------------------------------------------------
    async def run(self) -> EvaluationReport:
        """Run to completion or cancellation; always returns the (possibly partial) report."""
        self._loop = asyncio.get_running_loop()
        self.started_at = utc_now()
        self.interrupts.install()  # (on the main thread only: see heta_nb.runner.interrupts)
        self._freeze.start()
        try:
            return await self._run()
        finally:  # also after a BaseException (a second Ctrl-C...): never leave the lock held
            self.interrupts.uninstall()
            self.release()

    def release(self, *, abandoned: bool = False) -> None:
        """Close the checkpoint (releasing its lock) if the run left it open; idempotent.

        :meth:`run` does this itself. A thread that ran the engine's loop calls it
        with ``abandoned=True`` once the loop is gone: a run stopped by ``SystemExit`` in
        KB code can leave the coroutine suspended (Python 3.10), and when the garbage
        collector closes it, it must not try to finish the run on a closed loop.
        """
        self._abandoned = self._abandoned or abandoned
        self._freeze.stop()  # (an abandoned run must not leave the process's objects frozen)
        if self._cases is not None:
            self._cases.deadlines.halt()  # the loop monitor thread, if the run left it running
        if self._checkpoint is not None:
            with contextlib.suppress(OSError):
                self._checkpoint.close()

    async def _run(self) -> EvaluationReport:
        status: RunStatus = "complete"
        failure: str | None = None
        adapter = self.target.kb_adapter
        try:
            if self.config.executor is not None:  # (a cluster that cannot start fails the call itself)
                self._remote = await DaskCases.open(self.config.executor)
            plan = await self._start()
            for unit_index, unit in enumerate(plan.units):
                if self._cancelled:
                    break
                await self._run_unit(plan, unit_index, unit)
            if self._cancelled:
                status, failure = "cancelled", self._stop_reason
        except asyncio.CancelledError:
            status, self._cancelled = "cancelled", True
        except BaseException as exc:  # (a recipe step's gevent Timeout fails the run as any error of its)
            if not callee_error(exc, self.interrupts.count > 0):
                raise
            if adapter is not None:
                adapter.close()
            if self.plan is None:  # nothing ran: the caller gets the exception itself
                if self._remote is not None:
                    await self._remote.close()
                message = f"{type(exc).__name__}: {describe_error(exc)}"
                now = self.now()
                self.emit(RunFinished(status="failed", done=0, total=0, errors=0, seconds=now, error=message, t=now))
                raise as_exception(exc)  # noqa: B904 - the exception itself, or a RunError caused by it
            status, failure = "failed", f"{type(exc).__name__}: {describe_error(exc)}"
        if adapter is not None:
            adapter.close()
        if self._remote is not None:  # its own cluster closed; its description stays for the report
            await self._remote.close()
        report = await self._finish(status, failure)
        if self.status == "failed":
            raise RunFailedError(f"the evaluation failed after {len(self._results)} results: {self.failure}", report)
        return report

    async def _start(self) -> RunPlan:
        """Make the plan, take over a resumed run's results, open the checkpoint, announce the run."""
        config, target = self.config, self.target
        plan = await make_plan(
            config,
            target,
            started_at=self.started_at,
            warn=self.warn,
            builder_events=self._builder_event,
            clock=self.now,
        )
        self._judges = start_judges(config, target.store, plan.evaluators, self._stop_for)  # (before any write)
        self.started_at = plan.started_at
        self._results.update(plan.resumed)
        self._errors += sum(1 for result in plan.resumed.values() if result.error is not None)
        if target.store is not None:  # refused here (ReportInUseError) while another run writes this report
            writer = CheckpointWriter(target.store, target.knowledge_base_name, target.report_id)
            writer.start(plan.header, fresh=not config.resume)
            self._checkpoint = writer
        self.plan = plan  # from here on, a failure still gives a report
        self._cases = CaseRunner(
            config,
            plan.evaluators,
            cancelled=lambda: self._cancelled,
            interrupted=lambda: self.interrupts.count > 0,
            warn=self.warn,
        )
        if self._judges:  # the KB's queries stay at `concurrency` while judged cases wait for their model
            self._cases.query_slots = asyncio.Semaphore(config.concurrency)
        self.emit(
            RunStarted(
                report_id=target.report_id,
                knowledge_base_name=target.knowledge_base_name,
                benchmark={k: getattr(plan.manifest, k) for k in ("name", "version", "split", "task_type")},
                modes=config.modes,
                evaluators=tuple(e.name for e in plan.evaluators),
                total=plan.total,
                resumed=len(plan.resumed),
                units=len(plan.units),
                concurrency=config.concurrency,
                started_at=self.started_at,
                t=self.now(),
                judges=judge_names(plan.evaluators),
            )
        )
        return plan

    async def _run_unit(self, plan: RunPlan, unit_index: int, unit: Any) -> None:
        c = self.config
        cases = plan.cases_by_unit[unit_index]
        builder = plan.builder
        from heta_nb.runner.recipe import unit_knowledge_base_name

        kb_name = self.target.knowledge_base_name
        if builder is not None:
            kb_name = unit_knowledge_base_name(kb_name, unit, len(plan.units))
        self.emit(
            UnitStarted(
                unit_id=unit.unit_id,
                index=unit_index,
                knowledge_base_name=kb_name,
                cases=len(cases),
                t=self.now(),
            )
        )
        pending = plan.pending[unit_index]
        adapter = self.target.kb_adapter
        if builder is not None:
            keys, adapter = await builder.unit_adapter(
                plan.source,
                unit,
                first=unit_index == 0,
                name=kb_name,
                modes=c.modes,
                threads=c.concurrency,
                build=bool(pending),
            )
            self._document_keys.extend(keys)
        if not pending:
            return
        assert adapter is not None
        tasks: Iterator[CaseTask] = iter(pending)
        queries = [adapter.caller(mode, top_k=c.top_k, options=c.query_options_json, trace=c.trace) for mode in c.modes]
        assert self._cases is not None
        case_runner = self._cases
        run_case = case_runner.run
        record = self._record
        unit_id = unit.unit_id

        async def worker() -> None:
            task = asyncio.current_task()
            for case_index, case, mode_index, mode in tasks:
                if self._cancelled:
                    return
                try:
                    data, raw = await run_case(task, queries[mode_index], unit_id, kb_name, case_index, case, mode)
                except EXITS as exc:  # a GeneratorExit a future of the KB failed with (see CaseRunner.run)
                    if not case_runner.callee_exit(exc, task):
                        raise
                    data, raw = case_runner.exit_result(exc, unit_id, kb_name, case_index, case, mode), None
                record((unit_index, case_index, mode_index), unit_id, data, raw)

        jobs: list[Any]
        if self._remote is not None:  # where the cases run: on the executor's workers, batch by batch
            remote = RemoteUnit(unit_index, unit_id, kb_name, c.kb if builder is None else adapter.kb, pending)
            jobs = [self._remote.run_unit(c, plan.evaluators, remote, self._take, self.warn)]
        else:  # or in this process: ``concurrency`` workers pulling the unit's queries
            judging = sum(session.limits.concurrency for session in self._judges)  # (more workers: judging pipelines)
            jobs = [worker() for _ in range(min(c.concurrency + judging, len(pending)))]
        deadlines = self._cases.deadlines
        deadlines.start()
        self._workers = [asyncio.ensure_future(job) for job in jobs]
        try:
            await asyncio.gather(*self._workers)
        except asyncio.CancelledError:
            self._cancelled = True
        except Exception as exc:  # a worker failed: a checkpoint write, say
            if self._failure is None:
                self._failure = exc
        finally:
            workers, self._workers = self._workers, []
            if not self._abandoned:  # (else the garbage collector is closing this coroutine: no loop left)
                for task in workers:  # none left running behind a failure
                    task.cancel()
                await asyncio.gather(*workers, return_exceptions=True)
                await deadlines.stop()
                self._flush()
            else:
                deadlines.halt()
        if self._failure is not None:
            raise self._failure

    def _record(self, key: ResultKey, unit_id: str, data: dict[str, Any], raw: Any) -> None:
        """Keep a finished case for the next :meth:`_flush`, at the latest at the end of this loop iteration."""
        batch = self._batch
        batch.append((key, unit_id, data, raw, self.now()))
        if len(batch) == 1:
            assert self._loop is not None
            self._loop.call_soon(self._flush_soon)  # at the end of this event-loop iteration
        elif len(batch) >= BATCH_LINES or batch[-1][4] - batch[0][4] >= BATCH_SECONDS:
            self._flush()

    def _flush(self) -> None:
        """Record the cases finished since the last flush, checkpoint them, tell the subscribers.

        A batch is encoded together, after its cases were scored, rather than each
        case as it is scored: that keeps the evaluators' and the encoder's working
        sets apart (4-9 % less time per case in each of benchmarks/runner.py's setups).
        Every result is recorded before the first checkpoint write, so a write that
        fails (a full disk) loses nothing the final report would hold.
        """
        batch, self._batch = self._batch, []
        checkpoint = self._checkpoint
        if batch:
            results = self._results
            encoded_results = self._encoded
            records: list[CaseRecord] = []
            lines: list[bytes] = []
            for key, unit_id, data, raw, t in batch:
                try:
                    data, encoded = encode_result(data, raw, data["query_mode"])
                except BaseException as exc:  # noqa: BLE001 - a response that contains itself, its to_dict's exit...
                    if users_interrupt(exc, lambda: self.interrupts.count > 0):
                        raise
                    data, encoded = unencodable(data, exc)
                result = EvaluationCaseResult.from_raw(data)
                results[key] = result
                if data["error"] is not None:
                    self._errors += 1
                if checkpoint is not None:
                    encoded_results[key] = encoded
                    lines.append(encoded)
                records.append((unit_id, result, t))
            if checkpoint is not None:
                for line in lines:
                    checkpoint.append(line)
        if checkpoint is not None:
            checkpoint.flush(force=False)
        if batch:
            self.emit(CasesFinished(t=self.now(), records=tuple(records)))
            self._freeze.recorded(len(batch))

    def _take(self, unit_id: str, finished: Sequence[tuple[ResultKey, dict[str, Any], bytes]]) -> None:
        """Record a batch of results scored and encoded on an executor's worker, as :meth:`_flush` does.

        A result already recorded is skipped: Dask runs a batch again when its worker died,
        and a batch may have been taken just before.
        """
        self._flush()
        results, checkpoint, t = self._results, self._checkpoint, self.now()
        records: list[CaseRecord] = []
        for key, data, encoded in finished:
            if key in results:
                continue
            results[key] = result = EvaluationCaseResult.from_raw(data)
            self._errors += data["error"] is not None
            if checkpoint is not None:
                self._encoded[key] = encoded
                checkpoint.append(encoded)
            records.append((unit_id, result, t))
        if checkpoint is not None:
            checkpoint.flush(force=False)
        if records:
            self.emit(CasesFinished(t=t, records=tuple(records)))
            self._freeze.recorded(len(records))

    def _flush_soon(self) -> None:
        """:meth:`_flush` as an event-loop callback: if it fails, the run fails (not the loop's log)."""
        try:
            self._flush()
        except Exception as exc:  # noqa: BLE001 - re-raised by _run_unit
            self._failure = exc
            for task in self._workers:
                task.cancel()

    async def _finish(self, status: RunStatus, failure: str | None) -> EvaluationReport:
        self._flush()
        order = sorted(self._results)
        tally = RunTally(
            status=status,
            failure=failure,
            errors=self._errors,
            warnings=self._warnings,
            document_keys=self._document_keys,
            started_at=self.started_at,
            elapsed_s=round(self.now(), 3),
            executor=self._remote.info if self._remote is not None else None,
        )
        report = build_report(self.config, self.target, self.plan, [self._results[key] for key in order], tally)
        key = None
        if self.target.store is not None:
            case_json = [self._encoded.get(k) for k in order]
            report, key = await save_report(report, self.target, self._checkpoint, case_json)
        info = report.raw["metadata"]["heta_nb"]
        self.report = report
        self.status, self.failure = info["status"], info.get("failure")
        self.emit(
            RunFinished(
                status=info["status"],
                done=len(order),
                total=self.plan.total if self.plan is not None else 0,
                errors=self._errors,
                seconds=self.now(),
                report_key=key,
                error=self.failure,
                t=self.now(),
            )
        )
        return report
