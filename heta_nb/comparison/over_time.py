"""``history(store, kb=...)``: a recipe's stored reports on one benchmark, in time order.

Each report's mode × metric is its own summary (:class:`~heta_nb.model.summary.MetricSummary`:
the headline mean, n, interval and status every view shows), and the change from the report
before is ``compare(previous, current)``'s row for that mode and metric: nothing is computed
twice.
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping, Sequence
from typing import Any

from heta_nb.comparison.build import compare
from heta_nb.comparison.history_result import FIRST_REPORT, History
from heta_nb.comparison.notes import HetaComparisonWarning
from heta_nb.comparison.result import Comparison
from heta_nb.model.report import EvaluationReport
from heta_nb.model.summary import MetricSummary
from heta_nb.store.names import safe_slug
from heta_nb.store.report_store import ReportStore
from heta_nb.store.scan import instant
from heta_nb.store.summary import ReportSummary

__all__ = ["history", "recipe_label"]

_NO_CHANGE: dict[str, Any] = {
    "change": float("nan"),
    "change_ci_low": float("nan"),
    "change_ci_high": float("nan"),
    "change_n": 0,
    "p_adjusted": float("nan"),
}


def history(
    store: Any,
    *,
    kb: str,
    benchmark: str | None = None,
    modes: Sequence[str] | str | None = None,
    metrics: Sequence[str] | str | None = None,
    alpha: float = 0.05,
    resamples: int = 10_000,
    seed: int = 0,
    confidence: float = 0.95,
) -> History:
    """Every stored report of knowledge base ``kb`` on one benchmark, in time order, with the
    paired change of each metric from the report before.

    Reports are ordered by ``started_at`` (as moments, their UTC offsets applied; ties by
    report id). Each row's mean, n, interval and status are the report's own
    :meth:`~heta_nb.model.EvaluationReport.metric_summaries` (n/a stays n/a, never 0); its change
    is ``compare(previous, current)``'s paired difference for that mode and metric, with its
    bootstrap interval, Holm-adjusted p-value and verdict, passed through as given. A change is
    *real* where that comparison calls it significant. Across reports of another benchmark
    version or split the change is ``"not comparable: benchmark version differs (...)"`` (not
    tested); the comparisons' warnings are kept in :attr:`History.warnings`.

    Args:
        store: A :class:`~heta_nb.ReportStore`, or anything it accepts (a folder, an fsspec URL,
            a Heta ObjectStore).
        kb: The knowledge base name the reports were stored under.
        benchmark: The benchmark's name (or its ``name:version:split`` key). Needed when the
            knowledge base has reports of several benchmarks.
        modes: Query modes to show (default: every mode of the reports).
        metrics: Metrics to show and test (default: every metric; the Holm family of each
            change is the metrics ``compare`` tests, so choosing fewer changes the p-values).
        alpha: Significance level of the changes (after Holm's correction).
        resamples: Bootstrap and permutation resamples of each paired test.
        seed: Seed of every paired test.
        confidence: Confidence level of the intervals (the means' and the changes').

    Returns:
        The :class:`~heta_nb.comparison.History`.

    Raises:
        ValueError: No report of ``kb`` (on ``benchmark``) in the store, ``benchmark=None``
            where the knowledge base has reports of several benchmarks, or an unknown mode
            or metric.
    """
    reports_store = store if isinstance(store, ReportStore) else ReportStore(store)
    chosen = _stored_reports(reports_store, kb, benchmark)
    reports = [reports_store.load_key(summary.key) for summary in chosen]
    wanted_modes = _known("mode", modes, [m for r in reports for m in r.modes])
    wanted_metrics = _known("metric", metrics, [m for r in reports for m in r.metric_names])
    settings = {"alpha": float(alpha), "resamples": int(resamples), "seed": seed, "confidence": float(confidence)}
    rows: list[dict[str, Any]] = []
    comparisons: list[Comparison | None] = []
    found: list[str] = []
    previous: EvaluationReport | None = None
    for report in reports:
        if previous is None:
            changes: dict[tuple[str, str], dict[str, Any]] = {}
            comparison, why = None, FIRST_REPORT
        else:
            changes, comparison, why = _changes(previous, report, wanted_modes, wanted_metrics, settings, found)
        rows.extend(_report_rows(report, previous, changes, why, wanted_modes, wanted_metrics, confidence))
        comparisons.append(comparison)
        previous = report
    return History(
        knowledge_base=kb,
        benchmark=chosen[0].benchmark,
        location=reports_store.location,
        reports=tuple(reports),
        rows=rows,
        comparisons=tuple(comparisons),
        warnings=found,
        settings=settings,
    )


def recipe_label(report: EvaluationReport) -> str:
    """How a report is named in a history: its metadata's ``name``, else ``recipe`` (what the
    demo and ``evaluate(metadata=...)`` record), else the recipe a sweep recorded, else its id."""
    metadata = report.metadata
    sweep = metadata.get("sweep")
    for value in (
        metadata.get("name"),
        metadata.get("recipe"),
        sweep.get("recipe") if isinstance(sweep, Mapping) else None,
    ):
        if isinstance(value, str) and value.strip():
            return value
    return report.report_id


def _stored_reports(store: ReportStore, kb: str, benchmark: str | None) -> list[ReportSummary]:
    """The listing rows of ``kb``'s reports on ``benchmark``, in time order (ties by report id)."""
    slug = safe_slug(kb, "knowledge base")
    mine = [s for s in store.summaries(missing_ok=True) if s.knowledge_base == slug]
    if not mine:
        raise ValueError(f"{store.location} holds no report of knowledge base {kb!r}")
    names = list(dict.fromkeys(s.benchmark for s in mine))
    if benchmark is None and len(names) > 1:
        raise ValueError(
            f"knowledge base {kb!r} in {store.location} has reports of {len(names)} benchmarks "
            f"({', '.join(map(repr, names))}); pass benchmark= one of them"
        )
    if benchmark is not None:
        keys = {s.key: f"{s.benchmark}:{s.benchmark_version}:{s.benchmark_split}" for s in mine}
        mine = [s for s in mine if benchmark in (s.benchmark, keys[s.key])]
        if not mine:
            raise ValueError(
                f"{store.location} holds no report of knowledge base {kb!r} on benchmark {benchmark!r}; "
                f"its benchmarks: {', '.join(map(repr, names))}"
            )
    return sorted(mine, key=lambda s: (instant(s.started_at), s.report_id))


