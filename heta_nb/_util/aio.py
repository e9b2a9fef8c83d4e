"""Waiting on a task of user code that may ignore its cancellation: cancel, give it a grace
period, then abandon it, so that nothing it does holds the caller (or ``asyncio.run``'s shutdown).

:mod:`heta_nb.runner.user_calls` (a KB's query, an evaluator) and the judges' model calls
(:mod:`heta_nb.llm_judges.limits`) both give up on a call this way.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

__all__ = ["ABANDONED", "GRACE_S", "RETURNED_LATE", "abandon", "retrieve", "unlist", "wait_bounded"]

T = TypeVar("T")

GRACE_S = 0.5
"""Seconds a cancelled call has to end before it is abandoned. A call that honours its
cancellation ends within an event-loop iteration or two; the rest is room for cleanup
that awaits I/O (closing a connection). Short, as it is added to each such case's time."""

ABANDONED = "it ignored its cancellation for {:g} s more and was abandoned (it may still be running)"
RETURNED_LATE = "it swallowed its cancellation and ended after its deadline: what it returned was not kept"


def retrieve(call: asyncio.Task[Any]) -> None:
    """Mark ``call``'s outcome as seen (no "exception was never retrieved" in the log)."""
    if call.done() and not call.cancelled():
        call.exception()


def unlist(call: asyncio.Task[Any]) -> None:
    """Take ``call`` off asyncio's task list: ``asyncio.run`` waits for every listed task at shutdown,
    forever for a task that swallows every cancellation (best effort: CPython's private hooks)."""
    unregister = getattr(asyncio.tasks, "_unregister_task", None)
    if unregister is not None:
        with contextlib.suppress(Exception):
            unregister(call)
    with contextlib.suppress(Exception):
        call._log_destroy_pending = False  # type: ignore[attr-defined]  # (its coroutine is closed, not lost)


def abandon(call: asyncio.Task[Any], keep: set[asyncio.Task[Any]]) -> None:
    """Stop waiting for ``call``: ``keep`` holds it until it ends, its coroutine is closed
    (``GeneratorExit`` at its await: its next wake-up ends it), and one that swallows even
    that is taken off asyncio's task list."""
    keep.add(call)

    def forget(done: asyncio.Task[Any]) -> None:
        keep.discard(done)
        retrieve(done)

    call.add_done_callback(forget)
    close = getattr(call.get_coro(), "close", None)
    with contextlib.suppress(BaseException):  # (user code runs: its finally blocks, say)
        if close is not None:
            close()
    if not call.done():
        unlist(call)


async def wait_bounded(
    make: Callable[[], Awaitable[T]], timeout: float, grace: float, keep: set[asyncio.Task[Any]]
) -> T:
    """``await make()`` for at most ``timeout`` s, then cancel it and wait ``grace`` s more at most.

    Raises:
        asyncio.TimeoutError: past ``timeout``; without a message when the call honoured its
            cancellation, else saying that it returned anyway (never kept: it came after its
            deadline) or was abandoned (see :func:`abandon`).
    """
    call = asyncio.ensure_future(make())
    try:
        done, _ = await asyncio.wait((call,), timeout=timeout)
    except asyncio.CancelledError:  # the caller is cancelled: the call goes too, without waiting
        call.cancel()
        abandon(call, keep)
        raise
    if done:
        return call.result()
    call.cancel()
    done, _ = await asyncio.wait((call,), timeout=grace)
    if not done:
        abandon(call, keep)
        raise asyncio.TimeoutError(ABANDONED.format(grace))
    if not call.cancelled():
        retrieve(call)
        raise asyncio.TimeoutError(RETURNED_LATE)
    raise asyncio.TimeoutError
