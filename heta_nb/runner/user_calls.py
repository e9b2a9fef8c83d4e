"""Awaiting user code (a KB's query, an evaluator, an LLM judge and its model) so that nothing it
does can take the run with it: the one way the case runner calls an awaitable it got from user code.

Every such awaitable takes its first step in the worker (one that returns without suspending,
an in-memory index or most evaluators, costs nothing more) and, if it suspends, goes on in a
task of its own (the *call*), which the worker awaits through :func:`asyncio.shield`. The
worker's deadline stays the watchdog's (:mod:`heta_nb.runner.deadlines`), or ``timeout`` on
Python 3.10, and the call can no longer hold the worker past it:

* when the worker is cancelled (its deadline, or the run's cancellation) the call is
  cancelled in turn and given :data:`GRACE_S` seconds to end. A call that swallows the
  cancellation and returns a value anyway is still a timeout (a result that arrives
  after its deadline is never a success); one that is still running after the grace
  (it swallows every cancellation, or loops forever) is *abandoned*: no one awaits it
  again, :class:`UserCalls` keeps a reference to it until it ends, and its coroutine is
  closed (its task then ends at its next wake-up). One that swallows even that
  ``GeneratorExit`` is taken off asyncio's task list, so that the shutdown of
  ``asyncio.run`` does not wait for it forever. The worker records the timeout and goes on;
* whatever the call raises that is not an ``Exception`` (``SystemExit``, a
  ``KeyboardInterrupt``, gevent's ``Timeout``, trio's ``Cancelled``, pytest's ``Exit``,
  a ``CancelledError`` no one asked for...) reaches the worker as an
  :class:`~heta_nb.runner.errors.ExitRaised` carrying it: the case runner records it as that
  case's (or score's) error, unless it is the user's own Ctrl-C
  (:func:`heta_nb.runner.interrupts.users_interrupt`). (Raised in a task, a ``SystemExit`` or
  ``KeyboardInterrupt`` would stop the event loop itself; for the tasks user code makes, see
  :class:`~heta_nb.runner.interrupts.InterruptWatch`.)

A sync KB runs on a thread (:class:`~heta_nb.runner.kb.KnowledgeBaseAdapter`); its call is
heta_nb's own coroutine awaiting that thread, awaited directly (no task: it ends at once when
cancelled). The thread, which Python cannot stop, is left running, and the timeout says so.
Synchronous evaluators run in the worker itself: what they raise is caught there, and one
that blocks the loop past its deadline is judged by :mod:`heta_nb.runner.stalls`.
"""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import Awaitable, Generator
from types import CoroutineType
from typing import Any

from heta_nb._util.aio import ABANDONED, GRACE_S, RETURNED_LATE, abandon, retrieve
from heta_nb._util.text import describe_error
from heta_nb.runner.errors import ExitRaised, RunError
from heta_nb.runner.interrupts import users_interrupt
from heta_nb.runner.kb import THREAD_LEFT_RUNNING, KnowledgeBaseAdapter, call_left_thread

__all__ = ["GRACE_S", "CallTimeout", "UserCalls", "as_exception", "callee_error"]


LEFT_RUNNING = "its thread could not be stopped (Python cannot stop a thread) and was left running"
_IN_THREAD = KnowledgeBaseAdapter.in_thread.__code__


def callee_error(exc: BaseException, interrupted: bool) -> bool:
    """Whether ``exc``, come out of code the runner called, is that code's error (to record) rather
    than a stop the runner must obey: a cancellation, the close of a coroutine, the user's own
    Ctrl-C (``interrupted``: the run counted one; see :func:`~heta_nb.runner.interrupts.users_interrupt`)."""
    if isinstance(exc, Exception):
        return True
    if isinstance(exc, (asyncio.CancelledError, GeneratorExit)):
        return False
    return not users_interrupt(exc, lambda: interrupted)


def as_exception(exc: BaseException) -> Exception:
    """``exc`` if it is an ``Exception``, else a :class:`RunError` naming it (``exc`` as its cause)."""
    if isinstance(exc, Exception):
        return exc
    error = RunError(f"the run's setup raised {type(exc).__name__}: {describe_error(exc) or '(no message)'}")
    error.__cause__ = exc
    return error


class CallTimeout(asyncio.TimeoutError):
    """A call's ``timeout`` passed (Python 3.10; told apart from a ``TimeoutError`` the call raised)."""


