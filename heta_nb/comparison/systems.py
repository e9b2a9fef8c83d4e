"""The compared systems: which (report, query mode) pairs, their names, and finding one by index or name."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from heta_nb.model.report import EvaluationReport

__all__ = ["System", "baselines_of", "index_of", "name_systems", "resolve_systems", "unique_labels"]


@dataclass(frozen=True)
class System:
    """One compared system: a report evaluated in one query mode."""

    name: str
    report_id: str
    mode: str
    knowledge_base_name: str
    benchmark: str
    """The benchmark key ``name:version:split``."""
    report_index: int
    """Position of the report among ``compare``'s arguments."""


def unique_labels(labels: Sequence[str]) -> list[str]:
    """``labels`` with repeats renamed ``x#2``, ``x#3``... (never clashing with another label).

    Args:
        labels: Report ids or system names, in order.

    Returns:
        The labels, each unique, in the same order.
    """
    taken = set(labels)
    seen: dict[str, int] = {}
    out = []
    for label in labels:
        if label not in seen:
            seen[label] = 1
            out.append(label)
            continue
        count = seen[label]
        while True:
            count += 1
            candidate = f"{label}#{count}"
            if candidate not in taken:
                break
        seen[label] = count
        taken.add(candidate)
        out.append(candidate)
    return out


def resolve_systems(
    loaded: list[EvaluationReport], modes: Sequence[str] | str | None, labels: list[str], found: list[str]
) -> tuple[list[tuple[int, str]], list[str]]:
    """The (report index, mode) of each system, and the modes compared per report.

    Args:
        loaded: The compared reports.
        modes: The ``modes`` argument of :func:`~heta_nb.comparison.compare`.
        labels: Unique labels of the reports (for messages).
        found: Warnings so far; a difference in query modes is appended.

    Returns:
        ``(pairs, modes)``: one (report index, mode) per system, and the modes compared
        (empty when each report's only mode differs: those are compared across modes).

    Raises:
        ValueError: Unknown modes, fewer than two modes of one report, or no shared mode.
    """
    wanted = [modes] if isinstance(modes, str) else None if modes is None else list(dict.fromkeys(modes))
    if len(loaded) == 1:
        report = loaded[0]
        chosen = list(report.modes) if wanted is None else wanted
        unknown = [m for m in chosen if m not in report.modes]
        if unknown:
            raise ValueError(f"report {report.report_id!r} has no mode {unknown}; its modes: {list(report.modes)}")
        if len(chosen) < 2:
            raise ValueError(
                f"report {report.report_id!r} has {'only mode ' + repr(chosen) if chosen else 'no modes'}: "
                "compare() needs two or more modes of one report, or two or more reports"
            )
        return [(0, m) for m in chosen], chosen

    if wanted is not None:
        for label, report in zip(labels, loaded):
            unknown = [m for m in wanted if m not in report.modes]
            if unknown:
                raise ValueError(f"report {label!r} has no mode {unknown}; its modes: {list(report.modes)}")
        return [(i, m) for i in range(len(loaded)) for m in wanted], wanted

    shared = [m for m in loaded[0].modes if all(m in r.modes for r in loaded[1:])]
    described = ", ".join(f"{label!r} has {list(r.modes)}" for label, r in zip(labels, loaded))
    if not shared:
        if all(len(r.modes) == 1 for r in loaded):
            found.append(
                f"different query modes: {described}; each report's only mode is compared against the others, "
                "so differences mix the recipe and the mode"
            )
            return [(i, r.modes[0]) for i, r in enumerate(loaded)], []
        raise ValueError(f"the reports share no query mode ({described}); pick them with modes=[...]")
    if any(len(r.modes) != len(shared) for r in loaded):
        found.append(f"different query modes: {described}; only the shared mode(s) {shared} are compared")
    return [(i, m) for i in range(len(loaded)) for m in shared], shared


