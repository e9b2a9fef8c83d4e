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
"""

from __future__ import annotations

import asyncio
import contextlib
import difflib
import hashlib
import inspect
import operator
import re
import time
import traceback
import uuid
import warnings
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any

from heta_nb._version import __version__
from heta_nb.errors import HetaNbError, ReportExistsError
from heta_nb.evaluators.base import KEYWORDS, NATIVE, PreparedEvaluator, as_evaluator, score_data
from heta_nb.model.json import ORJSON_DUMPS, dumps_bytes, dumps_bytes_exact, to_json_value
from heta_nb.model.report import BenchmarkManifest, EvaluationCaseResult, EvaluationReport
from heta_nb.model.summary import heta_score_summary
from heta_nb.runner import deadlines as _deadlines
from heta_nb.runner.checkpoint import BATCH_LINES, CheckpointWriter, checkpoint_exists, read_checkpoint
from heta_nb.runner.events import (
    CaseRecord,
    CasesFinished,
    Event,
    RunFinished,
    RunStarted,
    RunStatus,
    RunWarning,
    UnitStarted,
)
from heta_nb.runner.kb import (
    InvalidResponseError,
    KnowledgeBaseAdapter,
    normalize_response,
    normalize_response_data,
    registered_modes,
)
from heta_nb.runner.redaction import recorded_options
from heta_nb.store import ReportStore, safe_slug

__all__ = ["Engine", "RunConfig", "RunError", "RunFailedError", "shard_of"]


class RunError(HetaNbError, ValueError):
    """The run's configuration is invalid (raised before any query)."""


class RunFailedError(HetaNbError, RuntimeError):
    """The run stopped on an error after it started; ``report`` holds what finished.

    The partial report is also saved in the store (status ``failed``) with its
    checkpoint, so ``resume=True`` can finish it once the cause is fixed.
    """

    def __init__(self, message: str, report: EvaluationReport) -> None:
        super().__init__(message)
        self.report = report


_HETA_KB_NAME = re.compile(r"[A-Za-z0-9 _-]{1,80}")


perf_counter = time.perf_counter
_wrap_result = EvaluationCaseResult.from_raw
_ORJSON = ORJSON_DUMPS


_SCORE_VALUE = operator.itemgetter("value")
_RESULT_SCORE = operator.itemgetter("score")


def _has_non_finite(data: dict[str, Any]) -> bool:
    """Whether a score value or a result score is NaN or infinite (orjson would write null).

    The common case costs two C-level sums: a finite total of numbers proves every
    term finite. Anything else (a text value, None, an overflowing sum) is checked
    term by term.
    """
    response = data["response"]
    try:
        total = sum(map(_SCORE_VALUE, data["scores"]))
        if response is not None:
            total += sum(map(_RESULT_SCORE, response["results"]))
        if total - total == 0.0:
            return False
    except (TypeError, KeyError):
        pass
    for score in data["scores"]:
        value = score.get("value")
        if isinstance(value, float) and value - value != 0.0:
            return True
    if response is not None:
        for result in response["results"]:
            value = result.get("score")
            if isinstance(value, float) and value - value != 0.0:
                return True
    return False


def _elapsed_ms(started: float) -> float:
    """``round((perf_counter() - started) * 1000, 3)``, Heta's latency, for less.

    ``round(x, 3)`` goes through a decimal conversion (the costliest line of a case
    after the encode). A whole number of microseconds divided by 1000 is the same
    float unless the microseconds end in exactly .5, where rounding must follow the
    binary value as ``round`` does; those few take ``round`` itself.
    """
    ms = (perf_counter() - started) * 1000
    micros = ms * 1000
    whole = int(micros + 0.5)
    if abs(micros + 0.5 - whole) <= micros * 1e-12 + 1e-9:  # at or next to a tie
        return round(ms, 3)
    return whole / 1000


def _utc_now() -> str:
    return datetime.now(timezone.utc).isoformat()


def shard_of(unit_id: str, case_id: str, count: int) -> int:
    """The stable shard (0..count-1) a case belongs to: a hash of unit and case id."""
    digest = hashlib.sha1(f"{unit_id}\x00{case_id}".encode()).digest()
    return int.from_bytes(digest[:8], "big") % count


def _shard_report_id(report_id: str, shard: tuple[int, int] | None) -> str:
    return report_id if shard is None else f"{report_id}__shard-{shard[0]}-of-{shard[1]}"


@dataclass
class RunConfig:
    """A run's settings, validated by :meth:`validate` before anything runs."""

    benchmark: Any
    query_modes: Sequence[str]
    kb: Any = None
    recipe: Any = None
    evaluators: Sequence[Any] | None = None
    top_k: int = 10
    query_options: Mapping[str, Any] = field(default_factory=dict)
    trace: bool = False
    concurrency: int = 8
    timeout_s: float | None = 60.0
    retries: int = 2
    backoff_s: float = 0.5
    retry_on: tuple[type[BaseException], ...] = ()
    store: Any = "auto"
    report_id: str | None = None
    knowledge_base_name: str | None = None
    resume: bool = False
    overwrite: bool = False
    shard: tuple[int, int] | None = None
    metadata: Mapping[str, Any] = field(default_factory=dict)
    query_engines: Any = None
    reuse_kb: bool = True
    workspace: Any = None
    lint: bool = True


