"""Where a sweep's pairs run: in this thread, a thread pool, a process pool, or on Dask.

The driver (:class:`Driver`) holds the :class:`~heta_nb.sweeps.status.SweepState`,
folds the workers' updates into it under a lock and tells the progress view. How much
parallelism buys: a Heta full-text KB scores every chunk in Python on every query, so
its pairs are CPU-bound and threads share one interpreter lock (no faster than one
after another); processes and Dask workers run pairs truly side by side, at the cost
of starting each worker (imports, a first KB build) and pickling the pair to it.
``"auto"`` picks processes when there are several pairs and several CPUs.
"""

from __future__ import annotations

import multiprocessing
import os
import queue as queue_module
import threading
import time
import uuid
from collections.abc import Callable, Sequence
from concurrent.futures import Future, ProcessPoolExecutor, ThreadPoolExecutor, as_completed
from dataclasses import dataclass, replace
from typing import Any

from heta_nb._util.text import describe_error
from heta_nb.runner.worker_deaths import death_kind
from heta_nb.sweeps.plan import PairSpec, SweepError
from heta_nb.sweeps.status import PairStatus, SweepState, apply_update
from heta_nb.sweeps.worker import cancel_running, dumps, init_process, run_on_dask, run_pair, run_payload

__all__ = [
    "EXECUTORS",
    "PRELOAD",
    "Driver",
    "Placement",
    "choose_executor",
    "initial_state",
    "run_pairs",
    "usable_cpus",
]

EXECUTORS = ("auto", "serial", "threads", "processes", "dask")
"""What ``executor=`` takes as a string (or a ``dask.distributed.Client``)."""


def usable_cpus() -> int:
    """CPUs this process may run on (its affinity where the OS says, else ``os.cpu_count()``)."""
    try:
        return max(1, len(os.sched_getaffinity(0)))  # type: ignore[attr-defined,unused-ignore]
    except (AttributeError, OSError):
        return max(1, os.cpu_count() or 1)


@dataclass
class Placement:
    """The chosen executor: its kind, how many pairs run at once, and the Dask client if any."""

    kind: str
    workers: int
    client: Any = None
    own_cluster: Any = None
    """A ``LocalCluster`` this sweep started (closed when it ends)."""

    @property
    def description(self) -> str:
        """In words: ``"2 processes"``, ``"Dask (2 workers)"``..."""
        if self.kind == "dask":
            return f"Dask ({self.workers} worker{'s' if self.workers != 1 else ''})"
        if self.kind == "serial":
            return "one after another, in this process"
        noun = {"threads": "thread", "processes": "process"}[self.kind]
        plural = "es" if noun == "process" else "s"
        return f"{self.workers} {noun}{plural if self.workers != 1 else ''}"

    @property
    def dashboard(self) -> str | None:
        """The Dask dashboard's address (None without Dask)."""
        return str(getattr(self.client, "dashboard_link", "") or "") or None

    def close(self) -> None:
        """Close the Dask client and cluster this sweep started."""
        if self.own_cluster is not None:
            self.client.close()
            self.own_cluster.close()


def choose_executor(executor: Any, max_workers: int | None, pairs: int) -> Placement:
    """The :class:`Placement` for ``executor=`` and ``max_workers=``.

    Raises:
        SweepError: an unknown executor or a bad ``max_workers``.
    """
    if max_workers is not None and (
        isinstance(max_workers, bool) or not isinstance(max_workers, int) or max_workers < 1
    ):
        raise SweepError(f"max_workers must be an integer >= 1, got {max_workers!r}")
    if executor is None:
        executor = "auto"
    if not isinstance(executor, str):
        if type(executor).__name__ == "Client" and hasattr(executor, "submit"):
            workers = len((executor.scheduler_info() or {}).get("workers", {})) or 1
            return Placement("dask", max_workers or workers, client=executor)
        raise SweepError(
            f"executor must be one of {', '.join(map(repr, EXECUTORS))} or a dask.distributed.Client, "
            f"got {type(executor).__name__}"
        )
    if executor not in EXECUTORS:
        raise SweepError(f"executor must be one of {', '.join(map(repr, EXECUTORS))} or a Client, got {executor!r}")
    cpus = usable_cpus()
    size = max(1, min(pairs, max_workers or cpus))
    if executor == "auto":
        executor = "processes" if size > 1 else "serial"
    if executor == "serial":
        return Placement("serial", 1)
    if executor == "dask":
        from heta_nb._util.optional import require

        require("distributed", extra="dask", purpose='executor="dask"')
        from distributed import Client

        from heta_nb.runner.distributed import local_cluster

        n = max_workers or cpus
        cluster = local_cluster(n)
        return Placement("dask", n, client=Client(cluster), own_cluster=cluster)
    return Placement(executor, size)


