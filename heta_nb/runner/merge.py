"""Merging shard reports into the report one single run would have produced."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from heta_nb.model.io import load_report
from heta_nb.model.report import EvaluationReport
from heta_nb.model.summary import heta_score_summary

__all__ = ["merge_reports"]


def _sort_key(result: Any, units: dict[str, int], modes: dict[str, int]) -> tuple[int, int, int, str]:
    extra = result.metadata.get("heta_nb")
    index = extra.get("case_index") if hasattr(extra, "get") else None
    return (
        units.get(result.unit_id or "", len(units)),
        index if isinstance(index, int) else 1 << 62,
        modes.get(result.query_mode, len(modes)),
        result.case_id,
    )


def merge_reports(reports: Iterable[Any], *, report_id: str | None = None) -> EvaluationReport:
    """Merge reports of disjoint shards (``shard=(i, n)``) of one evaluation.

    The result has every case exactly once, in the order a single run gives (unit,
    then case, then mode), the summary recomputed with Heta's semantics (so it
    equals a single run's), the earliest start and latest finish, and
    ``metadata.heta_nb.merged_from`` listing the shard report ids.

    Raises:
        ValueError: the reports evaluate different benchmarks, KBs or modes, or
            overlap (the same case × mode twice).
    """
    items = [load_report(r) for r in reports]
    if not items:
        raise ValueError("merge_reports needs at least one report")
    first = items[0]
    for other in items[1:]:
        for label, a, b in (
            ("benchmark", first.benchmark.key, other.benchmark.key),
            ("knowledge_base_name", first.knowledge_base_name, other.knowledge_base_name),
            ("query_modes", first.query_modes, other.query_modes),
        ):
            if a != b:
                raise ValueError(f"cannot merge: {label} differs ({a!r} vs {b!r} in {other.report_id!r})")
    seen: dict[tuple[str | None, str, str], str] = {}
    results = []
    for report in items:
        for result in report.case_results:
            key = (result.unit_id, result.case_id, result.query_mode)
            if key in seen:
                raise ValueError(
                    f"cannot merge: case {result.case_id!r} ({result.query_mode}) is in both "
                    f"{seen[key]!r} and {report.report_id!r}"
                )
            seen[key] = report.report_id
            results.append(result)
    run_units = first.metadata.get("run_units") or ()
    units = {str(u.get("unit_id")): i for i, u in enumerate(run_units) if hasattr(u, "get")}
    modes = {m: i for i, m in enumerate(first.query_modes)}
    results.sort(key=lambda r: _sort_key(r, units, modes))
    info = first.metadata.get("heta_nb")
    shard_info = info.get("shard") if isinstance(info, Mapping) else None
    base_id = shard_info.get("base_report_id") if isinstance(shard_info, Mapping) else None
    metadata = first.to_dict()["metadata"]
    heta_nb_meta = dict(metadata.get("heta_nb") or {})
    heta_nb_meta.update(
        shard=None,
        merged_from=[r.report_id for r in items],
        status="complete" if all(_status(r) == "complete" for r in items) else "partial",
        done=len(results),
        total=sum(int((r.metadata.get("heta_nb") or {}).get("total", len(r.case_results))) for r in items),
        errors=sum(1 for r in results if not r.ok),
    )
    metadata["heta_nb"] = heta_nb_meta
    keys = [k for r in items for k in (r.metadata.get("benchmark_document_keys") or ())]
    metadata["benchmark_document_keys"] = list(dict.fromkeys(keys))
    data = first.to_dict()
    data.update(
        report_id=report_id or base_id or f"{first.report_id}-merged",
        report_key=None,
        case_results=[r._data for r in results],
        score_summary=heta_score_summary(results),
        started_at=min(r.started_at for r in items),
        finished_at=max(r.finished_at for r in items),
        metadata=metadata,
    )
    return EvaluationReport.from_dict(data, source="<merged report>")


def _status(report: EvaluationReport) -> str:
    info = report.metadata.get("heta_nb")
    status = info.get("status") if isinstance(info, Mapping) else None
    return status if isinstance(status, str) else "complete"
