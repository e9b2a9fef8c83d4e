"""Paired comparison of recipes (reports) or query modes scored on the same benchmark cases.

``compare(*reports)`` lines up the per-case scores of several *systems* and tests each
against a baseline system, case by case. A system is one report × one query mode:

* several reports (recipes) on one benchmark: every report × every query mode they all
  share (or the ``modes`` chosen); ``compare(recipe_a, recipe_b)``;
* several modes of one report: ``compare(report)`` or ``compare(report, modes=[...])``.

**Alignment.** Within a compared mode, case results are matched by
``(benchmark run unit, case_id)`` (by ``case_id`` alone when the reports' run units differ
but each case id is unique, with a warning). A case counts for a metric only when *every*
system has a usable score for it: a finite number or a bool (1.0/0.0). Left out, and
counted per system in :attr:`Comparison.overlap`:

* cases some system has no result for (different case sets);
* cases some system errored on (errors have no scores; leaving them out is the only
  paired choice, but it can flatter a system that fails on hard cases, hence a warning);
* scores marked ``metadata.skipped`` (the evaluator had no gold data; Heta averages them
  in as 0), unless ``include_skipped=True``;
* text scores (an evaluator error is recorded as ``"error"``), non-finite numbers and
  missing scores (left out for every system like errors, hence a warning).

The aligned set is the same for every system of a metric, so all rows of a metric share
``n`` and the baseline mean. Anything that makes the systems less comparable (different
benchmark name/version/split, case sets, query modes, evaluators or ``top_k``, corpus
documents, errors, incomplete or sharded reports) is reported in plain words in
:attr:`Comparison.warnings` and issued as :class:`HetaComparisonWarning`; never silently.
Remarks that do not threaten the comparison (skipped scores left out or counted, text-only
metrics) go to :attr:`Comparison.notes`.

**Statistics.** For each non-baseline system and metric, the per-case deltas
``system - baseline`` go to :func:`heta_nb.stats.paired.paired_test`: a two-sided paired
sign-flip permutation test of "mean delta = 0" (exact when few cases differ), a paired
bootstrap expanded-percentile CI of the mean delta, and win/tie/loss counts (``|delta| <=
tie_tolerance`` counts as a tie; the tolerance changes the counts only). Ties stay in
``n`` and the mean; a zero delta flips to itself, so it cannot move the test.
Every test uses the same ``seed``: a test depends only on its two aligned score arrays
(adding a system changes it only by narrowing the aligned cases), and equal inputs give
bit-identical results.

**Multiple comparisons.** The family corrected is *every (system, metric) test against
the baseline in this comparison*: ``(systems - 1) × metrics`` tests, Holm–Bonferroni
adjusted together (with two systems this is the family of metrics; a test without
aligned cases has no p-value and is not counted). Holm controls the
family-wise error rate under any dependence between the tests (metrics of one case are
strongly correlated). ``significant`` and the ``verdict`` use the adjusted p-value at
``alpha``; confidence intervals are per comparison, not adjusted. To test one primary
metric without paying for the others, pass ``metrics=[...]``. Only comparisons against
the baseline are tested, not every pair. Every metric is taken as higher-is-better.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, Literal

import numpy as np

from heta_nb.model.io import load_report
from heta_nb.model.record import RichDisplay
from heta_nb.model.report import EvaluationReport
from heta_nb.model.summary import as_float, numeric_value
from heta_nb.stats.paired import PairedTest, holm, paired_test

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd
    from matplotlib.axes import Axes

__all__ = [
    "Comparison",
    "HetaComparisonWarning",
    "MetricOverlap",
    "Overlap",
    "System",
    "SystemOverlap",
    "compare",
]

SUMMARY_COLUMNS = (
    "system",
    "metric",
    "baseline",
    "n",
    "mean",
    "baseline_mean",
    "mean_diff",
    "ci_low",
    "ci_high",
    "p_value",
    "p_adjusted",
    "wins",
    "ties",
    "losses",
    "significant",
    "verdict",
)
"""Columns of :meth:`Comparison.summary_frame` (and keys of :meth:`Comparison.summary_rows`)."""


class HetaComparisonWarning(UserWarning):
    """The compared systems are not fully comparable (see :attr:`Comparison.warnings`)."""


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


@dataclass(frozen=True)
class MetricOverlap:
    """How one system's scores of one metric fed the comparison."""

    usable: int
    """Cases with a usable score (finite number or bool; skipped ones only if included)."""
    used: int
    """Usable cases that every other system could also be compared on (the aligned n)."""
    skipped: int
    """Scores marked ``metadata.skipped`` (left out unless ``include_skipped=True``)."""
    unscored: int
    """Answered cases without a numeric score for the metric (missing, text, NaN)."""

    @property
    def dropped(self) -> int:
        """Usable scores left out because another system had none for that case."""
        return self.usable - self.used


