"""The comparability warnings and the notes of a comparison, in plain words."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

from heta_nb.comparison.overlap import Overlap
from heta_nb.comparison.significance import is_significant
from heta_nb.model.report import EvaluationReport
from heta_nb.stats.paired import PairedTest

__all__ = [
    "HetaComparisonWarning",
    "completeness_warnings",
    "interval_notes",
    "overlap_warnings",
    "report_warnings",
    "skipped_notes",
]


class HetaComparisonWarning(UserWarning):
    """The compared systems are not fully comparable (see :attr:`Comparison.warnings`)."""


def report_warnings(loaded: list[EvaluationReport], labels: list[str], overlap: Overlap) -> list[str]:
    """Differences between the compared reports: benchmark, corpus, evaluator settings, completeness.

    Args:
        loaded: The compared reports.
        labels: Unique labels of the reports.
        overlap: The case overlap.

    Returns:
        One warning per difference.
    """
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


def completeness_warnings(loaded: list[EvaluationReport], labels: list[str]) -> list[str]:
    """Reports that are cancelled, failed or one shard of a run.

    Args:
        loaded: The compared reports.
        labels: Unique labels of the reports.

    Returns:
        One warning per incomplete report or shard.
    """
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


def skipped_notes(overlap: Overlap, include_skipped: bool) -> list[str]:
    """Where skipped scores (no gold data) were left out or counted.

    Args:
        overlap: The case overlap.
        include_skipped: Whether skipped scores were counted.

    Returns:
        At most one note.
    """
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


def overlap_warnings(overlap: Overlap) -> list[str]:
    """Case-set differences, errors and duplicates, in plain words.

    Args:
        overlap: The case overlap.

    Returns:
        One warning per kind of difference (and per metric, for unscored cases).
    """
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
            f"errored cases are left out of every pair they belong to (errors: {listed}); "
            "if errors hit hard cases, the comparison flatters the failing system"
        )
    for metric in overlap.aligned:
        lacking = [s for s in systems if metric in s.metrics and s.metrics[metric].unscored]
        if lacking:
            listed = ", ".join(f"{s.name!r} {s.metrics[metric].unscored} of {s.cases - s.errors}" for s in lacking)
            out.append(
                f"answered cases without a numeric {metric!r} score (an evaluator error, text, NaN, infinity "
                f"or no score) are left out of every pair they belong to ({listed}); if they are hard cases, "
                "the comparison flatters that system"
            )
    for s in systems:
        if s.duplicates:
            out.append(f"{s.name!r} has {s.duplicates} repeated result(s) for the same case; only the first is used")
    return out


def interval_notes(
    tests: Mapping[tuple[int, int], PairedTest],
    names: Sequence[str],
    metrics: Sequence[str],
    alpha: float,
    confidence: float,
    correction: str,
) -> list[str]:
    """Plain words for rows whose CI and verdict seem to disagree, and why they may.

    Args:
        tests: The test of each (system index, metric index).
        names: The system names.
        metrics: The metrics compared.
        alpha: The significance level.
        confidence: The confidence level of the intervals.
        correction: ``"holm"`` or ``"none"``.

    Returns:
        At most two notes.
    """
    outside: list[str] = []  # the CI excludes 0, the verdict is "inconclusive"
    inside: list[str] = []  # the verdict is a difference, the CI includes 0
    for (s, j), t in tests.items():
        if t.n < 2 or not (math.isfinite(t.ci_low) and math.isfinite(t.ci_high)):
            continue
        excludes_zero = t.ci_low > 0.0 or t.ci_high < 0.0
        if excludes_zero != is_significant(t, alpha):
            (outside if excludes_zero else inside).append(f"{names[s]} {metrics[j]}")
    notes = []
    if outside:
        why = (
            f"each CI is a {confidence:.0%} interval for its own difference, not adjusted for the "
            "other tests of its family, while the verdict uses the Holm-adjusted p-value"
            if correction == "holm"
            else "the bootstrap CI and the permutation test are different procedures, which can disagree "
            "near the boundary"
        )
        notes.append(
            f"the CI excludes 0 but the verdict is 'inconclusive' (not significant) for {_listed(outside)}: {why}"
        )
    if inside:
        notes.append(
            f"the verdict is a difference but the CI includes 0 for {_listed(inside)}: the bootstrap CI and the "
            "permutation test are different procedures, which can disagree near the boundary"
        )
    return notes


def _listed(items: Sequence[str]) -> str:
    """``"a, b, c, d and 5 more"``; unlike ``_util.text.listing`` the count has no thousands separator."""
    shown = ", ".join(items[:4])
    return shown + (f" and {len(items) - 4} more" if len(items) > 4 else "")