def _known(kind: str, wanted: Sequence[str] | str | None, known: Sequence[str]) -> list[str] | None:
    """``wanted`` as a list (None: all), refusing a name no report has."""
    if wanted is None:
        return None
    names = [wanted] if isinstance(wanted, str) else list(wanted)
    choices = list(dict.fromkeys(known))
    for name in names:
        if name not in choices:
            raise ValueError(f"unknown {kind} {name!r}; the reports have {', '.join(map(repr, choices)) or 'none'}")
    return names


def _benchmark_difference(previous: EvaluationReport, current: EvaluationReport) -> str:
    """``"benchmark version differs (1 → 2)"`` and the like, or ``""`` for the same benchmark split."""
    before, after = previous.benchmark, current.benchmark
    parts = [
        (what, getattr(before, what), getattr(after, what))
        for what in ("name", "version", "split")
        if getattr(before, what) != getattr(after, what)
    ]
    if not parts:
        return ""
    if len(parts) == 1 and parts[0][0] != "name":
        what, old, new = parts[0]
        return f"benchmark {what} differs ({old} → {new})"
    return f"benchmark differs ({before.key} → {after.key})"


def _changes(
    previous: EvaluationReport,
    current: EvaluationReport,
    modes: list[str] | None,
    metrics: list[str] | None,
    settings: Mapping[str, Any],
    found: list[str],
) -> tuple[dict[tuple[str, str], dict[str, Any]], Comparison | None, str]:
    """``compare(previous, current)``'s rows by ``(mode, metric)``, the comparison, and why
    there is none (``""`` when there is)."""
    differs = _benchmark_difference(previous, current)
    if differs:
        return {}, None, f"not comparable: {differs}"
    shared_modes = [m for m in current.modes if m in previous.modes and (modes is None or m in modes)]
    if not shared_modes:
        return {}, None, "not compared: no query mode in common with the previous report"
    shared_metrics = None
    if metrics is not None:
        shared_metrics = [m for m in metrics if m in current.metric_names and m in previous.metric_names]
        if not shared_metrics:
            return {}, None, "not compared: no chosen metric in common with the previous report"
    with warnings.catch_warnings():  # kept in History.warnings, said once there
        warnings.simplefilter("ignore", HetaComparisonWarning)
        try:
            comparison = compare(
                previous,
                current,
                modes=None if modes is None else shared_modes,
                metrics=shared_metrics,
                alpha=settings["alpha"],
                resamples=settings["resamples"],
                seed=settings["seed"],
                confidence=settings["confidence"],
            )
        except ValueError as exc:  # nothing to pair (no numeric metric in common...): said per row
            return {}, None, f"not compared: {exc}"
    found.extend(f"{previous.report_id} → {current.report_id}: {w}" for w in comparison.warnings)
    return {(row["mode"], row["metric"]): row for row in comparison.summary_rows()}, comparison, ""


