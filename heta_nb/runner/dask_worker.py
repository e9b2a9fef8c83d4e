"""The Dask worker's side of ``executor=``: a run unit's KB opened once per worker, batches of cases run there.

A batch is a list of ``(result key, case, mode)``. It runs on the worker process's one
event loop (a daemon thread started on first use, so a KB's loop-bound state lives on one
loop), through the same :class:`~heta_nb.runner.case.CaseRunner` as a local run (timeouts,
retries, evaluators, evaluator timeouts), ``concurrency`` cases at a time, and each result
is encoded there with :func:`~heta_nb.runner.encode.encode_result`, as the engine encodes it.

The unit's context (settings, evaluators, the KB) arrives as cloudpickle bytes, unpickled
once per worker process and kept for the unit's next batches (see :class:`UnitContext`).
"""

from __future__ import annotations

import asyncio
import dataclasses
import os
import threading
import time
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from heta_nb._util.text import describe_error
from heta_nb.evaluators import PreparedEvaluator
from heta_nb.runner.case import EXITS, CaseRunner
from heta_nb.runner.config import RunConfig
from heta_nb.runner.encode import encode_result, unencodable
from heta_nb.runner.errors import RunError
from heta_nb.runner.kb import KnowledgeBaseAdapter

__all__ = ["BatchTask", "UnitContext", "no_kb", "run_batch", "unit_context", "unit_payload"]

BatchTask = tuple[tuple[int, int, int], Any, str]
"""``(result key, case, mode)``: one query of a batch (the key says where the result goes)."""

_KEPT = 2
"""Unit contexts a worker keeps open (a run's units go one after another)."""


def no_kb(query: str) -> None:
    """The ``kb`` of the settings a worker gets (its KB travels in :attr:`UnitContext.kb`)."""
    return None


@dataclass(frozen=True)
class UnitContext:
    """What every batch of one run unit needs on a worker.

    ``kb`` is the KB object itself (a ``kb=`` object or function, or the unit's built Heta
    KB), when it can be pickled. Otherwise ``recipe`` holds ``(recipe, name, query_engines)``
    and each worker loads the KB with Heta's ``KnowledgeBase.load`` from the recipe's object
    store, which must then be on a path the workers share.
    """

    config: RunConfig
    """The run's settings without the benchmark, KB, store or executor."""
    evaluators: list[Any]
    """The evaluators as given (prepared again on the worker: a prepared one's calling
    convention is compared by identity, which pickling does not keep)."""
    unit_id: str
    kb_name: str
    kb: Any = None
    recipe: tuple[Any, str, Any] | None = None


def unit_payload(
    config: RunConfig, evaluators: Sequence[PreparedEvaluator], unit_id: str, kb_name: str, kb: Any
) -> tuple[bytes, str]:
    """A unit's :class:`UnitContext` as cloudpickle bytes, and how the KB travels (``"pickled"``, ``"loaded"``).

    Raises:
        RunError: neither the KB nor its recipe can be pickled, or an evaluator cannot.
    """
    import cloudpickle

    slim = dataclasses.replace(
        config,
        benchmark=None,
        kb=no_kb,
        recipe=None,
        store=None,
        query_engines=None,
        workspace=None,
        metadata=None,
        executor=None,
        evaluators=None,
    )
    context = UnitContext(slim, [e.original for e in evaluators], unit_id, kb_name, kb=kb)
    try:
        return bytes(cloudpickle.dumps(context)), "pickled"
    except Exception as exc:  # noqa: BLE001 - said below, with the way out
        problem = describe_error(exc, 300, with_type=True)
    if config.recipe is not None:
        context = dataclasses.replace(context, kb=None, recipe=(config.recipe, kb_name, config.query_engines))
        try:
            return bytes(cloudpickle.dumps(context)), "loaded"
        except Exception as exc:  # noqa: BLE001
            problem += f"; its recipe: {describe_error(exc, 300, with_type=True)}"
    raise RunError(
        f"executor: the knowledge base (or an evaluator) cannot be sent to the Dask workers ({problem}); "
        "pass a picklable KB (an object or function cloudpickle can send) or run without executor="
    )


@dataclass(frozen=True)
class _Opened:
    """A unit context as a worker keeps it: its KB adapter and prepared evaluators."""

    context: UnitContext
    adapter: KnowledgeBaseAdapter
    evaluators: list[PreparedEvaluator]


