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
watch has counted one, the KB's otherwise.

Off the main thread (``evaluate()``, ``start()``), where every ``KeyboardInterrupt`` is the
code's, the watch also makes the loop's tasks carry a ``KeyboardInterrupt`` or ``SystemExit``
as :class:`~heta_nb.runner.errors.ExitRaised` while the run is on: asyncio re-raises those two
from a task's step, out of the event loop itself, so one raised in a task user code created
(``asyncio.gather``, ``asyncio.wait_for`` on Python 3.11, ``create_task``) would otherwise end
the run. (Not on a loop that has a task factory of its own.) The previous handler is restored when the
run ends (unless another handler replaced this one meanwhile: it then stays in that
handler's chain and only forwards).
"""

from __future__ import annotations

import asyncio
import collections.abc
import functools
import signal
import threading
from collections.abc import Callable
from types import FrameType
from typing import Any

from heta_nb.runner.errors import ExitRaised

__all__ = ["InterruptWatch", "users_interrupt"]


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
        self._factory_loop: asyncio.AbstractEventLoop | None = None

    def install(self) -> bool:
        """Install the handler, when on the main thread and a Python handler is in place; True if installed.

        With ``SIG_IGN`` (Ctrl-C ignored), ``SIG_DFL`` (Ctrl-C ends the process) or a
        handler set from C, nothing is installed and nothing changes.
        """
        if threading.current_thread() is not threading.main_thread():
            self._carry_exits()
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
        loop, self._factory_loop = self._factory_loop, None
        if loop is not None and not loop.is_closed() and loop.get_task_factory() is _carrying_task:
            loop.set_task_factory(None)
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

    def _carry_exits(self) -> None:
        """Off the main thread: the running loop's tasks carry their exits while the run is on (module docstring)."""
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            return
        if loop.get_task_factory() is None:
            loop.set_task_factory(_carrying_task)
            self._factory_loop = loop

    def _handle(self, signum: int, frame: FrameType | None) -> Any:
        previous = self._previous
        if not self._active:  # the run is over, but a later handler still chains to this one
            return previous(signum, frame) if previous is not None else None
        self.count += 1
        if previous is signal.default_int_handler and self.count == 1:
            self._cancel()  # instead of a KeyboardInterrupt wherever the main thread is
            return None
        return previous(signum, frame) if previous is not None else None


def users_interrupt(exc: BaseException, counted: Callable[[], bool] | None) -> bool:
    """Whether ``exc``, raised inside user code, is the user's own Ctrl-C (to propagate) rather than the code's.

    Only a ``KeyboardInterrupt`` on the main thread can be (Python runs the SIGINT handler
    there). During a run, ``counted`` says whether the run's :class:`InterruptWatch` counted
    one; with no watch (``None``: before the run, say) the runner cannot tell, and takes it
    for the user's. Anything else user code raises is that code's error.
    """
    if not isinstance(exc, KeyboardInterrupt) or threading.current_thread() is not threading.main_thread():
        return False
    return counted is None or counted()


def _carrying_task(loop: asyncio.AbstractEventLoop, coro: Any, **kwargs: Any) -> asyncio.Task[Any]:
    """The task factory of :meth:`InterruptWatch._carry_exits`."""
    return asyncio.Task(_Carrying(coro), loop=loop, **kwargs)


class _Carrying(collections.abc.Coroutine):  # type: ignore[type-arg]
    """``coro`` as its task drives it, a ``KeyboardInterrupt`` or ``SystemExit`` it raises carried as
    :class:`ExitRaised`. (An object rather than a wrapping coroutine: a task cancelled before its
    first step throws into ``coro`` itself, which is then closed, never left "never awaited".)"""

    __slots__ = ("_coro",)

    def __init__(self, coro: Any) -> None:
        self._coro = coro

    def send(self, value: Any) -> Any:
        try:
            return self._coro.send(value)
        except (KeyboardInterrupt, SystemExit) as exc:
            raise ExitRaised(exc) from exc

    def throw(self, exc: Any, *rest: Any) -> Any:
        try:
            return self._coro.throw(exc, *rest)
        except (KeyboardInterrupt, SystemExit) as raised:
            raise ExitRaised(raised) from raised

    def close(self) -> None:
        self._coro.close()

    def __await__(self) -> Any:
        return self._coro.__await__()

    def __repr__(self) -> str:
        return repr(self._coro)


def _ending_runner_handler(handler: Any) -> bool:
    """Whether ``handler`` is ``asyncio.run``'s (``Runner._on_sigint``) and its main task is over or being cancelled."""
    if not isinstance(handler, functools.partial) or getattr(handler.func, "__name__", "") != "_on_sigint":
        return False
    task = handler.keywords.get("main_task")
    if not isinstance(task, asyncio.Task):
        return False
    return task.done() or task.cancelling() > 0 if hasattr(task, "cancelling") else task.done()
