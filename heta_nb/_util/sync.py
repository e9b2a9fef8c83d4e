"""Run a coroutine to completion from synchronous code, even inside a running loop.

In a notebook the kernel's event loop is already running in this thread, so
``asyncio.run`` is not allowed; the coroutine then runs on a short-lived worker
thread with its own loop. No nest_asyncio.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Coroutine
from typing import Any, TypeVar

__all__ = ["in_running_loop", "run_sync"]

T = TypeVar("T")


def in_running_loop() -> bool:
    """True when called from a thread whose event loop is running (e.g. a Jupyter cell)."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return False
    return True


def run_sync(coro: Coroutine[Any, Any, T]) -> T:
    """Run ``coro`` and return its result, from any synchronous context."""
    if not in_running_loop():
        return asyncio.run(coro)
    outcome: dict[str, Any] = {}

    def target() -> None:
        try:
            outcome["value"] = asyncio.run(coro)
        except BaseException as exc:  # re-raised in the caller's thread
            outcome["error"] = exc

    worker = threading.Thread(target=target, name="heta_nb-run-sync", daemon=True)
    worker.start()
    worker.join()
    if "error" in outcome:
        raise outcome["error"]
    return outcome["value"]  # type: ignore[no-any-return]
