"""Where reports live: Heta's object-store layout, on disk, fsspec or a Heta ObjectStore.

Layout (exactly Heta 0.1.2's ``default_report_key``, so each finds the other's reports)::

    _heta/knowledge_bases/{slug(knowledge_base_name)}/evaluations/{slug(report_id)}/report.json

``slug`` is Heta's: strip, lowercase, join whitespace-separated words with ``_``.
Heta changes nothing else, so ``"../x"`` or ``"a/b"`` would escape or nest; heta_nb
refuses such names *before* doing any work (:func:`safe_slug`), and never writes
outside the store root.

Next to ``report.json`` heta_nb writes ``heta_nb.summary.json`` (the listing row), so
``ReportStore.list()`` never has to parse every case of every report. The sidecar is
written after ``report.json`` and records its identity (size, and on a local folder its
inode and ``st_mtime_ns``; on fsspec and Heta object stores the ETag where there is one,
else the modification time); a sidecar that no longer matches its report (the report
was replaced, e.g. by Heta) is ignored. Reports written by Heta have no such file and
are parsed once per listing.

A local key whose path below the root passes through a symbolic link is refused, so
neither a link leading out of the store nor one aliasing another report is followed.

Saving a *new* report to a local folder is exclusive (``os.link`` of the finished
temporary file, which fails when ``report.json`` exists): of two processes saving the
same key at once, one wins and the other gets :class:`ReportExistsError`.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import stat
import unicodedata
import warnings
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from heta_nb._util.atomic import write_atomically, write_atomically_stat
from heta_nb._util.sync import run_sync
from heta_nb.errors import (
    ReportExistsError,
    ReportFormatError,
    ReportNotFoundError,
    StoreError,
    UnsafeNameError,
)
from heta_nb.model.io import decode_report, encode_report
from heta_nb.model.json import is_finite_number
from heta_nb.model.report import EvaluationReport

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd

__all__ = [
    "MAX_NAME_BYTES",
    "MAX_NAME_LENGTH",
    "REPORT_FILE",
    "SUMMARY_FILE",
    "ReportStore",
    "ReportStoreWarning",
    "ReportSummary",
    "StoreNotADirectoryError",
    "StoreNotFoundError",
    "heta_slug",
    "report_key",
    "report_prefix",
    "safe_slug",
]

REPORT_FILE = "report.json"
SUMMARY_FILE = "heta_nb.summary.json"
KB_ROOT = "_heta/knowledge_bases"
MAX_NAME_LENGTH = 128
"""Longest knowledge-base name or report id accepted (characters; also <= 255 UTF-8 bytes)."""
MAX_NAME_BYTES = 255
"""Longest knowledge-base name or report id accepted, in UTF-8 bytes (a file-name limit)."""

_SUMMARY_FORMAT = 1
_ON_ERROR = ("skip", "ignore", "raise")


class StoreNotFoundError(ReportNotFoundError):
    """The store folder does not exist (a store is created by saving to it)."""


class StoreNotADirectoryError(StoreError, NotADirectoryError):
    """The store root is a file (or lies under one), not a folder."""


class ReportStoreWarning(UserWarning):
    """Some stored reports could not be read and were left out of a listing."""


def heta_slug(value: str) -> str:
    """Heta's ``_slug``: strip, lowercase, join whitespace-separated parts with ``_``.

    Nothing else changes: ``"a/b"`` stays ``"a/b"``. Use :func:`safe_slug` for keys.
    """
    return "_".join(value.strip().lower().split())


def safe_slug(value: Any, what: str = "name") -> str:
    """Heta's slug of ``value``, refusing names that would escape or break the layout.

    Refused (with :class:`UnsafeNameError`): non-strings, empty or blank names, ``.``
    and ``..``, ``/`` or ``\\`` anywhere (absolute paths included), NUL and other
    control characters, names not in Unicode normalization form NFC (``"cafe\\u0301"``
    looks like ``"café"``; macOS would store both in one folder, Linux in two), and
    names over :data:`MAX_NAME_LENGTH` characters or 255 UTF-8 bytes (a file-name
    limit on every common file system).
    """
    if not isinstance(value, str):
        raise UnsafeNameError(f"{what} must be a string, got {type(value).__name__}")
    slug = heta_slug(value)
    if not slug:
        raise UnsafeNameError(f"{what} must not be empty")
    if slug in (".", ".."):
        raise UnsafeNameError(f"{what} {value!r} is not allowed: it would escape or alias its folder")
    for char in ("/", "\\"):
        if char in slug:
            raise UnsafeNameError(f"{what} {value!r} contains {char!r}, which would nest or escape the store layout")
    for char in slug:
        if unicodedata.category(char) in ("Cc", "Cf", "Cs") or char == "\x00":
            raise UnsafeNameError(f"{what} {value!r} contains the control character {char!r}")
    if not unicodedata.is_normalized("NFC", slug):
        # "café" typed as e + combining accent looks like "café" but is another key on
        # Linux, and the same file on macOS: one name, one report, on every system.
        raise UnsafeNameError(
            f"{what} {ascii(value)} is not in Unicode normalization form NFC; "
            f"use {ascii(unicodedata.normalize('NFC', value))}, which looks the same"
        )
    if len(slug) > MAX_NAME_LENGTH:
        raise UnsafeNameError(f"{what} is too long ({len(slug)} characters; at most {MAX_NAME_LENGTH})")
    size = len(slug.encode("utf-8"))
    if size > MAX_NAME_BYTES:
        raise UnsafeNameError(
            f"{what} is too long ({size} bytes in UTF-8; at most {MAX_NAME_BYTES}, a file-name limit)"
        )
    return slug


def report_prefix(knowledge_base_name: str, report_id: str) -> str:
    """The folder of one report: ``_heta/knowledge_bases/{kb}/evaluations/{id}``."""
    kb = safe_slug(knowledge_base_name, "knowledge_base_name")
    rid = safe_slug(report_id, "report_id")
    return f"{KB_ROOT}/{kb}/evaluations/{rid}"


def report_key(knowledge_base_name: str, report_id: str) -> str:
    """Heta's report key for ordinary names; unsafe names raise :class:`UnsafeNameError`."""
    return f"{report_prefix(knowledge_base_name, report_id)}/{REPORT_FILE}"


