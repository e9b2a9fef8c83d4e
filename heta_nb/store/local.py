"""The local folder backend: atomic writes, no symbolic links inside, Windows-safe names."""

from __future__ import annotations

import os
import shutil
import stat
from pathlib import Path

from heta_nb._util.atomic import write_atomically
from heta_nb._util.fs import default_max_bytes, kind_of, open_regular, read_regular_file, unusable_path_reason
from heta_nb.errors import StoreError, UnsafeNameError
from heta_nb.store.backend import Entry
from heta_nb.store.errors import StoreNotADirectoryError, StoreNotFoundError
from heta_nb.store.names import windows_name_problem

__all__ = ["LocalBackend", "local_stamp"]

_ON_WINDOWS = os.name == "nt"


def _link_problem(path: str, root: Path) -> str:
    """Why the link at ``path`` is not listed: where it leads (heta_nb does not follow links in a store)."""
    try:
        target = os.readlink(path)
    except OSError:
        target = "?"
    if not os.path.exists(path):
        what = "a symbolic link to a missing file"
    else:
        resolved = Path(path).resolve()
        inside = resolved == root or root in resolved.parents
        what = "a symbolic link to another file of the store" if inside else "a symbolic link outside the store root"
    return f"{what} ({target}); heta_nb does not follow links inside a store"


def _listing(folder: str) -> list[os.DirEntry[str]]:
    """The entries of ``folder`` (none when it is gone or not a folder)."""
    try:
        with os.scandir(folder) as listing:
            return list(listing)
    except (FileNotFoundError, NotADirectoryError):
        return []


def local_stamp(info: os.stat_result) -> str:
    """The version stamp of a local file: its inode and ``st_mtime_ns``."""
    return f"{info.st_ino}:{info.st_mtime_ns}"


