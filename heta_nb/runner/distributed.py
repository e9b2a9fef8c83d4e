"""Where cases run with ``executor=``: batches of cases on Dask workers, their results streamed back.

The engine keeps everything else: the plan, the recipe builds, the checkpoint, the events
and the report. For each run unit, :meth:`DaskCases.run_unit` sends the unit's context
(settings, evaluators, the KB: see :mod:`heta_nb.runner.dask_worker`) to every worker once,
submits the unit's pending queries in batches, and hands each finished batch's encoded
results to the engine as it arrives (``distributed.as_completed``). A batch whose worker
died is run again elsewhere by Dask; one Dask gives up on (``KilledWorker``) is split, down
to single cases, and a case that kills its worker again when run alone is recorded as its
error (:mod:`heta_nb.runner.worker_deaths`); after a death, at most one batch per worker
thread is in flight. The engine skips results it already recorded,
so no case is lost or recorded twice. Cancelling cancels the batches' futures.

Needs the ``[dask]`` extra (``distributed`` is imported only when an executor is used).
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import math
import os
import threading
import uuid
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from heta_nb._util.text import describe_error
from heta_nb.evaluators import PreparedEvaluator
from heta_nb.runner.config import RunConfig
from heta_nb.runner.dask_worker import BatchTask, run_batch, unit_context, unit_payload
from heta_nb.runner.errors import RunError
from heta_nb.runner.plan import CaseTask, ResultKey
from heta_nb.runner.worker_deaths import Triage, death_kind, worker_died_result

__all__ = [
    "GUIDE",
    "MAX_BATCH",
    "MAX_BATCHES_PER_THREAD",
    "QUIET_WORKERS",
    "DaskCases",
    "RemoteUnit",
    "Take",
    "batch_sizes",
    "local_cluster",
]

GUIDE = 2
"""Guided self-scheduling: each batch takes ``1 / (GUIDE x threads)`` of the queries not yet
cut, so the first batches are large (Dask's cost per task stays small) and the last ones small
(a worker that finishes early is not left idle while another runs a large last batch)."""
MAX_BATCH = 256
"""The most queries in one batch (results come back batch by batch: progress moves in such steps)."""
MAX_BATCHES_PER_THREAD = 100
"""Batches are at least ``pending / (threads x this)`` queries (a floor on the number of tasks)."""

QUIET_WORKERS = {"distributed.worker.profile.enabled": False}
"""The Dask settings ``executor="dask"`` starts its workers with: Dask's statistical profiler
samples every worker thread's stack every 10 ms, which costs a CPU-bound KB's queries about a
third more CPU (measured by ``benchmarks/dask_evaluate.py``)."""

_ALL_IN = object()
"""What the feeder passes on once every case of the unit is in (its result, or its error)."""

Take = Callable[[str, Sequence[tuple[ResultKey, dict[str, Any], bytes]]], None]
"""The engine's hand for a finished batch: ``take(unit_id, [(key, result JSON object, its JSON)])``."""


def batch_sizes(pending: int, threads: int) -> list[int]:
    """The sizes of the batches ``pending`` queries are cut into for ``threads`` worker threads (largest first)."""
    threads = max(1, threads)
    smallest = max(1, math.ceil(pending / (threads * MAX_BATCHES_PER_THREAD)))
    sizes: list[int] = []
    left = pending
    while left > 0:
        size = min(left, MAX_BATCH, max(smallest, math.ceil(left / (GUIDE * threads))))
        sizes.append(size)
        left -= size
    return sizes


@dataclass(frozen=True)
class RemoteUnit:
    """One run unit's work for the workers."""

    unit_index: int
    unit_id: str
    kb_name: str
    kb: Any
    """What the workers query: the ``kb=`` object, or the unit's built Heta KB."""
    pending: Sequence[CaseTask]


class DaskCases:
    """Runs a run's cases on a Dask cluster (see the module docstring).

    Args:
        client: the ``dask.distributed.Client``.
        cluster: the ``LocalCluster`` started for ``executor="dask"`` (closed with :meth:`close`).
    """

    def __init__(self, client: Any, cluster: Any = None) -> None:
        self.client = client
        self.cluster = cluster
        workers = (client.scheduler_info() or {}).get("workers", {})
        self.info: dict[str, Any] = {
            "kind": "dask",
            "workers": len(workers),
            "threads": sum(int(w.get("nthreads", 1)) for w in workers.values()),
        }
        """What the report's ``metadata.heta_nb.executor`` records: kind, workers, threads (in all)."""
        self.kb_travel: str | None = None
        """How the last unit's KB reached the workers: ``"pickled"`` or ``"loaded"`` (from its object store)."""
        self.open_s: list[float] = []
        """Seconds each worker spent opening a unit's KB (unpickling or loading it)."""
        self._warned: set[str] = set()
        """The codes of the workers' warnings already passed on."""

    @classmethod
    async def open(cls, executor: Any) -> DaskCases:
        """The executor of ``executor=`` (``"dask"`` starts a ``LocalCluster`` of one process per CPU).

        A run cancelled while its cluster starts (a few seconds) does not leave the cluster
        running: it is closed as soon as it is up.
        """
        lock = threading.Lock()
        state: dict[str, Any] = {"cancelled": False, "opened": None}

        def start() -> DaskCases:
            opened = cls._open(executor)
            with lock:
                late = state["cancelled"]
                state["opened"] = opened
            if late:
                opened.close_now()
            return opened

        try:
            return await asyncio.to_thread(start)
        except asyncio.CancelledError:
            with lock:
                state["cancelled"] = True
                opened = state["opened"]
            if opened is not None:  # (up just as the run was cancelled: nobody else will close it)
                threading.Thread(target=opened.close_now, name="heta_nb-dask-close", daemon=True).start()
            raise

    @classmethod
    def _open(cls, executor: Any) -> DaskCases:
        if not (isinstance(executor, str) and executor == "dask"):
            return cls(executor)
        cluster = local_cluster(_usable_cpus())
        try:
            return cls(_distributed().Client(cluster), cluster)
        except BaseException:
            cluster.close()
            raise

    async def close(self) -> None:
        """Close the client and cluster :meth:`open` started (a given client stays open)."""
        await asyncio.to_thread(self.close_now)

    def close_now(self) -> None:
        """:meth:`close`, blocking."""
        if self.cluster is not None:
            cluster, self.cluster = self.cluster, None
            _close(self.client, cluster)

    async def run_unit(
        self,
        config: RunConfig,
        evaluators: Sequence[PreparedEvaluator],
        unit: RemoteUnit,
        take: Take,
        warn: Callable[[str, str], None],
    ) -> None:
        """Run ``unit``'s pending queries on the workers, handing each finished batch to ``take``.

        Raises:
            RunError: the KB cannot be sent to the workers, or a batch failed outside its cases
                (a worker that kept dying, say).
        """
        payload, self.kb_travel = await asyncio.to_thread(
            unit_payload, config, evaluators, unit.unit_id, unit.kb_name, unit.kb
        )
        token = f"heta_nb-{uuid.uuid4().hex[:16]}"
        tasks: list[BatchTask] = [
            ((unit.unit_index, case_index, mode_index), case, mode)
            for case_index, case, mode_index, mode in unit.pending
        ]
        batches: list[list[BatchTask]] = []
        start = 0
        for size in batch_sizes(len(tasks), self.info["threads"]):
            batches.append(tasks[start : start + size])
            start += size
        loop = asyncio.get_running_loop()
        arrived: asyncio.Queue[Any] = asyncio.Queue()
        live = _Live()
        stop = threading.Event()

        def put(item: Any) -> None:
            with contextlib.suppress(RuntimeError):  # (the run's loop is gone: nobody waits for it)
                loop.call_soon_threadsafe(arrived.put_nowait, item)

        feeder = threading.Thread(
            target=self._feed,
            args=(token, payload, batches, unit, live, stop, put),
            name="heta_nb-dask-results",
            daemon=True,
        )
        feeder.start()
        warned = self._warned
        try:
            while True:  # (a batch whose worker died comes back in parts: the feeder says when all are in)
                outcome = await arrived.get()
                if outcome is _ALL_IN:
                    break
                if isinstance(outcome, BaseException):
                    raise RunError(
                        f"executor: a batch of cases failed on Dask: {describe_error(outcome, 500, with_type=True)}"
                    ) from outcome
                if outcome["open_s"] is not None:
                    self.open_s.append(outcome["open_s"])
                take(unit.unit_id, outcome["results"])
                for code, message in outcome["warnings"]:
                    if code not in warned:  # (a local run warns once per run; a worker, once per batch)
                        warned.add(code)
                        warn(code, message)
        finally:
            stop.set()
            left = live.all()
            if left:
                self.client.cancel(left)  # (tells the scheduler: it does not wait for the workers)

    def _feed(
        self,
        token: str,
        payload: bytes,
        batches: list[list[BatchTask]],
        unit: RemoteUnit,
        live: _Live,
        stop: threading.Event,
        put: Callable[[Any], None],
    ) -> None:
        """Submit the batches and pass on each outcome as it arrives, then :data:`_ALL_IN` (runs in a thread).

        A batch whose worker died is split and sent again, and a case that kills its worker
        alone is passed on as its error (see :mod:`heta_nb.runner.worker_deaths`).
        """
        distributed = _distributed()
        import cloudpickle

        client = self.client
        names = itertools.count()
        held: dict[str, list[BatchTask]] = {}
        """The batches sent and not yet taken, by key."""
        flying: dict[str, Any] = {}
        """Their futures."""
        alone: set[str] = set()
        """The keys of suspects run alone (nothing else of the unit in flight)."""
        waiting: deque[tuple[list[BatchTask], bool]] = deque()
        """Batches to send (after a death: once fewer are in flight)."""
        careful: list[bool] = []
        threads = max(1, int(self.info["threads"]))
        triage = Triage()
        context: list[Any] = []
        completed = distributed.as_completed()

        def shared() -> Any:
            # The unit's context as a task, not scattered data: a worker that dies holding it does
            # not lose it (the scheduler runs the task again); one that failed is sent again.
            if not context or context[-1].status in ("error", "cancelled", "lost"):
                future = client.submit(unit_context, payload, pure=False, key=f"{token}-context-{len(context)}")
                context.append(future)  # (not in ``live``: released with the batches, never cancelled)
            return context[-1]

        def submit(batch: list[BatchTask], by_itself: bool = False) -> None:
            key = f"{token}-{next(names)}"  # (a batch as bytes: Dask would walk and hash its cases, 0.4 ms each)
            future = client.submit(run_batch, token, shared(), cloudpickle.dumps(batch), pure=False, key=key)
            held[key], flying[key] = batch, future
            if by_itself:
                alone.add(key)
            live.add([future])
            completed.add(future)

        def top_up() -> None:
            while waiting and (not careful or len(flying) < threads):
                submit(*waiting.popleft())

        def be_careful() -> None:
            # After a death, at most one batch a worker thread is in flight: Dask blames every task
            # a dying worker holds, so fewer held means fewer innocent batches split or suspected.
            if careful:
                return
            careful.append(True)
            queued = [future for future in flying.values() if not future.done()]
            client.cancel(queued)
            for future in queued:
                waiting.append((held.pop(future.key), future.key in alone))
                del flying[future.key]
                live.discard(future)

        try:
            waiting.extend((batch, False) for batch in batches)
            top_up()
            if stop.is_set():  # cancelled while the batches were being sent
                client.cancel(list(flying.values()))
                return
            while True:
                for future in completed:
                    key = future.key
                    batch = held.pop(key, None)
                    flying.pop(key, None)
                    if batch is None:  # (cancelled by be_careful, and queued again)
                        continue
                    if stop.is_set():
                        return
                    try:
                        outcome = future.result()
                    except BaseException as exc:  # noqa: BLE001 - sorted below
                        outcome = exc
                    live.discard(future)
                    del future  # released: Dask need not keep (or recompute) a batch already taken
                    if stop.is_set():
                        return
                    if not isinstance(outcome, BaseException):
                        put(outcome)
                        top_up()
                        continue
                    kind = death_kind(outcome, key)
                    if kind == "killed" or kind == "lost":
                        be_careful()
                    if kind == "lost" and triage.lost_again(batch):
                        waiting.appendleft((batch, key in alone))
                    elif kind != "killed":
                        put(outcome)
                        return
                    else:
                        again, killers = triage.killed(batch, alone=key in alone)
                        waiting.extendleft((part, False) for part in reversed(again))
                        if killers:
                            results = [worker_died_result(t, unit.unit_id, unit.kb_name, outcome) for t in killers]
                            put({"results": results, "warnings": [], "open_s": None})
                    top_up()
                if waiting:
                    top_up()
                    continue
                suspect = triage.next_suspect()
                if suspect is None:
                    break
                submit([suspect], True)  # alone: nothing else of the unit is in flight
            put(_ALL_IN)
        except BaseException as exc:  # noqa: BLE001 - the run fails with it
            if not stop.is_set():
                put(exc)
        finally:  # every future released now (a caught exception's traceback holds this frame)
            context.clear()
            flying.clear()


class _Live:
    """The futures of batches not yet taken (the feeder thread adds and discards, the run cancels)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._futures: set[Any] = set()

    def add(self, futures: Sequence[Any]) -> None:
        with self._lock:
            self._futures.update(futures)

    def discard(self, future: Any) -> None:
        with self._lock:
            self._futures.discard(future)

    def all(self) -> list[Any]:
        with self._lock:
            return list(self._futures)


def local_cluster(n_workers: int) -> Any:
    """A Dask ``LocalCluster`` of ``n_workers`` single-threaded processes, started with
    :data:`QUIET_WORKERS` (the cluster ``executor="dask"`` and a sweep's ``"dask"`` start)."""
    import logging

    from dask import config as dask_config

    with dask_config.set(QUIET_WORKERS):
        return _distributed().LocalCluster(
            n_workers=n_workers,
            threads_per_worker=1,
            processes=True,
            dashboard_address=":0",
            silence_logs=logging.ERROR,
        )


def _distributed() -> Any:
    """The ``distributed`` package (a clear error without the ``[dask]`` extra)."""
    from heta_nb._util.optional import require

    return require("distributed", extra="dask", purpose="executor=")


def _close(client: Any, cluster: Any) -> None:
    client.close()
    cluster.close()


def _usable_cpus() -> int:
    """CPUs this process may run on (its affinity where the OS says, else ``os.cpu_count()``)."""
    try:
        return max(1, len(os.sched_getaffinity(0)))  # type: ignore[attr-defined,unused-ignore]
    except (AttributeError, OSError):
        return max(1, os.cpu_count() or 1)
