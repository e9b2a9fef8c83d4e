"""Widget messages while a cell blocks: the run widget's Cancel button during ``evaluate()``.

While a cell runs, ipykernel reads no shell message: a click on a widget waits in the
kernel's queue until the cell ends, so a Cancel button is dead during a blocking call. A
:class:`CommPump` reads that queue itself while the main thread waits (as
``jupyter_ui_poll`` does): the comm messages of the given widgets are handled at once, and
every other message (the next cells of "Run All", completions...) is put back, in order,
for the kernel to handle when the cell ends. It needs ipykernel 7's shell channel thread
(the queue is then a zmq socket owned by the main thread); elsewhere :func:`comm_pump`
gives None and the caller says how to interrupt instead.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Iterable
from typing import Any

__all__ = ["CommPump", "comm_pump", "comm_pump_available"]

_ACTIVE = threading.Lock()
"""One pump at a time: a widget callback run by a pump that waits on another run must not
read the queue from inside the first pump (the messages would be put back out of order)."""


_HAND_BACK_WAIT_S = 2.0
"""Longest wait for the shell channel thread to take the set-aside messages back."""


def _kernel_queue() -> tuple[Any, Any] | None:
    """``(kernel, the socket pair from the shell channel thread to the main one)`` when a pump can work here."""
    if threading.current_thread() is not threading.main_thread():
        return None  # a subshell's or the caller's own thread: the main shell's queue is not ours
    try:
        from IPython import get_ipython
    except ImportError:
        return None
    shell = get_ipython()
    kernel = getattr(shell, "kernel", None)
    channel = getattr(kernel, "shell_channel_thread", None)
    manager = getattr(channel, "manager", None)
    pair_of = getattr(manager, "get_shell_channel_to_subshell_pair", None)  # ipykernel >= 7
    comms = getattr(kernel, "comm_manager", None)
    if pair_of is None or comms is None or getattr(kernel, "session", None) is None:
        return None
    try:
        loop = asyncio.get_running_loop()  # the cell runs inside the kernel's loop
    except RuntimeError:
        return None
    io_loop = getattr(kernel, "io_loop", None)
    if getattr(io_loop, "asyncio_loop", None) is not loop:
        return None  # inside another loop (asyncio.run in a cell...): not the kernel's queue
    pair = pair_of(None)
    if getattr(pair, "to_socket", None) is None or getattr(pair, "from_socket", None) is None:
        return None
    return (kernel, pair) if getattr(channel, "io_loop", None) is not None else None


def comm_pump_available() -> bool:
    """Whether widget messages can be handled while this thread blocks (see :class:`CommPump`)."""
    return _kernel_queue() is not None and not _ACTIVE.locked()


def comm_pump(comm_ids: Iterable[str]) -> CommPump | None:
    """A pump for the messages of these comms (widget model ids), or None where none can work.

    Args:
        comm_ids: the comms whose messages are handled while waiting.

    Returns:
        The pump, to use as a context manager; None outside an ipykernel 7 main shell.
    """
    found = _kernel_queue()
    if found is None:
        return None
    kernel, pair = found
    return CommPump(kernel, pair, frozenset(comm_ids))


class CommPump:
    """Handles the comm messages of some widgets while the kernel's main thread blocks.

    Use it as a context manager and call :meth:`pump` while waiting. Leaving it hands every
    message it set aside back to the kernel, in the order they came, behind the running cell.
    Built by :func:`comm_pump`.
    """

    def __init__(self, kernel: Any, pair: Any, comm_ids: frozenset[str]) -> None:
        self._kernel = kernel
        self._socket = pair.to_socket  # the main thread's end of the queue
        self._sender = pair.from_socket  # the shell channel thread's end
        self._channel_loop = kernel.shell_channel_thread.io_loop
        self._comm_ids = comm_ids
        self._held: list[Any] = []
        self._entered = False
        self.handled = 0
        """Comm messages handled so far."""

    def __enter__(self) -> CommPump:
        self._entered = _ACTIVE.acquire(blocking=False)
        return self

    def __exit__(self, *exc_info: object) -> None:
        try:
            self._hand_back()
        finally:
            if self._entered:
                self._entered = False
                _ACTIVE.release()

    def pump(self) -> int:
        """Handle the waiting messages of the pump's comms; set the others aside. Returns how many were handled."""
        if not self._entered:
            return 0
        import zmq

        handled = 0
        while True:
            try:
                frames = self._socket.recv_multipart(zmq.NOBLOCK, copy=False)
            except zmq.Again:
                return handled
            except zmq.ZMQError:  # the kernel is shutting down
                return handled
            message = self._ours(frames)
            if message is None:
                self._held.append(frames)
                continue
            idents, parsed = message
            self._kernel.comm_manager.comm_msg(None, idents, parsed)  # it logs a callback's error itself
            handled += 1
            self.handled += 1

    def _ours(self, frames: list[Any]) -> tuple[list[Any], dict[str, Any]] | None:
        """``(idents, message)`` of a comm message for one of the pump's comms, else None."""
        if len(frames) < 2:
            return None  # ipykernel's own one-frame "stop aborting" marker
        session = self._kernel.session
        try:
            idents, rest = session.feed_identities(frames, copy=False)
            # a peek: the signature is checked but not recorded, so a message handed back is
            # not refused by the kernel as a replay ("Duplicate Signature")
            peek = session.deserialize(rest, content=False, copy=False)
            # (JupyterLab sends comm messages with its comms' subshell id; the kernel routed this
            # one to the main shell, where the widget lives, so it is ours to handle all the same)
            if peek["header"].get("msg_type") != "comm_msg":
                return None
            content = session.unpack(peek["content"])
            if not isinstance(content, dict) or content.get("comm_id") not in self._comm_ids:
                return None
            return idents, session.deserialize(rest, content=True, copy=False)  # consumed: recorded
        except Exception:  # noqa: BLE001 - not ours to judge: the kernel reports it when handed back
            return None

    def _hand_back(self) -> None:
        """Put the set-aside messages back in the kernel's queue, in order, ahead of anything newer.

        They go back the way they came (sent again by the shell channel thread, the queue's
        only writer), so the kernel's own reader takes them after the messages it had read
        before this wait began, as if the pump had never looked. A last look first moves
        whatever arrived since the last :meth:`pump` behind them.
        """
        self.pump()
        held, self._held = self._held, []
        if not held:
            return
        sent = threading.Event()

        def send_again() -> None:
            try:
                for frames in held:
                    self._sender.send_multipart(frames, copy=False)
            finally:
                sent.set()

        self._channel_loop.add_callback(send_again)
        sent.wait(_HAND_BACK_WAIT_S)