class _WorkerSide:
    """This worker process's event loop and the unit contexts it opened."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.loop: asyncio.AbstractEventLoop | None = None
        self.opened: OrderedDict[str, _Opened] = OrderedDict()

    def event_loop(self) -> asyncio.AbstractEventLoop:
        with self.lock:
            return self._loop_unlocked()

    def open(self, token: str, payload: bytes) -> tuple[_Opened, float | None]:
        """The unit's context, KB adapter and evaluators, unpickled (and loaded) the first time; how long that took."""
        with self.lock:
            found = self.opened.get(token)
            if found is not None:
                return found, None
            import pickle

            started = time.perf_counter()
            context: UnitContext = pickle.loads(payload)  # noqa: S301 - made by this run's driver
            kb = context.kb
            if kb is None and context.recipe is not None:
                kb = asyncio.run_coroutine_threadsafe(_load(*context.recipe), self._loop_unlocked()).result()
            adapter = KnowledgeBaseAdapter(kb, threads=context.config.concurrency)
            opened = _Opened(context, adapter, [PreparedEvaluator(e) for e in context.evaluators])
            self.opened[token] = opened
            while len(self.opened) > _KEPT:
                self.opened.popitem(last=False)[1].adapter.close()
            return opened, time.perf_counter() - started

    def _loop_unlocked(self) -> asyncio.AbstractEventLoop:
        if self.loop is None:
            loop = asyncio.new_event_loop()
            threading.Thread(target=loop.run_forever, name="heta_nb-dask-cases", daemon=True).start()
            self.loop = loop
        return self.loop


_SIDE = _WorkerSide()


async def _load(recipe: Any, name: str, query_engines: Any) -> Any:
    """A built Heta KB, loaded from its recipe's object store."""
    from heta_framework.kb import KnowledgeBase

    return await KnowledgeBase.load(recipe=recipe, name=name, query_engines=query_engines)


def unit_context(payload: bytes) -> bytes:
    """The Dask task holding a unit's :func:`unit_payload` bytes for its batches.

    A task rather than scattered data: when the worker holding it dies, the scheduler runs
    it again (scattered data would be lost, and every batch with it).
    """
    return payload


def run_batch(token: str, payload: bytes, batch: bytes) -> dict[str, Any]:
    """Run one batch on this worker (a Dask task).

    Args:
        token: the unit context's identity (its payload is unpickled once per worker).
        payload: the :func:`unit_payload` bytes.
        batch: the batch's queries (a list of :data:`BatchTask`), pickled.

    Returns:
        ``{"results": [(key, result JSON object, its JSON bytes)], "warnings": [(code, message)],
        "open_s": seconds spent opening the KB here (None: it was open), "pid": this process}``.
    """
    import pickle

    tasks: list[BatchTask] = pickle.loads(batch)  # noqa: S301 - made by this run's driver
    opened, open_s = _SIDE.open(token, payload)
    future = asyncio.run_coroutine_threadsafe(_run(opened, tasks), _SIDE.event_loop())
    results, warnings = future.result()
    return {"results": results, "warnings": warnings, "open_s": open_s, "pid": os.getpid()}


async def _run(
    opened: _Opened, tasks: Sequence[BatchTask]
) -> tuple[list[tuple[tuple[int, int, int], dict[str, Any], bytes]], list[tuple[str, str]]]:
    """The batch's results, as the engine's workers make them, ``concurrency`` at a time."""
    context, adapter = opened.context, opened.adapter
    c = context.config
    warnings: list[tuple[str, str]] = []
    runner = CaseRunner(c, opened.evaluators, lambda: False, warn=lambda code, text: warnings.append((code, text)))
    queries = [adapter.caller(mode, top_k=c.top_k, options=c.query_options_json, trace=c.trace) for mode in c.modes]
    unit_id, kb_name = context.unit_id, context.kb_name
    finished: list[tuple[tuple[int, int, int], dict[str, Any], bytes]] = []
    pending = iter(tasks)

    async def worker() -> None:
        task = asyncio.current_task()
        for key, case, mode in pending:
            try:
                data, raw = await runner.run(task, queries[key[2]], unit_id, kb_name, key[1], case, mode)
            except EXITS as exc:  # a GeneratorExit a future of the KB failed with (see CaseRunner.run)
                if not runner.callee_exit(exc, task):
                    raise
                data, raw = runner.exit_result(exc, unit_id, kb_name, key[1], case, mode), None
            try:
                data, encoded = encode_result(data, raw, mode)
            except Exception as exc:  # noqa: BLE001 - e.g. a response that contains itself
                data, encoded = unencodable(data, exc)
            finished.append((tuple(key), data, encoded))  # type: ignore[arg-type]

    runner.deadlines.start()
    try:
        await asyncio.gather(*(worker() for _ in range(min(c.concurrency, len(tasks)))))
    finally:
        await runner.deadlines.stop()
    return finished, warnings
