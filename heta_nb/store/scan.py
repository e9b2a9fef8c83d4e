"""Listing a store: one summary row per report, the reports it cannot read, and the temporary files of killed saves."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from heta_nb._util.atomic import is_temporary_name, temporary_state
from heta_nb._util.text import describe_error, one_line, plural, shorten
from heta_nb.errors import ReportFormatError, StoreError, UnsafeNameError
from heta_nb.model.io import decode_report
from heta_nb.store.backend import Backend, Entry, epoch_micros
from heta_nb.store.local import LocalBackend
from heta_nb.store.names import KB_ROOT, KEY_PATTERN, REPORT_FILE, SUMMARY_FILE
from heta_nb.store.summary import ReportSummary, decode_summary

__all__ = ["ON_ERROR", "Listing", "describe_problem", "instant", "problems_message", "scan", "temporaries_message"]

ON_ERROR = ("skip", "ignore", "raise")
_REPORT_FOLDER = re.compile(r"^_heta/knowledge_bases/[^/]+/evaluations/[^/]+/[^/]+$")

SummaryCache = dict[tuple[str, int, str | None], ReportSummary]
"""Summaries parsed from reports without a matching sidecar, by (key, size, stamp)."""


@dataclass
class Listing:
    """What one listing found."""

    rows: list[ReportSummary] = field(default_factory=list)
    """One per readable report, sorted by KB, then start time, then id."""
    problems: list[dict[str, str]] = field(default_factory=list)
    """``{"key", "error"}`` of each report that could not be read."""
    temporaries: list[dict[str, Any]] = field(default_factory=list)
    """``{"key", "size_bytes", "age_s", "stale"}`` of each temporary file of an atomic
    write found in a report folder (local stores); ``stale``: its writer is gone (a
    process killed while saving), and the next save or delete of that report removes it."""


def scan(backend: Backend, location: str, cache: SummaryCache, *, on_error: str, missing_ok: bool) -> Listing:
    """List every report below the store's root (see :meth:`ReportStore.summaries`).

    Raises:
        ValueError: an unknown ``on_error``.
        StoreError: the store cannot be listed (or, with ``on_error="raise"``, the first problem).
    """
    if on_error not in ON_ERROR:
        raise ValueError(f"on_error must be one of {', '.join(map(repr, ON_ERROR))}, not {on_error!r}")
    found = Listing()
    try:
        if not backend.check_root(missing_ok=missing_ok):
            return found
        unreadable: dict[str, Exception] = {}
        local = backend if isinstance(backend, LocalBackend) else None
        if local is not None:  # one walk, sidecars read on the way
            entries, blobs = local.scan_reports(KB_ROOT, report=REPORT_FILE, sidecar=SUMMARY_FILE, errors=unreadable)
        else:
            entries, blobs = backend.list_prefix(KB_ROOT), {}
    except StoreError:
        raise
    except OSError as exc:
        raise StoreError(f"{location}: cannot list reports: {exc}") from exc
    reports: list[Entry] = []
    sidecars = set()
    suffix = "/" + SUMMARY_FILE
    for entry in entries:
        key = entry.key
        if key.endswith("/" + REPORT_FILE):
            if KEY_PATTERN.match(key):
                reports.append(entry)
        elif key.endswith(suffix):
            if entry.problem is None:
                sidecars.add(key)
            else:
                unreadable[key] = StoreError(f"it is {entry.problem}")
        elif local is not None and is_temporary_name(key.rpartition("/")[2]) and _REPORT_FOLDER.match(key):
            _add_temporary(found, local, key)
    reports.sort(key=lambda e: e.key)
    found.temporaries.sort(key=lambda t: str(t["key"]))
    wanted = [entry.key[: -len(REPORT_FILE)] + SUMMARY_FILE for entry in reports]
    if local is None:
        blobs = backend.read_many([k for k in wanted if k in sidecars], unreadable)

    def fail(key: str, exc: Exception, what: str = "") -> None:
        if on_error == "raise":
            raise exc
        found.problems.append({"key": key, "error": what or describe_problem(exc)})

    rows = found.rows
    for entry, sidecar_key in zip(reports, wanted):
        if entry.problem is not None:
            fail(entry.key, StoreError(f"{location}: {entry.key} is {entry.problem}"), f"it is {entry.problem}")
            continue
        if sidecar_key in unreadable:
            sidecar_error = unreadable[sidecar_key]
            fail(entry.key, sidecar_error, f"its {SUMMARY_FILE}: {describe_problem(sidecar_error)}")
            continue
        summary = decode_summary(blobs.get(sidecar_key), entry)
        if summary is None:
            summary = cache.get((entry.key, entry.size, entry.stamp))
        if summary is None:
            try:
                data = backend.read(entry.key)
                report = decode_report(data, source=f"{location}/{entry.key}")
            except FileNotFoundError:  # removed while listing
                continue
            except (ReportFormatError, UnsafeNameError, OSError) as exc:
                fail(entry.key, exc)
                continue
            summary = ReportSummary.of(report, key=entry.key, size_bytes=len(data))
            cache[(entry.key, entry.size, entry.stamp)] = summary
        rows.append(summary)
    rows.sort(key=_order)
    return found


def _add_temporary(found: Listing, backend: LocalBackend, key: str) -> None:
    try:
        state = temporary_state(backend.root.joinpath(*key.split("/")))
    except OSError:
        return
    if state is not None:
        found.temporaries.append(
            {"key": key, "size_bytes": state.size, "age_s": round(state.age_s, 1), "stale": state.stale}
        )


def _order(summary: ReportSummary) -> tuple[str, tuple[int, float, str], str]:
    return summary.knowledge_base, instant(summary.started_at), summary.report_id


def instant(value: str) -> tuple[int, float, str]:
    """A sort key for an ISO-8601 time: the moment it names, whatever its offset
    (``10:00+02:00`` is before ``09:00Z``); a time without offset counts as UTC, and
    text that is not a time sorts before every time, by itself."""
    micros = epoch_micros(value) if isinstance(value, str) else None
    return (0, 0.0, str(value)) if micros is None else (1, float(micros), "")


def describe_problem(exc: BaseException) -> str:
    """One line for a listing problem (a report error without its repeated source)."""
    if isinstance(exc, ReportFormatError) and exc.problems:
        text = "; ".join(exc.problems[:3]) + ("; ..." if len(exc.problems) > 3 else "")
    else:
        text = describe_error(exc) or type(exc).__name__
    return shorten(one_line(text), 300, ellipsis="...")


def problems_message(location: str, problems: Sequence[Mapping[str, str]]) -> str:
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


def temporaries_message(location: str, temporaries: Sequence[Mapping[str, Any]]) -> str:
    """The warning naming the stale temporary files a listing found (the first 20)."""
    stale = [t for t in temporaries if t["stale"]]
    count = len(stale)
    head = (
        f"{location}: {plural(count, 'temporary file', grouping=False)} left by saves that did not finish "
        "(a process killed while writing); the next save or delete of that report removes "
        f"{'it' if count == 1 else 'them'}:"
    )
    lines = [f"  {t['key']} ({t['size_bytes']:,} bytes, {_age(t['age_s'])} old)" for t in stale[:20]]
    if count > 20:
        lines.append(f"  ... and {count - 20} more (see ReportStore.temporaries)")
    return "\n".join([head, *lines])


def _age(seconds: float) -> str:
    for unit, size in (("d", 86400), ("h", 3600), ("min", 60)):
        if seconds >= size:
            return f"{seconds / size:.0f} {unit}"
    return f"{seconds:.0f} s"