@dataclass(frozen=True)
class SystemOverlap:
    """Case counts of one system."""

    name: str
    cases: int
    """Case results of this system (its report × mode)."""
    errors: int
    """Of those, how many errored (left out for every system)."""
    missing: int
    """Cases some other system has but this one has no result for."""
    unmatched: int
    """Cases of this system that some other system lacks (left out)."""
    duplicates: int
    """Repeated results for the same case (only the first is used)."""
    metrics: Mapping[str, MetricOverlap] = field(default_factory=dict)


@dataclass(frozen=True)
class Overlap:
    """The case overlap the comparison used."""

    key: str
    """What cases are matched by: ``"unit, case_id"`` or ``"case_id"``."""
    cases: int
    """Distinct cases over all systems."""
    common: int
    """Cases every system has a result for (errored or not)."""
    answered: int
    """Cases every system answered without an error."""
    aligned: Mapping[str, int]
    """Per metric, the cases actually compared (usable score in every system)."""
    systems: tuple[SystemOverlap, ...]

    @property
    def only_in_some(self) -> int:
        """Cases missing from at least one system."""
        return self.cases - self.common

    def to_dict(self) -> dict[str, Any]:
        """Plain data (dicts, lists, ints) for templates and JSON."""
        return {
            "key": self.key,
            "cases": self.cases,
            "common": self.common,
            "only_in_some": self.only_in_some,
            "answered": self.answered,
            "aligned": dict(self.aligned),
            "systems": [
                {
                    "name": s.name,
                    "cases": s.cases,
                    "errors": s.errors,
                    "missing": s.missing,
                    "unmatched": s.unmatched,
                    "duplicates": s.duplicates,
                    "metrics": {
                        m: {
                            "usable": o.usable,
                            "used": o.used,
                            "dropped": o.dropped,
                            "skipped": o.skipped,
                            "unscored": o.unscored,
                        }
                        for m, o in s.metrics.items()
                    },
                }
                for s in self.systems
            ],
        }


# --- building ------------------------------------------------------------------------------


def compare(
    *reports: Any,
    names: Sequence[str] | None = None,
    metrics: Sequence[str] | str | None = None,
    modes: Sequence[str] | str | None = None,
    baseline: int | str = 0,
    resamples: int = 10_000,
    confidence: float = 0.95,
    seed: int | None = 0,
    include_skipped: bool = False,
    alpha: float = 0.05,
    tie_tolerance: float = 1e-9,
    correction: Literal["holm", "none"] = "holm",
) -> Comparison:
    """Compare recipes (reports) or query modes case by case against a baseline.

    Args:
        *reports: Two or more reports of one benchmark (recipes), or one report with two
            or more modes. Each may be an ``EvaluationReport`` or anything
            :func:`heta_nb.load_report` accepts; a single list of them works too.
        names: System names. Default: report ids (``report_id/mode`` when several modes
            are compared per report), or the modes within one report; duplicates get
            ``#2``, ``#3``. With several reports, one name per report is also accepted.
        metrics: Metrics to compare. Default: every metric with numeric scores in all
            systems (a system that errored on every case does not narrow the choice).
        modes: Query modes to compare. Default: with one report, all of its modes; with
            several, the modes every report has.
        baseline: Index or name of the baseline system; deltas are ``system - baseline``.
        resamples: Bootstrap resamples, and permutation resamples when not exact.
        confidence: Confidence level of the intervals.
        seed: Seed of every test (``None``: fresh entropy, kept in ``Comparison.seed``).
        include_skipped: Count scores marked skipped (as the 0.0/False Heta recorded).
        alpha: Significance level for ``significant`` and the verdicts (after correction).
        tie_tolerance: ``|delta| <= tie_tolerance`` counts as a tie in wins/ties/losses.
        correction: ``"holm"`` (over every system × metric test) or ``"none"``.

    Returns:
        The :class:`Comparison`.

    Raises:
        ValueError: Fewer than two systems, unknown modes, metrics or baseline, bad names,
            or no numeric metric in common.
    """
    items = reports[0] if len(reports) == 1 and isinstance(reports[0], (list, tuple)) else reports
    loaded = [load_report(item) for item in items]
    if not loaded:
        raise ValueError("compare() needs two or more reports, or one report with two or more modes")
    if correction not in ("holm", "none"):
        raise ValueError(f"correction must be 'holm' or 'none', got {correction!r}")
    if not 0.0 < alpha < 1.0:
        raise ValueError(f"alpha must be in (0, 1), got {alpha!r}")
    if seed is None:
        seed = int(np.random.SeedSequence().entropy)  # type: ignore[arg-type]

    found: list[str] = []
    report_labels = _unique([r.report_id for r in loaded])
    pairs, mode_names = _resolve_systems(loaded, modes, report_labels, found)
    if len(pairs) < 2:
        raise ValueError(f"compare() needs two or more systems (reports × modes), got {len(pairs)}")
    systems = _name_systems(loaded, pairs, mode_names, names, report_labels)
    base = _index_of(baseline, [s.name for s in systems], "baseline")

    notes: list[str] = []
    aligned = _align(loaded, systems, base, metrics, include_skipped, found, notes)
    notes.extend(_skipped_notes(aligned.overlap, include_skipped))
    found[:0] = _completeness_warnings(loaded, report_labels)
    if len(loaded) > 1:
        found[:0] = _report_warnings(loaded, report_labels, aligned.overlap)
    found.extend(_overlap_warnings(aligned.overlap))

    tests: dict[tuple[int, int], PairedTest] = {}
    for j in range(len(aligned.metrics)):
        mask = aligned.mask[j]
        a = aligned.values[base, j, mask]
        for s in range(len(systems)):
            if s != base:
                tests[(s, j)] = paired_test(
                    a,
                    aligned.values[s, j, mask],
                    resamples=resamples,
                    confidence=confidence,
                    seed=seed,
                    tie_tolerance=tie_tolerance,
                )
    if correction == "holm":
        keys = list(tests)
        adjusted = holm([tests[k].p_value for k in keys])
        tests = {k: replace(tests[k], p_value_adjusted=p) for k, p in zip(keys, adjusted)}
    notes.extend(_interval_notes(tests, [s.name for s in systems], aligned.metrics, alpha, confidence, correction))

    for message in found:
        warnings.warn(message, HetaComparisonWarning, stacklevel=2)
    return Comparison(
        systems=systems,
        baseline=base,
        aligned=aligned,
        tests=tests,
        warnings=found,
        notes=notes,
        reports=tuple(loaded),
        arguments={
            "names": list(names) if names is not None else None,
            "metrics": [metrics] if isinstance(metrics, str) else (list(metrics) if metrics is not None else None),
            "modes": [modes] if isinstance(modes, str) else (list(modes) if modes is not None else None),
            "baseline": baseline,
            "resamples": int(resamples),
            "include_skipped": bool(include_skipped),
        },
        settings={
            "resamples": int(resamples),
            "confidence": float(confidence),
            "seed": seed,
            "alpha": float(alpha),
            "tie_tolerance": float(tie_tolerance),
            "correction": correction,
            "include_skipped": bool(include_skipped),
        },
    )


