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
    ``metadata.heta_nb.merged_from`` listing the shard report ids. Shard reports must
    form a complete set: every shard ``0..n-1`` of the same ``n`` exactly once. When a
    shard was cancelled, the merge's ``metadata.heta_nb.status`` is ``"partial"``.

    Raises:
        ValueError: the reports evaluate different benchmarks, KBs, recipes, modes,
            evaluators or ``top_k``; overlap (the same case × mode twice); or are
            shards of different counts, a shard set with shards missing, or shards
            mixed with unsharded reports.
    """
    items = [load_report(r) for r in reports]
    if not items:
        raise ValueError("merge_reports needs at least one report")
    first = items[0]
    for other in items[1:]:
        _check_same(first, other)
    _check_shard_kinds(items)
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
    _check_shard_set(items)
    run_units = first.metadata.get("run_units") or ()
    units = {str(u.get("unit_id")): i for i, u in enumerate(run_units) if hasattr(u, "get")}
    modes = {m: i for i, m in enumerate(first.query_modes)}
    results.sort(key=lambda r: _sort_key(r, units, modes))
    info = first.metadata.get("heta_nb")
    shard_info = info.get("shard") if isinstance(info, Mapping) else None
    base_id = shard_info.get("base_report_id") if isinstance(shard_info, Mapping) else None
    metadata = first.to_dict()["metadata"]
    heta_nb_meta = dict(metadata.get("heta_nb") or {})
    total = sum(int((r.metadata.get("heta_nb") or {}).get("total", len(r.case_results))) for r in items)
    heta_nb_meta.update(
        shard=None,
        merged_from=[r.report_id for r in items],
        status="complete" if all(_status(r) == "complete" for r in items) else "partial",
        done=len(results),
        total=total,
        remaining=max(0, total - len(results)),
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


def _info(report: EvaluationReport) -> Mapping[str, Any]:
    info = report.metadata.get("heta_nb")
    return info if isinstance(info, Mapping) else {}


def _plain(value: Any) -> Any:
    """A JSON value as plain dicts and lists (reports hold read-only mappings and tuples)."""
    if isinstance(value, Mapping):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    return value


def _evaluators(report: EvaluationReport) -> Any:
    """The evaluator (score) names: as the run recorded them, else per mode from the results."""
    names = _info(report).get("evaluators")
    if isinstance(names, (list, tuple)) and all(isinstance(n, str) for n in names):
        return list(names)
    per_mode: dict[str, set[str]] = {}
    for result in report.case_results:
        per_mode.setdefault(result.query_mode, set()).update(score.name for score in result.scores)
    return {mode: sorted(names) for mode, names in per_mode.items() if names}


# fields of a KB manifest that differ between two builds of the same KB
_VOLATILE_KB_FIELDS = ("created_at", "updated_at", "run_record")


def _kb_manifests(manifest: Any) -> dict[str, Any]:
    """``{KB name: manifest without build times}``, one per run unit's KB."""
    plain = _plain(manifest)
    if not isinstance(plain, dict) or not plain:
        return {}
    listed = plain.get("knowledge_bases")
    kbs = listed if isinstance(listed, list) and len(plain) == 1 else [plain]
    out = {}
    for kb in kbs:
        if isinstance(kb, dict):
            out[str(kb.get("name"))] = {k: v for k, v in kb.items() if k not in _VOLATILE_KB_FIELDS}
    return out


def _differs(label: str, a: Any, b: Any, first: EvaluationReport, other: EvaluationReport) -> ValueError:
    return ValueError(f"cannot merge: different {label}: {a!r} in {first.report_id!r} vs {b!r} in {other.report_id!r}")


def _check_same(first: EvaluationReport, other: EvaluationReport) -> None:
    """Refuse two reports that are not parts of the same evaluation."""
    for label, a, b in (
        ("benchmark", first.benchmark.key, other.benchmark.key),
        ("knowledge_base_name", first.knowledge_base_name, other.knowledge_base_name),
        ("query_modes", list(first.query_modes), list(other.query_modes)),
    ):
        if a != b:
            raise _differs(label, a, b, first, other)
    mine, theirs = _evaluators(first), _evaluators(other)
    if isinstance(mine, dict) and isinstance(theirs, dict):  # only modes both have scores for
        mine, theirs = ({m: v for m, v in d.items() if m in mine and m in theirs} for d in (mine, theirs))
    if mine != theirs:
        raise _differs("evaluators", mine, theirs, first, other)
    top_k = _info(first).get("top_k"), _info(other).get("top_k")
    if None not in top_k and top_k[0] != top_k[1]:
        raise _differs("top_k", top_k[0], top_k[1], first, other)
    recipes = _plain(first.recipe_manifest), _plain(other.recipe_manifest)
    if recipes[0] and recipes[1] and recipes[0] != recipes[1]:
        raise _differs("recipe_manifest", recipes[0], recipes[1], first, other)
    # a shard builds only the units it has cases in: compare the KBs both have
    kbs = _kb_manifests(first.knowledge_base_manifest), _kb_manifests(other.knowledge_base_manifest)
    common = [name for name in kbs[0] if name in kbs[1]]
    if not common and len(kbs[0]) == len(kbs[1]) == 1:
        a, b = next(iter(kbs[0].values())), next(iter(kbs[1].values()))
        if a != b:
            raise _differs("knowledge_base_manifest", a, b, first, other)
    for name in common:
        if kbs[0][name] != kbs[1][name]:
            raise _differs("knowledge_base_manifest", kbs[0][name], kbs[1][name], first, other)


def _shard(report: EvaluationReport) -> tuple[int, int] | None:
    shard = _info(report).get("shard")
    if not isinstance(shard, Mapping):
        return None
    index, count = shard.get("index"), shard.get("count")
    if type(index) is int and type(count) is int:  # noqa: E721 - not bools
        return index, count
    return None


def _check_shard_kinds(items: list[EvaluationReport]) -> None:
    """Shards of one ``n`` only, not mixed with unsharded reports."""
    shards = [(report, _shard(report)) for report in items]
    sharded = [(report, shard) for report, shard in shards if shard is not None]
    if not sharded:
        return
    first, shard = sharded[0]
    plain = [report for report, s in shards if s is None]
    if plain:
        raise ValueError(
            f"cannot merge: {first.report_id!r} is shard {shard[0]} of {shard[1]} but "
            f"{plain[0].report_id!r} is not a shard report"
        )
    for report, (_, count) in sharded:
        if count != shard[1]:
            raise _differs("shard count", shard[1], count, first, report)


def _check_shard_set(items: list[EvaluationReport]) -> None:
    """Shards must be a complete set: each of ``0..n-1`` exactly once."""
    by_index: dict[int, str] = {}
    count = 0
    for report in items:
        shard = _shard(report)
        if shard is None:
            return  # unsharded reports (checked by _check_shard_kinds)
        index, count = shard
        if index in by_index:
            raise ValueError(
                f"cannot merge: shard {index} of {count} is in both {by_index[index]!r} and {report.report_id!r}"
            )
        by_index[index] = report.report_id
    missing = [i for i in range(count) if i not in by_index]
    if missing:
        raise ValueError(
            f"cannot merge: shard(s) {', '.join(map(str, missing))} of {count} missing "
            f"(have {', '.join(f'{i} ({by_index[i]!r})' for i in sorted(by_index))}); "
            "a merge of some shards is not the report of the whole run"
        )