def name_systems(
    loaded: list[EvaluationReport],
    pairs: list[tuple[int, str]],
    mode_names: list[str],
    names: Sequence[str] | None,
    labels: list[str],
) -> list[System]:
    """Name each (report, mode) pair.

    Args:
        loaded: The compared reports.
        pairs: One (report index, mode) per system.
        mode_names: The modes compared per report.
        names: The ``names`` argument of :func:`~heta_nb.comparison.compare`.
        labels: Unique labels of the reports.

    Returns:
        One :class:`System` per pair.

    Raises:
        ValueError: A wrong number of names, or repeated names.
    """
    per_report_modes = len(mode_names) > 1 and len(loaded) > 1
    if names is None:
        if len(loaded) == 1:
            chosen = [mode for _, mode in pairs]
        else:
            chosen = [f"{labels[i]}/{mode}" if per_report_modes else labels[i] for i, mode in pairs]
        chosen = unique_labels(chosen)
    else:
        given = [names] if isinstance(names, str) else list(names)
        if len(given) == len(pairs):
            chosen = [str(n) for n in given]
        elif len(loaded) > 1 and len(given) == len(loaded):
            chosen = [f"{given[i]}/{mode}" if per_report_modes else str(given[i]) for i, mode in pairs]
        else:
            raise ValueError(f"names: expected {len(pairs)} names (one per system), got {len(given)}")
        repeated = sorted({n for n in chosen if chosen.count(n) > 1})
        if repeated:
            raise ValueError(f"names must be unique, repeated: {repeated}")
    return [
        System(
            name=name,
            report_id=loaded[i].report_id,
            mode=mode,
            knowledge_base_name=loaded[i].knowledge_base_name,
            benchmark=loaded[i].benchmark.key,
            report_index=i,
        )
        for name, (i, mode) in zip(chosen, pairs)
    ]


def index_of(which: int | str, names: Sequence[str], what: str) -> int:
    """Position of a system given by index or name.

    Args:
        which: An index (negative counts from the end) or a name.
        names: The system names.
        what: What ``which`` is, for messages (``"baseline"``, ``"system"``).

    Returns:
        The index, in ``range(len(names))``.

    Raises:
        ValueError: An unknown name, an index out of range, or neither an int nor a str.
    """
    if isinstance(which, str):
        if which not in names:
            raise ValueError(f"{what} {which!r} is not a system; systems: {list(names)}")
        return list(names).index(which)
    if isinstance(which, bool) or not isinstance(which, (int, np.integer)):
        raise ValueError(f"{what} must be a system index or name, got {which!r}")
    index = int(which)
    if not -len(names) <= index < len(names):
        raise ValueError(f"{what} index {index} out of range for {len(names)} systems")
    return index % len(names)


def baselines_of(
    systems: Sequence[System],
    baseline: int | str,
    *,
    reports: int,
    report_names: Sequence[str],
    paired_by_mode: bool,
) -> tuple[dict[int, int], str]:
    """Each compared system's baseline system, and the name of the baseline.

    Paired by mode (several reports, the default), ``baseline`` names a *report* (its
    index, its label, a name given per report, or one of its systems) and every other
    report's system is compared with the baseline report's system of the same mode.
    Otherwise (one report's modes, or ``across_modes=True``) ``baseline`` is one system
    (index or name) and every other system is compared with it.

    Args:
        systems: The systems, in order.
        baseline: The ``baseline`` argument of :func:`~heta_nb.comparison.compare`.
        reports: How many reports are compared.
        report_names: The name of each report (its label, or the name given for it).
        paired_by_mode: Whether systems are paired mode by mode.

    Returns:
        ``({system: its baseline system}, baseline name)``: the mapping has every
        non-baseline system; the name is the baseline report's when paired by mode
        with several modes, else the baseline system's.

    Raises:
        ValueError: An unknown baseline, or an index out of range.
    """
    names = [s.name for s in systems]
    if not paired_by_mode:
        base = index_of(baseline, names, "baseline")
        return {k: base for k in range(len(systems)) if k != base}, names[base]
    if isinstance(baseline, str) and baseline in names and baseline not in report_names:
        chosen = systems[names.index(baseline)].report_index
    else:
        chosen = index_of(baseline, list(report_names), "baseline report")
        if not 0 <= chosen < reports:  # pragma: no cover - index_of checks the range
            raise ValueError(f"baseline report index {chosen} out of range")
    by_mode = {s.mode: k for k, s in enumerate(systems) if s.report_index == chosen}
    mapping = {k: by_mode[s.mode] for k, s in enumerate(systems) if s.report_index != chosen and s.mode in by_mode}
    modes = {s.mode for s in systems}
    name = report_names[chosen] if len(modes) > 1 else systems[next(iter(by_mode.values()))].name
    return mapping, name