def _unique(labels: Sequence[str]) -> list[str]:
    """``labels`` with repeats renamed ``x#2``, ``x#3``... (never clashing with another label)."""
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


def _resolve_systems(
    loaded: list[EvaluationReport], modes: Sequence[str] | str | None, labels: list[str], found: list[str]
) -> tuple[list[tuple[int, str]], list[str]]:
    """The (report index, mode) of each system, and the modes compared per report."""
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


def _name_systems(
    loaded: list[EvaluationReport],
    pairs: list[tuple[int, str]],
    mode_names: list[str],
    names: Sequence[str] | None,
    labels: list[str],
) -> list[System]:
    """Name each (report, mode) pair."""
    per_report_modes = len(mode_names) > 1 and len(loaded) > 1
    if names is None:
        if len(loaded) == 1:
            chosen = [mode for _, mode in pairs]
        else:
            chosen = [f"{labels[i]}/{mode}" if per_report_modes else labels[i] for i, mode in pairs]
        chosen = _unique(chosen)
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


def _index_of(which: int | str, names: Sequence[str], what: str) -> int:
    """Position of a system given by index or name."""
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
            value = score["value"]
            kind = type(value)
            if kind is float:
                number = value
            elif kind is int:
                number = as_float(value)
            elif kind is bool:
                number = 1.0 if value else 0.0
            else:
                converted = numeric_value(value)
                if converted is None:  # text: counted as unscored in _align
                    continue
                number = converted
            entry[0].append(pos)
            entry[1].append(number)  # non-finite values become NaN in _align
            entry[2].append(score["metadata"].get("skipped") is True)


@dataclass
class _Aligned:
    """Aligned arrays of a comparison (internal)."""

    metrics: tuple[str, ...]
    values: np.ndarray  # (systems, metrics, cases) float64, NaN = no usable score
    mask: np.ndarray  # (metrics, cases) bool: compared
    case_ids: list[str]
    units: list[str | None]
    queries: list[str]
    overlap: Overlap


def _align(
    loaded: list[EvaluationReport],
    systems: list[System],
    base: int,
    metrics: Sequence[str] | str | None,
    include_skipped: bool,
    found: list[str],
    notes: list[str],
) -> _Aligned:
    """Collect every system's scores in one pass per report and align them by case."""
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
    return _Aligned(chosen, values, mask, case_ids, units, queries, overlap)


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


