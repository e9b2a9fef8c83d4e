"""``check(new, baseline)``: pair the reports, compare each mode, correct every test together, decide."""

from __future__ import annotations

import math
import warnings
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any, Literal

from heta_nb.comparison import Comparison, HetaComparisonWarning, compare
from heta_nb.comparison.significance import is_significant
from heta_nb.gate.changes import case_changes
from heta_nb.gate.numbers import p_shown
from heta_nb.gate.pairing import pair_reports
from heta_nb.gate.result import VERDICTS, CaseChange, CheckResult, CheckRow, ErrorCheck, describe_report
from heta_nb.gate.thresholds import Thresholds
from heta_nb.model.report import EvaluationReport
from heta_nb.stats.paired import PairedTest, holm

__all__ = ["check"]


def check(
    new: Any,
    baseline: Any,
    *,
    metrics: Sequence[str] | str | None = None,
    modes: Sequence[str] | str | None = None,
    max_drop: float | str | Mapping[str, float | str] = 0.0,
    floors: Mapping[str, float] | None = None,
    alpha: float = 0.05,
    max_new_errors: int | None = None,
    pass_at: Mapping[str, float] | None = None,
    require_same_cases: bool = True,
    resamples: int = 10_000,
    confidence: float = 0.95,
    seed: int = 0,
    include_skipped: bool = False,
    correction: Literal["holm", "none"] = "holm",
) -> CheckResult:
    """Gate a new report against a baseline: did any metric regress?

    For each mode × metric, the paired difference new − baseline over the cases both
    reports scored, with its bootstrap CI and permutation p-value (the statistics of
    :func:`heta_nb.compare`, one comparison per mode), Holm-adjusted over every mode ×
    metric of the check together. Each row's verdict:

    * **regression**: the drop is significant (adjusted p < ``alpha``) and larger than
      ``max_drop``; or the new report's mean is below the metric's floor; or the new
      report errored on every case of the mode;
    * **within tolerance**: a significant drop no larger than ``max_drop``;
    * **improvement**: a significant rise;
    * **no detectable change**: no significant difference;
    * **not comparable**: no case has a usable score in both reports.

    The whole pair is **not comparable** (every row says so, except floors, which judge the
    new report alone) when the benchmarks differ (name, version, split or documents), a
    mode or metric asked for is missing on one side, a report is cancelled, failed or a
    shard, or (with ``require_same_cases``) the case sets differ. The overall verdict is
    the most severe row verdict (regression first, then not comparable): ``ok`` (exit
    code 0) unless something regressed (1) or the pair is not comparable (2).

    The result also lists the *flipped* cases per metric (passed -> failed, and back; a
    number passes above 0, or at ``pass_at[metric]``; Heta's own ``passed`` wins) and the
    cases that started or stopped erroring. Errored cases are left out of the paired
    statistics (as in :func:`heta_nb.compare`); ``max_new_errors`` gates them.

    Args:
        new: The new report: an ``EvaluationReport`` or anything
            :func:`heta_nb.load_report` takes (``STORE:KB/ID`` references too).
        baseline: The baseline report, likewise (``STORE:KB~1`` is the one before the newest).
        metrics: Metrics to check. Default: every metric with numeric scores in both.
        modes: Query modes to check. Default: every mode both reports have.
        max_drop: The drop tolerated before a significant drop counts as a regression:
            absolute (``0.02``) or relative to the baseline mean (``"2%"``); a mapping gives
            it per ``metric`` or ``metric/mode`` (key ``"*"``: every other metric).
        floors: ``{"ndcg@10": 0.6}``: the new mean (every scored case of the mode) must
            reach it, whatever the baseline; keys are ``metric`` or ``metric/mode``. A floor's
            metric is checked even when ``metrics`` leaves it out.
        alpha: Significance level of the adjusted p-values.
        max_new_errors: Cases per mode allowed to start erroring (None: listed, not gated).
        pass_at: Pass marks for the flipped cases, per ``metric`` or ``metric/mode``.
        require_same_cases: A pair whose case sets differ is not comparable; ``False``
            checks the cases both have (with a warning).
        resamples: Bootstrap and permutation resamples.
        confidence: Confidence level of the intervals.
        seed: Seed of every test (the same inputs give the same numbers).
        include_skipped: Count skipped scores (no gold data) as the 0 Heta recorded.
        correction: ``"holm"`` (every mode × metric as one family) or ``"none"``.

    Returns:
        The :class:`~heta_nb.gate.CheckResult`.

    Raises:
        ValueError: Bad settings (a negative ``max_drop``, ``alpha`` outside (0, 1), a
            threshold naming no checked metric, ...).
        heta_nb.ReportFormatError: A report that cannot be read (and other load errors).
    """
    from heta_nb.store.locate import resolve_report

    if not 0.0 < alpha < 1.0:
        raise ValueError(f"alpha must be in (0, 1), got {alpha!r}")
    if correction not in ("holm", "none"):
        raise ValueError(f"correction must be 'holm' or 'none', got {correction!r}")
    if max_new_errors is not None and (isinstance(max_new_errors, bool) or int(max_new_errors) < 0):
        raise ValueError(f"max_new_errors must be a count >= 0 or None, got {max_new_errors!r}")
    thresholds = Thresholds(max_drop=max_drop, floors=floors, pass_at=pass_at)
    new_report = _load(new, resolve_report)
    base_report = _load(baseline, resolve_report)
    all_modes = list(dict.fromkeys([*new_report.modes, *base_report.modes]))
    pairing = pair_reports(
        new_report,
        base_report,
        modes=modes,
        metrics=metrics,
        extra_metrics=lambda mode: thresholds.floor_metrics(mode, all_modes),
    )
    checked = sorted({m for names in pairing.metrics.values() for m in names})
    unknown = thresholds.unknown_keys(pairing.modes, checked) if pairing.modes else []
    if unknown:
        raise ValueError(
            f"max_drop, floors or pass_at name {unknown}, which is no checked metric or metric/mode "
            f"(checked: {checked}, modes: {pairing.modes})"
        )
    reasons, found_warnings = list(pairing.reasons), list(pairing.warnings)
    notes: list[str] = []
    comparisons: dict[str, Comparison] = {}
    tests: dict[tuple[str, str], PairedTest] = {}
    not_applicable: dict[tuple[str, str], tuple[str, str]] = {}
    """(mode, metric) -> why it is n/a in the baseline, in the new report ("" where it is not):
    the metrics n/a in the new report (in both: not tested; in the new one only: a regression)."""
    for mode in pairing.modes:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", HetaComparisonWarning)
            comparison = compare(
                base_report,
                new_report,
                names=["baseline", "new"],
                modes=[mode],
                metrics=pairing.metrics[mode],
                resamples=resamples,
                confidence=confidence,
                seed=seed,
                include_skipped=include_skipped,
                alpha=alpha,
                correction="none",
            )
        comparisons[mode] = comparison
        overlap = comparison.overlap
        if overlap.only_in_some:
            sizes = ", ".join(f"{s.name} {s.cases:,}" for s in overlap.systems)
            text = f"mode {mode!r}: the case sets differ ({sizes}; {overlap.common:,} in both)"
            (reasons if require_same_cases else found_warnings).append(text)
        where = f"mode {mode!r}: " if len(pairing.modes) > 1 else ""
        for warning in comparison.warnings:
            if not warning.startswith("case sets differ"):
                found_warnings.append(where + warning)
        notes.extend(where + note for note in comparison.notes)
        for metric in comparison.metrics:
            tests[(mode, metric)] = comparison.test("new", metric)
            sides = (comparison.not_applicable("baseline", metric), comparison.not_applicable("new", metric))
            if all(sides) or (sides[1] and not sides[0]):  # n/a in both: not tested; lost: a regression
                not_applicable[(mode, metric)] = sides
    if correction == "holm" and tests:
        keys = [key for key in tests if key not in not_applicable]  # n/a metrics are not tested
        adjusted = holm([tests[k].p_value for k in keys])
        tests.update({k: replace(tests[k], p_value_adjusted=p) for k, p in zip(keys, adjusted)})

    summaries = {(s.mode, s.metric): s for s in new_report.metric_summaries(confidence=confidence)}
    rows = [
        _row(mode, metric, tests[(mode, metric)], thresholds, summaries.get((mode, metric)), alpha, include_skipped)
        for mode in pairing.modes
        for metric in pairing.metrics[mode]
    ]
    rows = [
        _judge(
            row,
            comparable=not reasons,
            broken=row.mode in pairing.broken,
            alpha=alpha,
            not_applicable=not_applicable.get((row.mode, row.metric), ("", "")),
        )
        for row in rows
    ]
    flips: list[CaseChange] = []
    error_changes: list[CaseChange] = []
    error_checks: list[ErrorCheck] = []
    if not reasons:
        flips, error_changes, error_checks = case_changes(
            new_report,
            base_report,
            pairing.metrics,
            by_case={mode: c.overlap.key == "case_id" for mode, c in comparisons.items()},
            thresholds=thresholds,
            include_skipped=include_skipped,
            max_new_errors=max_new_errors,
        )
    found = {row.verdict for row in rows}
    if any(e.failed for e in error_checks):
        found.add("regression")
    if reasons:
        found.add("not comparable")
    verdict = next((v for v in VERDICTS if v in found), "not comparable")
    return CheckResult(
        verdict=verdict,
        rows=rows,
        new=describe_report(new_report, new),
        baseline=describe_report(base_report, baseline),
        settings={
            "alpha": float(alpha),
            "confidence": float(confidence),
            "resamples": int(resamples),
            "seed": int(seed),
            "correction": correction,
            "family_size": sum(1 for t in tests.values() if not math.isnan(t.p_value)),
            "include_skipped": bool(include_skipped),
            "require_same_cases": bool(require_same_cases),
            "max_new_errors": max_new_errors,
            "thresholds": thresholds.to_dict(),
        },
        reasons=reasons,
        warnings=list(dict.fromkeys(found_warnings)),
        notes=list(dict.fromkeys(notes)),
        flips=flips,
        errors=error_checks,
        error_changes=error_changes,
        comparisons=comparisons,
    )


