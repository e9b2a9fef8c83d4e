"""The listing row of a stored report (``ReportSummary``) and its ``heta_nb.summary.json`` sidecar."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import orjson

from heta_nb.model.report import EvaluationReport
from heta_nb.store.backend import Entry
from heta_nb.store.names import KEY_PATTERN, heta_slug

__all__ = ["SUMMARY_FORMAT", "ReportSummary", "decode_summary", "encode_summary"]

SUMMARY_FORMAT = 1
"""The sidecar's ``format``; a sidecar of another format is not read."""


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
    """Heta's means (``score_summary``: skipped scores averaged in as 0)."""
    means: Mapping[str, float | None] = field(default_factory=dict)
    """Per ``"mode.metric"``, the headline mean every view shows first (the report's one
    summary: the mean of the scored values), None where there is no number (n/a...)."""

    @classmethod
    def of(cls, report: EvaluationReport, *, key: str, size_bytes: int) -> ReportSummary:
        """Build the row for ``report`` stored at ``key``."""
        match = KEY_PATTERN.match(key)
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
            means={s.key: (s.shown if s.scored else None) for s in report.metric_summaries()},
        )

    def to_json(self) -> dict[str, Any]:
        """The sidecar form (``heta_nb.summary.json``)."""
        data = {name: getattr(self, name) for name in self.__dataclass_fields__}
        data["query_modes"] = list(self.query_modes)
        data["score_summary"] = dict(self.score_summary)
        data["means"] = {k: (v if v is None or v == v else None) for k, v in self.means.items()}  # NaN: none
        return {"format": SUMMARY_FORMAT, **data}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> ReportSummary:
        """Inverse of :meth:`to_json`; raises ``KeyError``/``TypeError`` when malformed (a sidecar
        written before ``means`` existed is not used: its report is read instead)."""
        if data.get("format") != SUMMARY_FORMAT:
            raise KeyError("format")
        values = {name: data[name] for name in _FIELDS}
        values["query_modes"] = tuple(values["query_modes"])
        if (
            not isinstance(values["score_summary"], dict)
            or not isinstance(values["means"], dict)
            or not isinstance(values["size_bytes"], int)
        ):
            raise TypeError("malformed summary")
        summary = object.__new__(cls)  # the frozen dataclass's __init__ (17 setattr calls), at once
        summary.__dict__.update(values)
        return summary


_FIELDS = tuple(ReportSummary.__dataclass_fields__)


def encode_summary(summary: ReportSummary, stamp: str | None = None) -> bytes:
    """The sidecar written next to ``report.json``, so listings need not parse every case.

    It is written after the report and records the report's identity: its size, and
    ``stamp``, the backend's version stamp of the report (on a local folder its inode
    and ``st_mtime_ns``; on fsspec and Heta object stores the ETag where there is one,
    else the modification time). Reports written by Heta have no sidecar and are
    parsed once per listing.
    """
    data = summary.to_json()
    if stamp is not None:
        data["report_stamp"] = stamp
    return json.dumps(data, ensure_ascii=False, separators=(",", ":")).encode("utf-8")


def decode_summary(blob: bytes | None, entry: Entry) -> ReportSummary | None:
    """The summary in a sidecar, or None when it is unreadable or no longer matches ``entry``, its report."""
    if blob is None:
        return None
    try:
        data = orjson.loads(blob)
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
