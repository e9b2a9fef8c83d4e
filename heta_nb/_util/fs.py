"""Reading a file's bytes: local regular files within a size limit, and fsspec URLs (imported when used)."""

from __future__ import annotations

import errno
import os
import stat
from typing import Any, BinaryIO

try:
    import fcntl
except ImportError:  # pragma: no cover - Windows: no O_NONBLOCK to clear
    fcntl = None  # type: ignore[assignment]  # typeshed has fcntl everywhere

from heta_nb._util.optional import require
from heta_nb.errors import HetaNbError, ReportNotFoundError, StoreError

__all__ = [
    "DEFAULT_MAX_BYTES",
    "MAX_BYTES_VARIABLE",
    "FileTooLargeError",
    "NotARegularFileError",
    "default_max_bytes",
    "filesystem",
    "kind_of",
    "open_regular",
    "open_regular_file",
    "read_regular_file",
    "refuse_not_regular",
    "read_url",
    "unusable_path_reason",
]

DEFAULT_MAX_BYTES = 4 * 1024**3
"""The largest file read unless the caller or :data:`MAX_BYTES_VARIABLE` raises the limit (4 GiB)."""
MAX_BYTES_VARIABLE = "HETA_NB_MAX_BYTES"
"""The environment variable that changes the default limit (a number of bytes; the CLI has no option for it)."""

_NONBLOCK = getattr(os, "O_NONBLOCK", 0)
_CHUNK = 1 << 24
_SMALL = 1 << 20
"""Files smaller than this are read with ``os.read`` (no file object)."""

_KINDS = (
    (stat.S_ISDIR, "a directory"),
    (stat.S_ISFIFO, "a FIFO (named pipe)"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISSOCK, "a socket"),
    (stat.S_ISLNK, "a symbolic link"),
)


class _FileError(HetaNbError, OSError):
    """An ``OSError`` whose text is ``"{filename}: {strerror}"`` (no errno number)."""

    def __str__(self) -> str:
        return f"{os.fsdecode(self.filename)}: {self.strerror}"


class NotARegularFileError(_FileError):
    """The path is a FIFO, a device, a socket...: reading it could block or never end.

    ``strerror`` says what the path is, ``filename`` names it.
    """


class FileTooLargeError(_FileError):
    """The file is larger than the reader's ``max_bytes`` (refused before reading it)."""


def kind_of(mode: int) -> str:
    """What a ``st_mode`` describes, for messages: ``"a FIFO (named pipe)"``, ``"a directory"``..."""
    for test, name in _KINDS:
        if test(mode):
            return name
    return "not a regular file"


def default_max_bytes() -> int:
    """The default limit: :data:`MAX_BYTES_VARIABLE` when set to a positive integer, else :data:`DEFAULT_MAX_BYTES`."""
    value = os.environ.get(MAX_BYTES_VARIABLE, "").strip().replace("_", "")
    return int(value) if value.isdigit() and int(value) > 0 else DEFAULT_MAX_BYTES


def _size_text(size: int) -> str:
    """``"5.0 GiB (5,368,709,120 bytes)"``: binary units, and the exact count."""
    for unit, scale in (("GiB", 1024**3), ("MiB", 1024**2), ("KiB", 1024)):
        if size >= scale:
            return f"{size / scale:.1f} {unit} ({size:,} bytes)"
    return f"{size:,} bytes"


def _too_large(path: str, size: int, max_bytes: int, hint: str | None) -> FileTooLargeError:
    ways = [hint.format(size=size)] if hint else []
    ways.append(f"{MAX_BYTES_VARIABLE}={size} in the environment")
    detail = (
        f"the file is {_size_text(size)}, larger than the limit of {_size_text(max_bytes)}; "
        f"to read it, raise the limit: {' or '.join(ways)}"
    )
    return FileTooLargeError(errno.EFBIG, detail, path)