def _load(source: Any, resolve: Any) -> EvaluationReport:
    report: EvaluationReport = source if isinstance(source, EvaluationReport) else resolve(source)
    return report


def _row(
    mode: str,
    metric: str,
    test: PairedTest,
    thresholds: Thresholds,
    summary: Any,
    alpha: float,
    include_skipped: bool,
) -> CheckRow:
    drop = thresholds.drop(mode, metric)
    floor = thresholds.floor(mode, metric)
    floor_mean = math.nan
    if summary is not None:
        floor_mean = summary.mean if include_skipped else summary.mean_scored
    return CheckRow(
        mode=mode,
        metric=metric,
        verdict="",
        reason="",
        n=test.n,
        baseline_mean=test.mean_a,
        new_mean=test.mean_b,
        diff=test.mean_diff,
        ci_low=test.ci_low,
        ci_high=test.ci_high,
        p_value=test.p_value,
        p_adjusted=test.p_value_adjusted,
        significant=is_significant(test, alpha),
        wins=test.wins,
        ties=test.ties,
        losses=test.losses,
        max_drop=str(drop),
        tolerated=drop.allowed(test.mean_a),
        floor=floor,
        floor_mean=floor_mean,
        floor_failed=floor is not None and not (math.isfinite(floor_mean) and floor_mean >= floor),
    )