def _store_from(value: Any, config: RunConfig) -> ReportStore | None:
    if value is None:
        return None
    if isinstance(value, str) and value == "auto":
        objects = None
        if config.recipe is not None:
            objects = getattr(getattr(config.recipe, "stores", None), "objects", None)
        elif config.kb is not None:
            objects = getattr(getattr(getattr(config.kb, "recipe", None), "stores", None), "objects", None)
        return ReportStore(objects) if objects is not None else None
    return ReportStore(value)


class Engine:
    """Runs one evaluation on the current event loop (see the module docstring)."""

    def __init__(self, config: RunConfig, emit: Callable[[Event], None]) -> None:
        self.config = config
        self._emit_to = emit
        self._t0 = time.perf_counter()
        self._cancelled = False
        self._abandoned = False
        """Set once the loop that ran this engine is gone (see :meth:`release`)."""
        self._workers: list[asyncio.Task[None]] = []
        self._results: dict[tuple[int, int, int], EvaluationCaseResult] = {}
        self._encoded: dict[tuple[int, int, int], bytes] = {}
        """Each result's JSON, as written to the checkpoint (reused by the final save).

        Keeping these bytes costs the case loop about 1 us per case, but encoding the
        results again at the end would cost 8-9 us each: by then their dicts are
        no longer in the CPU's caches (measured in one process; a result encoded right
        after it was scored takes about 4 us).
        """
        self._batch: list[tuple[tuple[int, int, int], str, dict[str, Any], Any, float]] = []
        """Cases finished since the last flush, not yet encoded (see :meth:`_flush`)."""
        self._deadlines: _deadlines.Deadlines | None = None
        self._wait_for: float | None = None
        self._warnings: list[str] = []
        self._errors = 0
        self._loop: asyncio.AbstractEventLoop | None = None
        self._checkpoint: CheckpointWriter | None = None
        self._failure: Exception | None = None
        """What failed in an event-loop callback (see :meth:`_flush_soon`) or a worker."""
        self.status: RunStatus | None = None
        """How the run ended, once it has (``failed`` too when the report could not be saved)."""
        self.failure: str | None = None
        """Why a failed run failed."""
        self.report: EvaluationReport | None = None
        self._validate()

    # -- validation (before any work) ---------------------------------------------
    def _validate(self) -> None:
        c = self.config
        if c.kb is None and c.recipe is None:
            raise RunError(
                "no knowledge base to evaluate: pass exactly one of kb= (a Heta KnowledgeBase, an object with "
                "query(...), or a function) or recipe= (a Heta KnowledgeRecipe)"
            )
        if c.kb is not None and c.recipe is not None:
            raise RunError(
                "got both kb= and recipe=: pass exactly one of kb= (a knowledge base) or recipe= (it builds its own KB)"
            )
        modes = [c.query_modes] if isinstance(c.query_modes, str) else list(c.query_modes or ())
        if not modes:
            raise RunError("query_modes must name at least one mode")
        for mode in modes:
            if not isinstance(mode, str) or not mode.strip():
                raise RunError(f"query_modes: {mode!r} is not a mode name")
        modes = [m.strip() for m in modes]
        if len(set(modes)) != len(modes):
            raise RunError(f"query_modes contains duplicates: {modes}")
        self.modes: tuple[str, ...] = tuple(modes)
        _check_mode_spelling(self.modes, registered_modes(c.kb, c.recipe, c.query_engines))
        for name, value, low in (
            ("top_k", c.top_k, 1),
            ("concurrency", c.concurrency, 1),
            ("retries", c.retries, 0),
        ):
            if isinstance(value, bool) or not isinstance(value, int) or value < low:
                raise RunError(f"{name} must be an integer >= {low}, got {value!r}")
        if c.timeout_s is not None and not (
            isinstance(c.timeout_s, (int, float)) and not isinstance(c.timeout_s, bool) and c.timeout_s > 0
        ):
            raise RunError(f"timeout_s must be a positive number or None, got {c.timeout_s!r}")
        if (
            isinstance(c.backoff_s, bool)
            or not isinstance(c.backoff_s, (int, float))
            or not 0 <= c.backoff_s < float("inf")
        ):
            raise RunError(f"backoff_s must be a finite number >= 0, got {c.backoff_s!r}")
        retry_on = (c.retry_on,) if isinstance(c.retry_on, type) else c.retry_on
        if not isinstance(retry_on, (tuple, list)) or not all(
            isinstance(kind, type) and issubclass(kind, BaseException) for kind in retry_on
        ):
            raise RunError(f"retry_on must be exception classes (a tuple of them), got {c.retry_on!r}")
        self.retry_on: tuple[type[BaseException], ...] = tuple(retry_on)
        if c.shard is not None:
            if not (
                isinstance(c.shard, tuple)
                and len(c.shard) == 2
                and all(isinstance(x, int) and not isinstance(x, bool) for x in c.shard)
                and c.shard[1] >= 1
                and 0 <= c.shard[0] < c.shard[1]
            ):
                raise RunError(f"shard must be (index, count) with 0 <= index < count, got {c.shard!r}")
        self._given_evaluators = _prepared_evaluators(c.evaluators) if c.evaluators is not None else None
        self.metadata = _json_setting(c.metadata, "metadata")
        reserved = sorted(set(self.metadata) & _RUNNER_METADATA)
        if reserved:
            raise RunError(f"metadata keys {reserved} are written by the runner; use other names")
        self.query_options = _json_setting(c.query_options, "query_options")
        self.recorded_options = recorded_options(self.query_options)
        self.kb_adapter = KnowledgeBaseAdapter(c.kb, threads=c.concurrency) if c.kb is not None else None
        base = c.knowledge_base_name or (self.kb_adapter.name if self.kb_adapter else None)
        if base is None and c.kb is not None:
            base = getattr(c.kb, "__name__", None)
        if not isinstance(base, str) or not base.strip():
            raise RunError("pass knowledge_base_name= (the KB has no name to use)")
        self.knowledge_base_name = base.strip()
        if c.recipe is not None and not _HETA_KB_NAME.fullmatch(self.knowledge_base_name):
            # KnowledgeBase.create refuses these, but only after the documents were written
            raise RunError(
                f"knowledge_base_name {self.knowledge_base_name!r}: Heta allows at most 80 letters, digits, "
                "spaces, '_' and '-' for a knowledge base built from a recipe"
            )
        self.base_report_id = (c.report_id or f"eval_{uuid.uuid4().hex}").strip()
        if not self.base_report_id:
            raise RunError("report_id must not be blank")
        self.report_id = _shard_report_id(self.base_report_id, c.shard)
        self.store = _store_from(c.store, c)
        if self.store is not None:
            self.store.check_usable()
            safe_slug(self.knowledge_base_name, "knowledge_base_name")
            safe_slug(self.report_id, "report_id")
            if not c.resume and not c.overwrite:
                if self.store.exists(self.knowledge_base_name, self.report_id):
                    raise ReportExistsError(
                        f"{self.store.location}: a report {self.report_id!r} for {self.knowledge_base_name!r} exists; "
                        "pass resume=True to finish it, overwrite=True to replace it, or another report_id"
                    )
                if checkpoint_exists(self.store, self.knowledge_base_name, self.report_id):  # a killed run
                    raise ReportExistsError(
                        f"{self.store.location}: an unfinished run of report {self.report_id!r} for "
                        f"{self.knowledge_base_name!r} left a checkpoint; pass resume=True to finish it, "
                        "overwrite=True to discard it, or another report_id"
                    )
        elif c.resume:
            raise RunError("resume=True needs a store (the checkpoint lives next to the report)")

    # -- events ----------------------------------------------------------------------
    def now(self) -> float:
        """Seconds since the engine was created."""
        return time.perf_counter() - self._t0

    def emit(self, event: Event) -> None:
        """Hand an event to the subscribers (their failures never stop the run)."""
        self._emit_to(event)

    def _builder_event(self, event: Event) -> None:
        """An event of the recipe builder: its warnings are kept in the report, as the runner's are."""
        if isinstance(event, RunWarning):
            self._warnings.append(event.message)
        self.emit(event)

    def warn(self, code: str, message: str) -> None:
        """Record and emit a warning."""
        self._warnings.append(message)
        self.emit(RunWarning(code=code, message=message, t=self.now()))

    # -- cancellation ------------------------------------------------------------------
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
            try:
                loop.call_soon_threadsafe(self.cancel)
            except RuntimeError:  # loop already closed
                pass

    # -- the run -----------------------------------------------------------------------
    async def run(self) -> EvaluationReport:
        """Run to completion or cancellation; always returns the (possibly partial) report."""
        self._loop = asyncio.get_running_loop()
        self._loop_call_soon = self._loop.call_soon
        timeout = self.config.timeout_s
        if timeout is not None:
            if _deadlines.SUPPORTED:
                self._deadlines = _deadlines.Deadlines(float(timeout))
            else:  # pragma: no cover - Python 3.10
                self._wait_for = float(timeout)
        self.started_at = _utc_now()
        try:
            return await self._run()
        finally:  # also after a BaseException from KB code (SystemExit...): never leave the lock held
            self.release()

    def release(self, *, abandoned: bool = False) -> None:
        """Close the checkpoint (releasing its lock) if the run left it open; idempotent.

        :meth:`run` does this itself. A thread that ran the engine's loop calls it
        with ``abandoned=True`` once the loop is gone: a run stopped by ``SystemExit`` in
        KB code can leave the coroutine suspended (Python 3.10), and when the garbage
        collector closes it, it must not try to finish the run on a closed loop.
        """
        self._abandoned = self._abandoned or abandoned
        if self._checkpoint is not None:
            with contextlib.suppress(OSError):
                self._checkpoint.close()

    async def _run(self) -> EvaluationReport:
        status: RunStatus = "complete"
        failure: str | None = None
        try:
            await self._prepare()
            for unit_index, unit in enumerate(self.units):
                if self._cancelled:
                    break
                await self._run_unit(unit_index, unit)
            if self._cancelled:
                status = "cancelled"
        except asyncio.CancelledError:
            status = "cancelled"
            self._cancelled = True
        except Exception as exc:
            if self.kb_adapter is not None:
                self.kb_adapter.close()
            if not hasattr(self, "total"):  # nothing ran: the caller gets the exception itself
                message = f"{type(exc).__name__}: {describe(exc)}"
                self.emit(
                    RunFinished(
                        status="failed",
                        done=0,
                        total=0,
                        errors=0,
                        seconds=self.now(),
                        error=message,
                        t=self.now(),
                    )
                )
                raise
            status = "failed"
            failure = f"{type(exc).__name__}: {describe(exc)}"
        if self.kb_adapter is not None:
            self.kb_adapter.close()
        report = await self._finish(status, failure)
        if self.status == "failed":
            raise RunFailedError(f"the evaluation failed after {len(self._results)} results: {self.failure}", report)
        return report

    async def _prepare(self) -> None:
        from heta_nb.runner.sources import load_source

        c = self.config
        source = await load_source(c.benchmark, workspace=c.workspace)
        self.manifest: BenchmarkManifest = source.manifest
        self.documents = source.documents
        units = source.units
        # (position in the unit, case): positions are kept through sharding, so shard
        # reports merge back into the order of a single run
        cases_by_unit = [list(enumerate(source.unit_cases(unit))) for unit in units]
        if c.shard is not None:
            index, count = c.shard
            cases_by_unit = [
                [(i, case) for i, case in cases if shard_of(unit.unit_id, case.case_id, count) == index]
                for unit, cases in zip(units, cases_by_unit)
            ]
        self.units = units
        self.cases_by_unit = cases_by_unit
        self.source = source
        prepared = self._given_evaluators
        if prepared is None:  # the benchmark's own, known once it is loaded
            prepared = _prepared_evaluators(source.evaluators)
        self.evaluators = prepared
        if self.kb_adapter is not None:
            available = self.kb_adapter.available_modes
            if available is not None:
                for mode in self.modes:
                    if mode not in available:
                        self.warn(
                            "unknown_mode",
                            f"mode {mode!r} is not available in this KB (available: {', '.join(sorted(available))}); "
                            "its cases will be recorded as errors",
                        )
        if c.lint:
            from heta_nb.benchmark.lint import lint_benchmark

            for issue in lint_benchmark(source.cases, [e.original for e in prepared], manifest=self.manifest):
                self.warn(issue.code, issue.message)
        self.builder = None
        if c.recipe is not None:
            from heta_nb.runner.recipe import RecipeBuilder

            self.builder = RecipeBuilder(
                c.recipe, emit=self._builder_event, clock=self.now, query_engines=c.query_engines, reuse=c.reuse_kb
            )
            self.builder.raw_keys(self.manifest, source.documents)  # refuse unsafe keys before any write
        # resume: take over finished results from the checkpoint
        resumed: dict[tuple[str, str, str], EvaluationCaseResult] = {}
        if self.store is not None and c.resume:
            checkpoint = read_checkpoint(self.store, self.knowledge_base_name, self.report_id)
            if checkpoint is not None:
                self._check_header(checkpoint.header)
                resumed = checkpoint.results
                if checkpoint.header.get("started_at"):
                    self.started_at = str(checkpoint.header["started_at"])
                if checkpoint.skipped_lines:
                    self.warn(
                        "checkpoint_damaged",
                        f"{checkpoint.skipped_lines} damaged checkpoint line(s) ignored; those cases run again",
                    )
            else:
                resumed = self._results_from_partial_report()
        self._pending: list[list[tuple[int, Any, int, str]]] = []
        total = 0
        mode_index = {m: i for i, m in enumerate(self.modes)}
        for unit_index, (unit, cases) in enumerate(zip(units, cases_by_unit)):
            pending = []
            for case_index, case in cases:
                for mode in self.modes:
                    total += 1
                    done = resumed.get((unit.unit_id, case.case_id, mode))
                    if done is not None:
                        self._results[(unit_index, case_index, mode_index[mode])] = done
                        if done.error is not None:
                            self._errors += 1
                    else:
                        pending.append((case_index, case, mode_index[mode], mode))
            self._pending.append(pending)
        if self.store is not None:  # refused here (ReportInUseError) while another run writes this report
            writer = CheckpointWriter(self.store, self.knowledge_base_name, self.report_id)
            writer.start(self._header(), fresh=not c.resume)
            self._checkpoint = writer
        self.total = total  # from here on, a failure still gives a report
        self.resumed = len(self._results)
        self.emit(
            RunStarted(
                report_id=self.report_id,
                knowledge_base_name=self.knowledge_base_name,
                benchmark={k: getattr(self.manifest, k) for k in ("name", "version", "split", "task_type")},
                modes=self.modes,
                evaluators=tuple(e.name for e in self.evaluators),
                total=total,
                resumed=self.resumed,
                units=len(units),
                concurrency=c.concurrency,
                started_at=self.started_at,
                t=self.now(),
            )
        )

    def _header(self) -> dict[str, Any]:
        c = self.config
        return {
            "report_id": self.report_id,
            "knowledge_base_name": self.knowledge_base_name,
            "benchmark": self.manifest.key,
            "modes": list(self.modes),
            "evaluators": [e.name for e in self.evaluators],
            "top_k": c.top_k,
            "query_options": self.recorded_options,
            "trace": c.trace,
            "shard": list(c.shard) if c.shard else None,
            "started_at": self.started_at,
        }

    def _check_header(self, header: Mapping[str, Any], source: str = "checkpoint") -> None:
        mine = self._header()
        for key in ("benchmark", "modes", "evaluators", "top_k", "query_options", "trace", "shard"):
            if key in header and header[key] != mine[key]:  # (older checkpoints lack query_options and trace)
                raise RunError(
                    f"cannot resume report {self.report_id!r}: its {source} has {key}={header[key]!r}, "
                    f"this run has {mine[key]!r} (use a new report_id, or overwrite=True without resume)"
                )

    def _results_from_partial_report(self) -> dict[tuple[str, str, str], EvaluationCaseResult]:
        """A report whose checkpoint is gone (cancelled, or complete) still holds its finished cases.

        It must come from the same run settings, as a checkpoint must: resuming a report
        with other modes or evaluators would replace it with a mix of both.
        """
        assert self.store is not None
        if not self.store.exists(self.knowledge_base_name, self.report_id):
            return {}
        report = self.store.load(self.knowledge_base_name, self.report_id)
        recorded = report.metadata.get("heta_nb")
        settings = recorded if isinstance(recorded, Mapping) else {}
        header: dict[str, Any] = {"benchmark": report.benchmark.key, "modes": list(report.query_modes)}
        if isinstance(settings.get("evaluators"), (list, tuple)):
            header["evaluators"] = list(settings["evaluators"])
        for key in ("top_k", "query_options", "trace"):
            if key in settings:
                header[key] = settings[key]
        if "shard" in settings:
            shard = settings["shard"]
            header["shard"] = [shard.get("index"), shard.get("count")] if isinstance(shard, Mapping) else None
        self._check_header(header, "stored report")
        return {(r.unit_id or "corpus", r.case_id, r.query_mode): r for r in report.case_results}

    async def _run_unit(self, unit_index: int, unit: Any) -> None:
        c = self.config
        cases = self.cases_by_unit[unit_index]
        from heta_nb.runner.recipe import unit_knowledge_base_name

        kb_name = (
            unit_knowledge_base_name(self.knowledge_base_name, unit, len(self.units))
            if self.builder is not None
            else self.knowledge_base_name
        )
        self.emit(
            UnitStarted(
                unit_id=unit.unit_id,
                index=unit_index,
                knowledge_base_name=kb_name,
                cases=len(cases),
                t=self.now(),
            )
        )
        pending = self._pending[unit_index]
        if self.builder is not None:
            documents = self.source.unit_documents(unit)
            if unit_index == 0:
                await self.builder.check_contamination(self.source.raw_keys())
            keys = await self.builder.write_documents(self.manifest, documents)
            self._document_keys = [*getattr(self, "_document_keys", []), *keys]
            if not pending:
                return
            kb = await self.builder.build(unit=unit, name=kb_name, document_keys=keys)
            adapter = KnowledgeBaseAdapter(kb, threads=c.concurrency)
            available = adapter.available_modes
            if available is not None and str(getattr(getattr(kb, "run_record", None), "status", "")) != "failed":
                # (a failed build has no modes at all; its build_failed warning says why)
                missing = [m for m in self.modes if m not in available]
                if missing:
                    self.warn(
                        "unknown_mode",
                        f"mode(s) {missing} not available in {kb_name!r} "
                        f"(available: {', '.join(sorted(available))}); their cases will be errors",
                    )
        else:
            assert self.kb_adapter is not None
            adapter = self.kb_adapter
        if not pending:
            return
        tasks: Iterator[tuple[int, Any, int, str]] = iter(pending)
        queries = [
            adapter.caller(mode, top_k=c.top_k, options=self.query_options, trace=c.trace) for mode in self.modes
        ]

        async def worker() -> None:
            task = asyncio.current_task()
            run_case = self._run_case
            for case_index, case, mode_index, mode in tasks:
                if self._cancelled:
                    return
                await run_case(
                    task, queries[mode_index], unit.unit_id, kb_name, case_index, case, mode_index, mode, unit_index
                )

        deadlines = self._deadlines
        if deadlines is not None:
            deadlines.start()
        self._workers = [asyncio.ensure_future(worker()) for _ in range(min(c.concurrency, len(pending)))]
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
                if deadlines is not None:
                    await deadlines.stop()
                self._flush()
        if self._failure is not None:
            raise self._failure

    async def _run_case(
        self,
        task: Any,
        query: Callable[[str], Any],
        unit_id: str,
        kb_name: str,
        case_index: int,
        case: Any,
        mode_index: int,
        mode: str,
        unit_index: int,
    ) -> None:
        """Query, score and record one case × mode.

        The hot path: with a fast KB this function is most of the runner's cost per
        case, so it calls evaluators directly (see :class:`PreparedEvaluator`), keeps
        the deadline bookkeeping inline and builds each object once.
        """
        c = self.config
        deadlines = self._deadlines
        if deadlines is not None:
            due, late, timeout_s = deadlines.due, deadlines.late, deadlines.timeout_s
        started = perf_counter()
        attempts = 0
        raw: Any = None
        response: dict[str, Any] | None = None
        error: dict[str, Any] | None = None
        while True:
            attempts += 1
            retryable = False
            if deadlines is not None:
                due[task] = perf_counter() + timeout_s
            try:
                if self._wait_for is not None:  # Python 3.10
                    raw = await asyncio.wait_for(query(case.query), self._wait_for)
                else:
                    raw = await query(case.query)
                response = normalize_response_data(raw, mode, safe=False)
                break
            except asyncio.CancelledError as exc:
                if deadlines is not None and deadlines.expired(task):
                    retryable = True
                    error = _timeout_error(c.timeout_s, attempts)
                elif self._cancelled or _cancel_requested(task):
                    raise
                else:  # the KB raised it itself (say, awaiting a task of its own that was cancelled)
                    error = _error(
                        "CancelledError", _STRAY_CANCEL.format("knowledge base", describe(exc)), False, attempts, exc
                    )
            except asyncio.TimeoutError:  # from wait_for, or raised by the KB itself
                retryable = True
                error = _timeout_error(c.timeout_s, attempts)
            except InvalidResponseError as exc:
                error = _error(type(exc).__name__, describe(exc), False, attempts, exc)
            except Exception as exc:  # noqa: BLE001 - any KB failure is this case's error
                retryable = getattr(exc, "retryable", False) is True or isinstance(exc, self.retry_on)
                error = _error(type(exc).__name__, describe(exc) or type(exc).__name__, retryable, attempts, exc)
            finally:
                if deadlines is not None:  # Deadlines.disarm, inline
                    due.pop(task, None)
                    if late:
                        deadlines.settle(task)
            if retryable and attempts <= c.retries:
                await asyncio.sleep(c.backoff_s * (2 ** (attempts - 1)))
                continue
            break
        query_ms = _elapsed_ms(started)
        scores: list[dict[str, Any]] = []
        failed_evaluators: list[str] | None = None
        if response is not None:
            error = None
            for evaluator in self.evaluators:
                try:
                    convention = evaluator.convention
                    if convention is NATIVE:  # a built-in: its score's JSON object, as it is
                        scores.append(evaluator.fn(case, response))
                        continue
                    if convention is KEYWORDS:
                        outcome = evaluator.fn(case=case, response=raw)
                    else:
                        outcome = evaluator.fn(case, raw)
                    if evaluator.is_async or inspect.isawaitable(outcome):
                        outcome = await outcome
                    data = score_data(outcome, evaluator.name)
                    if data["name"] != evaluator.name and self._collides(data["name"], scores):
                        raise ValueError(
                            f"it returned a score named {data['name']!r}, a name another evaluator's scores have"
                        )
                    scores.append(data)
                except asyncio.CancelledError as exc:
                    if self._cancelled or _cancel_requested(task):
                        raise
                    if failed_evaluators is None:
                        failed_evaluators = []
                    failed_evaluators.append(evaluator.name)
                    message = _STRAY_CANCEL.format("evaluator", describe(exc))
                    scores.append(_error_score(evaluator.name, "CancelledError", message))
                except Exception as exc:  # noqa: BLE001 - recorded in the score, response kept
                    if failed_evaluators is None:
                        failed_evaluators = []
                    failed_evaluators.append(evaluator.name)
                    scores.append(_error_score(evaluator.name, type(exc).__name__, describe(exc)))
        latency_ms = _elapsed_ms(started)
        extra: dict[str, Any] = {"case_index": case_index, "query_ms": query_ms, "attempts": attempts}
        if failed_evaluators:
            extra["evaluator_errors"] = failed_evaluators
        data = {
            "case_id": case.case_id,
            "query": case.query,
            "query_mode": mode,
            "scores": scores,
            "response": response,
            "latency_ms": latency_ms,
            "error": error,
            "metadata": {"benchmark_run_unit": unit_id, "knowledge_base_name": kb_name, "heta_nb": extra},
        }
        batch = self._batch
        batch.append(((unit_index, case_index, mode_index), unit_id, data, raw, perf_counter() - self._t0))
        if len(batch) == 1:
            self._loop_call_soon(self._flush_soon)  # at the end of this event-loop iteration
        elif len(batch) >= BATCH_LINES:
            self._flush()

    def _collides(self, name: str, scores: list[dict[str, Any]]) -> bool:
        """Whether a score named ``name`` (not its evaluator's name) would be a second one of that name.

        Two scores of one name in a case would be averaged together by the summary.
        """
        return any(e.name == name for e in self.evaluators) or any(s["name"] == name for s in scores)

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
            encode = self._encode_result
            records: list[CaseRecord] = []
            lines: list[bytes] = []
            for key, unit_id, data, raw, t in batch:
                try:
                    data, encoded = encode(data, raw, data["query_mode"])
                except Exception as exc:  # noqa: BLE001 - e.g. a response that contains itself
                    data, encoded = _unencodable(data, exc)
                result = _wrap_result(data)
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

    def _flush_soon(self) -> None:
        """:meth:`_flush` as an event-loop callback: if it fails, the run fails (not the loop's log)."""
        try:
            self._flush()
        except Exception as exc:  # noqa: BLE001 - re-raised by _run_unit
            self._failure = exc
            for task in self._workers:
                task.cancel()

    def _encode_result(self, data: dict[str, Any], raw: Any, mode: str) -> tuple[dict[str, Any], bytes]:
        """The result and its JSON; converts what is not plain JSON the way Heta would.

        The fast path shares the KB's dicts and lets orjson check them. When that
        fails (a foreign object, a non-string key), the response is rebuilt with
        Heta's ``_json_safe`` rules; a result that still cannot be encoded becomes an
        ``InvalidResponseError`` for this case. NaN and infinities among the scores and
        result scores are kept (written as ``NaN`` like Heta does, not as null).
        """
        try:
            encoded = _ORJSON(data) if _ORJSON is not None else dumps_bytes(data)
        except TypeError:
            return self._encode_converted(data, raw, mode)
        if _has_non_finite(data):  # orjson wrote them as null
            return self._encode_converted(data, raw, mode)
        return data, encoded

    def _encode_converted(self, data: dict[str, Any], raw: Any, mode: str) -> tuple[dict[str, Any], bytes]:
        if data["response"] is not None:
            data["response"] = normalize_response(raw, mode, safe=True).raw
        scores = []
        for score in data["scores"]:
            try:
                scores.append(to_json_value(score, f"score {score.get('name')!r}"))
            except (TypeError, ValueError, RecursionError) as exc:  # the evaluator's metadata: its error
                data["metadata"]["heta_nb"].setdefault("evaluator_errors", []).append(score.get("name"))
                scores.append(_error_score(score.get("name"), type(exc).__name__, describe(exc)))
        data["scores"] = scores
        try:
            safe = to_json_value(data, "result")
        except TypeError as exc:
            return _unencodable(data, exc)
        return safe, dumps_bytes_exact(safe)

    async def _finish(self, status: RunStatus, failure: str | None) -> EvaluationReport:
        c = self.config
        self._flush()
        finished_at = _utc_now()
        order = sorted(self._results)
        ordered = [self._results[key] for key in order]
        source = getattr(self, "source", None)
        if self.builder is not None and self.builder.knowledge_bases:
            kb_manifest = self.builder.knowledge_base_manifest()
            recipe_manifest = self.builder.recipe_manifest()
        elif self.builder is not None:
            kb_manifest, recipe_manifest = {}, self.builder.recipe_manifest()
        else:
            assert self.kb_adapter is not None
            kb_manifest = self.kb_adapter.manifest()
            if not kb_manifest.get("name"):
                kb_manifest["name"] = self.knowledge_base_name
            recipe = getattr(c.kb, "recipe", None)
            try:
                recipe_manifest = dict(recipe.manifest().to_dict()) if recipe is not None else {}
            except Exception:  # noqa: BLE001 - a foreign recipe object
                recipe_manifest = {}
        heta_nb_meta = {
            "version": __version__,
            "status": status,
            "total": getattr(self, "total", 0),
            "done": len(ordered),
            "remaining": max(0, getattr(self, "total", 0) - len(ordered)),
            "resumed": getattr(self, "resumed", 0),
            "errors": self._errors,
            "shard": {"index": c.shard[0], "count": c.shard[1], "base_report_id": self.base_report_id}
            if c.shard
            else None,
            "evaluators": [e.name for e in getattr(self, "evaluators", [])],
            "top_k": c.top_k,
            "query_options": self.recorded_options,
            "trace": c.trace,
            "concurrency": c.concurrency,
            "timeout_s": c.timeout_s,
            "retries": c.retries,
            "elapsed_s": round(self.now(), 3),
            "warnings": list(self._warnings),
        }
        if failure:
            heta_nb_meta["failure"] = failure
        metadata = {
            **self.metadata,
            "benchmark_document_keys": list(dict.fromkeys(getattr(self, "_document_keys", []))),
            "run_units": [u.to_dict() for u in getattr(self, "units", ())],
            "heta_nb": heta_nb_meta,
        }
        report = EvaluationReport.from_raw(
            {
                "schema_version": "1",
                "report_id": self.report_id,
                "report_key": None,
                "benchmark": dict(source.manifest.raw) if source is not None else {},
                "knowledge_base_name": self.knowledge_base_name,
                "knowledge_base_manifest": to_json_value(kb_manifest, "knowledge_base_manifest"),
                "recipe_manifest": to_json_value(recipe_manifest, "recipe_manifest"),
                "query_modes": list(self.modes),
                "score_summary": heta_score_summary(ordered),
                "case_results": [r.raw for r in ordered],
                "started_at": self.started_at,
                "finished_at": finished_at,
                "metadata": metadata,
            }
        )
        key = None
        checkpoint = self._checkpoint
        if self.store is not None:
            try:
                if checkpoint is not None:  # every line written; the lock is kept until the report is saved
                    checkpoint.flush()
                key = self.store.key_for(self.knowledge_base_name, self.report_id)
                saved = report.replace(report_key=key)
                encoded = self._encode(saved, [self._encoded.get(k) for k in order])
                await asyncio.to_thread(self.store.save, saved, overwrite=True, encoded=encoded)
            except Exception as exc:  # a full disk, say: the caller still gets every result
                key = None
                status = "failed"
                problem = f"the report could not be saved to {self.store.location}: {type(exc).__name__}: {exc}"
                failure = f"{failure}; {problem}" if failure else problem
                heta_nb_meta = {**heta_nb_meta, "status": status, "failure": failure}
                report = report.replace(metadata={**metadata, "heta_nb": heta_nb_meta})
            else:
                report = saved
                if status == "complete" and checkpoint is not None:
                    checkpoint.delete()
            finally:
                if checkpoint is not None:
                    checkpoint.close()
        self.report = report
        self.status, self.failure = status, failure
        self.emit(
            RunFinished(
                status=status,
                done=len(ordered),
                total=getattr(self, "total", 0),
                errors=self._errors,
                seconds=self.now(),
                report_key=key,
                error=failure,
                t=self.now(),
            )
        )
        return report

    @staticmethod
    def _encode(report: EvaluationReport, case_json: list[bytes | None]) -> list[bytes]:
        """``encode_report(report)`` as chunks, reusing the case results' checkpoint JSON."""
        chunks: list[bytes] = []
        for name, value in report.raw.items():
            chunks.append(b"," if chunks else b"{")
            if name == "case_results":
                chunks.append(b'"case_results":[')
                for index, (text, item) in enumerate(zip(case_json, value)):
                    if index:
                        chunks.append(b",")
                    chunks.append(text if text is not None else _encode_case(item))
                chunks.append(b"]")
            else:
                chunks.append(dumps_bytes_exact(name) + b":" + dumps_bytes_exact(value))
        chunks.append(b"}")
        return chunks


