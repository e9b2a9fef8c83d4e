"""The user's Ctrl-C during a run on the main thread, told apart from a KB's ``KeyboardInterrupt``.

A ``KeyboardInterrupt`` can come from two places: the user (Ctrl-C, a kernel
interrupt: SIGINT, always handled on the main thread) or the code a run calls (a KB
or evaluator raising it). The second is that case's error and the run goes on; the
first means "cancel the run".

``evaluate()`` and ``start()`` run the engine on a thread of its own, so every
``KeyboardInterrupt`` seen there is the KB's; the user's arrives on the main thread,
where ``EvaluationRun.result()`` turns it into ``run.cancel()``.

``evaluate_async()`` awaited on the main thread (a notebook cell, ``asyncio.run``)
runs the engine there. For the run's duration :class:`InterruptWatch` installs a
SIGINT handler that counts the user's interrupts, then chains to the handler it
replaced:

* the handler of ``asyncio.run`` (Python 3.11+) or of an ipykernel cell cancels the
  awaiting task: the run stops, its partial report is saved, and the cancellation
  propagates as asyncio code expects;
* Python's default handler would raise ``KeyboardInterrupt`` wherever the main thread
  is (possibly inside the event loop's own code): the first Ctrl-C instead cancels the
  run as ``run.cancel()`` does (the partial report, status ``cancelled``, is returned,
  as ``evaluate()`` returns it); a second one goes to the default handler.

A ``KeyboardInterrupt`` caught inside a query or an evaluator is the user's when the
watch has counted one, the KB's otherwise. The previous handler is restored when the
run ends (unless another handler replaced this one meanwhile: it then stays in that
handler's chain and only forwards).
"""

from __future__ import annotations

import asyncio
import functools
import signal
import threading
from collections.abc import Callable
from types import FrameType
from typing import Any

__all__ = ["InterruptWatch"]


class InterruptWatch:
    """Counts the user's SIGINTs while a run is active on the main thread (see the module docstring).

    Args:
        cancel: cancels the run (called from the signal handler, on the main thread:
            it must only schedule work, as ``Engine.cancel_threadsafe`` does).
    """

    def __init__(self, cancel: Callable[[], None]) -> None:
        self.count = 0
        """The user's interrupts seen while the run was active."""
        self._cancel = cancel
        self._previous: Callable[[int, FrameType | None], Any] | None = None
        self._active = False

    def install(self) -> bool:
        """Install the handler, when on the main thread and a Python handler is in place; True if installed.

        With ``SIG_IGN`` (Ctrl-C ignored), ``SIG_DFL`` (Ctrl-C ends the process) or a
        handler set from C, nothing is installed and nothing changes.
        """
        if threading.current_thread() is not threading.main_thread():
            return False
        previous = signal.getsignal(signal.SIGINT)
        if not callable(previous):
            return False
        try:
            signal.signal(signal.SIGINT, self._handle)
        except (ValueError, OSError):  # not the main interpreter, say
            return False
        self._previous = previous
        self._active = True
        return True

    def uninstall(self) -> None:
        """Stop counting and restore the previous handler if this one is still in place.

        ``asyncio.run``'s handler is only put back while its main task goes on: a run that
        dies of a ``BaseException`` raised by a worker leaves ``asyncio.run`` first (which
        then finds this handler, not its own, and leaves it), and is torn down later by the
        cancellation of every task; Python's default handler is restored then, as
        ``asyncio.run`` itself restores it when it ends.
        """
        self._active = False
        previous = self._previous
        if previous is None:
            return
        if _ending_runner_handler(previous):
            previous = signal.default_int_handler
        try:
            if signal.getsignal(signal.SIGINT) == self._handle:
                signal.signal(signal.SIGINT, previous)
        except (ValueError, OSError):
            pass

    def _handle(self, signum: int, frame: FrameType | None) -> Any:
        previous = self._previous
        if not self._active:  # the run is over, but a later handler still chains to this one
            return previous(signum, frame) if previous is not None else None
        self.count += 1
        if previous is signal.default_int_handler and self.count == 1:
            self._cancel()  # instead of a KeyboardInterrupt wherever the main thread is
            return None
        return previous(signum, frame) if previous is not None else None


def _ending_runner_handler(handler: Any) -> bool:
    """Whether ``handler`` is ``asyncio.run``'s (``Runner._on_sigint``) and its main task is over or being cancelled."""
    if not isinstance(handler, functools.partial) or getattr(handler.func, "__name__", "") != "_on_sigint":
        return False
    task = handler.keywords.get("main_task")
    if not isinstance(task, asyncio.Task):
        return False
    return task.done() or task.cancelling() > 0 if hasattr(task, "cancelling") else task.done()
