"""Per-case checkpoints: every finished case is on disk before the run moves on.

The checkpoint is JSON Lines next to the report in the store
(``.../evaluations/{report_id}/checkpoint.jsonl``): a header line describing the run,
then one line per finished case × mode: its full result, as in the report (format
2; format 1 lines, which wrapped the result with its unit, mode and case id, are
still read). On a local store the lines of the cases that finished in one
event-loop iteration reach the file in one ``writev()`` at the end of that
iteration (or every 32 cases when a fast KB never lets the loop turn), so a
``kill -9`` loses only cases that were in flight or had finished microseconds
earlier; a torn last line is ignored on resume (and ended, so the resumed run's
lines stay whole) and those cases run again. On fsspec and Heta object stores,
which cannot append, lines are written as numbered part objects
(``checkpoint/part-000001.jsonl``) every second or 256 cases.

A local checkpoint is locked (``flock``) while its run writes it, until the report
is saved (then the checkpoint is closed and removed). A second run of the same report (a resume in
another process, or ``overwrite=True`` in another notebook) is refused with
:class:`~heta_nb.errors.ReportInUseError` before it changes anything; otherwise both
would run the same cases, and the first to finish would remove the checkpoint the
other still appends to.

After a complete run the report holds everything and the checkpoint is deleted;
after a cancelled or failed run it stays, and ``resume=True`` picks up from it.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

try:
    import fcntl
except ImportError:  # pragma: no cover - Windows: checkpoints are not locked
    fcntl = None  # type: ignore[assignment]  # typeshed has fcntl everywhere

from heta_nb._util.atomic import write_chunks
from heta_nb._util.fs import NotARegularFileError, open_regular
from heta_nb.errors import ReportInUseError
from heta_nb.model.json import dumps_compact, to_json_value
from heta_nb.model.report import EvaluationCaseResult
from heta_nb.store import LocalBackend, ReportStore, report_prefix

__all__ = ["CHECKPOINT_FILE", "Checkpoint", "CheckpointWriter", "checkpoint_exists", "read_checkpoint"]

CHECKPOINT_FILE = "checkpoint.jsonl"
PARTS_DIR = "checkpoint"
FORMAT = 2
"""1: each line wrapped the result with its unit, mode and case id; 2: a line is the result."""
BATCH_LINES = 32
"""A local checkpoint writes at least every this many cases."""
REMOTE_BATCH_LINES = 256
REMOTE_BATCH_S = 1.0


def _dumps(value: Any) -> str:
    try:
        return dumps_compact(value)
    except TypeError:  # e.g. a numpy float32 score: convert, never lose the case
        return dumps_compact(to_json_value(value, "result"))


@dataclass
class Checkpoint:
    """What a checkpoint holds: its header and the finished results by key."""

    header: Mapping[str, Any]
    results: dict[tuple[str, str, str], EvaluationCaseResult]
    """``(unit_id, case_id, mode) -> result``."""
    skipped_lines: int = 0


class CheckpointWriter:
    """Appends finished results to the checkpoint of one report in one store."""

    def __init__(self, store: ReportStore, knowledge_base_name: str, report_id: str) -> None:
        self.store = store
        self.knowledge_base_name, self.report_id = knowledge_base_name, report_id
        self.prefix = report_prefix(knowledge_base_name, report_id)
        self._backend = store.backend
        self._local: LocalBackend | None = self._backend if isinstance(self._backend, LocalBackend) else None
        """The backend when it is a local folder (lines are appended to one locked file)."""
        self._fd: int | None = None
        self._buffer: list[bytes] = []
        """The pieces of the queued lines."""
        self._queued = 0
        """How many lines ``_buffer`` holds."""
        self._part = 0
        self._last_flush = time.monotonic()
        self.local = self._local is not None

    def start(self, header: Mapping[str, Any], *, fresh: bool) -> None:
        """Open the checkpoint; ``fresh`` discards an old one, else lines are added to it."""
        line = (_dumps({"heta_nb_checkpoint": FORMAT, **header}) + "\n").encode("utf-8")
        if self._local is not None:
            path = self._local.path(f"{self.prefix}/{CHECKPOINT_FILE}")
            path.parent.mkdir(parents=True, exist_ok=True)
            # An unbuffered O_APPEND descriptor (also read, for its last byte): each batch of lines
            # reaches the kernel in one writev() as its cases finish, so it survives the process being killed.
            flags = os.O_RDWR | os.O_APPEND | os.O_CREAT | getattr(os, "O_BINARY", 0)  # no \r\n on Windows
            fd = open_regular(path, flags, 0o644)  # a FIFO or a device there is refused, never waited on
            try:
                if not _lock(fd):  # before anything changes: another run may be writing it
                    raise self._in_use()
                if fresh:  # emptied rather than removed: the lock stays on the file
                    if os.fstat(fd).st_size:  # (an ext4 file truncated to 0 is forced to disk on close)
                        os.ftruncate(fd, 0)
                    self._backend.delete_prefix(f"{self.prefix}/{PARTS_DIR}")
            except BaseException:
                os.close(fd)
                raise
            self._fd = fd
            size = os.fstat(fd).st_size
            if size == 0:
                write_chunks(fd, [line])
            elif not _ends_a_line(fd, size):  # a line torn by kill -9: end it, or the next one joins it
                write_chunks(fd, [b"\n"])
        else:
            if fresh:
                self.delete()
            existing = [e for e in self._backend.list_prefix(f"{self.prefix}/{PARTS_DIR}")]
            self._part = len(existing)
            if fresh or not existing:
                self._write_part([line])

    def _in_use(self) -> ReportInUseError:
        return ReportInUseError(
            f"{self.store.location}: another run is writing report {self.report_id!r} for "
            f"{self.knowledge_base_name!r} right now (its checkpoint is locked); wait for it to finish "
            "or cancel it, or use another report_id"
        )

    def append(self, encoded: bytes) -> None:
        """Queue one finished result (its JSON, as the report holds it) for the next :meth:`flush`.

        The line is the result itself: its ``metadata.benchmark_run_unit``,
        ``case_id`` and ``query_mode`` say which case it is. Local checkpoints flush by
        themselves every :data:`BATCH_LINES` lines; the engine calls :meth:`flush` at
        the end of every event-loop iteration. Lines are joined once per flush.
        """
        buffer = self._buffer
        buffer.append(encoded)
        buffer.append(b"\n")
        self._queued += 1
        if self._queued >= BATCH_LINES and self._fd is not None:
            self.flush()

    def flush(self, *, force: bool = True) -> None:
        """Write the queued lines; remote stores wait for 256 lines or a second unless ``force``."""
        if not self._queued:
            return
        if self.local and self._fd is None:  # closed: the run is over and the lock gone, write nothing
            self._buffer, self._queued = [], 0
            return
        if self._fd is not None:
            buffer, self._buffer, self._queued = self._buffer, [], 0
            write_chunks(self._fd, buffer)  # writev: no joined copy; short writes completed
            return
        if force or self._queued >= REMOTE_BATCH_LINES or time.monotonic() - self._last_flush > REMOTE_BATCH_S:
            buffer, self._buffer, self._queued = self._buffer, [], 0
            self._write_part(buffer)
            self._last_flush = time.monotonic()

    def _write_part(self, lines: list[bytes]) -> None:
        """Write ``lines`` (whole lines, or the pieces of whole lines) as the next part object."""
        self._part += 1
        key = f"{self.prefix}/{PARTS_DIR}/part-{self._part:06d}.jsonl"
        self._backend.write(key, b"".join(lines))

    def close(self) -> None:
        """Flush and close, which releases the lock; closes even when the flush fails."""
        try:
            self.flush()
        finally:
            if self._fd is not None:
                os.close(self._fd)
                self._fd = None

    def delete(self) -> None:
        """Remove the checkpoint (after the complete report was saved).

        It is closed first (Windows cannot remove an open file), which releases the
        lock: a run that takes it in between finds every case finished.
        """
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None
        self._backend.delete_prefix(f"{self.prefix}/{CHECKPOINT_FILE}")
        self._backend.delete_prefix(f"{self.prefix}/{PARTS_DIR}")


def checkpoint_exists(store: ReportStore, knowledge_base_name: str, report_id: str) -> bool:
    """Whether an unfinished run left a checkpoint for this report (lines or parts)."""
    prefix = report_prefix(knowledge_base_name, report_id)
    backend = store.backend
    return backend.exists(f"{prefix}/{CHECKPOINT_FILE}") or any(
        True for _ in backend.list_prefix(f"{prefix}/{PARTS_DIR}")
    )


def _lock(fd: int) -> bool:
    """Lock a checkpoint for this run; False when another run holds the lock.

    True without a lock where the OS or file system has none.
    """
    if fcntl is None:  # pragma: no cover - Windows
        return True
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return False
    except OSError:  # e.g. ENOLCK on a network file system without locks: run unlocked
        return True
    return True


def _ends_a_line(fd: int, size: int) -> bool:
    """Whether the last of the ``size`` bytes of the open checkpoint is a newline."""
    if hasattr(os, "pread"):
        return os.pread(fd, 1, size - 1) == b"\n"
    os.lseek(fd, size - 1, os.SEEK_SET)  # pragma: no cover - Windows; O_APPEND writes go to the end anyway
    return os.read(fd, 1) == b"\n"  # pragma: no cover


def _lines(store: ReportStore, prefix: str) -> Iterator[str]:
    backend = store.backend
    blobs: list[bytes] = []
    try:
        blobs.append(backend.read(f"{prefix}/{CHECKPOINT_FILE}"))
    except NotARegularFileError:  # a FIFO or a device: said, never waited on nor silently skipped
        raise
    except (FileNotFoundError, OSError):
        pass
    parts = sorted(e.key for e in backend.list_prefix(f"{prefix}/{PARTS_DIR}") if e.key.endswith(".jsonl"))
    if parts:
        found = backend.read_many(parts)
        blobs.extend(found[key] for key in parts if key in found)
    for blob in blobs:
        yield from blob.decode("utf-8", errors="replace").splitlines()


def read_checkpoint(store: ReportStore, knowledge_base_name: str, report_id: str) -> Checkpoint | None:
    """The checkpoint of a report, or None when there is none.

    Lines that do not parse (a line torn by ``kill -9``) are skipped and counted.
    """
    prefix = report_prefix(knowledge_base_name, report_id)
    header: Mapping[str, Any] | None = None
    results: dict[tuple[str, str, str], EvaluationCaseResult] = {}
    skipped = 0
    from heta_nb.model.record import Problems

    for line in _lines(store, prefix):
        if not line.strip():
            continue
        try:
            data = json.loads(line)
        except ValueError:
            skipped += 1
            continue
        if not isinstance(data, dict):
            skipped += 1
            continue
        if "heta_nb_checkpoint" in data:
            header = header or data
            continue
        wrapped = "result" in data and "unit_id" in data  # format 1
        problems = Problems()
        try:
            checked = EvaluationCaseResult.check_json(data["result"] if wrapped else data, "result", problems)
        except Exception:  # noqa: BLE001 - any damage means: redo this case
            skipped += 1
            continue
        if problems:
            skipped += 1
            continue
        if wrapped:
            key = (str(data.get("unit_id")), str(data.get("case_id")), str(data.get("mode")))
        else:
            unit = (checked.get("metadata") or {}).get("benchmark_run_unit")
            key = (str(unit or "corpus"), str(checked["case_id"]), str(checked["query_mode"]))
        results[key] = EvaluationCaseResult.from_raw(checked)
    if header is None and not results:
        return None
    return Checkpoint(header=header or {}, results=results, skipped_lines=skipped)