_KEY_PATTERN = re.compile(r"^_heta/knowledge_bases/([^/]+)/evaluations/([^/]+)/report\.json$")


# -- listing rows -------------------------------------------------------------------


@dataclass(frozen=True)
class ReportSummary:
    """One row of a store listing: what a report is, without its case results."""

    key: str
    knowledge_base: str
    """The KB folder (slug) the report is stored under."""
    knowledge_base_name: str
    report_id: str
    benchmark: str
    benchmark_version: str
    benchmark_split: str
    task_type: str
    query_modes: tuple[str, ...]
    cases: int
    errors: int
    started_at: str
    finished_at: str
    duration_s: float | None
    status: str
    """``complete`` unless heta_nb recorded otherwise (``cancelled``, ``failed``...)."""
    size_bytes: int
    score_summary: Mapping[str, float] = field(default_factory=dict)

    @classmethod
    def of(cls, report: EvaluationReport, *, key: str, size_bytes: int) -> ReportSummary:
        """Build the row for ``report`` stored at ``key``."""
        match = _KEY_PATTERN.match(key)
        run_info = report.metadata.get("heta_nb")
        status = run_info.get("status") if isinstance(run_info, Mapping) else None
        return cls(
            key=key,
            knowledge_base=match.group(1) if match else heta_slug(report.knowledge_base_name),
            knowledge_base_name=report.knowledge_base_name,
            report_id=report.report_id,
            benchmark=report.benchmark.name,
            benchmark_version=report.benchmark.version,
            benchmark_split=report.benchmark.split,
            task_type=report.benchmark.task_type,
            query_modes=report.query_modes,
            cases=report.case_count,
            errors=report.error_count,
            started_at=report.started_at,
            finished_at=report.finished_at,
            duration_s=report.duration_s,
            status=status if isinstance(status, str) else "complete",
            size_bytes=size_bytes,
            score_summary=dict(report.score_summary),
        )

    def to_json(self) -> dict[str, Any]:
        """The sidecar form (``heta_nb.summary.json``)."""
        data = {name: getattr(self, name) for name in self.__dataclass_fields__}
        data["query_modes"] = list(self.query_modes)
        data["score_summary"] = dict(self.score_summary)
        return {"format": _SUMMARY_FORMAT, **data}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> ReportSummary:
        """Inverse of :meth:`to_json`; raises ``KeyError``/``TypeError`` when malformed."""
        if data.get("format") != _SUMMARY_FORMAT:
            raise KeyError("format")
        values = {name: data[name] for name in cls.__dataclass_fields__}
        values["query_modes"] = tuple(values["query_modes"])
        if not isinstance(values["score_summary"], dict) or not isinstance(values["size_bytes"], int):
            raise TypeError("malformed summary")
        return cls(**values)


