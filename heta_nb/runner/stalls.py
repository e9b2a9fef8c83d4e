"""A thread that notices a blocked event loop, and in which task it is blocked.

An ``async def query`` that calls blocking code (``time.sleep``, a synchronous HTTP
client, CPU-heavy work) holds the event loop: no other query, timeout or progress
update runs until it returns, so the watchdog cannot stop it at its timeout. The
:class:`StallMonitor` thread wakes every tick; when the loop's heartbeat (the
watchdog's last wake-up) is older than :attr:`Deadlines.stall_s`, it records the
task the loop is running, when it started blocking and when it was last seen blocking
(``[start, last]``, each within a tick). The case runner looks at that record (a dict
lookup, only when the dict is not empty) after each call it makes.

Per case the thread costs nothing: it only reads a float each tick. It stops with
the run (or with its loop).
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Callable
from typing import Any, Protocol

__all__ = ["MIN_INTERVAL_S", "Heartbeat", "StallMonitor", "blocked_message", "blocked_seconds"]

MIN_INTERVAL_S = 0.02
"""The monitor thread wakes at most 50 times a second, whatever the tick."""


class Heartbeat(Protocol):
    """What the monitor reads and fills (:class:`~heta_nb.runner.deadlines.Deadlines` has it)."""

    beat: float
    """When the loop last beat (``perf_counter`` seconds)."""
    stalls: dict[Any, list[float]]
    """Task -> ``[start, last]`` of its block, filled by the monitor."""

    @property
    def monitor_interval(self) -> float:
        """Seconds between the monitor's looks."""
        ...

    @property
    def stall_s(self) -> float:
        """A beat older than this means the loop is blocked."""
        ...


class StallMonitor:
    """The thread that records, in ``deadlines.stalls``, the task a blocked loop is running.

    Args:
        deadlines: whose ``beat`` is the loop's heartbeat and whose ``stalls`` it fills.
        warn: receives (on the loop) a message if the monitor itself fails (it then stops; the run goes on).
    """

    def __init__(self, deadlines: Heartbeat, *, warn: Callable[[str], None] | None = None) -> None:
        self._deadlines = deadlines
        self._warn = warn
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def start(self, loop: asyncio.AbstractEventLoop) -> None:
        """Start watching ``loop`` (the running loop of the caller)."""
        if self._thread is not None:
            return
        self._stop = threading.Event()  # (a thread a slow stop() gave up joining keeps its own, set, event)
        self._thread = threading.Thread(
            target=self._run, args=(loop, self._stop), name="heta_nb-loop-monitor", daemon=True
        )
        self._thread.start()

    def stop(self) -> None:
        """Stop the thread and wait for it (at most one interval); idempotent, from any thread."""
        thread, self._thread = self._thread, None
        self._stop.set()
        if thread is not None and thread is not threading.current_thread():
            thread.join(timeout=1.0)

    def _run(self, loop: asyncio.AbstractEventLoop, stop: threading.Event) -> None:
        deadlines = self._deadlines
        interval = deadlines.monitor_interval
        stall_s = deadlines.stall_s
        stalls = deadlines.stalls
        previous: Any = None
        previous_at = 0.0
        try:
            while not stop.wait(interval):
                if loop.is_closed():
                    return
                since = deadlines.beat
                now = time.perf_counter()
                if now - since <= stall_s:
                    previous = None
                    continue
                task: Any = asyncio.current_task(loop)  # the task the loop is stuck in (None: between tasks)
                if task is None:
                    previous = None
                    continue
                record = stalls.get(task)
                if record is None:  # it started blocking at the last beat, or after the task seen last
                    stalls[task] = [since if previous is None else previous_at, now]
                else:
                    record[1] = now
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
    it stops blocking is read at once).
    """
    return min(now, record[1] + interval) - record[0]


def blocked_message(what: str, seconds: float, fix: str) -> str:
    """``"the KB blocked the event loop for 2.5 s: <fix>"``."""
    return f"{what} blocked the event loop for {seconds:.1f} s: {fix}"
