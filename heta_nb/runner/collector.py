"""Keeping a run's results out of the cyclic garbage collector's way while it runs.

A run keeps every result it has recorded (a tree of some forty containers per case
result) until its report is built. CPython's collector traverses every live container
at each full collection, and as the heap grows those come again and again: at 16,000
cases the collector took about two thirds of the runner's time (60 against 17 µs per
case with it off), and Heta's own loop pays the same. The cost grows with everything
else the process holds too (a notebook kernel's DataFrames and modules).

While a run is on, :class:`FreezeHold` moves what the collector has already seen into
its permanent generation (:func:`gc.freeze`) when the run starts and every :data:`EVERY`
results, each time right after a young collection (generations 0 and 1) has reclaimed
the garbage cycles among recent objects. Full collections then traverse only what is
new. When the last run of the process that holds a freeze ends, everything is handed
back (:func:`gc.unfreeze`), and whatever became garbage meanwhile is collected as usual
afterwards. Objects without
cycles are freed by reference counting throughout: a freeze changes nothing for them.

Nothing is frozen when the collector is off, or when the permanent generation already
holds objects: a pre-forking server freezes its heap on purpose, and CPython 3.12.1
starts with a few hundred objects frozen; unfreezing would undo either. Nor on a
free-threaded build, whose collector has no cheap young collection to run first.
"""

from __future__ import annotations

import gc
import sysconfig
import threading

__all__ = ["EVERY", "FreezeHold"]

EVERY = 512
"""Results recorded between two freezes (each after a young collection of generations 0 and 1)."""

_LOCK = threading.Lock()
_holders = 0
"""Runs in this process holding a freeze (the last one out unfreezes)."""
_FREE_THREADED = bool(sysconfig.get_config_var("Py_GIL_DISABLED"))


class FreezeHold:
    """One run's share of the process-wide freeze: :meth:`start`, :meth:`recorded`, :meth:`stop`."""

    __slots__ = ("_active", "_pending", "every")

    def __init__(self, every: int = EVERY) -> None:
        self.every = every
        self._active = False
        self._pending = 0

    @property
    def active(self) -> bool:
        """Whether this run holds a freeze (between :meth:`start` and :meth:`stop`)."""
        return self._active

    def start(self) -> None:
        """Join the freeze, unless the collector is off, objects are frozen already or the build is free-threaded."""
        global _holders
        if self._active or _FREE_THREADED or not gc.isenabled():
            return
        with _LOCK:
            if _holders == 0 and gc.get_freeze_count() > 0:
                return  # another freeze than heta_nb's: leave it alone
            _holders += 1
            self._active = True
        self._freeze()  # what the process held before the run is skipped too

    def _freeze(self) -> None:
        gc.collect(1)  # (young garbage cycles go now, not into the permanent generation)
        gc.freeze()

    def recorded(self, count: int) -> None:
        """``count`` more results are kept; every :attr:`every` of them, collect the young and freeze."""
        if not self._active:
            return
        self._pending += count
        if self._pending >= self.every and gc.isenabled():
            self._pending = 0
            self._freeze()

    def stop(self) -> None:
        """Leave the freeze; the last run out hands every frozen object back to the collector.

        Idempotent, and safe from another thread (a run's loop thread releases a run it abandoned).
        """
        global _holders
        with _LOCK:
            if not self._active:
                return
            self._active = False
            _holders -= 1
            if _holders == 0:
                gc.unfreeze()
