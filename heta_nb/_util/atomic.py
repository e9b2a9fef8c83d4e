"""Atomic file writes: a temporary file in the same folder, fsync, then rename.

File modes: a new file gets the mode a plain ``open(path, "w")`` would give it (the
temporary file is created with ``0o666``, so the kernel applies the umask and any
default ACL of the folder, without heta_nb reading or changing the process umask); a
replaced file keeps its mode. On Windows modes are left alone.

Exclusive writes (``exclusive=True``) publish the temporary file with ``os.link``,
which fails when the target exists, so of two writers creating the same file exactly
one wins and no lock is left behind. Where the file system has no hard links, a
``.name.lock`` file created with ``O_EXCL`` serialises the writers; a lock older than
:data:`STALE_LOCK_S` seconds (left by a crashed writer) is taken over.
"""

from __future__ import annotations

import errno
import os
import secrets
import stat
import time
from collections.abc import Sequence
from pathlib import Path

__all__ = ["STALE_LOCK_S", "write_atomically", "write_atomically_stat", "write_chunks"]


_IOV_MAX = 1024
_NAME_MAX = 255
"""The longest file name (bytes) on every common file system."""
_ON_WINDOWS = os.name == "nt"
_CREATE_FLAGS = (
    os.O_WRONLY
    | os.O_CREAT
    | os.O_EXCL
    | getattr(os, "O_BINARY", 0)  # no \r\n translation on Windows
    | getattr(os, "O_NOINHERIT", 0)
    | getattr(os, "O_CLOEXEC", 0)
)
STALE_LOCK_S = 60.0
"""Age after which the lock of an exclusive write (hard-link-less file systems only) is
considered left behind by a crashed writer."""


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


def write_atomically(path: str | os.PathLike[str], data: bytes | Sequence[bytes], *, exclusive: bool = False) -> Path:
    """Write ``data`` to ``path`` so that readers see the old file or the new one, never half.

    ``data`` may be a sequence of chunks (written with ``writev``, without joining
    them). A crash leaves at most a hidden ``.name.*.tmp`` file behind, which is
    removed when the write itself fails. A new file gets the mode ``open(path, "w")``
    would give it; a replaced file keeps its mode.

    With ``exclusive=True`` the write only creates: when ``path`` exists (or another
    writer creates it first) it raises ``FileExistsError`` and leaves it untouched.
    Missing parent folders are created; a ``path`` that is a folder raises
    ``IsADirectoryError`` naming it.
    """
    target = Path(path)
    write_atomically_stat(target, data, exclusive=exclusive)
    return target


def write_atomically_stat(
    path: str | os.PathLike[str], data: bytes | Sequence[bytes], *, exclusive: bool = False
) -> os.stat_result:
    """:func:`write_atomically`, returning the ``fstat`` of the file written.

    The result describes the bytes this call wrote (inode, size, ``st_mtime_ns``),
    even when another writer replaces the file right after.
    """
    target = Path(path)
    if target.is_dir():  # else the temporary file would be named in the error
        raise IsADirectoryError(f"{target}: is a folder; give the path of the file to write")
    target.parent.mkdir(parents=True, exist_ok=True)
    keep_mode = None if exclusive else _existing_mode(target)
    try:
        fd, tmp = _create_temp(target)
    except FileExistsError:
        raise
    except OSError as exc:  # e.g. a read-only folder: name the file asked for, not its temporary file
        raise _naming(exc, target) from exc
    try:
        with os.fdopen(fd, "wb") as handle:
            if keep_mode is not None:
                try:
                    os.fchmod(handle.fileno(), keep_mode)
                except OSError:  # a file system without POSIX modes: keep its default
                    pass
            if isinstance(data, (bytes, bytearray, memoryview)):
                handle.write(data)
                handle.flush()
            else:
                write_chunks(handle.fileno(), data)
            os.fsync(handle.fileno())
            written = os.fstat(handle.fileno())
        if exclusive:
            _publish_exclusively(tmp, target)
        else:
            os.replace(tmp, target)
    except FileExistsError:
        tmp.unlink(missing_ok=True)
        raise
    except OSError as exc:
        tmp.unlink(missing_ok=True)
        if exc.filename is None or os.fspath(exc.filename) == os.fspath(tmp):  # a full disk, say
            raise _naming(exc, target) from exc
        raise
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    return written


def _naming(exc: OSError, target: Path) -> OSError:
    """``exc`` (same errno, so same subclass) naming ``target``, not the temporary file."""
    if exc.errno is None:
        return exc
    return OSError(exc.errno, exc.strerror or str(exc), os.fspath(target))


def _existing_mode(target: Path) -> int | None:
    """The permission bits of the regular file at ``target`` (None: none, or Windows)."""
    if _ON_WINDOWS:
        return None
    try:
        info = os.stat(target)
    except OSError:
        return None
    return stat.S_IMODE(info.st_mode) if stat.S_ISREG(info.st_mode) else None


def _create_temp(target: Path) -> tuple[int, Path]:
    """Create ``.name.XXXXXXXX.tmp`` next to ``target`` with mode ``0o666 & ~umask``
    (``name`` shortened when the whole would exceed 255 bytes).

    (``tempfile.mkstemp`` would create it ``0o600``, whatever the umask.)
    """
    for _ in range(100):
        tmp = target.with_name(f".{_shortened(target.name, 14)}.{secrets.token_hex(4)}.tmp")
        try:
            return os.open(tmp, _CREATE_FLAGS, 0o666), tmp
        except FileExistsError:
            continue
    raise FileExistsError(errno.EEXIST, "no free temporary file name", str(target))


def _shortened(name: str, extra: int) -> str:
    """``name``, cut so that ``extra`` more bytes still fit a 255-byte file name.

    (The temporary file and the lock add a dot, a suffix and a random part; a name
    that fits on its own must not fail with ``ENAMETOOLONG`` because of them.)
    """
    while name and len(os.fsencode(name)) > _NAME_MAX - extra:
        name = name[:-1]  # whole characters, so a multi-byte one is never split
    return name


def _publish_exclusively(tmp: Path, target: Path) -> None:
    """Move ``tmp`` to ``target`` unless ``target`` exists (then ``FileExistsError``)."""
    try:
        os.link(tmp, target)
    except FileExistsError:
        raise
    except (OSError, AttributeError, NotImplementedError):  # no hard links here
        _replace_if_absent_locked(tmp, target)
        return
    tmp.unlink(missing_ok=True)


def _replace_if_absent_locked(tmp: Path, target: Path) -> None:
    lock = target.with_name(f".{_shortened(target.name, 6)}.lock")
    fd = _acquire_lock(lock, target)
    try:
        if os.path.lexists(target):
            raise FileExistsError(errno.EEXIST, "File exists", str(target))
        os.replace(tmp, target)
    finally:
        os.close(fd)
        lock.unlink(missing_ok=True)


def _acquire_lock(lock: Path, target: Path) -> int:
    for attempt in range(3):
        try:
            return os.open(lock, _CREATE_FLAGS, 0o666)
        except FileExistsError:
            try:
                age = time.time() - os.stat(lock).st_mtime
            except FileNotFoundError:  # released meanwhile: try again
                continue
            if age < STALE_LOCK_S or attempt:
                raise FileExistsError(
                    errno.EEXIST, f"another writer is creating this file (lock {lock.name})", str(target)
                ) from None
            lock.unlink(missing_ok=True)  # left by a crashed writer
    raise FileExistsError(errno.EEXIST, f"another writer is creating this file (lock {lock.name})", str(target))