def _check_mode_spelling(modes: Sequence[str], known: frozenset[str] | None) -> None:
    """Refuse a mode that looks like a misspelling of one the Heta registry knows.

    Such a mode would fail on every query, after the KB was built; a name close to a
    registered one is almost surely a typo. Other unregistered modes are warned about
    and their cases recorded as errors, as Heta does.
    """
    if not known:
        return
    for mode in modes:
        if mode in known:
            continue
        close = difflib.get_close_matches(mode, sorted(known), n=1, cutoff=0.8)
        if close:
            raise RunError(
                f"query_modes: {mode!r} is not a registered query mode; did you mean {close[0]!r}? "
                f"(registered: {', '.join(sorted(known))})"
            )


def _prepared_evaluators(chosen: Sequence[Any]) -> list[PreparedEvaluator]:
    """The evaluators as the case loop calls them; their names must be unique.

    One evaluator given alone (a name, a function, an object) counts as a list of one.
    """
    if isinstance(chosen, str) or not hasattr(chosen, "__iter__"):
        chosen = [chosen]
    prepared = [PreparedEvaluator(as_evaluator(e)) for e in chosen]
    names = [e.name for e in prepared]
    duplicates = sorted({n for n in names if names.count(n) > 1})
    if duplicates:
        raise RunError(f"evaluator names must be unique (they are the report's score names): {duplicates}")
    return prepared