# -- backends -----------------------------------------------------------------------


@dataclass(frozen=True)
class _Entry:
    key: str
    size: int
    stamp: str | None = None
    """What identifies this version of the object beyond its size (None: unknown)."""
    problem: str | None = None
    """Why the entry cannot be read although it is listed (e.g. a dangling symlink)."""


class _Backend(Protocol):
    description: str

    def read(self, key: str) -> bytes: ...

    def write(self, key: str, data: bytes) -> None: ...

    def append(self, key: str, data: bytes) -> None: ...

    def exists(self, key: str) -> bool: ...

    def size(self, key: str) -> int | None: ...

    def entry(self, key: str) -> _Entry | None: ...

    def stamp(self, key: str) -> str | None: ...

    def check_root(self, *, missing_ok: bool) -> bool: ...

    def list_prefix(self, prefix: str) -> list[_Entry]: ...

    def read_many(self, keys: list[str], errors: dict[str, Exception] | None = None) -> dict[str, bytes]: ...

    def delete_prefix(self, prefix: str) -> int: ...


_WINDOWS_DEVICES = frozenset(
    [
        "con",
        "prn",
        "aux",
        "nul",
        "conin$",
        "conout$",
        *(f"{port}{digit}" for port in ("com", "lpt") for digit in "123456789\u00b9\u00b2\u00b3"),
    ]
)
_WINDOWS_FORBIDDEN = frozenset('<>:"|?*')
_ON_WINDOWS = os.name == "nt"


def windows_name_problem(name: str) -> str | None:
    """Why ``name`` cannot be a file or folder name on Windows, or None when it can.

    Windows refuses ``<>:"|?*`` (a ``:`` would even address an alternate data
    stream), silently drops a trailing dot or space, and reserves device names such
    as ``con``, ``nul``, ``conin$``, ``com1``-``com9`` and ``com¹``-``com³`` (with
    any extension, and spaces before it; the list of Python 3.13's
    ``ntpath.isreserved``), where a write would vanish.
    """
    forbidden = sorted(set(name) & _WINDOWS_FORBIDDEN)
    if forbidden:
        return f"contains {''.join(forbidden)!r}, which Windows does not allow in file names"
    if name != name.rstrip(". "):
        return "ends with a dot or a space, which Windows drops from file names"
    if name.split(".", 1)[0].rstrip(" ").lower() in _WINDOWS_DEVICES:
        return "is a device name on Windows"
    return None


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

    def _path(self, key: str) -> Path:
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
        return self._path(key).read_bytes()

    def write(self, key: str, data: bytes) -> None:
        write_atomically(self._path(key), data)

    def append(self, key: str, data: bytes) -> None:
        path = self._path(key)
        path.parent.mkdir(parents=True, exist_ok=True)
        with path.open("ab") as handle:
            handle.write(data)

    def exists(self, key: str) -> bool:
        return self._path(key).is_file()

    def size(self, key: str) -> int | None:
        try:
            return self._path(key).stat().st_size
        except FileNotFoundError:
            return None

    def entry(self, key: str) -> _Entry | None:
        try:
            info = self._path(key).stat()
        except FileNotFoundError:
            return None
        return _Entry(key, info.st_size, _local_stamp(info))

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

    def list_prefix(self, prefix: str) -> list[_Entry]:
        base = self._path(prefix)
        entries: list[_Entry] = []
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
                            _Entry(rel, -1, problem=f"a symbolic link to a missing file ({os.readlink(full)})")
                        )
                    continue  # otherwise: removed while listing
                except OSError as exc:
                    entries.append(_Entry(rel, -1, problem=f"cannot read it ({exc.strerror or exc})"))
                    continue
                if stat.S_ISREG(info.st_mode):
                    entries.append(_Entry(rel, info.st_size, _local_stamp(info)))
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
        path = self._path(prefix)
        if not path.exists():
            return 0
        if path.is_file():
            path.unlink()
            return 1
        count = sum(len(files) for _, _, files in os.walk(path))
        shutil.rmtree(path)
        return count


