"""``ReportStore``: save, load, find and list reports in Heta's layout, on any backend."""

from __future__ import annotations

import contextlib
import os
import warnings
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from heta_nb._util.atomic import remove_stale_temporaries, write_atomically_stat
from heta_nb._util.text import plural
from heta_nb.errors import (
    ReportExistsError,
    ReportFormatError,
    ReportNotFoundError,
    StoreError,
    UnsafeNameError,
)
from heta_nb.model.io import decode_report, encode_report
from heta_nb.model.report import EvaluationReport
from heta_nb.store.backend import Backend
from heta_nb.store.errors import ReportStoreWarning
from heta_nb.store.fsspec_backend import FsspecBackend, is_local_filesystem
from heta_nb.store.local import LocalBackend, local_stamp
from heta_nb.store.names import KEY_PATTERN, REPORT_FILE, SUMMARY_FILE, report_key, report_prefix, safe_slug
from heta_nb.store.object_store import ObjectStoreBackend, is_object_store
from heta_nb.store.scan import Listing, SummaryCache, describe_problem, problems_message, scan, temporaries_message
from heta_nb.store.scan import instant as _instant
from heta_nb.store.summary import ReportSummary, decode_summary, encode_summary

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd

__all__ = ["ReportStore"]


class ReportStore:
    """Reports in Heta's layout under one root.

    Layout (exactly Heta 0.1.2's ``default_report_key``, so each finds the other's reports)::

        _heta/knowledge_bases/{slug(knowledge_base_name)}/evaluations/{slug(report_id)}/report.json

    ``slug`` is Heta's: strip, lowercase, join whitespace-separated words with ``_``.
    Heta changes nothing else, so ``"../x"`` or ``"a/b"`` would escape or nest; heta_nb
    refuses such names *before* doing any work (:func:`safe_slug`), and never writes
    outside the store root.

    Next to ``report.json`` heta_nb writes ``heta_nb.summary.json`` (the listing row), so
    :meth:`list` never has to parse every case of every report. The sidecar is
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

    Args:
        root: a local folder (``str``/``Path``), an fsspec URL (``memory://bucket``,
            ``file:///tmp/x``, ``s3://bucket/prefix`` when s3fs is installed; a URL of
            the local disk, such as ``local:///tmp/x``, is used as that folder), or a
            heta-framework ObjectStore such as ``LocalObjectStore`` (the object store
            of a KB's recipe: reports then sit next to the KB, as Heta puts them).
    """

    def __init__(self, root: str | os.PathLike[str] | Any) -> None:
        self._cache: SummaryCache = {}
        self._listing = Listing()
        if isinstance(root, ReportStore):
            self._backend: Backend = root._backend
        elif isinstance(root, os.PathLike) or (isinstance(root, str) and "://" not in root):
            self._backend = LocalBackend(Path(root))
        elif isinstance(root, str) and root.startswith("file://"):
            self._backend = LocalBackend(Path(root[len("file://") :]))
        elif isinstance(root, str):
            remote = FsspecBackend(root)
            # fsspec's own local file system (``local://``, ``file::`` chains...) writes in
            # place and follows links out of the store: use the local folder backend.
            self._backend = LocalBackend(Path(remote.path)) if is_local_filesystem(remote.fs) else remote
        elif is_object_store(root):
            self._backend = ObjectStoreBackend(root)
        else:
            raise StoreError(
                f"cannot use a {type(root).__name__} as a report store; pass a folder, "
                "an fsspec URL or a heta ObjectStore"
            )

    def __repr__(self) -> str:
        return f"ReportStore({self._backend.description!r})"

    @property
    def backend(self) -> Backend:
        """The backend holding the objects (a :class:`LocalBackend` for a local folder)."""
        return self._backend

    @property
    def local_folder(self) -> Path | None:
        """The store's folder on this machine (None: a remote or object store), where what lives
        beside the reports goes (the judges' cache, reviews)."""
        root = getattr(self._backend, "root", None)
        return root if isinstance(root, Path) else None

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
                raise self._exists_error(key, report, data)
            if isinstance(backend, LocalBackend):
                path = backend.path(key)
                sidecar_path = backend.path(sidecar_key)  # refuse an unsafe sidecar before writing anything
                for target in (path, sidecar_path):  # what saves killed mid-write left (kill -9)
                    with contextlib.suppress(OSError):
                        remove_stale_temporaries(target)
                try:
                    # A new report is created exclusively (os.link): of two writers racing
                    # for one key, the second gets ReportExistsError below.
                    written = write_atomically_stat(path, data, exclusive=not overwrite)
                except FileExistsError:
                    raise self._exists_error(key, report, data) from None
                size, stamp = written.st_size, local_stamp(written)
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
            backend.write(sidecar_key, encode_summary(summary, stamp))
        except OSError as exc:
            warnings.warn(
                f"{self.location}: saved {key}, but cannot write {sidecar_key} ({exc}); "
                "listings will read the report itself",
                ReportStoreWarning,
                stacklevel=2,
            )
        return key

    def _exists_error(self, key: str, report: EvaluationReport, data: bytes | Sequence[bytes]) -> ReportExistsError:
        """Why ``report`` cannot be saved at ``key``: which report (or what) the key holds."""
        held, problem = self._held_summary(key)
        if problem is not None:
            what = f"an unreadable file ({problem})"
        elif held is None:  # not there (any more): another writer is creating it right now
            what = "a report that another writer is saving right now"
        elif held.report_id != report.report_id:
            what = f"report {held.report_id!r}"
        elif self._holds_bytes(key, held.size_bytes, data):
            what = "this report"
        else:  # the same id, but other contents: two runs both named this report
            what = (
                f"another report with the id {held.report_id!r} (knowledge base {held.knowledge_base_name!r}, "
                f"started {held.started_at}, {plural(held.cases, 'result')}, {held.size_bytes:,} bytes; "
                f"the one being saved has {plural(report.case_count, 'result')})"
            )
        return ReportExistsError(f"{self.location}: {key} already holds {what}; pass overwrite=True to replace it")

    def _held_summary(self, key: str) -> tuple[ReportSummary | None, str | None]:
        """``(summary, None)`` of the report at ``key`` (None: no file), or ``(None, why it cannot be read)``."""
        try:
            summary = self._read_sidecar(key)
        except (OSError, UnsafeNameError):
            summary = None
        if summary is not None:
            return summary, None
        try:
            blob = self._backend.read(key)
            report = decode_report(blob, source=key)
        except FileNotFoundError:
            return None, None
        except ReportFormatError as exc:
            return None, describe_problem(exc)
        except (OSError, UnsafeNameError) as exc:
            return None, str(exc)
        return ReportSummary.of(report, key=key, size_bytes=len(blob)), None

    def _holds_bytes(self, key: str, size: int, data: bytes | Sequence[bytes]) -> bool:
        """Whether the file at ``key`` (``size`` bytes) holds exactly ``data``."""
        chunks = [data] if isinstance(data, (bytes, bytearray, memoryview)) else data
        if size != sum(len(chunk) for chunk in chunks):
            return False
        try:
            return self._backend.read(key) == b"".join(chunks)
        except (OSError, UnsafeNameError):
            return False

    def delete(self, knowledge_base_name: str, report_id: str) -> bool:
        """Delete one report folder (report, summary, checkpoints, temporary files of killed saves).

        Returns:
            True if the folder existed.
        """
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
        match = KEY_PATTERN.match(key)
        if match is None:
            raise UnsafeNameError(f"{key!r} is not a report key (_heta/knowledge_bases/KB/evaluations/ID/report.json)")
        safe_slug(match.group(1), "knowledge base"), safe_slug(match.group(2), "report id")
        self._backend.check_root(missing_ok=False)
        try:
            data = self._backend.read(key)
        except FileNotFoundError:
            kb = match.group(1)
            rows = scan(self._backend, self.location, self._cache, on_error="ignore", missing_ok=True).rows
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
        return self._scan(on_error=on_error, missing_ok=missing_ok).rows

    def _scan(self, *, on_error: str, missing_ok: bool) -> Listing:
        """List the store, remember what was found, and warn about problems and stale temporaries."""
        listing = scan(self._backend, self.location, self._cache, on_error=on_error, missing_ok=missing_ok)
        self._listing = listing
        if listing.problems and on_error == "skip":
            warnings.warn(problems_message(self.location, listing.problems), ReportStoreWarning, stacklevel=3)
        if any(t["stale"] for t in listing.temporaries) and on_error != "ignore":
            warnings.warn(temporaries_message(self.location, listing.temporaries), ReportStoreWarning, stacklevel=3)
        return listing

    @property
    def problems(self) -> list[dict[str, str]]:
        """The reports the last listing left out: ``{"key": ..., "error": ...}`` each."""
        return [dict(p) for p in self._listing.problems]

    @property
    def temporaries(self) -> list[dict[str, Any]]:
        """The temporary files of atomic writes the last listing found in report folders (local stores).

        ``{"key", "size_bytes", "age_s", "stale"}`` each. A stale one was left by a save
        whose process was killed while writing (its writer is gone and it is over a
        minute old); the next save or delete of that report removes it. One that is
        not stale belongs to a save in progress.
        """
        return [dict(t) for t in self._listing.temporaries]

    def _read_sidecar(self, key: str) -> ReportSummary | None:
        prefix = key.rsplit("/", 1)[0]
        entry = self._backend.entry(key)
        if entry is None:
            return None
        blobs = self._backend.read_many([f"{prefix}/{SUMMARY_FILE}"])
        return decode_summary(blobs.get(f"{prefix}/{SUMMARY_FILE}"), entry)

    def list(self, *, on_error: str = "skip", missing_ok: bool = False) -> pd.DataFrame:
        """Every stored report as a pandas DataFrame, one row each.

        Columns: kb, report_id, knowledge_base_name, benchmark, benchmark_version,
        split, task_type, modes, cases, errors, status, started_at, finished_at,
        duration_s, size_bytes, key, then per ``"mode.metric"`` the headline mean (the mean of
        the scored values, as every view shows it; NaN where there is no number) and, prefixed
        ``heta_mean:``, Heta's ``score_summary`` value.

        Reports that cannot be read are left out; ``frame.attrs["problems"]`` lists
        them (``{"key": ..., "error": ...}`` each), and with the default
        ``on_error="skip"`` one :class:`ReportStoreWarning` names them. ``on_error``
        and ``missing_ok`` are as for :meth:`summaries`. ``frame.attrs["temporaries"]``
        lists the temporary files found in report folders (see :attr:`temporaries`);
        stale ones (left by a save killed mid-write) are also named in a
        :class:`ReportStoreWarning`, unless ``on_error="ignore"``.
        """
        from heta_nb.tables import summaries_frame

        listing = self._scan(on_error=on_error, missing_ok=missing_ok)
        frame = summaries_frame(listing.rows)
        frame.attrs["problems"] = [dict(p) for p in listing.problems]
        frame.attrs["temporaries"] = [dict(t) for t in listing.temporaries]
        return frame
