"""Collecting each system's scores in one pass per report, and aligning the cases across systems."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from heta_nb.comparison.overlap import MetricOverlap, Overlap, SystemOverlap
from heta_nb.comparison.systems import System
from heta_nb.model.report import EvaluationReport
from heta_nb.model.summary import numeric_value

__all__ = ["Aligned", "align_scores"]


class _Slot:
    """What one pass over a report collected for one system (its mode)."""

    __slots__ = ("duplicates", "errors", "keys", "queries", "scores", "seen", "units")

    def __init__(self) -> None:
        self.keys: list[tuple[str, str]] = []
        self.units: list[str | None] = []
        self.queries: list[str] = []
        self.seen: dict[tuple[str, str], int] = {}
        self.errors: list[int] = []
        # metric -> (positions in keys, numeric values, skipped flags)
        self.scores: dict[str, tuple[list[int], list[float], list[bool]]] = {}
        self.duplicates = 0


def _collect(report: EvaluationReport, slots: Mapping[str, _Slot]) -> None:
    """One pass over ``report``'s case results, filling the slot of each result's mode."""
    for result in report.raw["case_results"]:
        slot = slots.get(result["query_mode"])
        if slot is None:
            continue
        unit = result["metadata"].get("benchmark_run_unit")
        unit = unit if isinstance(unit, str) else None
        key = (unit or "", result["case_id"])
        if key in slot.seen:
            slot.duplicates += 1
            continue
        pos = len(slot.keys)
        slot.seen[key] = pos
        slot.keys.append(key)
        slot.units.append(unit)
        slot.queries.append(result["query"])
        if result["error"] is not None:
            slot.errors.append(pos)
            continue
        for score in result["scores"]:
            name = score["name"]
            entry = slot.scores.get(name)
            if entry is None:
                entry = slot.scores[name] = ([], [], [])
            number = numeric_value(score["value"])
            if number is None:  # text: counted as unscored in align_scores
                continue
            entry[0].append(pos)
            entry[1].append(number)  # non-finite values become NaN in align_scores
            entry[2].append(score["metadata"].get("skipped") is True)


@dataclass
class Aligned:
    """Aligned arrays of a comparison (internal)."""

    metrics: tuple[str, ...]
    values: np.ndarray  # (systems, metrics, cases) float64, NaN = no usable score
    mask: np.ndarray  # (metrics, cases) bool: compared
    case_ids: list[str]
    units: list[str | None]
    queries: list[str]
    overlap: Overlap


def align_scores(
    loaded: list[EvaluationReport],
    systems: list[System],
    base: int,
    metrics: Sequence[str] | str | None,
    include_skipped: bool,
    found: list[str],
    notes: list[str],
) -> Aligned:
    """Collect every system's scores in one pass per report and align them by case.

    See :func:`~heta_nb.comparison.compare` for the rules (what is matched, what is left out).

    Args:
        loaded: The compared reports.
        systems: The systems, each a (report, mode).
        base: Index of the baseline system (its case order comes first).
        metrics: The ``metrics`` argument of :func:`~heta_nb.comparison.compare`.
        include_skipped: Count scores marked skipped.
        found: Warnings so far; alignment warnings are appended.
        notes: Notes so far; metrics without numeric scores are noted.

    Returns:
        The aligned scores and the case overlap.

    Raises:
        ValueError: Unknown metrics, or no numeric metric in common.
    """
    slots = [_Slot() for _ in systems]
    for index, report in enumerate(loaded):
        _collect(report, {s.mode: slots[k] for k, s in enumerate(systems) if s.report_index == index})

    # Match by (unit, case_id); by case_id alone when the run units differ but case ids are unique.
    by_case = False
    unit_sets = [frozenset(u for u, _ in slot.keys) for slot in slots]
    if len(set(unit_sets)) > 1 and all(len({c for _, c in slot.keys}) == len(slot.keys) for slot in slots):
        by_case = True
        described = ", ".join(f"{s.name!r}: {sorted(u)}" for s, u in zip(systems, unit_sets))
        found.append(f"benchmark run units differ ({described}); cases are matched by case_id alone")

    order = [base, *(k for k in range(len(systems)) if k != base)]
    index_of: dict[Any, int] = {}
    case_ids: list[str] = []
    units: list[str | None] = []
    queries: list[str] = []
    maps: list[np.ndarray] = [np.empty(0, dtype=np.intp)] * len(systems)
    for k in order:
        slot = slots[k]
        positions = np.empty(len(slot.keys), dtype=np.intp)
        for i, key in enumerate(slot.keys):
            match = key[1] if by_case else key
            g = index_of.get(match)
            if g is None:
                g = index_of[match] = len(case_ids)
                case_ids.append(key[1])
                units.append(slot.units[i])
                queries.append(slot.queries[i])
            positions[i] = g
        maps[k] = positions
    n_systems, n_cases = len(systems), len(case_ids)

    chosen = _choose_metrics(systems, slots, metrics, base, found, notes)
    values = np.full((n_systems, len(chosen), n_cases), np.nan)
    skipped = np.zeros((n_systems, len(chosen), n_cases), dtype=bool)
    present = np.zeros((n_systems, n_cases), dtype=bool)
    errored = np.zeros((n_systems, n_cases), dtype=bool)
    for k, slot in enumerate(slots):
        present[k, maps[k]] = True
        errored[k, maps[k][np.asarray(slot.errors, dtype=np.intp)]] = True
        for j, metric in enumerate(chosen):
            entry = slot.scores.get(metric)
            if entry:
                where = maps[k][np.asarray(entry[0], dtype=np.intp)]
                values[k, j, where] = entry[1]
                skipped[k, j, where] = entry[2]
    finite = np.isfinite(values)
    values[~finite] = np.nan
    if not include_skipped:
        values[skipped] = np.nan
    usable = ~np.isnan(values)
    mask = usable.all(axis=0)

    all_present = present.all(axis=0)
    answered = (present & ~errored).all(axis=0)
    per_system = []
    for k, system in enumerate(systems):
        ok = present[k] & ~errored[k]
        per_metric = {
            metric: MetricOverlap(
                usable=int(np.count_nonzero(usable[k, j])),
                used=int(np.count_nonzero(mask[j])),
                skipped=int(np.count_nonzero(skipped[k, j] & finite[k, j])),
                unscored=int(np.count_nonzero(ok & ~finite[k, j])),
            )
            for j, metric in enumerate(chosen)
        }
        cases = int(np.count_nonzero(present[k]))
        per_system.append(
            SystemOverlap(
                name=system.name,
                cases=cases,
                errors=int(np.count_nonzero(errored[k])),
                missing=n_cases - cases,
                unmatched=int(np.count_nonzero(present[k] & ~all_present)),
                duplicates=slots[k].duplicates,
                metrics=per_metric,
            )
        )
    overlap = Overlap(
        key="case_id" if by_case else "unit, case_id",
        cases=n_cases,
        common=int(np.count_nonzero(all_present)),
        answered=int(np.count_nonzero(answered)),
        aligned={metric: int(np.count_nonzero(mask[j])) for j, metric in enumerate(chosen)},
        systems=tuple(per_system),
    )
    return Aligned(chosen, values, mask, case_ids, units, queries, overlap)


def _choose_metrics(
    systems: list[System],
    slots: list[_Slot],
    metrics: Sequence[str] | str | None,
    base: int,
    found: list[str],
    notes: list[str],
) -> tuple[str, ...]:
    """The metrics compared: given ones (checked) or every numeric metric all systems share."""
    numeric = [{m for m, entry in slot.scores.items() if entry[0]} for slot in slots]
    # A system with no numeric score at all (every case errored) does not narrow the choice.
    scoring = [k for k, names in enumerate(numeric) if names]
    if metrics is not None:
        wanted = [metrics] if isinstance(metrics, str) else list(dict.fromkeys(metrics))
        for metric in wanted:
            lacking = [systems[k].name for k in scoring if metric not in numeric[k]]
            if lacking or not scoring:
                raise ValueError(f"metric {metric!r} has no numeric scores in {lacking or 'any system'}")
        if not wanted:
            raise ValueError("metrics must name at least one metric")
        return tuple(wanted)
    order = [base, *(k for k in range(len(systems)) if k != base)]
    seen: dict[str, None] = {}
    for k in order:
        seen.update(dict.fromkeys(slots[k].scores))
    chosen = tuple(m for m in seen if scoring and all(m in numeric[k] for k in scoring))
    for metric in seen:
        if metric in chosen:
            continue
        having = [systems[k].name for k in scoring if metric in numeric[k]]
        if having:
            found.append(f"metric {metric!r} has numeric scores only in {having}; it is not compared")
        else:
            notes.append(f"metric {metric!r} has no numeric scores (text values only); it is not compared")
    if not chosen:
        raise ValueError("the systems have no numeric metric in common (every case errored, or different evaluators)")
    return chosen