def _report_rows(
    report: EvaluationReport,
    previous: EvaluationReport | None,
    changes: Mapping[tuple[str, str], Mapping[str, Any]],
    why: str,
    modes: list[str] | None,
    metrics: list[str] | None,
    confidence: float,
) -> list[dict[str, Any]]:
    """One row per mode × metric of ``report``: its summary, then its change from ``previous``."""
    label = recipe_label(report)
    before = (
        {} if previous is None else {(s.mode, s.metric): s for s in previous.metric_summaries(confidence=confidence)}
    )
    rows = []
    for summary in report.metric_summaries(confidence=confidence):
        if (modes is not None and summary.mode not in modes) or (metrics is not None and summary.metric not in metrics):
            continue
        low, high = summary.shown_ci
        row: dict[str, Any] = {
            "report_id": report.report_id,
            "started_at": report.started_at,
            "recipe": label,
            "benchmark": report.benchmark.key,
            "mode": summary.mode,
            "metric": summary.metric,
            "n": summary.shown_n,
            "mean": summary.shown,
            "ci_low": low,
            "ci_high": high,
            "status": summary.status,
            "reason": summary.reason,
            "previous": previous.report_id if previous is not None else "",
        }
        change = changes.get((summary.mode, summary.metric))
        if change is not None:
            row.update(
                change=change["mean_diff"],
                change_ci_low=change["ci_low"],
                change_ci_high=change["ci_high"],
                change_n=change["n"],
                p_adjusted=change["p_adjusted"],
                verdict=change["verdict"],
                real=bool(change["significant"]),
            )
        else:
            reason = why or _not_compared(summary, previous, before.get((summary.mode, summary.metric)))
            row.update(_NO_CHANGE, verdict=reason, real=False)
        rows.append(row)
    return rows


def _not_compared(summary: MetricSummary, previous: EvaluationReport | None, before: MetricSummary | None) -> str:
    """Why a compared pair has no test of this mode and metric."""
    if previous is not None and summary.mode not in previous.modes:
        return f"not compared: the previous report has no mode {summary.mode!r}"
    if before is None:
        return f"not compared: the previous report has no metric {summary.metric!r} in {summary.mode}"
    if not summary.scored:
        return f"not compared: {summary.reason}"
    if not before.scored:
        return f"not compared: in the previous report, {before.reason}"
    return "not compared: no paired scores"
