"""``ReportStore``: save, load, find and list reports in Heta's layout, on any backend."""

from __future__ import annotations

import os
import warnings
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from heta_nb._util.atomic import write_atomically_stat
from heta_nb._util.text import describe_error, one_line, plural, shorten
from heta_nb.errors import (
    ReportExistsError,
    ReportFormatError,
    ReportNotFoundError,
    StoreError,
    UnsafeNameError,
)
from heta_nb.model.io import decode_report, encode_report
from heta_nb.model.report import EvaluationReport
from heta_nb.store.backend import Backend, epoch_micros
from heta_nb.store.errors import ReportStoreWarning
from heta_nb.store.fsspec_backend import FsspecBackend, is_local_filesystem
from heta_nb.store.local import LocalBackend, local_stamp
from heta_nb.store.names import KB_ROOT, KEY_PATTERN, REPORT_FILE, SUMMARY_FILE, report_key, report_prefix, safe_slug
from heta_nb.store.object_store import ObjectStoreBackend, is_object_store
from heta_nb.store.summary import ReportSummary, decode_summary, encode_summary

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd

__all__ = ["ReportStore"]

_ON_ERROR = ("skip", "ignore", "raise")


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
        self._cache: dict[tuple[str, int, str | None], ReportSummary] = {}
        self._problems: list[dict[str, str]] = []
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
                path = backend.path(key)
                backend.path(sidecar_key)  # refuse an unsafe sidecar before writing anything
                try:
                    # A new report is created exclusively (os.link): of two writers racing
                    # for one key, the second gets ReportExistsError below.
                    written = write_atomically_stat(path, data, exclusive=not overwrite)
                except FileExistsError:
                    raise self._exists_error(key, report) from None
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
        match = KEY_PATTERN.match(key)
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
        reports = [e for e in entries if KEY_PATTERN.match(e.key)]
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
            summary = decode_summary(blobs.get(sidecar_key), entry)
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
        return decode_summary(blobs.get(f"{prefix}/{SUMMARY_FILE}"), entry)

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
    micros = epoch_micros(value) if isinstance(value, str) else None
    return (0, 0.0, str(value)) if micros is None else (1, float(micros), "")


def _describe(exc: BaseException) -> str:
    """One line for a listing problem (a report error without its repeated source)."""
    if isinstance(exc, ReportFormatError) and exc.problems:
        text = "; ".join(exc.problems[:3]) + ("; ..." if len(exc.problems) > 3 else "")
    else:
        text = describe_error(exc) or type(exc).__name__
    return shorten(one_line(text), 300, ellipsis="...")


def _problems_message(location: str, problems: Sequence[Mapping[str, str]]) -> str:
    """The warning naming the reports a listing left out (the first 20) and why."""
    count = len(problems)
    head = (
        f"{location}: {plural(count, 'report', grouping=False)} could not be read "
        f"and {'is' if count == 1 else 'are'} left out of the listing:"
    )
    lines = [f"  {p['key']}: {p['error']}" for p in problems[:20]]
    if count > 20:
        lines.append(f"  ... and {count - 20} more (see ReportStore.problems)")
    return "\n".join([head, *lines])
