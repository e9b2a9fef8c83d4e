"""Merging shard reports into the report one single run would have produced."""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from typing import Any

from heta_nb.errors import ReportFormatError
from heta_nb.model.io import load_report
from heta_nb.model.json import thaw
from heta_nb.model.report import EvaluationReport
from heta_nb.model.summary import heta_score_summary

__all__ = ["merge_reports"]


def _case_index(result: Any) -> int | None:
    """The position of a result's case in its unit (``metadata.heta_nb.case_index``), if recorded."""
    extra = result.metadata.get("heta_nb")
    index = extra.get("case_index") if isinstance(extra, Mapping) else None
    return index if type(index) is int else None  # noqa: E721 - not bools


def _sort_key(result: Any, units: dict[str, int], modes: dict[str, int]) -> tuple[int, int, int, str]:
    index = _case_index(result)
    return (
        units.get(result.unit_id or "", len(units)),
        index if index is not None else 1 << 62,
        modes.get(result.query_mode, len(modes)),
        result.case_id,
    )


def merge_reports(reports: Iterable[Any], *, report_id: str | None = None) -> EvaluationReport:
    """Merge reports of disjoint shards (``shard=(i, n)``) of one evaluation.

    The result has every case exactly once, in the order a single run gives (unit,
    then case, then mode), the summary recomputed with Heta's semantics (so it
    equals a single run's), the earliest start and latest finish, and
    ``metadata.heta_nb.merged_from`` listing the shard report ids in shard order. The
    KB manifests of all shards (a recipe-built shard builds only the units it has
    cases in) and their warnings are combined in run-unit order, ``resumed`` and
    ``errors`` are totals; ``executor`` is the shards' one, or ``{"kind": "per shard", "shards":
    [...]}`` when they ran on different ones (None: in its own process); the rest of
    ``metadata`` is shard 0's. The order the reports are given in does not matter. Shard
    reports must form a complete set: every shard ``0..n-1`` of the same ``n`` exactly
    once. When a shard was cancelled (or failed), the merge's ``metadata.heta_nb.status``
    is ``"partial"``.

    Args:
        reports: the shard reports (anything :func:`~heta_nb.load_report` accepts:
            reports, paths, URLs, dicts...), in any order.
        report_id: the merged report's id; default the shards' base report id.

    Returns:
        The merged report (not saved anywhere).

    Raises:
        TypeError: ``reports`` is one report (or one path), not a list of them.
        ReportFormatError: an item is not a report (the message names its position).
        ValueError: the reports evaluate different benchmarks (or benchmark
            versions: cases missing between complete shards), KBs, recipes, run
            units, modes, evaluators, ``top_k``, ``query_options`` or ``trace``; overlap (the same
            case x mode twice); or are shards of different counts, a shard set with
            shards missing or repeated, or shards mixed with unsharded reports.
    """
    items = _load_all(reports)
    if not items:
        raise ValueError("merge_reports needs at least one report")
    _check_shard_kinds(items)
    _check_shard_set(items)
    if _shard(items[0]) is not None:  # shard order: the merge does not depend on the order given
        items.sort(key=lambda report: _shard(report) or (0, 0))
    first = items[0]
    for other in items[1:]:
        _check_same(first, other)
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
    if all(_status(r) == "complete" for r in items):
        _check_coverage(items, units)
    results.sort(key=lambda r: _sort_key(r, units, modes))
    info = first.metadata.get("heta_nb")
    shard_info = info.get("shard") if isinstance(info, Mapping) else None
    base_id = shard_info.get("base_report_id") if isinstance(shard_info, Mapping) else None
    metadata = first.to_dict()["metadata"]
    heta_nb_meta = dict(metadata.get("heta_nb") or {})
    total = sum(int((r.metadata.get("heta_nb") or {}).get("total", len(r.case_results))) for r in items)
    kb_names = _unit_kb_names(first, run_units)
    heta_nb_meta.update(
        shard=None,
        merged_from=[r.report_id for r in items],
        status="complete" if all(_status(r) == "complete" for r in items) else "partial",
        done=len(results),
        total=total,
        remaining=max(0, total - len(results)),
        errors=sum(1 for r in results if not r.ok),
        resumed=sum(_count(r, "resumed") for r in items),
        warnings=_merged_warnings([_warnings(r) for r in items], kb_names),
    )
    notes = _merged_warnings([_warnings(r, "build_notes") for r in items], kb_names)
    heta_nb_meta.pop("build_notes", None)
    if notes:
        heta_nb_meta["build_notes"] = notes
    heta_nb_meta.pop("executor", None)
    executors = [thaw(_info(r).get("executor")) for r in items]
    if any(e is not None for e in executors):  # where each shard ran (None: in its own process)
        same = all(e == executors[0] for e in executors)
        heta_nb_meta["executor"] = executors[0] if same else {"kind": "per shard", "shards": executors}
    failures = [f"{r.report_id}: {_info(r)['failure']}" for r in items if isinstance(_info(r).get("failure"), str)]
    heta_nb_meta.pop("failure", None)
    if failures:
        heta_nb_meta["failure"] = "; ".join(failures)
    metadata["heta_nb"] = heta_nb_meta
    keys = [k for r in items for k in (r.metadata.get("benchmark_document_keys") or ())]
    metadata["benchmark_document_keys"] = list(dict.fromkeys(keys))
    data = first.to_dict()
    data.update(
        report_id=report_id or base_id or f"{first.report_id}-merged",
        report_key=None,
        knowledge_base_manifest=_merged_kb_manifest(items, kb_names),
        case_results=[r.raw for r in results],
        score_summary=heta_score_summary(results),
        started_at=min(r.started_at for r in items),
        finished_at=max(r.finished_at for r in items),
        metadata=metadata,
    )
    return EvaluationReport.from_dict(data, source="<merged report>")


