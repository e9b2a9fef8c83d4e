"""The one pass over a report's results (:func:`scan_report`) and the choice of the worst
results of each mode (:func:`worst_positions`) that the report view lists."""

from __future__ import annotations

import heapq
import math
from array import array
from collections.abc import Mapping, Sequence
from typing import Any

from heta_nb.model import EvaluationReport
from heta_nb.model.summary import MetricCollector, numeric_value
from heta_nb.render.context.formatting import as_mapping
from heta_nb.render.limits import RenderLimits

__all__ = ["ErrorGroups", "ModeScan", "scan_report", "worst_positions"]


class ModeScan:
    """What the single pass keeps of one mode: where its results are, and latencies."""

    __slots__ = ("errors", "latencies", "ok")

    def __init__(self) -> None:
        self.errors: list[int] = []
        self.ok: array[int] = array("q")
        self.latencies: array[float] = array("d")


ErrorGroups = dict[tuple[str, str], list[Any]]
"""``(mode, error type) -> [count, position of the first result, first case ids]``."""


def scan_report(
    report: EvaluationReport, limits: RenderLimits
) -> tuple[MetricCollector, dict[str, ModeScan], ErrorGroups, int]:
    """The one pass over every case result: metric summaries, positions per mode, error groups.

    Only result-level fields are read here; the scores are read once, by the collector.
    """
    data = report.raw
    results = data["case_results"]
    collector = MetricCollector(data["query_modes"])
    scans: dict[str, ModeScan] = {}
    groups: ErrorGroups = {}
    max_ids = limits.max_error_ids
    case_ids: set[str] = set()
    for index, result in enumerate(results):
        collector.add(result)
        mode = result["query_mode"]
        scan = scans.get(mode)
        if scan is None:
            scan = scans[mode] = ModeScan()
        case_ids.add(result["case_id"])
        latency = result["latency_ms"]
        if latency is not None:
            scan.latencies.append(latency)
        error = result["error"]
        if error is None:
            scan.ok.append(index)
            continue
        scan.errors.append(index)
        key = (mode, error["error_type"])
        group = groups.get(key)
        if group is None:
            groups[key] = [1, index, [result["case_id"]]]
        else:
            group[0] += 1
            if len(group[2]) < max_ids:
                group[2].append(result["case_id"])
    return collector, scans, groups, len(case_ids)


def _value_of(result: Mapping[str, Any], metric: str) -> tuple[float | None, bool]:
    """The numeric value of ``metric`` in one result (None if absent, text or NaN), and if it was skipped."""
    for score in result["scores"]:
        if score["name"] == metric:
            value = numeric_value(score["value"])
            skipped = as_mapping(score.get("metadata")).get("skipped") is True
            return (value if value is not None and value == value else None), skipped
    return None, False


def worst_positions(
    results: list[dict[str, Any]],
    scan: ModeScan,
    metric: str | None,
    values: Sequence[float],
    skipped: Sequence[int],
    count: int,
    all_finite: bool,
) -> list[int]:
    """Positions of the ``count`` worst results of a mode, in display order.

    Errors come first (report order), then results without a usable value of
    ``metric`` (missing, text or NaN), then the lowest values, then skipped scores
    (nothing to score: not a failure); ties keep report order. ``values`` and
    ``skipped`` are the collector's for ``metric`` in this mode; ``all_finite`` says
    none of the values is NaN or infinite.
    """
    chosen = scan.errors[:count]
    if len(chosen) >= count:
        return chosen
    wanted = count - len(chosen)
    ok = scan.ok
    if metric is None:
        return chosen + list(ok[:wanted])
    if len(values) == len(ok) and values and all_finite:
        # The usual case: every successful result has exactly one value, so the
        # k-th value belongs to the k-th successful result.
        keys = values
        if skipped:
            keys = array("d", values)
            for position in skipped:
                keys[position] = math.inf
        best = heapq.nsmallest(wanted, range(len(keys)), key=keys.__getitem__)
        picked = [ok[k] for k in best]
        if all(_value_of(results[i], metric)[0] == values[k] for i, k in zip(picked, best)):
            return chosen + picked
    missing: list[int] = []
    entries: list[tuple[float, int]] = []
    for index in ok:
        value, was_skipped = _value_of(results[index], metric)
        if value is None:
            missing.append(index)
        else:
            entries.append((math.inf if was_skipped else value, index))
    chosen.extend(missing[:wanted])
    if len(chosen) < count:
        chosen.extend(index for _, index in heapq.nsmallest(count - len(chosen), entries))
    return chosen