def _report_warnings(loaded: list[EvaluationReport], labels: list[str], overlap: Overlap) -> list[str]:
    """Differences between the compared reports: benchmark, corpus, evaluator settings, completeness."""
    out = []
    manifests = [r.benchmark for r in loaded]
    differing = [f for f in ("name", "version", "split") if len({getattr(m, f) for m in manifests}) > 1]
    if differing:
        described = ", ".join(f"{label!r} ran {m.key}" for label, m in zip(labels, manifests))
        out.append(
            f"benchmarks differ in {'/'.join(differing)}: {described}; compared on the {overlap.common} case(s) "
            "every system has (matched by case id; check those cases mean the same in each)"
        )

    doc_keys = [r.metadata.get("benchmark_document_keys") for r in loaded]
    if all(isinstance(k, tuple) and k for k in doc_keys):
        sets = [frozenset(k) for k in doc_keys]  # type: ignore[arg-type]
        if len(set(sets)) > 1:
            common = frozenset.intersection(*sets)
            described = ", ".join(f"{label!r} {len(s)}" for label, s in zip(labels, sets))
            out.append(f"the benchmark documents differ (documents: {described}; {len(common)} in all)")

    settings = [r.metadata.get("heta_nb") for r in loaded]
    for key, what in (("evaluators", "evaluators"), ("top_k", "top_k")):
        values = [(label, s.get(key)) for label, s in zip(labels, settings) if isinstance(s, Mapping) and key in s]
        if len(values) > 1 and len({repr(v) for _, v in values}) > 1:
            shown = ", ".join(f"{label!r}: {list(v) if isinstance(v, tuple) else v!r}" for label, v in values)
            out.append(f"evaluator settings differ ({what}: {shown}); scores may not be measured the same way")

    return out


def _completeness_warnings(loaded: list[EvaluationReport], labels: list[str]) -> list[str]:
    """Reports that are cancelled, failed or one shard of a run."""
    out = []
    settings = [r.metadata.get("heta_nb") for r in loaded]
    for label, s in zip(labels, settings):
        if not isinstance(s, Mapping):
            continue
        status = s.get("status")
        if isinstance(status, str) and status != "complete":
            out.append(f"report {label!r} is {status} ({s.get('done', '?')} of {s.get('total', '?')} case results)")
        shard = s.get("shard")
        if isinstance(shard, Mapping) and isinstance(shard.get("index"), int) and isinstance(shard.get("count"), int):
            out.append(
                f"report {label!r} is shard {shard['index'] + 1} of {shard['count']}; "
                "merge the shards with heta_nb.merge_reports first"
            )
    return out


def _skipped_notes(overlap: Overlap, include_skipped: bool) -> list[str]:
    """Where skipped scores (no gold data) were left out or counted."""
    totals = {m: sum(s.metrics[m].skipped for s in overlap.systems) for m in overlap.aligned}
    listed = ", ".join(f"{m} {n}" for m, n in totals.items() if n)
    if not listed:
        return []
    if include_skipped:
        return [f"skipped scores (no gold data) are counted as the 0 Heta records ({listed}; summed over systems)"]
    return [
        f"skipped scores (no gold data) are left out ({listed}; summed over systems); "
        "include_skipped=True counts them as the 0 Heta records"
    ]


def _overlap_warnings(overlap: Overlap) -> list[str]:
    """Case-set differences, errors and duplicates, in plain words."""
    out = []
    systems = overlap.systems
    if overlap.only_in_some:
        sizes = ", ".join(f"{s.name!r} has {s.cases}" for s in systems)
        dropped = ", ".join(f"{s.name!r}: {s.unmatched}" for s in systems)
        out.append(
            f"case sets differ ({sizes}); {overlap.only_in_some} case(s) not in every system are left out "
            f"(dropped per system: {dropped}); {overlap.common} case(s) in common"
        )
    failing = [s for s in systems if s.errors]
    if failing:
        listed = ", ".join(f"{s.name!r} {s.errors} of {s.cases}" for s in failing)
        out.append(
            f"errored cases are left out for every system (errors: {listed}); "
            "if errors hit hard cases, the comparison flatters the failing system"
        )
    for metric in overlap.aligned:
        lacking = [s for s in systems if metric in s.metrics and s.metrics[metric].unscored]
        if lacking:
            listed = ", ".join(f"{s.name!r} {s.metrics[metric].unscored} of {s.cases - s.errors}" for s in lacking)
            out.append(
                f"answered cases without a numeric {metric!r} score (an evaluator error, text, NaN, infinity "
                f"or no score) are left out for every system ({listed}); if they are hard cases, "
                "the comparison flatters that system"
            )
    for s in systems:
        if s.duplicates:
            out.append(f"{s.name!r} has {s.duplicates} repeated result(s) for the same case; only the first is used")
    return out


# --- the result ----------------------------------------------------------------------------


