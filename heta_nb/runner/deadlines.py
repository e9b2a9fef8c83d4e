"""Per-query timeouts for a pool of workers, kept by one watchdog task.

``asyncio.timeout`` schedules and cancels a timer for every query (about 6 µs each,
a large share of the runner's per-case cost with a fast KB). Here a worker only
records when its query must end (a dict assignment); one watchdog wakes every
``timeout_s / 20`` and cancels the workers whose query is late. A query may thus
run up to 5 % longer than ``timeout_s`` before it is stopped.

Python 3.11+ (``Task.uncancel``); the engine falls back to ``asyncio.wait_for`` on
older versions.
"""

from __future__ import annotations

import asyncio
import time

__all__ = ["Deadlines", "SUPPORTED"]

SUPPORTED = hasattr(asyncio.Task, "uncancel")

_MIN_TICK_S = 0.002


class Deadlines:
    """Timeouts of the queries in flight, one per worker task.

    A worker calls :meth:`arm` before its query and :meth:`disarm` after it (in a
    ``finally``). When the watchdog cancels it, the worker sees ``CancelledError``
    and asks :meth:`expired`: True means the cancellation was only this timeout
    (the worker records a timeout and goes on); False means someone else cancelled
    the run too, and the error must propagate.

    The engine's hot path inlines :meth:`disarm`: ``due.pop(task, None)``, then
    ``settle(task)`` only when ``late`` is not empty.
    """

    def __init__(self, timeout_s: float) -> None:
        self.timeout_s = timeout_s
        self.due: dict[asyncio.Task[object], float] = {}
        """Worker -> deadline; insertion order is start order, so the oldest is first."""
        self.late: set[asyncio.Task[object]] = set()
        """Workers the watchdog cancelled whose worker has not seen it yet."""
        self._watchdog: asyncio.Task[None] | None = None

    def start(self) -> None:
        """Start the watchdog on the running loop."""
        if self._watchdog is None:
            self._watchdog = asyncio.ensure_future(self._watch())

    async def stop(self) -> None:
        """Stop the watchdog."""
        watchdog, self._watchdog = self._watchdog, None
        if watchdog is not None:
            watchdog.cancel()
            await asyncio.gather(watchdog, return_exceptions=True)

    def arm(self, task: asyncio.Task[object]) -> None:
        """``task`` starts a query now."""
        self.due[task] = time.perf_counter() + self.timeout_s

    def disarm(self, task: asyncio.Task[object]) -> None:
        """``task``'s query ended (however it ended)."""
        self.due.pop(task, None)
        self.settle(task)

    def settle(self, task: asyncio.Task[object]) -> None:
        """Take back a cancellation the query swallowed before returning (part of :meth:`disarm`)."""
        if task in self.late:
            self.late.discard(task)
            task.uncancel()

    def expired(self, task: asyncio.Task[object]) -> bool:
        """Whether the ``CancelledError`` ``task`` caught is this timeout and nothing else."""
        if task not in self.late:
            return False
        self.late.discard(task)
        return task.uncancel() == 0

    async def _watch(self) -> None:
        tick = max(self.timeout_s / 20, _MIN_TICK_S)
        due = self.due
        while True:
            await asyncio.sleep(tick)
            if not due:
                continue
            now = time.perf_counter()
            late = []
            for task, deadline in due.items():
                if deadline > now:
                    break  # the rest started later
                late.append(task)
            for task in late:
                del due[task]
                if not task.done():
                    self.late.add(task)
                    task.cancel()
