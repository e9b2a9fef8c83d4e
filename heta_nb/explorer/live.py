"""An explorer of a running evaluation, kept up to date: throttled refreshes, never on the run's thread.

The run's events say when cases finish (from the run's thread). :class:`LiveRefresh` throttles
them (:class:`~heta_nb._util.throttle.Throttle`: at most one refresh per interval, and always a
last one when the run ends) and runs each refresh on a short-lived thread of its own, one at a
time: neither the run's event loop nor the kernel waits for a table to be rebuilt, and the
explorer keeps refreshing while the kernel is busy in another cell. The interval grows with
what a refresh costs (three times the last one), so a large report is not rebuilt back to back.
"""

from __future__ import annotations

import threading
import time
import weakref
from collections.abc import Callable
from typing import Any

from heta_nb._util.throttle import Scheduler, Throttle, thread_timer

__all__ = ["MIN_INTERVAL", "LiveRefresh"]

MIN_INTERVAL = 0.3
"""Shortest time (seconds) between two refreshes of a live explorer: at most about three a second."""

_COST_FACTOR = 3.0
"""The interval is at least this many times the last refresh's duration."""


class LiveRefresh:
    """Refreshes an explorer (held weakly: a discarded explorer is left alone) when its source changes.

    Args:
        explorer: the explorer (anything with ``refresh()`` and a ``source`` with ``watch``).
        min_interval: shortest time between two refreshes.
        clock: time source of the throttle.
        schedule: runs a callback later on another thread (the throttle's trailing refresh,
            and every refresh itself).
    """

    def __init__(
        self,
        explorer: Any,
        *,
        min_interval: float = MIN_INTERVAL,
        clock: Callable[[], float] = time.monotonic,
        schedule: Scheduler = thread_timer,
    ) -> None:
        self._explorer = weakref.ref(explorer)
        self.min_interval = min_interval
        self._clock = clock
        self._schedule = schedule
        self._throttle = Throttle(self._hand_off, min_interval=min_interval, clock=clock, schedule=schedule)
        self._one_at_a_time = threading.Lock()
        self.refreshes = 0
        """Refreshes done so far."""
        self.failure = ""
        """The last refresh's error, if it failed (the next one tries again)."""
        explorer.source.watch(self.changed)

    def changed(self, last: bool = False) -> None:
        """The source's data may have changed (``last``: for the last time; refresh at once)."""
        if self._explorer() is not None:
            self._throttle.request(force=last)

    def _hand_off(self) -> None:
        self._schedule(0.0, self._refresh)

    def _refresh(self) -> None:
        with self._one_at_a_time:
            explorer = self._explorer()
            if explorer is None:
                return
            started = self._clock()
            try:
                explorer.refresh()
                self.failure = ""
            except Exception as exc:  # noqa: BLE001 - on a thread of its own: kept, tried again next time
                self.failure = f"{type(exc).__name__}: {exc}"
            self.refreshes += 1
            self._throttle.min_interval = max(self.min_interval, _COST_FACTOR * (self._clock() - started))
