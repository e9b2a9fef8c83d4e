"""The fsspec backend: any fsspec file system (``memory://``, ``s3://``...) as a store."""

from __future__ import annotations

from typing import Any

from heta_nb._util.fs import filesystem
from heta_nb.store.backend import Entry, info_stamp

__all__ = ["FsspecBackend", "is_local_filesystem"]


class FsspecBackend:
    """Any fsspec file system (``memory://``, ``s3://``...). One ``pipe`` per object."""

    def __init__(self, url: str) -> None:
        self.fs, self.path = filesystem(url)
        self.root = self.path.rstrip("/")
        self.description = url

    def _path(self, key: str) -> str:
        return f"{self.root}/{key}" if self.root else key

    def read(self, key: str) -> bytes:
        data: bytes = self.fs.cat_file(self._path(key))  # fsspec is untyped
        return data

    def write(self, key: str, data: bytes) -> None:
        path = self._path(key)
        parent = path.rsplit("/", 1)[0]
        self.fs.makedirs(parent, exist_ok=True)
        # Object stores (s3, gcs, memory) replace an object in one request, so a
        # reader sees the old bytes or the new ones, never half of them.
        self.fs.pipe_file(path, data)

    def append(self, key: str, data: bytes) -> None:
        path = self._path(key)
        old = self.fs.cat_file(path) if self.fs.exists(path) else b""
        self.write(key, old + data)

    def exists(self, key: str) -> bool:
        return bool(self.fs.isfile(self._path(key)))

    def size(self, key: str) -> int | None:
        try:
            return int(self.fs.size(self._path(key)))
        except FileNotFoundError:
            return None

    def entry(self, key: str) -> Entry | None:
        try:
            info = self.fs.info(self._path(key))
        except FileNotFoundError:
            return None
        return Entry(key, int(info.get("size") or 0), info_stamp(info))

    def stamp(self, key: str) -> str | None:
        found = self.entry(key)
        return found.stamp if found else None

    def check_root(self, *, missing_ok: bool) -> bool:
        return True  # object stores have no folders: an empty prefix is an empty store

    def list_prefix(self, prefix: str) -> list[Entry]:
        base = self._path(prefix)
        try:
            found = self.fs.find(base, detail=True)
        except FileNotFoundError:
            return []
        entries: list[Entry] = []
        for path, info in found.items():
            if info.get("type", "file") != "file":
                continue
            entries.append(Entry(_relative(path, self.root), int(info.get("size") or 0), info_stamp(info)))
        entries.sort(key=lambda e: e.key)
        return entries

    def read_many(self, keys: list[str], errors: dict[str, Exception] | None = None) -> dict[str, bytes]:
        if not keys:
            return {}
        paths = {self._path(key): key for key in keys}
        got = self.fs.cat(list(paths), on_error="omit")
        return {paths[p]: data for p, data in got.items() if p in paths}

    def delete_prefix(self, prefix: str) -> int:
        entries = self.list_prefix(prefix)
        for entry in entries:
            self.fs.rm_file(self._path(entry.key))
        return len(entries)


def _relative(path: str, root: str) -> str:
    path = path.lstrip("/")
    root = root.lstrip("/")
    if root and path.startswith(root + "/"):
        return path[len(root) + 1 :]
    return path


def is_local_filesystem(fs: Any) -> bool:
    """Whether an fsspec file system is the local disk (``file://``, ``local://``)."""
    from fsspec.implementations.local import LocalFileSystem

    return isinstance(fs, LocalFileSystem)
