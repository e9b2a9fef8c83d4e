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

A writer killed mid-write (``kill -9``) leaves its ``.name.<8 hex>.tmp`` behind. On
POSIX each writer holds an ``flock`` on its temporary file until the file is published,
and the kernel drops that lock when the process dies: :func:`stale_temporaries` finds
the temporaries of a file that no live writer holds (and that are older than
:data:`STALE_TEMP_S`), and :func:`remove_stale_temporaries` removes them. Every write
does so first, for the file it writes: the next successful write cleans up after a
killed one.

Only a regular file is replaced (:func:`write_target`): a FIFO, a device, a socket or a
symbolic link to one is refused with :class:`~heta_nb._util.fs.NotARegularFileError`
before anything is written (``-o /dev/null --force`` run as root must not replace the
machine's ``/dev/null``). A symbolic link to a regular file is written through, as a
shell's ``>`` does: the file it leads to is replaced, the link stays.
"""

from __future__ import annotations

import errno
import os
import re
import secrets
import stat
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from heta_nb._util.fs import refuse_not_regular

try:
    import fcntl
except ImportError:  # pragma: no cover - Windows: temporaries are judged by age alone
    fcntl = None  # type: ignore[assignment]  # typeshed has fcntl everywhere

__all__ = [
    "STALE_LOCK_S",
    "STALE_TEMP_S",
    "Temporary",
    "is_temporary_name",
    "remove_stale_temporaries",
    "stale_temporaries",
    "temporaries_of",
    "temporary_state",
    "write_atomically",
    "write_atomically_stat",
    "write_chunks",
    "write_target",
]


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
STALE_TEMP_S = 60.0
"""Age (since its last write) after which a temporary file that no writer holds locked is
stale. Where it cannot be told whether a writer holds it (no ``flock``: Windows, some
network file systems), :data:`UNLOCKABLE_STALE_TEMP_S` instead."""
UNLOCKABLE_STALE_TEMP_S = 3600.0
_TEMP_SUFFIX = re.compile(r"\.[0-9a-f]{8}\.tmp")


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
    ``IsADirectoryError`` naming it, one that is a FIFO, a device or a socket (or a link
    to one) ``NotARegularFileError``, and nothing is written (see :func:`write_target`).
    The stale temporary files of earlier writes of ``path`` that were killed are removed
    first (see :func:`remove_stale_temporaries`).
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
    target = write_target(path, exclusive=exclusive)
    target.parent.mkdir(parents=True, exist_ok=True)
    try:  # what earlier writes of this file, killed mid-write, left behind
        remove_stale_temporaries(target)
    except OSError:
        pass
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
            if not _ON_WINDOWS:  # published while open, so its lock marks it live until then
                _publish(tmp, target, exclusive)
        if _ON_WINDOWS:  # (Windows cannot rename an open file)
            _publish(tmp, target, exclusive)
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


def write_target(path: str | os.PathLike[str], *, exclusive: bool = False) -> Path:
    """The file a write of ``path`` replaces; raises when ``path`` is nothing a write may replace.

    ``path`` itself when it does not exist or is a regular file; the regular file a
    symbolic link leads to (written through, the link kept), unless ``exclusive``
    (which never replaces anything). A dangling link is replaced, as before.

    Raises:
        IsADirectoryError: ``path`` is a folder (or a link to one).
        NotARegularFileError: ``path`` is a FIFO, a device, a socket or a link to one;
            nothing was written.
    """
    target = Path(path)
    try:
        info = os.stat(target)
    except (OSError, ValueError):  # absent, a dangling link, or a name the open will refuse
        return target
    if stat.S_ISDIR(info.st_mode):  # else the temporary file would be named in the error
        raise IsADirectoryError(f"{target}: is a folder; give the path of the file to write")
    if not stat.S_ISREG(info.st_mode):
        refuse_not_regular(info.st_mode, os.fspath(target), writing=True)
    if not exclusive and target.is_symlink():
        return Path(os.path.realpath(target))
    return target


def _publish(tmp: Path, target: Path, exclusive: bool) -> None:
    if exclusive:
        _publish_exclusively(tmp, target)
        return
    try:  # checked again just before the rename: a FIFO swapped in meanwhile is not replaced
        info = os.lstat(target)
    except FileNotFoundError:
        pass
    else:
        if not stat.S_ISREG(info.st_mode) and not stat.S_ISLNK(info.st_mode):
            refuse_not_regular(info.st_mode, os.fspath(target), writing=True)
    os.replace(tmp, target)


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
        tmp = target.with_name(f"{_temp_prefix(target.name)}{secrets.token_hex(4)}.tmp")
        try:
            fd = os.open(tmp, _CREATE_FLAGS, 0o666)
        except FileExistsError:
            continue
        if fcntl is not None:
            try:  # held until the file is published or this process dies (see stale_temporaries)
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError:  # no locks here (ENOLCK): its age alone tells a stale one
                pass
        return fd, tmp
    raise FileExistsError(errno.EEXIST, "no free temporary file name", str(target))


def _temp_prefix(name: str) -> str:
    """What the temporary files of a file called ``name`` start with."""
    return f".{_shortened(name, 14)}."


@dataclass(frozen=True)
class Temporary:
    """A temporary file of an atomic write, as :func:`temporaries_of` finds it."""

    path: Path
    size: int
    age_s: float
    """Seconds since it was last written."""
    stale: bool
    """No live writer holds it (and it is old enough to be sure): safe to remove."""


def temporaries_of(target: str | os.PathLike[str], *, now: float | None = None) -> list[Temporary]:
    """The temporary files that writes of ``target`` left next to it, live or stale."""
    path = Path(target)
    prefix = _temp_prefix(path.name)
    try:
        names = os.listdir(path.parent)
    except (FileNotFoundError, NotADirectoryError):
        return []
    found = [
        temporary_state(path.parent / name, now=now)
        for name in names
        if name.startswith(prefix) and _TEMP_SUFFIX.fullmatch(name, len(prefix) - 1)
    ]
    return sorted((t for t in found if t is not None), key=lambda t: t.path.name)


def is_temporary_name(name: str) -> bool:
    """Whether ``name`` is the name of an atomic write's temporary file (``.name.<8 hex>.tmp``)."""
    return name.startswith(".") and name.endswith(".tmp") and _TEMP_SUFFIX.fullmatch(name, len(name) - 13) is not None


def temporary_state(path: str | os.PathLike[str], *, now: float | None = None) -> Temporary | None:
    """The :class:`Temporary` at ``path`` (None when it is gone or not a regular file)."""
    try:
        info = os.lstat(path)
    except FileNotFoundError:  # published meanwhile
        return None
    if not stat.S_ISREG(info.st_mode):
        return None
    age = (time.time() if now is None else now) - info.st_mtime
    return Temporary(Path(path), info.st_size, age, _is_stale(Path(path), age))


def stale_temporaries(target: str | os.PathLike[str]) -> list[Path]:
    """The temporary files of ``target`` that no live writer holds (see the module docstring)."""
    return [t.path for t in temporaries_of(target) if t.stale]


def remove_stale_temporaries(target: str | os.PathLike[str]) -> list[Path]:
    """Remove the stale temporary files of ``target``; returns those removed.

    Each is removed while this process holds its lock, so a writer that is still
    alive is never robbed of its file. Failures to remove one are ignored (the next
    call tries again).
    """
    removed = []
    for path in stale_temporaries(target):
        fd = _locked(path)
        if fd is None and fcntl is not None and _lockable(path):
            continue  # a writer took it meanwhile (cannot happen: names are never reused)
        try:
            path.unlink()
            removed.append(path)
        except OSError:
            pass
        finally:
            if fd is not None:
                os.close(fd)
    return removed


def _is_stale(path: Path, age: float) -> bool:
    """Whether the temporary file at ``path``, last written ``age`` seconds ago, has no live writer."""
    if age < STALE_TEMP_S:
        return False
    if fcntl is None:
        return age >= UNLOCKABLE_STALE_TEMP_S
    fd = _locked(path)
    if fd is not None:
        os.close(fd)
        return True
    return not _lockable(path) and age >= UNLOCKABLE_STALE_TEMP_S


def _locked(path: Path) -> int | None:
    """An open descriptor of ``path`` holding its ``flock``, or None (held by a writer, or no locks)."""
    if fcntl is None:
        return None
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0))
    except OSError:
        return None
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        os.close(fd)
        return None
    return fd


def _lockable(path: Path) -> bool:
    """False when the file system refuses locks altogether (``ENOLCK``, ``EOPNOTSUPP``...), not just this one."""
    if fcntl is None:
        return False
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0))
    except OSError:
        return True  # gone: nothing to decide
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
    except BlockingIOError:
        return True  # held: locks work, and a writer is alive
    except OSError:
        return False
    finally:
        os.close(fd)
    return True


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