class _FsspecBackend:
    """Any fsspec file system (``memory://``, ``s3://``...). One ``pipe`` per object."""

    def __init__(self, url: str) -> None:
        from heta_nb._util.fs import filesystem

        self.fs, self.path = filesystem(url)
        self.root = self.path.rstrip("/")
        self.description = url

    def _path(self, key: str) -> str:
        return f"{self.root}/{key}" if self.root else key

    def read(self, key: str) -> bytes:
        return self.fs.cat_file(self._path(key))  # type: ignore[no-any-return]

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

    def entry(self, key: str) -> _Entry | None:
        try:
            info = self.fs.info(self._path(key))
        except FileNotFoundError:
            return None
        return _Entry(key, int(info.get("size") or 0), _info_stamp(info))

    def stamp(self, key: str) -> str | None:
        found = self.entry(key)
        return found.stamp if found else None

    def check_root(self, *, missing_ok: bool) -> bool:
        return True  # object stores have no folders: an empty prefix is an empty store

    def list_prefix(self, prefix: str) -> list[_Entry]:
        base = self._path(prefix)
        try:
            found = self.fs.find(base, detail=True)
        except FileNotFoundError:
            return []
        entries: list[_Entry] = []
        for path, info in found.items():
            if info.get("type", "file") != "file":
                continue
            entries.append(_Entry(_relative(path, self.root), int(info.get("size") or 0), _info_stamp(info)))
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


def _local_stamp(info: os.stat_result) -> str:
    return f"{info.st_ino}:{info.st_mtime_ns}"


_QUOTES = "\"'"


def _info_stamp(info: Mapping[str, Any]) -> str | None:
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
        micros = _epoch_micros(info.get(name))
        if micros is not None:
            return f"time:{micros}"
    return None


def _epoch_micros(value: Any) -> int | None:
    """A time (datetime, POSIX seconds, or ISO-8601 text) in microseconds since the epoch."""
    if isinstance(value, str):
        try:
            value = datetime.fromisoformat(value.replace("Z", "+00:00"))
        except ValueError:
            return None
    if isinstance(value, datetime):
        if value.tzinfo is None:
            value = value.replace(tzinfo=timezone.utc)
        return round(value.timestamp() * 1_000_000)
    if is_finite_number(value):
        return round(value * 1_000_000)
    return None


def _relative(path: str, root: str) -> str:
    path = path.lstrip("/")
    root = root.lstrip("/")
    if root and path.startswith(root + "/"):
        return path[len(root) + 1 :]
    return path


class _ObjectStoreBackend:
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

    def entry(self, key: str) -> _Entry | None:
        entries = [e for e in self.list_prefix(key.rsplit("/", 1)[0]) if e.key == key]
        return entries[0] if entries else None

    def stamp(self, key: str) -> str | None:
        found = self.entry(key)
        return found.stamp if found else None

    def check_root(self, *, missing_ok: bool) -> bool:
        return True

    def list_prefix(self, prefix: str) -> list[_Entry]:
        infos = run_sync(self.store.list(prefix))
        entries: list[_Entry] = []
        for info in infos:
            key = getattr(info, "key", None)
            if isinstance(key, str):
                size = getattr(info, "size", None)
                stamp = _info_stamp({"etag": getattr(info, "etag", None), "mtime": getattr(info, "modified_at", None)})
                entries.append(_Entry(key, int(size) if isinstance(size, int) else -1, stamp))
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


def _is_local_fs(fs: Any) -> bool:
    """Whether an fsspec file system is the local disk (``file://``, ``local://``)."""
    from fsspec.implementations.local import LocalFileSystem

    return isinstance(fs, LocalFileSystem)


def _is_object_store(value: Any) -> bool:
    return all(callable(getattr(value, name, None)) for name in ("put", "get", "list", "exists", "delete"))


# -- the store ----------------------------------------------------------------------