def open_regular(
    path: str | os.PathLike[str],
    flags: int = os.O_RDONLY,
    mode: int = 0o666,
    *,
    max_bytes: int | None = None,
    hint: str | None = None,
    follow: bool = True,
) -> int:
    """A descriptor of the regular file at ``path``: every file heta_nb opens goes through here.

    The path is checked with ``stat`` (never blocks), then opened with ``O_NONBLOCK`` (a
    path swapped for a FIFO meanwhile opens at once, or fails, instead of waiting for a
    peer) and checked again with ``fstat``; anything but a regular file is refused before
    a byte is read or written. ``flags`` may create or append (``O_CREAT | O_APPEND``...).

    Args:
        max_bytes: refuse a larger file, from its size alone (None: no bound here).
        hint: how the caller's user raises ``max_bytes``, for the message.
        follow: False: a symbolic link is not followed (``ELOOP``).

    Raises:
        IsADirectoryError, NotARegularFileError, FileTooLargeError, or the ``OSError``
        of the open (``FileNotFoundError``...).
    """
    name = os.fspath(path)
    try:
        mode_now = (os.stat if follow else os.lstat)(name).st_mode
    except FileNotFoundError:
        if not flags & os.O_CREAT:
            raise
    except ValueError as exc:  # a NUL character, a lone surrogate: no file can have that name
        raise OSError(errno.EINVAL, f"not a usable file path ({unusable_path_reason(exc)})", name) from None
    else:
        if not stat.S_ISREG(mode_now):
            refuse_not_regular(mode_now, name, writing=bool(flags & (os.O_WRONLY | os.O_RDWR)))
    opened = flags | _NONBLOCK | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_BINARY", 0)
    try:
        fd = os.open(name, opened | (0 if follow else getattr(os, "O_NOFOLLOW", 0)), mode)
    except OSError as exc:
        if exc.errno == errno.ENXIO:  # a FIFO without a reader, swapped in since the stat
            refuse_not_regular(os.stat(name).st_mode, name, writing=True)
        raise
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):  # replaced since the stat
            refuse_not_regular(info.st_mode, name, writing=bool(flags & (os.O_WRONLY | os.O_RDWR)))
        if max_bytes is not None and info.st_size > max_bytes:
            raise _too_large(os.fsdecode(name), info.st_size, max_bytes, hint)
        if _NONBLOCK and fcntl is not None:  # a regular file ignores it; cleared for whoever reads on
            fcntl.fcntl(fd, fcntl.F_SETFL, fcntl.fcntl(fd, fcntl.F_GETFL) & ~_NONBLOCK)
    except BaseException:
        os.close(fd)
        raise
    return fd


def open_regular_file(
    path: str | os.PathLike[str], *, max_bytes: int | None = None, hint: str | None = None
) -> BinaryIO:
    """:func:`open_regular` for reading, as a binary file object (``max_bytes`` None: :func:`default_max_bytes`)."""
    limit = default_max_bytes() if max_bytes is None else max_bytes
    return open(open_regular(path, max_bytes=limit, hint=hint), "rb")  # noqa: SIM115 - the caller closes it


def read_regular_file(
    path: str | os.PathLike[str],
    *,
    max_bytes: int | None = None,
    hint: str | None = None,
    follow: bool = True,
) -> bytes:
    """The bytes of the regular file at ``path``, refusing anything else before reading it.

    A FIFO would block until a writer comes, ``/dev/zero`` never ends: only regular
    files are read (symbolic links followed), opened by :func:`open_regular`. A file
    larger than ``max_bytes`` is refused from its size alone, and one that grows past
    it while read is stopped.

    Args:
        path: the file.
        max_bytes: the largest size read (None: :func:`default_max_bytes`).
        hint: how the caller's user raises the limit besides the environment variable,
            for the message (``{size}`` is replaced by the file's size).
        follow: False: a symbolic link is not followed (an ``OSError``, ``ELOOP``).

    Returns:
        The file's bytes.

    Raises:
        FileNotFoundError: no such file.
        IsADirectoryError: ``path`` is a directory.
        NotARegularFileError: ``path`` is a FIFO, a device or a socket (``strerror`` says which).
        FileTooLargeError: the file is larger than ``max_bytes`` (the message names its size,
            the limit and ``hint``).
        OSError: another failure (no permission...).
    """
    name = os.fspath(path)
    if max_bytes is None:
        max_bytes = default_max_bytes()
    fd = open_regular(name, max_bytes=max_bytes, hint=hint, follow=follow)
    try:
        size = os.fstat(fd).st_size
        if size < _SMALL:  # one read, and one more to see the end (a sidecar, a small report)
            data = os.read(fd, size + 1)
            if len(data) == size and not os.read(fd, 1):
                return data
            os.lseek(fd, 0, os.SEEK_SET)  # it changed since the fstat: read it again, bounded
        with open(fd, "rb", closefd=False) as handle:
            return _read_all(handle, size, max_bytes, os.fsdecode(name), hint)
    finally:
        os.close(fd)