class Driver:
    """The sweep's state, folded from updates as they arrive (from any thread).

    Args:
        state: the state to start from.
        on_change: called with each new state (the progress view throttles itself).
        clock: the driver's clock.
    """

    def __init__(
        self,
        state: SweepState,
        on_change: Callable[[SweepState], None] | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._lock = threading.Lock()
        self.state = replace(state, started=clock(), now=clock())
        self.on_change = on_change
        self.clock = clock
        self.outcomes: dict[int, dict[str, Any]] = {}

    def post(self, update: dict[str, Any]) -> None:
        """Fold one update (safe from any thread)."""
        with self._lock:
            self.state = state = apply_update(self.state, update, self.clock())
        if self.on_change is not None:
            try:
                self.on_change(state)
            except Exception:  # noqa: BLE001 - a broken view must not stop the sweep
                self.on_change = None

    def finish(self, outcome: dict[str, Any]) -> None:
        """Record how a pair ended."""
        self.outcomes[int(outcome["pair"])] = outcome
        update = {"pair": outcome["pair"], "phase": outcome["phase"], "message": outcome.get("error")}
        update.update({k: outcome[k] for k in ("done", "total", "errors") if outcome.get("total")})
        if outcome.get("report_key"):
            update["report_key"] = outcome["report_key"]
        self.post(update)

    def fail(self, spec: PairSpec, exc: BaseException, hint: str = "") -> None:
        """Record a pair whose worker failed outside the run (pickling, a killed process...)."""
        error = describe_error(exc, 500, with_type=True) + hint
        self.finish({"pair": spec.index, "phase": "failed", "error": error})

    def cancel_unfinished(self) -> None:
        """Mark every pair not finished as cancelled (an interrupted sweep)."""
        for pair in self.state.pairs:
            if not pair.is_finished:
                self.post({"pair": pair.index, "phase": "cancelled", "message": "the sweep was interrupted"})

    def tick(self) -> None:
        """Advance the clock (ETA and elapsed time move on while nothing arrives)."""
        with self._lock:
            self.state = state = replace(self.state, now=self.clock())
        if self.on_change is not None:
            self.on_change(state)


def initial_state(specs: Sequence[PairSpec], placement: Placement) -> SweepState:
    """Every pair queued."""
    return SweepState(
        pairs=tuple(PairStatus(s.index, s.recipe, s.benchmark) for s in specs),
        executor=placement.description,
        workers=placement.workers,
        dashboard=placement.dashboard,
    )


def run_pairs(specs: Sequence[PairSpec], placement: Placement, driver: Driver) -> bool:
    """Run ``specs`` as ``placement`` says; each outcome lands in ``driver.outcomes``.

    Returns:
        False when the sweep was interrupted (Ctrl-C, the kernel's stop button): pairs
        not finished are marked cancelled; what finished is kept.
    """
    if not specs:
        return True
    runner = {"serial": _serial, "threads": _threads, "processes": _processes, "dask": _dask}[placement.kind]
    try:
        runner(specs, placement, driver)
    except KeyboardInterrupt:
        cancel_running()
        driver.cancel_unfinished()
        return False
    return True


def _serial(specs: Sequence[PairSpec], placement: Placement, driver: Driver) -> None:
    for spec in specs:
        outcome = run_pair(spec, driver.post)
        driver.finish(outcome)
        if outcome["phase"] == "cancelled":
            # Ctrl-C reached the run itself (it waits on this thread), which cancelled it: stop the sweep
            raise KeyboardInterrupt


def _wait(futures: dict[Future[Any], PairSpec], driver: Driver) -> None:
    for future in as_completed(futures):
        try:
            driver.finish(future.result())
        except Exception as exc:  # noqa: BLE001 - the pair failed outside its run
            driver.fail(futures[future], exc, hint=_hint(exc))


def _hint(exc: BaseException) -> str:
    """Why a process pool broke, when the usual reason applies: a script without a main guard."""
    import sys

    if type(exc).__name__ == "BrokenProcessPool" and getattr(sys.modules.get("__main__"), "__file__", None):
        return (
            "; worker processes import the main script: in a script, call sweep() under "
            '`if __name__ == "__main__":` (or pass executor="threads")'
        )
    return ""


def _threads(specs: Sequence[PairSpec], placement: Placement, driver: Driver) -> None:
    pool = ThreadPoolExecutor(placement.workers, thread_name_prefix="heta_nb-sweep")
    try:
        _wait({pool.submit(run_pair, spec, driver.post): spec for spec in specs}, driver)
    finally:
        pool.shutdown(wait=False, cancel_futures=True)


PRELOAD = ["heta_nb.sweeps.worker", "heta_nb.api", "heta_framework.kb"]
"""What the fork server imports once, for every worker (an absent one is skipped)."""


def _context() -> Any:
    """``forkserver`` where there is one (no fork of a threaded kernel), else ``spawn``.

    The fork server preloads heta_nb (and Heta) but not ``__main__``: a script without an
    ``if __name__ == "__main__":`` guard still works, and what a notebook or script defines
    travels by value (cloudpickle).
    """
    if "forkserver" in multiprocessing.get_all_start_methods():
        context = multiprocessing.get_context("forkserver")
        context.set_forkserver_preload(PRELOAD)
        return context
    return multiprocessing.get_context("spawn")


def _processes(specs: Sequence[PairSpec], placement: Placement, driver: Driver) -> None:
    payloads = {}
    for spec in specs:
        try:
            payloads[spec.index] = dumps(spec)
        except Exception as exc:  # noqa: BLE001 - said per pair, with the way out
            raise SweepError(
                f"{spec.label}: cannot be sent to a worker process ({describe_error(exc, 200, with_type=True)}); "
                'pass executor="threads" (or "serial") to run it in this process'
            ) from exc
    context = _context()
    updates = context.Queue()
    stop = threading.Event()

    def drain() -> None:
        while not stop.is_set():
            try:
                driver.post(updates.get(timeout=0.1))
            except queue_module.Empty:
                continue
            except (EOFError, OSError):  # the queue closed under us
                return

    reader = threading.Thread(target=drain, name="heta_nb-sweep-updates", daemon=True)
    reader.start()
    pool = ProcessPoolExecutor(placement.workers, mp_context=context, initializer=init_process, initargs=(updates,))
    interrupted = False
    try:
        _wait({pool.submit(run_payload, payloads[spec.index]): spec for spec in specs}, driver)
    except KeyboardInterrupt:
        interrupted = True
        raise
    finally:
        if interrupted:
            for process in list(getattr(pool, "_processes", {}).values()):
                process.terminate()  # their checkpoints stay: a re-run resumes them
        pool.shutdown(wait=not interrupted, cancel_futures=True)
        stop.set()
        reader.join(timeout=2)
        _flush(updates, driver)


def _flush(updates: Any, driver: Driver) -> None:
    """Fold updates still queued (an outcome is final: they cannot reopen a finished pair)."""
    while True:
        try:
            driver.post(updates.get_nowait())
        except (queue_module.Empty, EOFError, OSError):
            return


def _dask(specs: Sequence[PairSpec], placement: Placement, driver: Driver) -> None:
    from distributed import as_completed as dask_completed

    client = placement.client
    topic = f"heta_nb-sweep-{uuid.uuid4().hex[:12]}"
    client.subscribe_topic(topic, lambda event: driver.post(event[1]))
    futures = {}
    try:
        for spec in specs:
            future = client.submit(run_on_dask, dumps(spec), topic, pure=False, key=f"{topic}-{spec.index}")
            futures[future] = spec
        for future in dask_completed(list(futures)):
            try:
                driver.finish(future.result())
            except Exception as exc:  # noqa: BLE001 - the pair failed outside its run
                if death_kind(exc, str(future.key)) != "killed":
                    driver.fail(futures[future], exc)
                    continue
                # Its worker died (a case that kills it, most likely): the pair runs again from here
                # with its cases on the cluster, where a case that kills its worker is found and
                # recorded as its error (runner/worker_deaths); it resumes from its checkpoint.
                spec = futures[future]
                driver.finish(run_pair(replace(spec, settings={**spec.settings, "executor": client}), driver.post))
    except KeyboardInterrupt:
        client.cancel(list(futures))
        raise
    finally:
        client.unsubscribe_topic(topic)
