"""Running one pair wherever it was sent (this thread, a worker process, a Dask worker).

A pair is one ``heta_nb.evaluate`` call: a factory's recipe is made in the pair's own
folder, the report goes to the sweep's store, and the run's events are folded into small
plain-dict updates (phase, results done, errors, the build step) sent to the driver
through a *sink*: a direct call in this process, a multiprocessing queue from a worker
process, a Dask event topic from a Dask worker. Updates are throttled here (phase
changes always go at once), so a fast run never floods the driver.
"""

from __future__ import annotations

import os
import pickle
import threading
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from heta_nb._util.text import describe_error
from heta_nb.runner.events import Event
from heta_nb.runner.state import RunState, reduce
from heta_nb.sweeps.plan import PairSpec

__all__ = [
    "UPDATE_INTERVAL",
    "Sink",
    "cancel_running",
    "dumps",
    "init_process",
    "run_on_dask",
    "run_pair",
    "run_payload",
]

UPDATE_INTERVAL = 0.2
"""Seconds between two progress updates of one pair (phase changes are sent at once)."""

Sink = Callable[[dict[str, Any]], None]

_QUEUE: Any = None
"""The multiprocessing queue of a worker process (set by :func:`init_process`)."""
_RUNS: dict[int, Any] = {}
"""The runs going on in this process, by pair (what :func:`cancel_running` cancels)."""
_RUNS_LOCK = threading.Lock()


def dumps(spec: PairSpec) -> bytes:
    """``spec`` as bytes for another process: cloudpickle (functions defined in a notebook travel by value)."""
    import cloudpickle

    return bytes(cloudpickle.dumps(spec))


class _Reporter:
    """Folds a run's events and sends an update per phase change, and at most every ``UPDATE_INTERVAL`` s."""

    def __init__(self, index: int, sink: Sink, *, builds: bool) -> None:
        self.index = index
        self.builds = builds
        self.sink = sink
        self.state = RunState()
        self.phase = ""
        self.last = 0.0
        self.seq = 0

    def send(self, phase: str, **extra: Any) -> None:
        state = self.state
        self.seq += 1
        update = {
            "pair": self.index,
            "seq": self.seq,
            "phase": phase,
            "done": state.done,
            "total": state.total,
            "errors": state.errors,
            "resumed": state.resumed,
            **extra,
        }
        self.phase = phase
        self.last = time.monotonic()
        try:
            self.sink(update)
        except Exception:  # noqa: BLE001 - progress must never fail the run
            pass

    def __call__(self, event: Event) -> None:
        self.state = state = reduce(self.state, event)
        kind = event.kind
        if kind == "run_finished":
            return  # the outcome says how it ended
        if kind in ("build_started", "build_step"):
            running = [name for name, status in state.build_steps if status == "running"]
            self.send("building", step=running[-1] if running else None)
        elif kind == "build_finished" or (kind in ("run_started", "unit_started") and not self.builds):
            self.send("running", step=None)
        elif kind in ("run_started", "unit_started"):
            self.send(self.phase or "building")  # the totals; a recipe's KB is built next
        elif kind in ("cases_finished", "case_finished") and (
            self.phase != "running" or time.monotonic() - self.last >= UPDATE_INTERVAL
        ):
            self.send("running", step=None)


def cancel_running() -> int:
    """Cancel every pair running in this process (their partial reports are kept); returns how many."""
    with _RUNS_LOCK:
        runs = list(_RUNS.values())
    for run in runs:
        run.cancel()
    return len(runs)


def _evaluate(spec: PairSpec, reporter: _Reporter) -> Any:
    from heta_nb.api import start

    keyword: dict[str, Any]
    if spec.kind == "factory":
        folder = Path(spec.folder or ".")
        folder.mkdir(parents=True, exist_ok=True)
        keyword = {"recipe": spec.system(folder)}
    elif spec.kind == "recipe":
        keyword = {"recipe": spec.system}
    else:
        keyword = {"kb": spec.system}
    run = start(
        spec.bench,
        **keyword,
        store=spec.store,
        report_id=spec.report_id,
        knowledge_base_name=spec.recipe,
        # a fresh pair resumes too: run again after its worker died (Dask reschedules it), it takes
        # over the checkpoint it left instead of being refused; with nothing stored it starts afresh
        resume=spec.store is not None and spec.start in ("fresh", "resume"),
        overwrite=spec.start == "overwrite",
        metadata=spec.metadata,
        progress=reporter,
        **spec.settings,
    )
    with _RUNS_LOCK:
        _RUNS[spec.index] = run
    try:
        return run.result()
    finally:
        with _RUNS_LOCK:
            _RUNS.pop(spec.index, None)


def run_pair(spec: PairSpec, sink: Sink, *, encode: bool = False) -> dict[str, Any]:
    """Run one pair to its end and say how it ended (never raises for the pair's own failures).

    Args:
        spec: the pair.
        sink: where progress updates go.
        encode: return the report as its JSON bytes (to another process) instead of the object.

    Returns:
        ``{"pair", "phase" ("done", "cancelled" or "failed"), "report" (object, bytes or None),
        "error", "seconds", "worker"}``.
    """
    reporter = _Reporter(spec.index, sink, builds=spec.kind != "kb")
    started = time.perf_counter()
    reporter.send("building" if spec.kind != "kb" else "running")
    outcome: dict[str, Any] = {"pair": spec.index, "report": None, "error": None, "worker": _worker_name()}
    try:
        report = _evaluate(spec, reporter)
    except Exception as exc:  # noqa: BLE001 - one pair's failure is reported, the sweep goes on
        outcome.update(phase="failed", error=describe_error(exc, 500, with_type=True))
    else:
        info = report.metadata.get("heta_nb")
        status = info.get("status", "complete") if isinstance(info, Mapping) else "complete"
        outcome["phase"] = {"complete": "done", "cancelled": "cancelled"}.get(status, "failed")
        if outcome["phase"] == "cancelled":
            outcome["error"] = "cancelled; its partial report is kept and a re-run resumes it"
        if outcome["phase"] == "failed":
            failure = info.get("failure") if isinstance(info, Mapping) else None
            outcome["error"] = str(failure or f"the run ended {status}")[:500]
        if encode:
            from heta_nb.model.io import encode_report

            outcome["report"] = encode_report(report)
        else:
            outcome["report"] = report
        outcome["report_key"] = report.report_key
    final = reporter.state
    outcome.update(seconds=time.perf_counter() - started, done=final.done, total=final.total, errors=final.errors)
    return outcome


def _worker_name() -> str:
    return f"pid {os.getpid()}"


def init_process(queue: Any) -> None:
    """A worker process's initializer: its updates go to ``queue``."""
    global _QUEUE
    _QUEUE = queue


def run_payload(payload: bytes) -> dict[str, Any]:
    """Run a pickled pair in a worker process (sending updates to the queue of :func:`init_process`)."""
    spec = pickle.loads(payload)  # noqa: S301 - the payload was made by this sweep's driver
    queue = _QUEUE
    return run_pair(spec, queue.put if queue is not None else _ignore, encode=True)


def run_on_dask(payload: bytes, topic: str) -> dict[str, Any]:
    """Run a pickled pair on a Dask worker (sending updates as events of ``topic``)."""
    from distributed import get_worker

    worker = get_worker()
    spec = pickle.loads(payload)  # noqa: S301 - the payload was made by this sweep's driver
    outcome = run_pair(spec, lambda update: worker.log_event(topic, update), encode=True)
    outcome["worker"] = str(worker.address)
    return outcome


def _ignore(update: dict[str, Any]) -> None:
    return None