def _load_all(reports: Iterable[Any]) -> list[EvaluationReport]:
    """The reports, loaded; a single report (or path) instead of a list is refused."""
    if isinstance(reports, (str, bytes, bytearray, memoryview, os.PathLike, Mapping, EvaluationReport)) or (
        callable(getattr(reports, "to_dict", None))
    ):
        raise TypeError(
            f"merge_reports takes a list of shard reports, got one {type(reports).__name__}; "
            "pass them all: merge_reports([shard_0, shard_1, ...])"
        )
    items = []
    for position, source in enumerate(reports):
        try:
            items.append(load_report(source))
        except ReportFormatError as exc:
            raise ReportFormatError(f"merge_reports: reports[{position}]: {exc.source}", exc.problems) from exc
    return items


def _count(report: EvaluationReport, key: str) -> int:
    value = _info(report).get(key)
    return value if type(value) is int else 0  # noqa: E721 - not bools


def _warnings(report: EvaluationReport, field: str = "warnings") -> list[str]:
    """The report's ``metadata.heta_nb`` list of run warnings (or of build notes: ``field``)."""
    warnings = _info(report).get(field)
    return [w for w in warnings if isinstance(w, str)] if isinstance(warnings, (list, tuple)) else []


def _unit_kb_names(report: EvaluationReport, run_units: Any) -> list[str]:
    """The KB name of each run unit, in unit order, as a recipe-built run names them."""
    from heta_nb.benchmark.records import BenchmarkRunUnit
    from heta_nb.runner.recipe import unit_knowledge_base_name

    names = []
    for unit in run_units:
        try:
            built = BenchmarkRunUnit(
                unit_id=unit.get("unit_id"),
                document_ids=tuple(unit.get("document_ids") or ()),
                case_ids=tuple(unit.get("case_ids") or ()),
            )
        except (AttributeError, TypeError, ValueError):  # a unit Heta_nb did not write
            continue
        names.append(unit_knowledge_base_name(report.knowledge_base_name, built, len(run_units)))
    return names


def _kb_manifest_list(manifest: Any) -> list[Any]:
    """The KB manifests of one report: Heta's one-manifest or ``knowledge_bases`` shape."""
    plain = thaw(manifest)
    if not isinstance(plain, dict) or not plain:
        return []
    listed = plain.get("knowledge_bases")
    return list(listed) if isinstance(listed, list) and len(plain) == 1 else [plain]


def _merged_kb_manifest(items: list[EvaluationReport], kb_names: list[str]) -> Any:
    """Every KB any shard built (the first copy of each), in run-unit order, in Heta's shape."""
    by_name: dict[str, Any] = {}
    for report in items:
        for kb in _kb_manifest_list(report.knowledge_base_manifest):
            name = kb.get("name") if isinstance(kb, dict) else None
            by_name.setdefault(str(name), kb)
    if len(by_name) <= 1:  # one KB (or none): shard 0's manifest as it is
        for report in items:
            if _kb_manifest_list(report.knowledge_base_manifest):
                return thaw(report.knowledge_base_manifest)
        return thaw(items[0].knowledge_base_manifest)
    rank = {name: i for i, name in enumerate(kb_names)}
    ordered = sorted(by_name, key=lambda name: rank.get(name, len(rank)))  # stable: unknown names last
    return {"knowledge_bases": [by_name[name] for name in ordered]}