def _read_all(handle: BinaryIO, size: int, max_bytes: int, name: str, hint: str | None) -> bytes:
    """A file of ``size`` bytes (by its ``fstat``), read in one piece; stopped past ``max_bytes``."""
    data = handle.read(size) if size else b""
    extra = handle.read(1)
    if not extra:
        return data
    chunks, total = [data, extra], len(data) + 1  # it grew since the fstat (or reports size 0: /proc)
    while True:
        if total > max_bytes:
            raise _too_large(name, total, max_bytes, hint)
        chunk = handle.read(_CHUNK)
        if not chunk:
            return b"".join(chunks)
        chunks.append(chunk)
        total += len(chunk)


def refuse_not_regular(mode: int, path: str | bytes, *, writing: bool = False) -> None:
    """Raise the error for a path that is not a regular file (``IsADirectoryError`` for a directory).

    ``writing``: the message says the path is never written to (nor renamed over).
    """
    text = os.fsdecode(path)
    if stat.S_ISDIR(mode):
        raise IsADirectoryError(errno.EISDIR, "is a directory", text)
    kind = kind_of(mode)
    if stat.S_ISLNK(mode):
        why = "not followed here"
    elif writing:
        why = "never written to or replaced (only a regular file, or a link to one, is written)"
    else:
        why = "not read (it could block or never end)"
    raise NotARegularFileError(errno.EINVAL, f"not a regular file: it is {kind}, which is {why}", text)


def filesystem(url: str) -> tuple[Any, str]:
    """``(fs, path)`` for an fsspec URL, with a clear error for unknown protocols."""
    fsspec = require("fsspec", extra="fsspec", purpose=f"reading {url}")
    try:
        return fsspec.core.url_to_fs(url)  # type: ignore[no-any-return]
    except (ImportError, ValueError) as exc:
        raise StoreError(f"{url}: cannot open this URL ({exc})") from None


def read_url(url: str, *, max_bytes: int | None = None, hint: str | None = None) -> bytes:
    """Read the bytes at ``url``; a directory URL reads its ``report.json``.

    An object larger than ``max_bytes`` (None: :func:`default_max_bytes`), by the size
    the file system reports, is refused before it is downloaded.

    Raises:
        ReportNotFoundError: nothing at ``url``.
        FileTooLargeError: the object is larger than ``max_bytes``.
        StoreError: the file system failed.
    """
    if max_bytes is None:
        max_bytes = default_max_bytes()
    fs, path = filesystem(url)
    try:
        if fs.isdir(path):
            path = path.rstrip("/") + "/report.json"
        size = fs.size(path)
        if isinstance(size, int) and size > max_bytes:
            raise _too_large(url, size, max_bytes, hint)
        data = fs.cat_file(path)
    except FileNotFoundError:
        raise ReportNotFoundError(f"{url}: no such file") from None
    except FileTooLargeError:
        raise
    except OSError as exc:
        raise StoreError(f"{url}: cannot read ({exc})") from None
    if len(data) > max_bytes:  # a size the file system did not report
        raise _too_large(url, len(data), max_bytes, hint)
    return data  # type: ignore[no-any-return]


def unusable_path_reason(exc: ValueError) -> str:
    """Why ``os`` refused a path with ``exc``, in words: ``"it contains a NUL character"``..."""
    if isinstance(exc, UnicodeEncodeError):
        return "it holds characters the file system cannot encode, such as a lone surrogate"
    if "null" in str(exc):
        return "it contains a NUL character"
    return str(exc)
