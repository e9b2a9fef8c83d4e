"""Atomic file writes: a temporary file in the same folder, fsync, then rename."""

from __future__ import annotations

import os
import tempfile
from collections.abc import Sequence
from pathlib import Path

__all__ = ["write_atomically", "write_chunks"]


_IOV_MAX = 1024


def write_chunks(fd: int, chunks: Sequence[bytes]) -> None:
    """Write every chunk with ``writev`` (no joined copy of a large file in memory).

    Where the OS has no ``writev`` (Windows), up to 1024 chunks at a time are joined
    and written with ``write``. Short writes are completed either way.
    """
    writev = getattr(os, "writev", None)
    if writev is None:
        _write_joined(fd, chunks)
        return
    pending: Sequence[bytes | memoryview] = chunks
    start = 0
    while start < len(pending):
        group = pending[start : start + _IOV_MAX]
        written = writev(fd, group)
        start += len(group)
        for index, chunk in enumerate(group):  # a short write: keep what is left, in order
            if written >= len(chunk):
                written -= len(chunk)
                continue
            pending = [memoryview(chunk)[written:], *group[index + 1 :], *pending[start:]]
            start = 0
            break


def _write_joined(fd: int, chunks: Sequence[bytes]) -> None:
    for start in range(0, len(chunks), _IOV_MAX):
        view = memoryview(b"".join(chunks[start : start + _IOV_MAX]))
        while view:
            view = view[os.write(fd, view) :]


def write_atomically(path: str | os.PathLike[str], data: bytes | Sequence[bytes]) -> Path:
    """Write ``data`` to ``path`` so that readers see the old file or the new one, never half.

    ``data`` may be a sequence of chunks (written with ``writev``, without joining
    them). A crash leaves at most a hidden ``.name.*.tmp`` file behind, which is
    removed when the write itself fails.
    """
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    try:
        with os.fdopen(fd, "wb") as handle:
            if isinstance(data, (bytes, bytearray, memoryview)):
                handle.write(data)
                handle.flush()
            else:
                write_chunks(handle.fileno(), data)
            os.fsync(handle.fileno())
        os.replace(tmp, target)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return target