def _merged_warnings(lists: list[list[str]], kb_names: list[str]) -> list[str]:
    """The shards' warnings as one run would list them: each once, in an order every shard agrees with.

    Run-level warnings (the lint, before any unit) come first, then each unit's (they
    name its KB), in unit order; ties keep the order of first appearance.
    """
    nodes: list[tuple[str, int]] = []  # (message, occurrence): a message twice in one run stays twice
    after: dict[tuple[str, int], set[tuple[str, int]]] = {}
    for warnings in lists:
        seen: dict[str, int] = {}
        previous = None
        for message in warnings:
            node = (message, seen.get(message, 0))
            seen[message] = node[1] + 1
            if node not in after:
                nodes.append(node)
                after[node] = set()
            if previous is not None:
                after[previous].add(node)
            previous = node
    quoted = [repr(name) for name in kb_names]
    first_seen = {node: i for i, node in enumerate(nodes)}

    def key(node: tuple[str, int]) -> tuple[int, int]:
        unit = next((i for i, name in enumerate(quoted) if name in node[0]), -1)
        return unit, first_seen[node]

    waiting = {node: 0 for node in nodes}
    for node in nodes:
        for later in after[node]:
            waiting[later] += 1
    ready = sorted((node for node in nodes if not waiting[node]), key=key)
    out: list[str] = []
    while ready:
        node = ready.pop(0)
        out.append(node[0])
        for later in after[node]:
            waiting[later] -= 1
            if not waiting[later]:
                ready.append(later)
        ready.sort(key=key)
    if len(out) < len(nodes):  # the shards disagree on the order: keep the rest as first seen
        out.extend(node[0] for node in nodes if waiting[node])
    return out


def _check_coverage(items: list[EvaluationReport], units: dict[str, int]) -> None:
    """Complete shards of one benchmark hold every case position of every unit, each with one case id."""
    positions: dict[tuple[str | None, int], tuple[str, str]] = {}
    for report in items:
        for result in report.case_results:
            index = _case_index(result)
            if index is None:  # not a heta_nb report: nothing to check
                return
            where = (result.unit_id, index)
            known = positions.setdefault(where, (result.case_id, report.report_id))
            if known[0] != result.case_id:
                raise ValueError(
                    f"cannot merge: case {index} of unit {result.unit_id!r} is {known[0]!r} in {known[1]!r} but "
                    f"{result.case_id!r} in {report.report_id!r}: shards of different benchmark versions?"
                )
    by_unit: dict[str | None, set[int]] = {}
    for unit, index in positions:
        by_unit.setdefault(unit, set()).add(index)
    for unit in sorted(by_unit, key=lambda u: units.get(u or "", len(units))):
        missing = sorted(set(range(max(by_unit[unit]) + 1)) - by_unit[unit])
        if missing:
            later = next(
                (
                    r.report_id
                    for r in items
                    for c in r.case_results
                    if c.unit_id == unit and (_case_index(c) or 0) > missing[0]
                ),
                "?",
            )
            raise ValueError(
                f"cannot merge: no shard has case {missing[0]} of unit {unit!r}, yet {later!r} has later cases "
                f"of it ({len(missing)} position(s) missing): shards of different benchmark versions?"
            )


def _status(report: EvaluationReport) -> str:
    info = report.metadata.get("heta_nb")
    status = info.get("status") if isinstance(info, Mapping) else None
    return status if isinstance(status, str) else "complete"


def _info(report: EvaluationReport) -> Mapping[str, Any]:
    info = report.metadata.get("heta_nb")
    return info if isinstance(info, Mapping) else {}


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
    plain = thaw(manifest)
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
    for setting in ("top_k", "query_options", "trace"):  # (older reports lack query_options)
        values = _info(first).get(setting), _info(other).get(setting)
        if None not in values and values[0] != values[1]:
            raise _differs(setting, values[0], values[1], first, other)
    units = thaw(first.metadata.get("run_units")), thaw(other.metadata.get("run_units"))
    if units[0] and units[1] and units[0] != units[1]:
        raise _differs("run_units", units[0], units[1], first, other)
    recipes = thaw(first.recipe_manifest), thaw(other.recipe_manifest)
    if recipes[0] and recipes[1] and recipes[0] != recipes[1]:
        raise _differs("recipe_manifest", recipes[0], recipes[1], first, other)
    # a shard builds only the units it has cases in: compare the KBs both have
    kbs = _kb_manifests(first.knowledge_base_manifest), _kb_manifests(other.knowledge_base_manifest)
    common = [name for name in kbs[0] if name in kbs[1]]
    one_unit = len(first.metadata.get("run_units") or ()) <= 1  # else each unit's KB has its own name
    if not common and one_unit and len(kbs[0]) == len(kbs[1]) == 1:
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
