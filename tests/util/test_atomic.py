"""Atomic, chunked writes (heta_nb._util.atomic)."""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any

import pytest

from heta_nb._util.atomic import (
    STALE_TEMP_S,
    remove_stale_temporaries,
    stale_temporaries,
    temporaries_of,
    write_atomically,
)

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


# -- temporary files left by writers killed mid-write ----------------------------------------------

fcntl: Any = None if os.name == "nt" else __import__("fcntl")
POSIX_ONLY = pytest.mark.skipif(os.name == "nt", reason="flock")


def _aged(path: Path, seconds: float = 3600) -> Path:
    old = time.time() - seconds
    os.utime(path, (old, old))
    return path


def _temporary(target: Path, hexpart: str, data: bytes = b"half a report") -> Path:
    """What a writer killed mid-write leaves next to ``target``."""
    path = target.with_name(f".{target.name}.{hexpart}.tmp")
    path.write_bytes(data)
    return path


@POSIX_ONLY
def test_stale_temporaries_are_those_no_live_writer_holds(tmp_path: Path) -> None:
    target = tmp_path / "report.json"
    dead = _aged(_temporary(target, "0badc0de"))
    young = _temporary(target, "12345678")  # a writer that died a moment ago, or one starting up
    live = _aged(_temporary(target, "abcdef01"))
    unrelated = [
        tmp_path / ".other.json.0badc0de.tmp",
        tmp_path / ".report.json.tmp",
        tmp_path / ".report.json.NOTHEX00.tmp",
    ]
    for path in unrelated:
        path.write_bytes(b"")
        _aged(path)
    fd = os.open(live, os.O_RDONLY)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)  # the live writer's lock (its process is alive)
        found = {t.path.name: t for t in temporaries_of(target)}
        assert sorted(found) == sorted(p.name for p in (dead, young, live))
        assert found[dead.name].stale and not found[young.name].stale and not found[live.name].stale
        assert found[dead.name].size == len(b"half a report") and found[dead.name].age_s > 3000
        assert stale_temporaries(target) == [dead]
        assert remove_stale_temporaries(target) == [dead]
        assert not dead.exists() and young.exists() and live.exists() and all(p.exists() for p in unrelated)
    finally:
        os.close(fd)  # the writer is gone: its temporary is stale now
    assert remove_stale_temporaries(target) == [live]
    assert STALE_TEMP_S == 60.0


@POSIX_ONLY
def test_a_writer_holds_its_temporary_until_it_is_published(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    target = tmp_path / "report.json"
    seen: list[Any] = []
    real_fsync = os.fsync

    def fsync(fd: int) -> None:  # the bytes are written, not yet published: as long after as one likes
        for temporary in temporaries_of(target):
            _aged(temporary.path)
        seen.extend(temporaries_of(target))
        assert remove_stale_temporaries(target) == []
        real_fsync(fd)

    monkeypatch.setattr(os, "fsync", fsync)
    write_atomically(target, b"{}", exclusive=True)
    write_atomically(target, b"[]")
    assert len(seen) == 2 and not any(t.stale for t in seen) and all(t.age_s > 3000 for t in seen)
    assert target.read_bytes() == b"[]" and temporaries_of(target) == []