class ReportStore:
    """Reports in Heta's layout under one root.

    Args:
        root: a local folder (``str``/``Path``), an fsspec URL (``memory://bucket``,
            ``file:///tmp/x``, ``s3://bucket/prefix`` when s3fs is installed; a URL of
            the local disk, such as ``local:///tmp/x``, is used as that folder), or a
            heta-framework ObjectStore such as ``LocalObjectStore`` (the object store
            of a KB's recipe: reports then sit next to the KB, as Heta puts them).
    """

    def __init__(self, root: str | os.PathLike[str] | Any) -> None:
        self._cache: dict[tuple[str, int, str | None], ReportSummary] = {}
        self._problems: list[dict[str, str]] = []
        if isinstance(root, ReportStore):
            self._backend: _Backend = root._backend
        elif isinstance(root, os.PathLike) or (isinstance(root, str) and "://" not in root):
            self._backend = LocalBackend(Path(root))
        elif isinstance(root, str) and root.startswith("file://"):
            self._backend = LocalBackend(Path(root[len("file://") :]))
        elif isinstance(root, str):
            remote = _FsspecBackend(root)
            # fsspec's own local file system (``local://``, ``file::`` chains...) writes in
            # place and follows links out of the store: use the local folder backend.
            self._backend = LocalBackend(Path(remote.path)) if _is_local_fs(remote.fs) else remote
        elif _is_object_store(root):
            self._backend = _ObjectStoreBackend(root)
        else:
            raise StoreError(
                f"cannot use a {type(root).__name__} as a report store; pass a folder, "
                "an fsspec URL or a heta ObjectStore"
            )

    def __repr__(self) -> str:
        return f"ReportStore({self._backend.description!r})"

    @property
    def location(self) -> str:
        """Where the store lives (a path, URL or object-store description)."""
        return self._backend.description

    def check_usable(self) -> None:
        """Refuse, before any work, a store that cannot hold reports: a local path that is
        (or lies inside) a file. A missing folder is fine: saving creates it.

        Raises:
            StoreNotADirectoryError: naming the path.
        """
        self._backend.check_root(missing_ok=True)

    # -- keys ------------------------------------------------------------------------
    @staticmethod
    def key_for(knowledge_base_name: str, report_id: str) -> str:
        """The report.json key for these names (validated; see :func:`safe_slug`)."""
        return report_key(knowledge_base_name, report_id)

    # -- writing -----------------------------------------------------------------------
    def save(
        self, report: EvaluationReport, *, overwrite: bool = False, encoded: bytes | Sequence[bytes] | None = None
    ) -> str:
        """Store ``report`` atomically at Heta's key and return the key.

        The stored report's ``report_key`` is set to the key actually used. A report
        already stored under that key is never silently replaced: saving a different
        report there (another id that slugs the same, e.g. ``"Run 1"`` and ``"run_1"``)
        or the same report again needs ``overwrite=True``.

        ``encoded`` may pass the report's bytes when the caller already has them (the
        runner assembles them from its checkpoint lines, as a sequence of chunks
        local stores write without joining); it must equal
        ``encode_report(report)`` and is ignored unless ``report_key`` is already set.

        Only on a local folder is creating a new report exclusive between concurrent
        writers; on fsspec and Heta object stores the existence check and the write
        are two requests, so two writers racing for one new key can both succeed (the
        last write wins).

        The summary sidecar is written after the report; if that write fails the
        report stays saved and a :class:`ReportStoreWarning` says so.

        Raises:
            UnsafeNameError: the KB name or report id cannot be used as a key.
            ReportExistsError: the key is taken and ``overwrite`` is false.
            StoreError: the store failed; no report was written (an overwritten one
                is left as it was).
        """
        key = report_key(report.knowledge_base_name, report.report_id)
        if report.report_key != key:
            report = report.replace(report_key=key)
            encoded = None
        data = encoded if encoded is not None else encode_report(report)
        sidecar_key = f"{key.rsplit('/', 1)[0]}/{SUMMARY_FILE}"
        backend = self._backend
        stamp: str | None
        try:
            if not overwrite and backend.exists(key):
                raise self._exists_error(key, report)
            if isinstance(backend, LocalBackend):
                path = backend._path(key)
                backend._path(sidecar_key)  # refuse an unsafe sidecar before writing anything
                try:
                    # A new report is created exclusively (os.link): of two writers racing
                    # for one key, the second gets ReportExistsError below.
                    written = write_atomically_stat(path, data, exclusive=not overwrite)
                except FileExistsError:
                    raise self._exists_error(key, report) from None
                size, stamp = written.st_size, _local_stamp(written)
            else:
                blob = data if isinstance(data, bytes) else b"".join(data)
                size = len(blob)
                backend.write(key, blob)
                stamp = backend.stamp(key)
        except (ReportExistsError, UnsafeNameError):
            raise
        except OSError as exc:
            raise StoreError(f"{self.location}: cannot write {key}: {exc}") from exc
        # After report.json, and naming its identity: a sidecar that does not match
        # the report.json next to it (a concurrent overwrite) is ignored when listing.
        # The report is saved by now, so a sidecar that cannot be written (a full disk)
        # is only a warning: listings then parse the report instead.
        summary = ReportSummary.of(report, key=key, size_bytes=size)
        try:
            backend.write(sidecar_key, _encode_summary(summary, stamp))
        except OSError as exc:
            warnings.warn(
                f"{self.location}: saved {key}, but cannot write {sidecar_key} ({exc}); "
                "listings will read the report itself",
                ReportStoreWarning,
                stacklevel=2,
            )
        return key

    def _exists_error(self, key: str, report: EvaluationReport) -> ReportExistsError:
        existing, problem = self._peek_report_id(key)
        if problem is not None:
            held = f"an unreadable file ({problem})"
        elif existing is not None and existing != report.report_id:
            held = f"report {existing!r}"
        else:
            held = "this report"
        return ReportExistsError(f"{self.location}: {key} already holds {held}; pass overwrite=True to replace it")

    def _peek_report_id(self, key: str) -> tuple[str | None, str | None]:
        """``(report_id, None)`` of the report at ``key``, or ``(None, why it cannot be read)``."""
        try:
            summary = self._read_sidecar(key)
        except (OSError, UnsafeNameError):
            summary = None
        if summary is not None:
            return summary.report_id, None
        try:
            return decode_report(self._backend.read(key), source=key).report_id, None
        except ReportFormatError as exc:
            return None, _describe(exc)
        except (OSError, UnsafeNameError) as exc:
            return None, str(exc)

    def delete(self, knowledge_base_name: str, report_id: str) -> bool:
        """Delete one report folder (report, summary, checkpoints). True if it existed."""
        prefix = report_prefix(knowledge_base_name, report_id)
        try:
            removed = self._backend.delete_prefix(prefix)
        except OSError as exc:
            raise StoreError(f"{self.location}: cannot delete {prefix}: {exc}") from exc
        return removed > 0

    # -- reading -----------------------------------------------------------------------
    def exists(self, knowledge_base_name: str, report_id: str) -> bool:
        """Whether a report is stored under these names.

        Raises:
            UnsafeNameError: the names cannot be a key, or (local folder) their path
                passes through a symbolic link inside the store or leads outside it.
        """
        return self._backend.exists(report_key(knowledge_base_name, report_id))

    def load(self, knowledge_base_name: str, report_id: str) -> EvaluationReport:
        """Load one report (names as given to the run; they are slugged like Heta does).

        Raises:
            ReportNotFoundError: nothing is stored there (the message lists what is).
            ReportFormatError: the stored file is not a valid report.
        """
        key = report_key(knowledge_base_name, report_id)
        return self.load_key(key)

    def load_key(self, key: str) -> EvaluationReport:
        """Load the report stored at ``key`` (a ``.../report.json`` key or its folder)."""
        if not key.endswith(REPORT_FILE):
            key = key.rstrip("/") + "/" + REPORT_FILE
        match = _KEY_PATTERN.match(key)
        if match is None:
            raise UnsafeNameError(f"{key!r} is not a report key (_heta/knowledge_bases/KB/evaluations/ID/report.json)")
        safe_slug(match.group(1), "knowledge base"), safe_slug(match.group(2), "report id")
        self._backend.check_root(missing_ok=False)
        try:
            data = self._backend.read(key)
        except FileNotFoundError:
            kb = match.group(1)
            rows, _ = self._collect(on_error="ignore", missing_ok=True)
            known = sorted({s.report_id for s in rows if s.knowledge_base == kb})
            hint = f"; reports for {kb!r}: {', '.join(known[:10])}" if known else ""
            raise ReportNotFoundError(f"{self.location}: no report at {key}{hint}") from None
        except OSError as exc:
            raise StoreError(f"{self.location}: cannot read {key}: {exc}") from exc
        return decode_report(data, source=f"{self.location}/{key}")

    def latest(self, knowledge_base_name: str) -> EvaluationReport:
        """The most recently started report of one knowledge base.

        Start times are compared as moments (their UTC offsets applied), not as text.
        """
        kb = safe_slug(knowledge_base_name, "knowledge_base_name")
        rows = [s for s in self.summaries() if s.knowledge_base == kb]
        if not rows:
            raise ReportNotFoundError(f"{self.location}: no reports for knowledge base {knowledge_base_name!r}")
        newest = max(rows, key=lambda s: (_instant(s.started_at), _instant(s.finished_at), s.report_id))
        return self.load_key(newest.key)

    def __iter__(self) -> Iterator[EvaluationReport]:
        for summary in self.summaries():
            yield self.load_key(summary.key)

    def __contains__(self, item: object) -> bool:
        if isinstance(item, tuple) and len(item) == 2:
            return self.exists(*item)
        return False

    # -- listing -----------------------------------------------------------------------
    def summaries(self, *, on_error: str = "skip", missing_ok: bool = False) -> list[ReportSummary]:
        """One :class:`ReportSummary` per stored report, sorted by KB then start time.

        Reads the small sidecar written by heta_nb when it matches the report (size,
        and on a local folder inode and modification time); otherwise (a report written
        by Heta, or replaced since) parses the report.

        Args:
            on_error: what to do with a report that cannot be read (invalid JSON, an
                unknown schema, a symlink leading outside the store...): ``"skip"``
                leaves it out and emits one :class:`ReportStoreWarning` naming every such
                report and why; ``"ignore"`` leaves it out silently; ``"raise"`` raises
                the first error. Either way :attr:`problems` lists them afterwards.
            missing_ok: listing a local store folder that does not exist raises
                :class:`StoreNotFoundError` (a store is created by saving to it), unless
                this is true: then it lists as empty. A root that is a file always
                raises :class:`StoreNotADirectoryError`.
        """
        rows, problems = self._collect(on_error=on_error, missing_ok=missing_ok)
        self._problems = problems
        if problems and on_error == "skip":
            warnings.warn(_problems_message(self.location, problems), ReportStoreWarning, stacklevel=2)
        return rows

    @property
    def problems(self) -> list[dict[str, str]]:
        """The reports the last listing left out: ``{"key": ..., "error": ...}`` each."""
        return [dict(p) for p in self._problems]

    def _collect(self, *, on_error: str, missing_ok: bool) -> tuple[list[ReportSummary], list[dict[str, str]]]:
        if on_error not in _ON_ERROR:
            raise ValueError(f"on_error must be one of {', '.join(map(repr, _ON_ERROR))}, not {on_error!r}")
        problems: list[dict[str, str]] = []
        try:
            if not self._backend.check_root(missing_ok=missing_ok):
                return [], problems
            entries = self._backend.list_prefix(KB_ROOT)
        except StoreError:
            raise
        except OSError as exc:
            raise StoreError(f"{self.location}: cannot list reports: {exc}") from exc
        reports = [e for e in entries if _KEY_PATTERN.match(e.key)]
        sidecars = {e.key for e in entries if e.key.endswith("/" + SUMMARY_FILE)}
        wanted = [r.key.rsplit("/", 1)[0] + "/" + SUMMARY_FILE for r in reports]
        unreadable: dict[str, Exception] = {}
        blobs = self._backend.read_many([k for k in wanted if k in sidecars], unreadable)

        def fail(key: str, exc: Exception, what: str = "") -> None:
            if on_error == "raise":
                raise exc
            problems.append({"key": key, "error": what or _describe(exc)})

        rows = []
        for entry, sidecar_key in zip(reports, wanted):
            if entry.problem is not None:
                error = StoreError(f"{self.location}: {entry.key} is {entry.problem}")
                fail(entry.key, error, f"it is {entry.problem}")
                continue
            if sidecar_key in unreadable:
                sidecar_error = unreadable[sidecar_key]
                fail(entry.key, sidecar_error, f"its {SUMMARY_FILE}: {_describe(sidecar_error)}")
                continue
            summary = _decode_summary(blobs.get(sidecar_key), entry)
            if summary is None:
                summary = self._cache.get((entry.key, entry.size, entry.stamp))
            if summary is None:
                try:
                    data = self._backend.read(entry.key)
                    report = decode_report(data, source=f"{self.location}/{entry.key}")
                except FileNotFoundError:  # removed while listing
                    continue
                except (ReportFormatError, UnsafeNameError, OSError) as exc:
                    fail(entry.key, exc)
                    continue
                summary = ReportSummary.of(report, key=entry.key, size_bytes=len(data))
                self._cache[(entry.key, entry.size, entry.stamp)] = summary
            rows.append(summary)
        rows.sort(key=lambda s: (s.knowledge_base, _instant(s.started_at), s.report_id))
        return rows, problems

    def _read_sidecar(self, key: str) -> ReportSummary | None:
        prefix = key.rsplit("/", 1)[0]
        entry = self._backend.entry(key)
        if entry is None:
            return None
        blobs = self._backend.read_many([f"{prefix}/{SUMMARY_FILE}"])
        return _decode_summary(blobs.get(f"{prefix}/{SUMMARY_FILE}"), entry)

    def list(self, *, on_error: str = "skip", missing_ok: bool = False) -> pd.DataFrame:
        """Every stored report as a pandas DataFrame, one row each.

        Columns: kb, report_id, knowledge_base_name, benchmark, benchmark_version,
        split, task_type, modes, cases, errors, status, started_at, finished_at,
        duration_s, size_bytes, key, then one column per ``score_summary`` key.

        Reports that cannot be read are left out; ``frame.attrs["problems"]`` lists
        them (``{"key": ..., "error": ...}`` each), and with the default
        ``on_error="skip"`` one :class:`ReportStoreWarning` names them. ``on_error``
        and ``missing_ok`` are as for :meth:`summaries`.
        """
        from heta_nb.tables import summaries_frame

        rows, problems = self._collect(on_error=on_error, missing_ok=missing_ok)
        self._problems = problems
        if problems and on_error == "skip":
            warnings.warn(_problems_message(self.location, problems), ReportStoreWarning, stacklevel=2)
        frame = summaries_frame(rows)
        frame.attrs["problems"] = [dict(p) for p in problems]
        return frame


