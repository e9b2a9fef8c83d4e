"""The local folder backend: atomic writes, no symbolic links inside, Windows-safe names."""

from __future__ import annotations

import os
import shutil
import stat
from pathlib import Path

from heta_nb._util.atomic import write_atomically
from heta_nb.errors import UnsafeNameError
from heta_nb.store.backend import Entry
from heta_nb.store.errors import StoreNotADirectoryError, StoreNotFoundError
from heta_nb.store.names import windows_name_problem

__all__ = ["LocalBackend", "local_stamp"]

_ON_WINDOWS = os.name == "nt"


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
        self.root = root.expanduser().resolve()
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
        return self.path(key).read_bytes()

    def write(self, key: str, data: bytes) -> None:
        write_atomically(self.path(key), data)

    def append(self, key: str, data: bytes) -> None:
        path = self.path(key)
        path.parent.mkdir(parents=True, exist_ok=True)
        with path.open("ab") as handle:
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
        base = self.path(prefix)
        entries: list[Entry] = []
        if not base.is_dir():
            return entries
        for dirpath, _dirnames, filenames in os.walk(base):  # symlinked folders are not followed
            for name in filenames:
                full = os.path.join(dirpath, name)
                rel = Path(full).relative_to(self.root).as_posix()
                try:
                    info = os.stat(full)  # the one stat per file: size and identity
                except FileNotFoundError:
                    if os.path.islink(full):
                        entries.append(
                            Entry(rel, -1, problem=f"a symbolic link to a missing file ({os.readlink(full)})")
                        )
                    continue  # otherwise: removed while listing
                except OSError as exc:
                    entries.append(Entry(rel, -1, problem=f"cannot read it ({exc.strerror or exc})"))
                    continue
                if stat.S_ISREG(info.st_mode):
                    entries.append(Entry(rel, info.st_size, local_stamp(info)))
        entries.sort(key=lambda e: e.key)
        return entries

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