class Comparison(RichDisplay):
    """Paired comparison of systems against a baseline (build it with :func:`compare`).

    Attributes:
        systems: System names, in order (the baseline included).
        system_info: One :class:`System` per name (report id, mode, benchmark...).
        metrics: Metrics compared.
        baseline: Name of the baseline system.
        warnings: Plain-language reasons the systems may not be fully comparable (also
            issued as :class:`HetaComparisonWarning`).
        notes: Plain-language remarks that are not warnings (skipped scores left out or
            counted, text-only metrics not compared).
        overlap: Case counts: aligned per metric, missing, errors, skipped per system.
        resamples, confidence, seed, alpha, tie_tolerance, correction, include_skipped:
            The settings used.
    """

    def __init__(
        self,
        *,
        systems: list[System],
        baseline: int,
        aligned: _Aligned,
        tests: dict[tuple[int, int], PairedTest],
        warnings: list[str],
        notes: list[str],
        settings: dict[str, Any],
        reports: tuple[EvaluationReport, ...] = (),
        arguments: dict[str, Any] | None = None,
    ) -> None:
        self.reports: tuple[EvaluationReport, ...] = reports
        """The compared reports (what exports save next to a notebook)."""
        self.arguments: dict[str, Any] = dict(arguments or {})
        """The ``compare()`` arguments that rebuild this comparison from the reports."""
        self.system_info: tuple[System, ...] = tuple(systems)
        self.systems: tuple[str, ...] = tuple(s.name for s in systems)
        self.metrics: tuple[str, ...] = aligned.metrics
        self.baseline: str = systems[baseline].name
        self.warnings: list[str] = list(warnings)
        self.notes: list[str] = list(notes)
        self.overlap: Overlap = aligned.overlap
        self.resamples: int = settings["resamples"]
        self.confidence: float = settings["confidence"]
        self.seed: int = settings["seed"]
        self.alpha: float = settings["alpha"]
        self.tie_tolerance: float = settings["tie_tolerance"]
        self.correction: str = settings["correction"]
        self.include_skipped: bool = settings["include_skipped"]
        self._base = baseline
        self._aligned = aligned
        self._tests = tests

    # -- lookups -------------------------------------------------------------------------
    @property
    def family_size(self) -> int:
        """Number of tests corrected together (every non-baseline system × metric with data)."""
        return sum(1 for t in self._tests.values() if not math.isnan(t.p_value))

    def _system(self, system: int | str | None) -> int:
        if system is None:
            return next(k for k in range(len(self.systems)) if k != self._base)
        index = _index_of(system, self.systems, "system")
        if index == self._base:
            raise ValueError(f"{self.systems[index]!r} is the baseline; pick another system")
        return index

    def _metric(self, metric: str) -> int:
        if metric not in self.metrics:
            raise ValueError(f"metric {metric!r} is not compared; metrics: {list(self.metrics)}")
        return self.metrics.index(metric)

    def test(self, system: int | str, metric: str) -> PairedTest:
        """The :class:`~heta_nb.stats.paired.PairedTest` of ``system`` vs the baseline on ``metric``."""
        return self._tests[(self._system(system), self._metric(metric))]

    def significant(self, system: int | str, metric: str) -> bool:
        """Whether the Holm-adjusted p-value (or raw, with ``correction="none"``) is below ``alpha``."""
        return _significant(self.test(system, metric), self.alpha)

    def verdict(self, system: int | str, metric: str) -> str:
        """Plain words: ``"better (p=0.003)"``, ``"no detectable difference (p=0.41)"``, ``"worse (...)"``."""
        return _verdict(self.test(system, metric), self.alpha)

    def aligned_values(self, metric: str) -> dict[str, np.ndarray]:
        """Per system, the scores of ``metric`` on the aligned cases (same order for all)."""
        j = self._metric(metric)
        mask = self._aligned.mask[j]
        return {name: self._aligned.values[k, j, mask].copy() for k, name in enumerate(self.systems)}

    def deltas(self, metric: str, system: int | str | None = None) -> np.ndarray:
        """Per aligned case, ``system - baseline`` (system default: the first non-baseline one)."""
        j, k = self._metric(metric), self._system(system)
        mask = self._aligned.mask[j]
        return self._aligned.values[k, j, mask] - self._aligned.values[self._base, j, mask]

    # -- plain data ----------------------------------------------------------------------
    def summary_rows(self) -> list[dict[str, Any]]:
        """One dict per (non-baseline system, metric), keys :data:`SUMMARY_COLUMNS`, plain Python values."""
        rows = []
        for k, name in enumerate(self.systems):
            if k == self._base:
                continue
            for j, metric in enumerate(self.metrics):
                t = self._tests[(k, j)]
                rows.append(
                    {
                        "system": name,
                        "metric": metric,
                        "baseline": self.baseline,
                        "n": t.n,
                        "mean": t.mean_b,
                        "baseline_mean": t.mean_a,
                        "mean_diff": t.mean_diff,
                        "ci_low": t.ci_low,
                        "ci_high": t.ci_high,
                        "p_value": t.p_value,
                        "p_adjusted": t.p_value_adjusted,
                        "wins": t.wins,
                        "ties": t.ties,
                        "losses": t.losses,
                        "significant": _significant(t, self.alpha),
                        "verdict": _verdict(t, self.alpha),
                    }
                )
        return rows

    def to_context(self) -> dict[str, Any]:
        """Everything a template needs, as plain data (dicts, lists, str, numbers)."""
        return {
            "systems": [
                {
                    "name": s.name,
                    "report_id": s.report_id,
                    "mode": s.mode,
                    "knowledge_base_name": s.knowledge_base_name,
                    "benchmark": s.benchmark,
                    "is_baseline": s.name == self.baseline,
                }
                for s in self.system_info
            ],
            "baseline": self.baseline,
            "metrics": list(self.metrics),
            "rows": self.summary_rows(),
            "warnings": list(self.warnings),
            "notes": list(self.notes),
            "overlap": self.overlap.to_dict(),
            "settings": {
                "resamples": self.resamples,
                "confidence": self.confidence,
                "seed": self.seed,
                "alpha": self.alpha,
                "tie_tolerance": self.tie_tolerance,
                "correction": self.correction,
                "family_size": self.family_size,
                "include_skipped": self.include_skipped,
            },
        }

    # -- pandas views --------------------------------------------------------------------
    def summary_frame(self) -> pd.DataFrame:
        """One row per (non-baseline system, metric); columns :data:`SUMMARY_COLUMNS`.

        ``mean`` and ``baseline_mean`` are over the aligned cases (``n``), ``mean_diff`` =
        system - baseline with its bootstrap CI, ``p_value`` the permutation p-value and
        ``p_adjusted`` the Holm-adjusted one (family: every row), which ``significant``
        and ``verdict`` use.
        """
        import pandas as pd

        frame = pd.DataFrame(self.summary_rows(), columns=list(SUMMARY_COLUMNS))
        for name in ("n", "wins", "ties", "losses"):
            frame[name] = frame[name].astype("int64")
        frame["significant"] = frame["significant"].astype("bool")
        frame.attrs.update(
            baseline=self.baseline, confidence=self.confidence, alpha=self.alpha, correction=self.correction
        )
        return frame

    def cases_frame(self, metric: str | None = None) -> pd.DataFrame:
        """Per aligned case: ``unit, case_id, query``, each system's value, ``delta <system>``.

        With ``metric=None`` every metric is stacked, with a leading ``metric`` column.
        Deltas are ``system - baseline``; rows keep the baseline report's case order.
        """
        import pandas as pd

        if metric is None:
            frames = [self.cases_frame(m) for m in self.metrics]
            for m, frame in zip(self.metrics, frames):
                frame.insert(0, "metric", m)
            return pd.concat(frames, ignore_index=True)
        j = self._metric(metric)
        where = np.flatnonzero(self._aligned.mask[j])
        columns: dict[str, Any] = {
            "unit": [self._aligned.units[i] for i in where],
            "case_id": [self._aligned.case_ids[i] for i in where],
            "query": [self._aligned.queries[i] for i in where],
        }
        base_values = self._aligned.values[self._base, j, where]
        for k, name in enumerate(self.systems):
            columns[name] = self._aligned.values[k, j, where]
        for k, name in enumerate(self.systems):
            if k != self._base:
                columns[f"delta {name}"] = self._aligned.values[k, j, where] - base_values
        frame = pd.DataFrame(columns)
        frame.attrs.update(metric=metric, baseline=self.baseline)
        return frame

    def most_improved(self, metric: str, n: int = 10, system: int | str | None = None) -> pd.DataFrame:
        """The ``n`` cases where ``system`` beats the baseline by most (largest positive delta first)."""
        return self._extremes(metric, n, system, improved=True)

    def most_regressed(self, metric: str, n: int = 10, system: int | str | None = None) -> pd.DataFrame:
        """The ``n`` cases where ``system`` falls furthest below the baseline (most negative delta first)."""
        return self._extremes(metric, n, system, improved=False)

    def _extremes(self, metric: str, n: int, system: int | str | None, *, improved: bool) -> pd.DataFrame:
        import pandas as pd

        j, k = self._metric(metric), self._system(system)
        where = np.flatnonzero(self._aligned.mask[j])
        a = self._aligned.values[self._base, j, where]
        b = self._aligned.values[k, j, where]
        d = b - a
        keep = np.flatnonzero(d > self.tie_tolerance if improved else d < -self.tie_tolerance)
        order = keep[np.argsort(-d[keep] if improved else d[keep], kind="stable")][: max(0, int(n))]
        name = self.systems[k]
        frame = pd.DataFrame(
            {
                "unit": [self._aligned.units[where[i]] for i in order],
                "case_id": [self._aligned.case_ids[where[i]] for i in order],
                "query": [self._aligned.queries[where[i]] for i in order],
                self.baseline: a[order],
                name: b[order],
                "delta": d[order],
            }
        )
        frame.attrs.update(metric=metric, baseline=self.baseline, system=name)
        return frame

    # -- plots ---------------------------------------------------------------------------
    def plot_paired(self, metric: str, system: int | str | None = None, ax: Axes | None = None) -> Axes:
        """Scatter of per-case scores, baseline (x) vs ``system`` (y), with the diagonal.

        Points above the diagonal are cases ``system`` wins. Discrete scores (at most 12
        distinct values, e.g. bools or recall over 1–2 documents) are jittered (seeded by
        ``seed``) so that stacked points stay visible. Like :mod:`heta_nb.plots`, draws on
        ``ax`` or a new pyplot-free figure, and sets ``ax.heta_nb_info``.
        """
        j, k = self._metric(metric), self._system(system)
        mask = self._aligned.mask[j]
        x = self._aligned.values[self._base, j, mask]
        y = self._aligned.values[k, j, mask]
        t = self._tests[(k, j)]
        ax, palette = _axes(ax, (4.8, 4.6))
        jittered = False
        if x.size:
            both = np.concatenate([x, y])
            lo, hi = float(both.min()), float(both.max())
            span = hi - lo or 1.0
            if np.unique(both).size <= 12:
                jittered = True
                rng = np.random.default_rng(self.seed)
                width = 0.025 * span
                x = x + rng.uniform(-width, width, x.size)
                y = y + rng.uniform(-width, width, y.size)
            ax.scatter(x, y, s=14, alpha=0.45, linewidths=0, color=palette[0])
            pad = 0.06 * span
            ax.plot([lo - pad, hi + pad], [lo - pad, hi + pad], color="#888888", linestyle="--", linewidth=1)
            ax.set_xlim(lo - pad, hi + pad)
            ax.set_ylim(lo - pad, hi + pad)
        else:
            ax.text(0.5, 0.5, "no aligned cases", ha="center", va="center", transform=ax.transAxes)
        ax.set_xlabel(f"{self.baseline} (baseline)", parse_math=False)
        ax.set_ylabel(self.systems[k], parse_math=False)
        note = f"{t.wins} better, {t.ties} tied, {t.losses} worse" + (" (jittered)" if jittered else "")
        ax.set_title(f"{metric}, {t.n} cases\n{note}", fontsize="medium", parse_math=False)
        ax.heta_nb_info = self._plot_info("paired", metric, k, t, jittered=jittered)  # type: ignore[attr-defined]
        return ax

    def plot_deltas(self, metric: str, system: int | str | None = None, ax: Axes | None = None) -> Axes:
        """Histogram of per-case deltas (``system - baseline``) with the mean and its CI marked.

        At most 25 distinct deltas are drawn as one bar each, more as a histogram.
        """
        j, k = self._metric(metric), self._system(system)
        d = self.deltas(metric, k)
        t = self._tests[(k, j)]
        ax, palette = _axes(ax, (5.6, 3.6))
        if d.size:
            levels, counts = np.unique(d, return_counts=True)
            if levels.size <= 25:
                step = float(np.min(np.diff(levels))) if levels.size > 1 else 1.0
                ax.bar(levels, counts, width=0.8 * step, color=palette[0], alpha=0.75)
            else:
                ax.hist(d, bins="auto", color=palette[0], alpha=0.75)
            ax.axvline(0.0, color="#888888", linewidth=1, linestyle=":")
            pct = f"{self.confidence * 100:g}%"
            if math.isfinite(t.ci_low) and math.isfinite(t.ci_high):
                ax.axvspan(t.ci_low, t.ci_high, color=palette[1], alpha=0.25, label=f"{pct} CI of the mean")
            ax.axvline(t.mean_diff, color=palette[3], linewidth=2, label=f"mean {t.mean_diff:+.3g}")
            ax.legend(fontsize="small", frameon=False)
        else:
            ax.text(0.5, 0.5, "no aligned cases", ha="center", va="center", transform=ax.transAxes)
        ax.set_xlabel(f"{metric}: {self.systems[k]} − {self.baseline}", parse_math=False)
        ax.set_ylabel("cases")
        ax.set_title(f"{metric}, {t.n} cases: {_verdict(t, self.alpha)}", fontsize="medium", parse_math=False)
        ax.heta_nb_info = self._plot_info("deltas", metric, k, t)  # type: ignore[attr-defined]
        return ax

    def _plot_info(self, plot: str, metric: str, k: int, t: PairedTest, **extra: Any) -> dict[str, Any]:
        return {
            "plot": plot,
            "metric": metric,
            "system": self.systems[k],
            "baseline": self.baseline,
            "n": t.n,
            "mean_diff": t.mean_diff,
            "ci": (t.ci_low, t.ci_high),
            "wins": t.wins,
            "ties": t.ties,
            "losses": t.losses,
            **extra,
        }

    # -- text ----------------------------------------------------------------------------
    def __repr__(self) -> str:
        pct = f"{self.confidence * 100:g}%"
        head = (
            f"Comparison of {len(self.systems)} systems vs baseline {self.baseline!r} "
            f"({', '.join(sorted({s.benchmark for s in self.system_info}))}); "
            f"{'Holm' if self.correction == 'holm' else 'no'} correction over {self.family_size} test(s)"
        )
        table = [("system", "metric", "n", "base", "mean", "diff", f"{pct} CI", "p_adj", "verdict")]
        for row in self.summary_rows():
            table.append(
                (
                    row["system"],
                    row["metric"],
                    str(row["n"]),
                    _num(row["baseline_mean"]),
                    _num(row["mean"]),
                    _num(row["mean_diff"], sign=True),
                    f"[{_num(row['ci_low'], sign=True)}, {_num(row['ci_high'], sign=True)}]",
                    p_text(row["p_adjusted"], self.alpha),
                    row["verdict"],
                )
            )
        widths = [max(len(r[i]) for r in table) for i in range(len(table[0]))]
        right = {2, 3, 4, 5, 7}
        lines = [head]
        for r in table:
            cells = [c.rjust(w) if i in right else c.ljust(w) for i, (c, w) in enumerate(zip(r, widths))]
            lines.append("  ".join(cells).rstrip())
        if self.warnings:
            lines.append(f"{len(self.warnings)} warning(s):")
            lines.extend(f"  - {w}" for w in self.warnings)
        if self.notes:
            lines.append("notes:")
            lines.extend(f"  - {note}" for note in self.notes)
        return "\n".join(lines)


