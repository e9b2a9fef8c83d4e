"""The Heta ObjectStore backend: a heta-framework ObjectStore (async calls) as a store."""

from __future__ import annotations

import os
from typing import Any

from heta_nb._util.sync import run_sync
from heta_nb.store.backend import Entry, info_stamp

__all__ = ["ObjectStoreBackend", "is_object_store"]


class ObjectStoreBackend:
    """A heta-framework ObjectStore (async ``put/get/list/exists/delete``), e.g.
    ``LocalObjectStore``. Heta's ``put`` is a single call, so atomicity is the store's.

    An object's version is its ``ObjectInfo.etag`` (S3) or else its ``modified_at``.
    """

    def __init__(self, store: Any) -> None:
        self.store = store
        where = _object_store_location(store)
        self.description = f"{type(store).__name__}({where})" if where else type(store).__name__

    def read(self, key: str) -> bytes:
        data = run_sync(self.store.get(key))
        return bytes(data)

    def write(self, key: str, data: bytes) -> None:
        run_sync(self.store.put(key, data))

    def append(self, key: str, data: bytes) -> None:
        old = self.read(key) if self.exists(key) else b""
        self.write(key, old + data)

    def exists(self, key: str) -> bool:
        return bool(run_sync(self.store.exists(key)))

    def size(self, key: str) -> int | None:
        found = self.entry(key)
        return found.size if found else None

    def entry(self, key: str) -> Entry | None:
        entries = [e for e in self.list_prefix(key.rsplit("/", 1)[0]) if e.key == key]
        return entries[0] if entries else None

    def stamp(self, key: str) -> str | None:
        found = self.entry(key)
        return found.stamp if found else None

    def check_root(self, *, missing_ok: bool) -> bool:
        return True

    def list_prefix(self, prefix: str) -> list[Entry]:
        infos = run_sync(self.store.list(prefix))
        entries: list[Entry] = []
        for info in infos:
            key = getattr(info, "key", None)
            if isinstance(key, str):
                size = getattr(info, "size", None)
                stamp = info_stamp({"etag": getattr(info, "etag", None), "mtime": getattr(info, "modified_at", None)})
                entries.append(Entry(key, int(size) if isinstance(size, int) else -1, stamp))
        entries.sort(key=lambda e: e.key)
        return entries

    def read_many(self, keys: list[str], errors: dict[str, Exception] | None = None) -> dict[str, bytes]:
        async def gather() -> list[Any]:
            import asyncio

            return await asyncio.gather(*(self.store.get(k) for k in keys), return_exceptions=True)

        results = run_sync(gather()) if keys else []
        return {k: bytes(v) for k, v in zip(keys, results) if isinstance(v, (bytes, bytearray))}

    def delete_prefix(self, prefix: str) -> int:
        entries = self.list_prefix(prefix)

        async def remove() -> None:
            for entry in entries:
                await self.store.delete(entry.key)

        run_sync(remove())
        return len(entries)


def _object_store_location(store: Any) -> str | None:
    """Where a Heta ObjectStore keeps its objects: a folder, ``s3://bucket/prefix``..."""
    config = getattr(store, "config", None)
    for value in (getattr(store, "root", None), getattr(store, "_root", None), getattr(config, "root", None)):
        if isinstance(value, (str, os.PathLike)):
            return os.fspath(value)
    bucket = getattr(config, "bucket", None)
    if isinstance(bucket, str):
        prefix = getattr(config, "prefix", "")
        return f"s3://{bucket}/{prefix}".rstrip("/") if isinstance(prefix, str) else f"s3://{bucket}"
    return None


def is_object_store(value: Any) -> bool:
    """Whether ``value`` looks like a Heta ObjectStore (``put/get/list/exists/delete``)."""
    return all(callable(getattr(value, name, None)) for name in ("put", "get", "list", "exists", "delete"))
