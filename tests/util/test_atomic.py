"""Atomic, chunked writes (heta_nb._util.atomic)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from heta_nb._util.atomic import write_atomically

# -- chunked atomic writes ---------------------------------------------------------------------


def test_write_atomically_writes_chunks_without_joining(tmp_path: Path) -> None:
    chunks = [os.urandom(n % 97) for n in range(3000)]  # more than IOV_MAX, some empty
    path = write_atomically(tmp_path / "out.bin", chunks)
    assert path.read_bytes() == b"".join(chunks)
    assert not [p for p in tmp_path.iterdir() if p.name.endswith(".tmp")]


def test_chunked_writes_survive_short_writes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """writev may write less than asked (signals, quotas); the rest must follow in order.

    A local disk never does it on demand, so the OS call is wrapped to stop after a few
    bytes of every call; the file must still hold every chunk, in order.
    """
    real_writev = os.writev
    calls = []

    def stingy_writev(fd: int, buffers: Any) -> int:
        first = bytes(buffers[0])[:7] if len(buffers[0]) else b""
        calls.append(len(first))
        return real_writev(fd, [first]) if first else real_writev(fd, list(buffers)[:2])

    monkeypatch.setattr(os, "writev", stingy_writev)
    chunks = [os.urandom(n % 23) for n in range(300)]
    path = write_atomically(tmp_path / "short.bin", chunks)
    assert path.read_bytes() == b"".join(chunks)
    assert len(calls) > len(chunks)  # it really was fed piecemeal


def test_chunked_writes_without_writev(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Windows has no ``os.writev``: chunks are joined a group at a time and written with ``write``."""
    monkeypatch.delattr(os, "writev")
    chunks = [os.urandom(n % 97) for n in range(3000)]  # more than one group, some empty
    path = write_atomically(tmp_path / "out.bin", chunks)
    assert path.read_bytes() == b"".join(chunks)
