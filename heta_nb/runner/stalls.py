"""A thread that notices a blocked event loop, and in which task it is blocked.

An ``async def query`` that calls blocking code (``time.sleep``, a synchronous HTTP
client, CPU-heavy work) holds the event loop: no other query, timeout or progress
update runs until it returns, so the watchdog cannot stop it at its timeout. The
:class:`StallMonitor` thread wakes every tick; when the loop's heartbeat (the
watchdog's last wake-up) is older than :attr:`Deadlines.stall_s`, it records the
task the loop is running, when it started blocking and when it was last seen blocking
(``[start, last, starved]``, each within a tick). The case runner looks at that record (a dict
lookup, only when the dict is not empty) after each call it makes.

A loop that only waits for a CPU (another process takes them all) is not blocked by
its task: where Linux tells (``/proc/self/task/<tid>/schedstat``: how long the thread
sat runnable on a run queue), that time is counted in the record (its third item) and
left out of the block, so a busy machine is not blamed on the KB.

Per case the thread costs nothing: it reads a float, and a small proc file, each tick.
It stops with the run (or with its loop).
"""

from __future__ import annotations

import asyncio
import collections
import threading
import time
from collections.abc import Callable
from typing import Any, Protocol

__all__ = [
    "MIN_INTERVAL_S",
    "Heartbeat",
    "StallMonitor",
    "blocked_message",
    "blocked_seconds",
    "runqueue_wait_reader",
]

MIN_INTERVAL_S = 0.02
"""The monitor thread wakes at most 50 times a second, whatever the tick."""


class Heartbeat(Protocol):
    """What the monitor reads and fills (:class:`~heta_nb.runner.deadlines.Deadlines` has it)."""

    beat: float
    """When the loop last beat (``perf_counter`` seconds)."""
    stalls: dict[Any, list[float]]
    """Task -> ``[start, last, starved]`` of its block, filled by the monitor (``starved``: seconds
    of it the loop thread only waited for a CPU)."""

    @property
    def monitor_interval(self) -> float:
        """Seconds between the monitor's looks."""
        ...

    @property
    def stall_s(self) -> float:
        """A beat older than this means the loop is blocked."""
        ...


def runqueue_wait_reader(native_id: int) -> Callable[[], float] | None:
    """A function reading how long thread ``native_id`` of this process has waited for a CPU
    (seconds, growing), or None where the system does not say (not Linux, no schedstat)."""
    path = f"/proc/self/task/{native_id}/schedstat"

    def read() -> float:
        with open(path, "rb") as handle:  # (procfs: a regular file that never blocks)
            return int(handle.read().split()[1]) / 1e9

    try:
        read()
    except (OSError, ValueError, IndexError):
        return None
    return read


class StallMonitor:
    """The thread that records, in ``deadlines.stalls``, the task a blocked loop is running.

    Args:
        deadlines: whose ``beat`` is the loop's heartbeat and whose ``stalls`` it fills.
        warn: receives (on the loop) a message if the monitor itself fails (it then stops; the run goes on).
    """

    def __init__(
        self,
        deadlines: Heartbeat,
        *,
        warn: Callable[[str], None] | None = None,
        runqueue_wait: Callable[[int], Callable[[], float] | None] = runqueue_wait_reader,
    ) -> None:
        self._deadlines = deadlines
        self._warn = warn
        self._runqueue_wait = runqueue_wait
        """``native thread id -> reader`` of the loop thread's CPU wait (tests pass their own)."""
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def start(self, loop: asyncio.AbstractEventLoop) -> None:
        """Start watching ``loop`` (the running loop of the caller)."""
        if self._thread is not None:
            return
        self._stop = threading.Event()  # (a thread a slow stop() gave up joining keeps its own, set, event)
        waited = self._runqueue_wait(threading.get_native_id())  # (start runs on the loop's thread)
        self._thread = threading.Thread(
            target=self._run, args=(loop, self._stop, waited), name="heta_nb-loop-monitor", daemon=True
        )
        self._thread.start()

    def stop(self) -> None:
        """Stop the thread and wait for it (at most one interval); idempotent, from any thread."""
        thread, self._thread = self._thread, None
        self._stop.set()
        if thread is not None and thread is not threading.current_thread():
            thread.join(timeout=1.0)

    def _run(self, loop: asyncio.AbstractEventLoop, stop: threading.Event, waited: Callable[[], float] | None) -> None:
        deadlines = self._deadlines
        interval = deadlines.monitor_interval
        stall_s = deadlines.stall_s
        stalls = deadlines.stalls
        previous: Any = None
        previous_at = 0.0
        # (when, the loop thread's CPU wait then): the looks of the last few stall thresholds
        looks: collections.deque[tuple[float, float]] = collections.deque(maxlen=4 * int(stall_s / interval) + 4)
        wait_start = 0.0
        try:
            while not stop.wait(interval):
                if loop.is_closed():
                    return
                since = deadlines.beat
                now = time.perf_counter()
                wait_now = waited() if waited is not None else 0.0
                looks.append((now, wait_now))
                if now - since <= stall_s:
                    previous = None
                    continue
                task: Any = asyncio.current_task(loop)  # the task the loop is stuck in (None: between tasks)
                if task is None:
                    previous = None
                    continue
                record = stalls.get(task)
                if record is None:  # it started blocking at the last beat, or after the task seen last
                    start = since if previous is None else previous_at
                    # its CPU wait counts from the last look at or before its start (or the oldest kept)
                    wait_start = next((w for t, w in reversed(looks) if t <= start), looks[0][1])
                    stalls[task] = [start, now, wait_now - wait_start]
                else:
                    record[1] = now
                    record[2] = wait_now - wait_start  # seconds the loop thread only waited for a CPU
                previous, previous_at = task, now
        except Exception as exc:  # noqa: BLE001 - a monitor must never take the run down
            if self._warn is not None and not loop.is_closed():
                message = f"the event-loop monitor stopped: {type(exc).__name__}: {exc}"
                try:
                    loop.call_soon_threadsafe(self._warn, message)  # warnings are emitted on the loop
                except RuntimeError:  # closed meanwhile
                    pass


def blocked_seconds(record: list[float], now: float, interval: float) -> float:
    """How long a task blocked the loop, from its ``stalls`` record, read at ``now`` (within a tick).

    The block ended after the monitor last saw it (``record[1]``) and at most one
    ``interval`` later, or earlier still if ``now`` is (a call that returns the moment
    it stops blocking is read at once). The time the loop thread only waited for a CPU
    (``record[2]``, where the system says) is not the task's.
    """
    starved = record[2] if len(record) > 2 else 0.0
    return max(0.0, min(now, record[1] + interval) - record[0] - starved)


def blocked_message(what: str, seconds: float, fix: str) -> str:
    """``"the KB blocked the event loop for 2.5 s: <fix>"``."""
    return f"{what} blocked the event loop for {seconds:.1f} s: {fix}"
