"""Collecting each system's scores in one pass per report, and aligning the cases across systems."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from heta_nb.comparison.overlap import MetricOverlap, Overlap, SystemOverlap
from heta_nb.comparison.systems import System
from heta_nb.model.collect import ERROR
from heta_nb.model.report import EvaluationReport

__all__ = ["Aligned", "align_scores"]


class _Slot:
    """What one system (a report's mode) contributes: its results, first of each case."""

    __slots__ = ("case_codes", "case_ids", "duplicates", "errors", "failed", "queries", "scores", "unit_codes", "units")

    def __init__(self) -> None:
        self.case_codes = np.zeros(0, dtype=np.intp)  # codes into the report's columns.case_ids
        self.unit_codes = np.zeros(0, dtype=np.intp)  # codes into the report's columns.units
        self.case_ids = np.zeros(0, dtype=object)
        self.units = np.zeros(0, dtype=object)  # str or None
        self.queries = np.zeros(0, dtype=object)
        self.errors = np.zeros(0, dtype=np.intp)
        # metric -> (positions in keys, numeric values, skipped flags); first-seen order
        self.scores: dict[str, tuple[np.ndarray, np.ndarray, np.ndarray]] = {}
        self.duplicates = 0
        self.failed: set[str] = set()  # metrics with no numeric score and evaluator errors only


def _collect(report: EvaluationReport, mode: str) -> _Slot:
    """One system's results from ``report.columns``: the first result of each (unit, case)
    of ``mode``, its errors, and per metric its numeric scores (text ones are only named)."""
    columns = report.columns
    slot = _Slot()
    rows = columns.mode_rows(mode)
    if not rows.size:
        return slot
    # a missing unit and an empty one are the same key ("")
    unit_group = np.array([columns.units.index(unit or None) if unit else -1 for unit in columns.units], np.int64)
    key = (unit_group[columns.unit[rows]] + 1) * max(1, columns.case_ids.size) + columns.case[rows]
    _, first = np.unique(key, return_index=True)
    kept = rows[np.sort(first)]
    slot.duplicates = int(rows.size - kept.size)
    slot.case_codes = columns.case[kept].astype(np.intp)
    slot.unit_codes = columns.unit[kept].astype(np.intp)
    slot.case_ids = columns.case_ids[slot.case_codes]
    slot.units = _objects(columns.units)[slot.unit_codes] if columns.units else np.full(kept.size, None, object)
    slot.queries = columns.queries[kept]
    ok = columns.ok[kept]
    slot.errors = np.flatnonzero(~ok)
    position = np.full(columns.n, -1, dtype=np.intp)
    position[kept[ok]] = np.flatnonzero(ok)
    firsts: list[tuple[int, int, str]] = []
    for name in columns.metrics:
        column = columns.metric(name)
        where = position[column.rows]
        here = where >= 0
        if not here.any():
            continue
        entries = np.flatnonzero(here)
        firsts.append((int(column.rows[entries[0]]), int(column.positions[entries[0]]), name))
        numeric = entries[column.numeric[entries]]
        if not numeric.size and bool(np.all(column.kinds[entries] == ERROR)):
            slot.failed.add(name)
        slot.scores[name] = (where[numeric], column.values[numeric], column.skipped[numeric])
    slot.scores = {name: slot.scores[name] for _, _, name in sorted(firsts)}
    return slot


@dataclass
class Aligned:
    """Aligned arrays of a comparison (internal).

    ``mask[k, j]`` marks the cases system ``k`` is compared on for metric ``j``: those
    where it and its baseline both have a usable score. A pair's cases depend on the two
    systems alone, so the same pair gets the same numbers whatever else is compared
    (``compare``, ``check`` and the leaderboard agree). A baseline system's row marks
    its own usable cases.
    """

    metrics: tuple[str, ...]
    values: np.ndarray  # (systems, metrics, cases) float64, NaN = no usable score
    mask: np.ndarray  # (systems, metrics, cases) bool: compared with the system's baseline
    case_ids: list[str]
    units: list[str | None]
    queries: list[str]
    overlap: Overlap


def align_scores(
    loaded: list[EvaluationReport],
    systems: list[System],
    base_of: dict[int, int],
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
        base_of: Each compared system's baseline system (the first baseline's case order comes first).
        metrics: The ``metrics`` argument of :func:`~heta_nb.comparison.compare`.
        include_skipped: Count scores marked skipped.
        found: Warnings so far; alignment warnings are appended.
        notes: Notes so far; metrics without numeric scores are noted.

    Returns:
        The aligned scores and the case overlap.

    Raises:
        ValueError: Unknown metrics, or no numeric metric in common.
    """
    slots = [_collect(loaded[system.report_index], system.mode) for system in systems]
    base = min(set(range(len(systems))) - set(base_of)) if len(base_of) < len(systems) else 0

    # Global codes: a case id (and a unit, missing = "") gets one integer across the reports.
    case_codes: dict[str, int] = {}
    unit_codes: dict[str, int] = {}
    per_report: dict[int, tuple[np.ndarray, np.ndarray]] = {}
    for system in systems:
        if system.report_index not in per_report:
            columns = loaded[system.report_index].columns
            case_gid = [case_codes.setdefault(c, len(case_codes)) for c in columns.case_ids.tolist()]
            unit_gid = [unit_codes.setdefault(u or "", len(unit_codes)) for u in columns.units]
            per_report[system.report_index] = (np.array(case_gid, np.int64), np.array(unit_gid, np.int64))
    slot_cases = [per_report[s.report_index][0][slot.case_codes] for s, slot in zip(systems, slots)]
    slot_units = [per_report[s.report_index][1][slot.unit_codes] for s, slot in zip(systems, slots)]

    # Match by (unit, case_id); by case_id alone when the run units differ but case ids are unique.
    by_case = False
    unit_names = list(unit_codes)
    unit_sets = [frozenset(unit_names[u] for u in np.unique(codes).tolist()) for codes in slot_units]
    if len(set(unit_sets)) > 1 and all(np.unique(codes).size == codes.size for codes in slot_cases):
        by_case = True
        described = ", ".join(f"{s.name!r}: {sorted(u)}" for s, u in zip(systems, unit_sets))
        found.append(f"benchmark run units differ ({described}); cases are matched by case_id alone")

    order = [base, *(k for k in range(len(systems)) if k != base)]
    width = max(1, len(case_codes))
    keys = np.concatenate(
        [slot_cases[k] if by_case else slot_units[k] * width + slot_cases[k] for k in order] or [np.zeros(0, np.int64)]
    )
    _, first, inverse = np.unique(keys, return_index=True, return_inverse=True)
    seen = np.argsort(first, kind="stable")  # the cases in first-seen order (the baseline's first)
    rank = np.empty(seen.size, dtype=np.intp)
    rank[seen] = np.arange(seen.size)
    position = rank[inverse.reshape(-1)]
    taken = first[seen]
    case_ids: list[str] = _concat([slots[k].case_ids for k in order])[taken].tolist()
    units: list[str | None] = _concat([slots[k].units for k in order])[taken].tolist()
    queries: list[str] = _concat([slots[k].queries for k in order])[taken].tolist()
    maps: list[np.ndarray] = [np.empty(0, dtype=np.intp)] * len(systems)
    start = 0
    for k in order:
        maps[k] = position[start : start + slots[k].case_codes.size]
        start += slots[k].case_codes.size
    n_systems, n_cases = len(systems), len(case_ids)

    chosen = _choose_metrics(systems, slots, metrics, base, found, notes)
    values = np.full((n_systems, len(chosen), n_cases), np.nan)
    skipped = np.zeros((n_systems, len(chosen), n_cases), dtype=bool)
    present = np.zeros((n_systems, n_cases), dtype=bool)
    errored = np.zeros((n_systems, n_cases), dtype=bool)
    for k, slot in enumerate(slots):
        present[k, maps[k]] = True
        errored[k, maps[k][slot.errors]] = True
        for j, metric in enumerate(chosen):
            entry = slot.scores.get(metric)
            if entry is not None and entry[0].size:
                where = maps[k][entry[0]]
                values[k, j, where] = entry[1]
                skipped[k, j, where] = entry[2]
    finite = np.isfinite(values)
    values[~finite] = np.nan
    if not include_skipped:
        values[skipped] = np.nan
    usable = ~np.isnan(values)
    mask = usable.copy()
    for k, b in base_of.items():
        mask[k] &= usable[b]
    paired = np.zeros((len(chosen), n_cases), dtype=bool)  # compared in some pair
    for k in base_of:
        paired |= mask[k]

    all_present = present.all(axis=0)
    partner_present = np.zeros_like(present)  # the system's cases its pair partner(s) have too
    for k, b in base_of.items():
        partner_present[k] = present[b]
        partner_present[b] |= present[k]
    answered = (present & ~errored).all(axis=0)
    per_system = []
    for k, system in enumerate(systems):
        ok = present[k] & ~errored[k]
        per_metric = {
            metric: MetricOverlap(
                usable=int(np.count_nonzero(usable[k, j])),
                used=int(np.count_nonzero(mask[k, j] if k in base_of else paired[j] & usable[k, j])),
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
                unmatched=int(np.count_nonzero(present[k] & ~partner_present[k])),
                duplicates=slots[k].duplicates,
                metrics=per_metric,
            )
        )
    overlap = Overlap(
        key="case_id" if by_case else "unit, case_id",
        cases=n_cases,
        common=int(np.count_nonzero(all_present)),
        answered=int(np.count_nonzero(answered)),
        aligned={metric: int(np.count_nonzero(paired[j])) for j, metric in enumerate(chosen)},
        systems=tuple(per_system),
    )
    return Aligned(chosen, values, mask, case_ids, units, queries, overlap)


def _objects(items: Sequence[Any]) -> np.ndarray:
    out = np.empty(len(items), dtype=object)
    out[:] = list(items)
    return out


def _concat(arrays: list[np.ndarray]) -> np.ndarray:
    return np.concatenate(arrays) if arrays else np.zeros(0, dtype=object)


def _choose_metrics(
    systems: list[System],
    slots: list[_Slot],
    metrics: Sequence[str] | str | None,
    base: int,
    found: list[str],
    notes: list[str],
) -> tuple[str, ...]:
    """The metrics compared: given ones (checked) or every numeric metric all systems share."""
    numeric = [{m for m, entry in slot.scores.items() if entry[0].size} for slot in slots]
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
        failing = [systems[k].name for k, slot in enumerate(slots) if metric in slot.failed]
        if failing:
            found.append(
                f"metric {metric!r} is not compared: its scores are evaluator errors in {failing}"
                + (f" (numbers only in {having})" if having else "")
            )
        elif having:
            found.append(f"metric {metric!r} has numeric scores only in {having}; it is not compared")
        else:
            notes.append(f"metric {metric!r} has no numeric scores (text values only); it is not compared")
    if not chosen:
        raise ValueError("the systems have no numeric metric in common (every case errored, or different evaluators)")
    return chosen