class LocalBackend:
    """A folder on the local file system. Writes are atomic (temp file + rename).

    The root may be a symbolic link (it is resolved once), but a key whose path below
    the root passes through a link is refused (:class:`UnsafeNameError`): one leading
    outside would escape the store, one leading inside would alias another report.

    On Windows, a key whose folder or file name Windows cannot hold is refused
    (see :func:`windows_name_problem`) rather than written somewhere else.
    """

    def __init__(self, root: Path) -> None:
        try:
            self.root = root.expanduser().resolve()
        except ValueError as exc:  # a NUL character, a lone surrogate
            raise StoreError(f"{str(root)!r}: not a usable store folder ({unusable_path_reason(exc)})") from None
        self.description = str(self.root)

    def path(self, key: str) -> Path:
        """The file of ``key``; refuses (:class:`UnsafeNameError`) a key that leaves the root or passes a link."""
        if _ON_WINDOWS:
            for name in key.split("/"):
                problem = windows_name_problem(name)
                if problem is not None:
                    raise UnsafeNameError(f"key {key!r}: {name!r} {problem}")
        lexical = self.root.joinpath(*(part for part in key.split("/") if part))
        path = lexical.resolve()
        if path != self.root and self.root not in path.parents:  # defence in depth
            raise UnsafeNameError(f"key {key!r} resolves outside the store root {self.root}")
        if os.path.normcase(path) != os.path.normcase(lexical):  # (normcase: Windows resolves to the disk's case)
            # A link inside the store would alias another report: saving, loading or
            # deleting this key would act on that one instead.
            raise UnsafeNameError(
                f"key {key!r} passes through a symbolic link inside the store root {self.root} "
                f"(to {path.relative_to(self.root).as_posix() or '.'}); heta_nb does not follow links inside a store"
            )
        return path

    def read(self, key: str) -> bytes:
        """The file's bytes: a regular file only, within the default size limit (see :func:`read_regular_file`)."""
        return read_regular_file(self.path(key))

    def write(self, key: str, data: bytes) -> None:
        write_atomically(self.path(key), data)

    def append(self, key: str, data: bytes) -> None:
        path = self.path(key)
        path.parent.mkdir(parents=True, exist_ok=True)
        fd = open_regular(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o666)
        with open(fd, "ab") as handle:
            handle.write(data)

    def exists(self, key: str) -> bool:
        return self.path(key).is_file()

    def size(self, key: str) -> int | None:
        try:
            return self.path(key).stat().st_size
        except FileNotFoundError:
            return None

    def entry(self, key: str) -> Entry | None:
        try:
            info = self.path(key).stat()
        except FileNotFoundError:
            return None
        return Entry(key, info.st_size, local_stamp(info))

    def stamp(self, key: str) -> str | None:
        found = self.entry(key)
        return found.stamp if found else None

    def check_root(self, *, missing_ok: bool) -> bool:
        """True if the root is a folder, False if it is missing and ``missing_ok``."""
        try:
            info = os.stat(self.root)
        except FileNotFoundError:
            if missing_ok:
                return False
            raise StoreNotFoundError(
                f"{self.root}: no such folder (a report store is created by saving a report to it)"
            ) from None
        except NotADirectoryError:
            raise StoreNotADirectoryError(f"{self.root}: not a folder (part of the path is a file)") from None
        if not stat.S_ISDIR(info.st_mode):
            raise StoreNotADirectoryError(f"{self.root}: not a folder (a report store is a folder)")
        return True

    def list_prefix(self, prefix: str) -> list[Entry]:
        """Every file below ``prefix``, sorted by key; links to folders are not followed, and a
        linked file (or a FIFO, a device...) is listed with a ``problem`` (never read)."""
        base = self.path(prefix)
        entries: list[Entry] = []
        if not base.is_dir():
            return entries
        stack = [(str(base), prefix.strip("/"))]
        while stack:
            folder, rel = stack.pop()
            for item in _listing(folder):
                key = f"{rel}/{item.name}"
                if item.is_dir(follow_symlinks=False):
                    stack.append((item.path, key))
                else:
                    found = self._entry(item, key, identify=True)
                    if found is not None:
                        entries.append(found)
        entries.sort(key=lambda e: e.key)
        return entries

    def scan_reports(
        self, prefix: str, *, report: str, sidecar: str, errors: dict[str, Exception]
    ) -> tuple[list[Entry], dict[str, bytes]]:
        """The files of every folder ``{prefix}/*/evaluations/*/``, and their sidecars' bytes.

        :meth:`list_prefix` and :meth:`read_many` for a store listing, in one walk: each
        ``report`` file gets its size and stamp (a ``stat``), other files are listed without
        (size -1), and each regular ``sidecar`` is read as its folder is listed (its read
        errors go to ``errors``). Links and special files are listed with a ``problem``.
        """
        base = self.path(prefix)
        entries: list[Entry] = []
        blobs: dict[str, bytes] = {}
        if not base.is_dir():
            return entries, blobs
        limit = default_max_bytes()
        for kb in _listing(str(base)):
            if not kb.is_dir(follow_symlinks=False):
                continue
            for folder in _listing(os.path.join(kb.path, "evaluations")):
                if not folder.is_dir(follow_symlinks=False):
                    continue
                rel = f"{prefix}/{kb.name}/evaluations/{folder.name}"
                for item in _listing(folder.path):
                    name = item.name
                    key = f"{rel}/{name}"
                    found = self._entry(item, key, identify=name == report)
                    if found is None:
                        continue
                    entries.append(found)
                    if name == sidecar and found.problem is None:
                        try:
                            blobs[key] = read_regular_file(item.path, max_bytes=limit, follow=False)
                        except FileNotFoundError:  # removed while listing
                            continue
                        except OSError as exc:
                            errors[key] = exc
        return entries, blobs

    def _entry(self, item: os.DirEntry[str], key: str, *, identify: bool) -> Entry | None:
        """The listing entry of a file (None: a folder, or gone); ``identify``: with size and stamp."""
        try:
            if item.is_dir(follow_symlinks=False):
                return None
            if item.is_symlink():
                if os.path.isdir(item.path):  # a linked folder is not followed, as os.walk does
                    return None
                return Entry(key, -1, problem=_link_problem(item.path, self.root))
            if not item.is_file(follow_symlinks=False):  # a FIFO, a socket, a device: never read
                kind = kind_of(item.stat(follow_symlinks=False).st_mode)
                return Entry(key, -1, problem=f"{kind}, not a regular file")
            if not identify:
                return Entry(key, -1)
            info = item.stat(follow_symlinks=False)  # one stat: size and identity
            return Entry(key, info.st_size, local_stamp(info))
        except FileNotFoundError:  # removed while listing
            return None
        except OSError as exc:
            return Entry(key, -1, problem=f"cannot read it ({exc.strerror or exc})")

    def read_many(self, keys: list[str], errors: dict[str, Exception] | None = None) -> dict[str, bytes]:
        found = {}
        for key in keys:
            try:
                found[key] = self.read(key)
            except FileNotFoundError:
                continue
            except (OSError, UnsafeNameError) as exc:
                if errors is not None:
                    errors[key] = exc
        return found

    def delete_prefix(self, prefix: str) -> int:
        path = self.path(prefix)
        if not path.exists():
            return 0
        if path.is_file():
            path.unlink()
            return 1
        count = sum(len(files) for _, _, files in os.walk(path))
        shutil.rmtree(path)
        return count