_STRAY_CANCEL = "the {} raised CancelledError, but nothing cancelled this run ({})"


def _cancel_requested(task: Any) -> bool:
    """Whether someone asked ``task`` to stop (always assumed on Python 3.10, which cannot tell)."""
    cancelling = getattr(task, "cancelling", None)
    return cancelling is None or cancelling() > 0


_RUNNER_METADATA = frozenset(("heta_nb", "run_units", "benchmark_document_keys"))
"""The report's metadata keys the runner writes (Heta writes the last two)."""


def _json_setting(value: Mapping[str, Any] | None, name: str) -> dict[str, Any]:
    """A mapping setting as JSON, or a :class:`RunError` saying what is wrong with it."""
    if value is not None and not isinstance(value, Mapping):
        raise RunError(f"{name} must be a mapping, got {type(value).__name__}")
    try:
        return to_json_value(dict(value or {}), name)  # type: ignore[no-any-return]
    except (TypeError, ValueError) as exc:
        raise RunError(str(exc)) from None
    except RecursionError:
        raise RunError(f"{name} is nested too deeply or contains itself") from None


def describe(exc: BaseException) -> str:
    """``str(exc)``, or a note when the exception's ``__str__`` itself fails."""
    try:
        return str(exc)
    except Exception:  # noqa: BLE001 - a broken __str__ must not cost the case
        return f"<{type(exc).__name__}; its message could not be read>"