class UserCalls:
    """Runs user awaitables as tasks of their own, each for one worker task (see the module docstring).

    Args:
        stalls: the loop monitor's ``task -> [start, last]`` records (a block recorded
            against a call is handed to its worker, which judges it).
        grace_s: :data:`GRACE_S`.
    """

    def __init__(self, stalls: dict[Any, list[float]], *, grace_s: float = GRACE_S) -> None:
        self._stalls = stalls
        self.grace_s = grace_s
        self.abandoned: set[asyncio.Task[Any]] = set()
        """Calls given up on that have not ended yet (held so none is collected mid-flight)."""
        self.notes: dict[Any, str] = {}
        """Worker -> what became of its last call that did not end in time (read with :meth:`note`)."""

    def note(self, owner: Any) -> str:
        """``"; <what became of the call>"`` for ``owner``'s call that timed out, or ``""``."""
        note = self.notes.pop(owner, None)
        return f"; {note}" if note else ""

    async def run(self, awaitable: Awaitable[Any], owner: Any, timeout: float | None = None) -> Any:
        """``await awaitable`` as a task of its own, for worker task ``owner``.

        A coroutine takes its first step here, in the worker: one that returns without
        suspending (an in-memory index, most evaluators) needs no task, and costs no
        loop iteration. Only one that suspends continues as a task.

        Args:
            timeout: seconds (Python 3.10, where no watchdog cancels the worker); None: none.

        Raises:
            asyncio.CancelledError: ``owner`` was cancelled (its deadline or the run's end);
                the call was cancelled too, and given up on if it did not end in time.
            CallTimeout: ``timeout`` passed first.
            ExitRaised: the call raised something that is not an ``Exception``.
        """
        if type(awaitable) is CoroutineType and awaitable.cr_code is _IN_THREAD:
            awaitable = await self._in_thread(awaitable, owner, timeout)
            if not inspect.isawaitable(awaitable):
                return awaitable  # (else a sync KB returned an awaitable: it runs as any other)
        if type(awaitable) is CoroutineType:
            try:
                first = awaitable.send(None)
            except StopIteration as stop:
                return stop.value
            except Exception:
                raise
            except BaseException as exc:  # (no cancellation can reach a step that does not suspend)
                raise ExitRaised(exc) from exc
            awaitable = _Started(awaitable, first)
        call = asyncio.ensure_future(_contained(awaitable))
        try:
            if timeout is None:
                return await asyncio.shield(call)
            done, _ = await asyncio.wait((call,), timeout=timeout)
            if call in done:
                return call.result()
            await self._give_up(call, owner)
            raise CallTimeout
        except asyncio.CancelledError:
            await self._give_up(call, owner)
            raise
        finally:
            if self._stalls:
                record = self._stalls.pop(call, None)
                if record is not None:
                    self._stalls[owner] = record

    async def _in_thread(self, coro: Any, owner: Any, timeout: float | None) -> Any:
        """Await heta_nb's own coroutine that awaits a sync KB's thread: it ends when cancelled, no task needed."""
        if timeout is None:
            try:
                return await coro
            except asyncio.CancelledError as exc:
                if THREAD_LEFT_RUNNING in str(exc):
                    self.notes[owner] = LEFT_RUNNING
                raise
        # Python 3.10 (no watchdog): its own task and timeout. Not asyncio.wait_for: on 3.10 its
        # TimeoutError hides the cancellation's message, which says the thread was left running.
        call = asyncio.ensure_future(coro)
        try:
            done, _ = await asyncio.wait((call,), timeout=timeout)
        except asyncio.CancelledError:
            call.cancel()
            raise
        if call in done:
            return call.result()
        call.cancel()
        try:
            await call  # (it ends at once: the thread is left, not awaited)
        except asyncio.CancelledError as exc:
            if THREAD_LEFT_RUNNING in str(exc) or call_left_thread(call):
                self.notes[owner] = LEFT_RUNNING
        raise CallTimeout

    async def _give_up(self, call: asyncio.Task[Any], owner: Any) -> None:
        """Cancel ``call`` and wait :attr:`grace_s` for it to end; abandon it if it does not."""
        if call.done():  # (it ended as the worker was cancelled: its result came too late)
            retrieve(call)
            return
        call.cancel()
        try:
            await asyncio.wait((call,), timeout=self.grace_s)
        except asyncio.CancelledError:  # the run is cancelled meanwhile: stop waiting, and go
            self._abandon(call, owner)
            raise
        if not call.done():
            self._abandon(call, owner)
            return
        if call.cancelled():  # it honoured the cancellation
            try:
                call.result()
            except asyncio.CancelledError as exc:
                if THREAD_LEFT_RUNNING in str(exc):
                    self.notes[owner] = LEFT_RUNNING
            return
        retrieve(call)
        self.notes[owner] = RETURNED_LATE  # it swallowed the cancellation, then returned (or raised)

    def _abandon(self, call: asyncio.Task[Any], owner: Any) -> None:
        self.notes[owner] = ABANDONED.format(self.grace_s)
        abandon(call, self.abandoned)


class _Started:
    """A coroutine that took its first step (and yielded ``first``), to be awaited on from there."""

    __slots__ = ("coro", "first")

    def __init__(self, coro: Any, first: Any) -> None:
        self.coro = coro
        self.first = first

    def __await__(self) -> Generator[Any, Any, Any]:
        coro, value = self.coro, self.first
        self.first = None
        while True:  # what ``yield from coro`` does, from its first yield on
            try:
                sent = yield value
            except GeneratorExit:
                coro.close()
                raise
            except BaseException as exc:  # noqa: BLE001 - thrown in by the task: passed on to the coroutine
                try:
                    value = coro.throw(exc)
                except StopIteration as stop:
                    return stop.value
            else:
                try:
                    value = coro.send(sent)
                except StopIteration as stop:
                    return stop.value


async def _contained(awaitable: Awaitable[Any]) -> Any:
    """``await awaitable``; what it raises that is not an ``Exception`` comes out as :class:`ExitRaised`.

    Two pass as they are: the ``CancelledError`` of this task's own cancellation, and the
    ``GeneratorExit`` of this coroutine being closed (see :meth:`UserCalls._abandon`).
    """
    me = asyncio.current_task()
    try:
        return await awaitable
    except Exception:
        raise
    except asyncio.CancelledError as exc:
        cancelling = getattr(me, "cancelling", None)
        if cancelling is None or cancelling() > 0:  # this call was cancelled (always assumed on 3.10)
            raise
        raise ExitRaised(exc) from exc  # raised by the user code itself, unasked
    except GeneratorExit as exc:
        if _current_task() is not me:
            raise  # this coroutine is being closed
        raise ExitRaised(exc) from exc
    except BaseException as exc:
        raise ExitRaised(exc) from exc


def _current_task() -> Any:
    try:
        return asyncio.current_task()
    except RuntimeError:  # no running loop
        return None
