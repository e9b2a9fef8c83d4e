"""Leading + trailing throttle with an injectable clock and scheduler.

``request()`` says whether to flush now (the first request after a quiet period,
or a forced one); otherwise it arranges one trailing flush at the end of the
interval, so the newest state is never left unshown. Tests inject a fake clock
and a scheduler that records callbacks instead of starting timers.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Any

__all__ = ["Throttle", "thread_timer"]

Scheduler = Callable[[float, Callable[[], None]], Any]


def thread_timer(delay: float, callback: Callable[[], None]) -> threading.Timer:
    """Run ``callback`` after ``delay`` seconds on a daemon timer thread."""
    timer = threading.Timer(delay, callback)
    timer.daemon = True
    timer.start()
    return timer


class Throttle:
    """Calls ``flush`` at most once per ``min_interval`` seconds, and always a last time.

    Args:
        flush: what to call (on the requesting thread when immediate, on the
            scheduler's thread for a trailing flush).
        min_interval: minimum seconds between flushes (0.1 s: at most 10 per second).
        clock: monotonic time source.
        schedule: ``schedule(delay, callback)`` runs ``callback`` later.
    """

    def __init__(
        self,
        flush: Callable[[], None],
        *,
        min_interval: float = 0.1,
        clock: Callable[[], float] = time.monotonic,
        schedule: Scheduler = thread_timer,
    ) -> None:
        self._flush = flush
        self.min_interval = min_interval
        self._clock = clock
        self._schedule = schedule
        self._lock = threading.Lock()
        self._last = float("-inf")
        self._pending = False
        self._generation = 0

    def request(self, *, force: bool = False) -> None:
        """Ask for a flush; it happens now or at the end of the current interval."""
        with self._lock:
            now = self._clock()
            wait = self.min_interval - (now - self._last)
            if force or wait <= 0:
                self._last = now
                self._pending = False
                self._generation += 1  # a scheduled trailing flush becomes stale
                immediate = True
            else:
                immediate = False
                if not self._pending:
                    self._pending = True
                    generation = self._generation
                    self._schedule(wait, lambda: self._trailing(generation))
        if immediate:
            self._flush()

    def _trailing(self, generation: int) -> None:
        with self._lock:
            if not self._pending or generation != self._generation:
                return
            self._pending = False
            self._last = self._clock()
            self._generation += 1
        self._flush()
