"""What a store backend does (the ``Backend`` protocol), what it lists, and object version stamps."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Any, Protocol

from heta_nb.model.json import is_finite_number

__all__ = ["Backend", "Entry", "epoch_micros", "info_stamp"]


@dataclass(frozen=True)
class Entry:
    """One stored object as a backend lists it."""

    key: str
    size: int
    """Its size in bytes (-1: unknown)."""
    stamp: str | None = None
    """What identifies this version of the object beyond its size (None: unknown)."""
    problem: str | None = None
    """Why the entry cannot be read although it is listed (e.g. a dangling symlink)."""


class Backend(Protocol):
    """Bytes under ``/``-separated keys: a local folder, an fsspec URL or a Heta ObjectStore."""

    description: str
    """Where the objects live, for messages (a path, URL or object-store description)."""

    def read(self, key: str) -> bytes:
        """The object's bytes; ``FileNotFoundError`` when there is none."""
        ...

    def write(self, key: str, data: bytes) -> None:
        """Create or replace the object in one step (never half written)."""
        ...

    def append(self, key: str, data: bytes) -> None:
        """Add ``data`` at the end of the object (creating it)."""
        ...

    def exists(self, key: str) -> bool:
        """Whether an object (a file, not a folder) is stored at ``key``."""
        ...

    def size(self, key: str) -> int | None:
        """The object's size in bytes, or None when there is none."""
        ...

    def entry(self, key: str) -> Entry | None:
        """The object's listing entry (size and version stamp), or None when there is none."""
        ...

    def stamp(self, key: str) -> str | None:
        """The object's version stamp, or None when unknown or absent."""
        ...

    def check_root(self, *, missing_ok: bool) -> bool:
        """True if the root can be listed, False if it is missing and ``missing_ok``; else raise."""
        ...

    def list_prefix(self, prefix: str) -> list[Entry]:
        """Every object below ``prefix``, sorted by key."""
        ...

    def read_many(self, keys: list[str], errors: dict[str, Exception] | None = None) -> dict[str, bytes]:
        """The bytes of those ``keys`` that exist; read errors are put in ``errors`` when given."""
        ...

    def delete_prefix(self, prefix: str) -> int:
        """Delete the object at ``prefix`` or every object below it; returns how many."""
        ...


_QUOTES = "\"'"


def info_stamp(info: Mapping[str, Any]) -> str | None:
    """A version identity fsspec reports the same way when listing and for one object.

    A content hash where there is one; else the modification (or, for ``memory://``,
    creation) time, in whole microseconds since the epoch (``find`` and ``info`` report
    times in different types: a float or a datetime). None where there is neither
    (then size alone is compared).
    """
    for name in ("ETag", "etag", "md5Hash"):
        value = info.get(name)
        if isinstance(value, str) and value:
            return f"{name}:{value.strip(_QUOTES)}"
    for name in ("mtime", "LastModified", "last_modified", "updated", "created"):
        micros = epoch_micros(info.get(name))
        if micros is not None:
            return f"time:{micros}"
    return None


def epoch_micros(value: Any) -> int | None:
    """A time (datetime, POSIX seconds, or ISO-8601 text) in microseconds since the epoch."""
    if isinstance(value, str):
        try:
            value = datetime.fromisoformat(value.replace("Z", "+00:00"))
        except ValueError:
            return None
    if isinstance(value, datetime):
        moment = value if value.tzinfo is not None else value.replace(tzinfo=timezone.utc)
        return round(moment.timestamp() * 1_000_000)
    if is_finite_number(value):
        seconds: float = value  # an int or a float
        return round(seconds * 1_000_000)
    return None
