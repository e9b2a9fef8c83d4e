"""Human reviews of a report's case results, kept beside the report in append-only files.

One file per reviewer (``{reviewer}.jsonl``), one line per verdict, written with one
``write`` on a file opened for appending, so a review killed mid-write loses at most
the line it was writing: a line without its newline is skipped when read (and counted
in :attr:`ReviewLog.damaged`), and the next verdict starts on a line of its own. A
reviewer who changes a verdict appends a new line: the last one stands, the history is
kept. The report itself is never touched (it stays byte-identical; Heta still reads it).

A verdict is ``correct`` / ``partly`` / ``wrong`` (worth 1, 0.5 and 0 in estimates),
``skip`` (no value), or a number in [0, 1].
"""

from __future__ import annotations

import math
import os
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import orjson

from heta_nb._util.fs import NotARegularFileError, open_regular, read_regular_file
from heta_nb.store.names import safe_slug

__all__ = ["VERDICTS", "Review", "ReviewLog", "verdict_value"]

VERDICTS = {"correct": 1.0, "partly": 0.5, "wrong": 0.0, "skip": None}
"""The named verdicts and what each is worth in estimates (``skip``: nothing)."""


def verdict_value(verdict: Any, where: str = "verdict") -> tuple[str | float, float | None]:
    """``(verdict as stored, its value)`` for a named verdict or a number in [0, 1].

    Raises:
        ValueError: anything else (one line naming ``where``).
    """
    if isinstance(verdict, str):
        name = verdict.strip().lower()
        if name in VERDICTS:
            return name, VERDICTS[name]
        raise ValueError(f"{where}: {verdict!r} is not a verdict (correct, partly, wrong, skip, or a number in [0, 1])")
    if isinstance(verdict, (int, float)) and not isinstance(verdict, bool):
        number = float(verdict)
        if math.isfinite(number) and 0.0 <= number <= 1.0:
            return number, number
    raise ValueError(f"{where}: {verdict!r} is not a verdict (correct, partly, wrong, skip, or a number in [0, 1])")


@dataclass(frozen=True)
class Review:
    """One verdict of one reviewer on one case result (case × mode)."""

    case_id: str
    query_mode: str
    reviewer: str
    verdict: str | float
    value: float | None
    """1 / 0.5 / 0 for correct / partly / wrong, the number for a numeric verdict, None for skip."""
    note: str | None = None
    blind: bool = False
    """Whether the reviewer saw no score or judge verdict while deciding."""
    at: str = ""
    """When it was given (ISO 8601, UTC)."""
    report_id: str = ""

    def record(self) -> dict[str, Any]:
        """The review's JSON line."""
        return {
            "case_id": self.case_id,
            "query_mode": self.query_mode,
            "reviewer": self.reviewer,
            "verdict": self.verdict,
            "value": self.value,
            "note": self.note,
            "blind": self.blind,
            "at": self.at,
            "report_id": self.report_id,
        }

    @classmethod
    def from_record(cls, data: Any, where: str) -> Review:
        """A review from its JSON line (``where`` names the file and line in errors)."""
        if not isinstance(data, dict):
            raise ValueError(f"{where}: a review must be a JSON object")
        for key in ("case_id", "query_mode", "reviewer"):
            if not isinstance(data.get(key), str) or not data[key].strip():
                raise ValueError(f"{where}: {key!r} must be a non-empty string")
        verdict, value = verdict_value(data.get("verdict"), f"{where}: verdict")
        note = data.get("note")
        return cls(
            data["case_id"],
            data["query_mode"],
            data["reviewer"],
            verdict,
            value,
            note if isinstance(note, str) and note.strip() else None,
            data.get("blind") is True,
            str(data.get("at") or ""),
            str(data.get("report_id") or ""),
        )


def utc_now() -> str:
    """Now, as the reviews record it."""
    return datetime.now(timezone.utc).isoformat(timespec="milliseconds")


class ReviewLog:
    """The reviews of one report: a folder of ``{reviewer}.jsonl`` files (see the module docstring).

    Args:
        folder: where the files are (created on the first verdict).
        report_id: the reviewed report's id (recorded with every verdict).
    """

    def __init__(self, folder: str | os.PathLike[str], report_id: str = "") -> None:
        self.folder = Path(folder)
        self.report_id = report_id
        self.damaged = 0
        """Lines skipped when last read: cut short by a killed writer, or not a review."""
        if self.folder.exists() and not self.folder.is_dir():
            raise NotADirectoryError(f"reviews folder {str(self.folder)!r} is not a folder")

    def __repr__(self) -> str:
        return f"ReviewLog({str(self.folder)!r})"

    def file_of(self, reviewer: str) -> Path:
        """The reviewer's file (a safe name: it never leaves the folder)."""
        return self.folder / f"{safe_slug(reviewer, 'reviewer')}.jsonl"

    def add(
        self,
        case_id: str,
        query_mode: str,
        reviewer: str,
        verdict: Any,
        *,
        note: str | None = None,
        blind: bool = False,
    ) -> Review:
        """Append one verdict (the last verdict of a reviewer on a case result stands)."""
        stored, value = verdict_value(verdict)
        review = Review(
            str(case_id),
            str(query_mode),
            reviewer.strip(),
            stored,
            value,
            note or None,
            blind,
            utc_now(),
            self.report_id,
        )
        self.append([review])
        return review

    def append(self, reviews: list[Review]) -> None:
        """Append reviews, one file write per reviewer."""
        by_reviewer: dict[str, list[Review]] = {}
        for review in reviews:
            by_reviewer.setdefault(review.reviewer, []).append(review)
        self.folder.mkdir(parents=True, exist_ok=True)
        for reviewer, mine in by_reviewer.items():
            path = self.file_of(reviewer)
            data = b"".join(orjson.dumps(r.record()) + b"\n" for r in mine)
            # (read: its last byte); a FIFO or a device there is refused, never waited on
            fd = open_regular(path, os.O_RDWR | os.O_CREAT | os.O_APPEND, 0o666, follow=False)
            try:
                info = os.fstat(fd)
                if info.st_size and os.pread(fd, 1, info.st_size - 1) != b"\n":
                    data = b"\n" + data  # the last line was cut short: start on a line of our own
                view = memoryview(data)
                while view:
                    view = view[os.write(fd, view) :]
                os.fsync(fd)
            finally:
                os.close(fd)

    def history(self) -> list[Review]:
        """Every verdict in the folder, file by file (reviewers by name), in the order written."""
        self.damaged = 0
        found: list[Review] = []
        if not self.folder.is_dir():
            return found
        for path in sorted(self.folder.glob("*.jsonl")):
            found.extend(self._read(path))
        return found

    def _read(self, path: Path) -> Iterator[Review]:
        try:
            data = read_regular_file(path)
        except (FileNotFoundError, IsADirectoryError, NotARegularFileError):  # gone, or not a review file
            return
        lines = data.split(b"\n")
        if lines and lines[-1] == b"":
            lines.pop()
        elif lines:  # (no newline at the end: cut short)
            lines.pop()
            self.damaged += 1
        for number, line in enumerate(lines, start=1):
            if not line.strip():
                continue
            try:
                yield Review.from_record(orjson.loads(line), f"{path.name}:{number}")
            except (orjson.JSONDecodeError, ValueError):
                self.damaged += 1

    def latest(self) -> list[Review]:
        """Each reviewer's last verdict on each case result (their history folded)."""
        last: dict[tuple[str, str, str], Review] = {}
        for review in self.history():
            last[(review.reviewer, review.case_id, review.query_mode)] = review
        return list(last.values())