def _significant(test: PairedTest, alpha: float) -> bool:
    p = test.p_value_adjusted
    return bool(test.n > 0 and not math.isnan(p) and p < alpha)


def p_text(p: float, alpha: float | None = None) -> str:
    """``p`` for display: ``<0.001``, 3 decimals below 0.01, else 2.

    With ``alpha``, digits are added until the shown number lies on the same side of
    ``alpha`` as ``p`` (0.0496 at alpha 0.05 is ``0.0496``, not ``0.05``), so a verdict
    never reads "better (p=0.05)" at alpha = 0.05.
    """
    if math.isnan(p):
        return "n/a"
    if p < 0.001:
        return "<0.001"
    return p_digits(p, alpha, 3 if p < 0.01 else 2, "f")


def p_digits(p: float, alpha: float | None, digits: int, kind: str) -> str:
    """``format(p, f".{digits}{kind}")`` with more digits when rounding crosses ``alpha``."""
    text = format(p, f".{digits}{kind}")
    if alpha is None:
        return text
    while (float(text) < alpha) != (p < alpha) and digits < 17:
        digits += 1
        text = format(p, f".{digits}{kind}")
    return text


def _interval_notes(
    tests: Mapping[tuple[int, int], PairedTest],
    names: Sequence[str],
    metrics: Sequence[str],
    alpha: float,
    confidence: float,
    correction: str,
) -> list[str]:
    """Plain words for rows whose CI and verdict seem to disagree, and why they may."""
    outside: list[str] = []  # the CI excludes 0, the verdict is "no detectable difference"
    inside: list[str] = []  # the verdict is a difference, the CI includes 0
    for (s, j), t in tests.items():
        if t.n < 2 or not (math.isfinite(t.ci_low) and math.isfinite(t.ci_high)):
            continue
        excludes_zero = t.ci_low > 0.0 or t.ci_high < 0.0
        if excludes_zero != _significant(t, alpha):
            (outside if excludes_zero else inside).append(f"{names[s]} {metrics[j]}")
    notes = []
    if outside:
        why = (
            f"each CI is a {confidence:.0%} interval for its own difference, not adjusted for the "
            f"{len(tests)} tests, while the verdict uses the Holm-adjusted p-value"
            if correction == "holm"
            else "the bootstrap CI and the permutation test are different procedures, which can disagree "
            "near the boundary"
        )
        notes.append(f"the CI excludes 0 but the verdict is 'no detectable difference' for {_listed(outside)}: {why}")
    if inside:
        notes.append(
            f"the verdict is a difference but the CI includes 0 for {_listed(inside)}: the bootstrap CI and the "
            "permutation test are different procedures, which can disagree near the boundary"
        )
    return notes


def _listed(items: Sequence[str]) -> str:
    shown = ", ".join(items[:4])
    return shown + (f" and {len(items) - 4} more" if len(items) > 4 else "")


def _verdict(test: PairedTest, alpha: float) -> str:
    if test.n == 0:
        return "no aligned cases"
    p = p_text(test.p_value_adjusted, alpha)
    p = f"p{p}" if p.startswith("<") else f"p={p}"
    if _significant(test, alpha):
        return f"{'better' if test.mean_diff > 0 else 'worse'} ({p})"
    return f"no detectable difference ({p})"


def _num(value: float, *, sign: bool = False) -> str:
    if math.isnan(value):
        return "n/a"
    return f"{value:+.3f}" if sign else f"{value:.3f}"


def _axes(ax: Axes | None, size: tuple[float, float]) -> tuple[Axes, tuple[str, ...]]:
    """``ax`` (or the axes of a new pyplot-free figure) and the package's colour palette."""
    from heta_nb.plots import PALETTE

    if ax is not None:
        return ax, PALETTE
    from matplotlib.figure import Figure

    # No layout engine, as in heta_nb.plots: saving twice gives the same bytes.
    return Figure(figsize=size).subplots(), PALETTE