def _judge(
    row: CheckRow, *, comparable: bool, broken: bool, alpha: float, not_applicable: tuple[str, str] = ("", "")
) -> CheckRow:
    """The row with its verdict and reason (an n/a metric is not tested: "n/a", no p-value)."""
    before, after = not_applicable
    if after and not before:  # the new report stopped producing it: measured, and a regression
        return replace(row, verdict="regression", reason=f"n/a in the new report ({after}); the baseline had it")
    if after:
        nan = math.nan
        row = replace(
            row,
            baseline_mean=nan,
            new_mean=nan,
            diff=nan,
            ci_low=nan,
            ci_high=nan,
            p_value=nan,
            p_adjusted=nan,
            significant=False,
        )
        return replace(row, verdict="no detectable change", reason=f"n/a: {after} (not tested)")
    p = p_shown(row.p_adjusted, alpha)
    p = f"p{p}" if p.startswith("<") else f"p={p}"
    drop = -row.diff
    if row.floor_failed:
        shown = "no scored case" if math.isnan(row.floor_mean) else f"{row.floor_mean:.3f}"
        return replace(row, verdict="regression", reason=f"new mean {shown} is below the floor {row.floor:g}")
    if broken:
        return replace(row, verdict="regression", reason="the new report errored on every case of this mode")
    if not comparable:
        return replace(row, verdict="not comparable", reason="the reports are not comparable (see the reasons)")
    if row.n == 0:
        return replace(row, verdict="not comparable", reason="no case has a usable score in both reports")
    if row.significant and drop > 0:
        tolerance = f"{row.max_drop}" + (f" = {row.tolerated:.3f}" if row.max_drop.endswith("%") else "")
        if drop > row.tolerated:
            return replace(
                row, verdict="regression", reason=f"dropped by {drop:.3f} ({p}), more than the {tolerance} tolerated"
            )
        return replace(row, verdict="within tolerance", reason=f"dropped by {drop:.3f} ({p}), within {tolerance}")
    if row.significant and row.diff > 0:
        return replace(row, verdict="improvement", reason=f"rose by {row.diff:.3f} ({p})")
    return replace(row, verdict="no detectable change", reason=f"difference {row.diff:+.3f} ({p})")