def _unencodable(data: dict[str, Any], exc: BaseException) -> tuple[dict[str, Any], bytes]:
    """The result as an ``InvalidResponseError`` case: its response cannot be written as JSON."""
    data["response"] = None
    data["scores"] = []
    attempts = data["metadata"]["heta_nb"]["attempts"]
    message = f"the response cannot be written as JSON: {exc}"
    data["error"] = _error("InvalidResponseError", message, False, attempts)
    safe = to_json_value(data, "result")
    return safe, dumps_bytes_exact(safe)


def _encode_case(data: dict[str, Any]) -> bytes:
    return dumps_bytes_exact(data) if _has_non_finite(data) else dumps_bytes(data)


def _timeout_error(timeout_s: float | None, attempts: int) -> dict[str, Any]:
    return _error("TimeoutError", f"query did not finish within {timeout_s:g} s", True, attempts)


def _error_score(name: Any, error_type: str, message: str) -> dict[str, Any]:
    """The score of an evaluator that failed: value ``"error"``, the cause in ``metadata.error``."""
    return {
        "name": name,
        "value": "error",
        "passed": None,
        "metadata": {"error": {"type": error_type, "message": message[:2000]}},
    }


def _error(error_type: str, message: str, retryable: bool, attempts: int, exc: BaseException | None = None) -> dict:
    metadata: dict[str, Any] = {"attempts": attempts}
    if exc is not None and exc.__traceback__ is not None:
        lines = traceback.format_exception(type(exc), exc, exc.__traceback__)
        metadata["traceback"] = "".join(lines[-12:])[-4000:]
    return {"message": message, "error_type": error_type, "retryable": retryable, "metadata": metadata}


def subscriber_guard(subscribers: list[Callable[[Event], None]]) -> Callable[[Event], None]:
    """One emit function calling every subscriber; one that raises is warned about and detached."""

    def emit(event: Event) -> None:
        for subscriber in list(subscribers):
            try:
                subscriber(event)
            except Exception as exc:  # noqa: BLE001 - a display must never stop the run
                subscribers.remove(subscriber)
                warnings.warn(
                    f"heta_nb: event subscriber {subscriber!r} raised {type(exc).__name__}: {describe(exc)}; "
                    "it was detached",
                    RuntimeWarning,
                    stacklevel=2,
                )

    return emit
