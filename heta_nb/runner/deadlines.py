"""Timeouts of the queries and async evaluators in flight, kept by one watchdog task.

``asyncio.timeout`` schedules and cancels a timer for every query (about 6 µs each,
a large share of the runner's per-case cost with a fast KB). Here a worker only
records when its call must end (a dict assignment); one watchdog wakes every tick
(a twentieth of the shortest timeout, at most 0.25 s) and cancels the workers whose
call is late. A call may thus run up to 5 % longer than its timeout before it is stopped.

The watchdog's wake-ups are also the event loop's heartbeat: a
:class:`~heta_nb.runner.stalls.StallMonitor` thread that sees it stop knows the loop is
blocked, and in which task. Time the loop spent blocked is not counted against the
deadlines of the calls that were waiting (they could not run either); the call that
blocked it is judged by how long it blocked (see :mod:`heta_nb.runner.case`).

Cancelling needs Python 3.11+ (``Task.uncancel``); on older versions the case runner
uses ``asyncio.wait_for`` and the watchdog only beats.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable

from heta_nb.runner.stalls import MIN_INTERVAL_S, StallMonitor

__all__ = ["MAX_TICK_S", "SUPPORTED", "Deadlines"]

SUPPORTED = hasattr(asyncio.Task, "uncancel")

_MIN_TICK_S = 0.002
MAX_TICK_S = 0.25
"""The longest the watchdog sleeps: the heartbeat a stall is measured against."""


class Deadlines:
    """When each worker's current call must end, one entry per worker task.

    A worker calls :meth:`arm` before its call and :meth:`disarm` after it (in a
    ``finally``). When the watchdog cancels it, the worker sees ``CancelledError``
    and asks :meth:`expired`: True means the cancellation was only this timeout
    (the worker records a timeout and goes on); False means someone else cancelled
    the run too, and the error must propagate.

    The case runner's hot path inlines :meth:`arm` and :meth:`disarm`:
    ``due[task] = perf_counter() + timeout``, then ``due.pop(task, None)`` and
    ``settle(task)`` only when ``late`` is not empty.

    Args:
        timeout_s: the queries' timeout (:meth:`arm`'s default); None: none.
        *others: other timeouts armed with :meth:`arm` (the evaluators'); the tick
            follows the shortest.
        monitor: also watch for a blocked event loop (see :attr:`stalls`).
        warn: where the monitor's own failures go (it never raises).
    """

    def __init__(
        self,
        timeout_s: float | None,
        *others: float | None,
        monitor: bool = False,
        warn: Callable[[str], None] | None = None,
    ) -> None:
        self.timeout_s = timeout_s
        self.due: dict[asyncio.Task[object], float] = {}
        """Worker -> deadline (``perf_counter`` seconds)."""
        self.late: set[asyncio.Task[object]] = set()
        """Workers the watchdog cancelled whose worker has not seen it yet."""
        given = [float(t) for t in (timeout_s, *others) if t is not None]
        self.tick = min(max(min(given) / 20, _MIN_TICK_S), MAX_TICK_S) if given else MAX_TICK_S
        """Seconds between the watchdog's wake-ups."""
        self.beat = time.perf_counter()
        """When the watchdog last woke (written on the loop, read by the monitor thread)."""
        self.stalls: dict[asyncio.Task[object], list[float]] = {}  # (see StallMonitor)
        """Worker -> ``[start, last, starved]``: when it started blocking the loop, when it was last
        seen blocking it (``perf_counter`` seconds) and how long of that the loop's thread only
        waited for a CPU (set by the monitor thread, popped by the worker once the call that
        blocked returns)."""
        self._monitor = StallMonitor(self, warn=warn) if monitor else None
        self._watchdog: asyncio.Task[None] | None = None

    @property
    def monitor_interval(self) -> float:
        """Seconds between the monitor thread's looks at the heartbeat."""
        return max(self.tick, MIN_INTERVAL_S)

    @property
    def stall_s(self) -> float:
        """A loop that has not beaten for this long is blocked (three ticks, at least 0.25 s)."""
        return max(3 * self.tick, MAX_TICK_S)

    def start(self) -> None:
        """Start the watchdog on the running loop (and the monitor thread)."""
        if self._watchdog is None:
            self.beat = time.perf_counter()
            self._watchdog = asyncio.ensure_future(self._watch())
            if self._monitor is not None:
                self._monitor.start(asyncio.get_running_loop())

    async def stop(self) -> None:
        """Stop the watchdog and the monitor thread."""
        self.halt()
        watchdog, self._watchdog = self._watchdog, None
        if watchdog is not None:
            watchdog.cancel()
            await asyncio.gather(watchdog, return_exceptions=True)

    def halt(self) -> None:
        """Stop the monitor thread (from any thread; the watchdog task ends with its loop)."""
        if self._monitor is not None:
            self._monitor.stop()

    async def let_beat(self) -> None:
        """Let the watchdog beat when it is due: a worker calls this between two cases.

        A KB whose queries never suspend (an in-memory index) would otherwise hold the loop
        case after case: no heartbeat, timeout or progress update in between, and the
        monitor would blame the query it happened to see for all of them. Each worker that
        finds the beat due waits here, so none runs another case before the watchdog's turn
        (at most a tick, should the watchdog not run).
        """
        if self._watchdog is None or time.perf_counter() - self.beat <= self.tick:
            return
        give_up = time.perf_counter() + self.tick
        while True:
            await asyncio.sleep(0)
            now = time.perf_counter()
            if now - self.beat <= self.tick or now > give_up:
                return

    def arm(self, task: asyncio.Task[object], timeout_s: float | None = None) -> None:
        """``task`` starts a call now, to end within ``timeout_s`` (default: the queries')."""
        timeout = self.timeout_s if timeout_s is None else timeout_s
        if timeout is not None:
            self.due[task] = time.perf_counter() + timeout

    def disarm(self, task: asyncio.Task[object]) -> None:
        """``task``'s call ended (however it ended)."""
        self.due.pop(task, None)
        self.settle(task)

    def settle(self, task: asyncio.Task[object]) -> bool:
        """Take back a cancellation the call swallowed before returning (part of :meth:`disarm`).

        Returns:
            Whether there was one: the call ended after its deadline, so whatever it returned is a timeout.
        """
        if task in self.late:
            self.late.discard(task)
            task.uncancel()
            return True
        return False

    def expired(self, task: asyncio.Task[object]) -> bool:
        """Whether the ``CancelledError`` ``task`` caught is this timeout and nothing else."""
        if task not in self.late:
            return False
        self.late.discard(task)
        return task.uncancel() == 0

    async def _watch(self) -> None:
        tick = self.tick
        stall_s = self.stall_s
        due = self.due
        while True:
            await asyncio.sleep(tick)
            now = time.perf_counter()
            lag = now - self.beat - tick
            self.beat = now
            if not due:
                continue
            if lag > stall_s:  # the loop was blocked: no call's deadline counts that time
                for task in due:  # (the one that blocked it is judged by its own blocking time)
                    due[task] += lag
            late = [task for task, deadline in due.items() if deadline <= now]
            for task in late:
                del due[task]
                if SUPPORTED and not task.done():
                    self.late.add(task)
                    task.cancel()