def _instant(value: str) -> tuple[int, float, str]:
    """A sort key for an ISO-8601 time: the moment it names, whatever its offset
    (``10:00+02:00`` is before ``09:00Z``); a time without offset counts as UTC, and
    text that is not a time sorts before every time, by itself."""
    micros = _epoch_micros(value) if isinstance(value, str) else None
    return (0, 0.0, str(value)) if micros is None else (1, float(micros), "")


def _describe(exc: BaseException) -> str:
    """One line for a listing problem (a report error without its repeated source)."""
    if isinstance(exc, ReportFormatError) and exc.problems:
        text = "; ".join(exc.problems[:3]) + ("; ..." if len(exc.problems) > 3 else "")
    else:
        text = str(exc) or type(exc).__name__
    text = " ".join(text.split())
    return text if len(text) <= 300 else text[:297] + "..."


def _problems_message(location: str, problems: Sequence[Mapping[str, str]]) -> str:
    count = len(problems)
    plural = count != 1
    head = (
        f"{location}: {count} report{'s' if plural else ''} could not be read "
        f"and {'are' if plural else 'is'} left out of the listing:"
    )
    lines = [f"  {p['key']}: {p['error']}" for p in problems[:20]]
    if count > 20:
        lines.append(f"  ... and {count - 20} more (see ReportStore.problems)")
    return "\n".join([head, *lines])


def _encode_summary(summary: ReportSummary, stamp: str | None = None) -> bytes:
    data = summary.to_json()
    if stamp is not None:
        data["report_stamp"] = stamp
    return json.dumps(data, ensure_ascii=False, separators=(",", ":")).encode("utf-8")


def _decode_summary(blob: bytes | None, entry: _Entry) -> ReportSummary | None:
    if blob is None:
        return None
    try:
        data = json.loads(blob)
        summary = ReportSummary.from_json(data)
    except (ValueError, KeyError, TypeError, AttributeError):
        return None
    # A report replaced by someone else (e.g. Heta re-running with the same id) no
    # longer matches its sidecar; fall back to parsing it. Size -1: unknown. Where the
    # backend identifies the version (local: inode and st_mtime_ns, so a same-size
    # rewrite is noticed too), a sidecar without that identity is not trusted.
    if summary.key != entry.key or (entry.size >= 0 and summary.size_bytes != entry.size):
        return None
    if entry.stamp is not None and data.get("report_stamp") != entry.stamp:
        return None
    return summary
