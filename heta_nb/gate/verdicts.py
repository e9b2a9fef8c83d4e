"""Each row's verdict: regression, unverified drop, evaluator errors, n/a, ... and the reason in words.

A gate must not pass a collapse it could not test. A drop larger than the tolerated one that
is not significant is an **unverified drop** (it fails unless ``allow_unverified``), and the
reason says which of two things kept it from being tested:

* too few changed cases: with ``k`` cases that moved, the exact sign-flip test's smallest
  two-sided p-value is ``2 / 2**k``, and Holm over a family of ``m`` tests multiplies the
  smallest p-value by ``m``; when ``m * 2 / 2**k >= alpha`` no drop on those cases can ever
  be flagged (7 changed cases, 6 tests: 0.094);
* otherwise the interval is wider than the drop: the benchmark cannot tell a drop of this
  size from noise.
"""

from __future__ import annotations

import math
from dataclasses import replace
from typing import Any

from heta_nb.gate.numbers import p_shown
from heta_nb.gate.result import CheckRow
from heta_nb.gate.thresholds import Thresholds
from heta_nb.stats.paired import PairedTest

__all__ = ["changed_cases_needed", "judge", "new_row"]

_EPSILON = 1e-9
"""A drop must exceed the tolerated one by more than this (a mean of equal gains and losses
is a rounding error away from 0, not a drop)."""


def changed_cases_needed(family_size: int, alpha: float) -> int:
    """The fewest changed cases on which an exact sign-flip test can reach ``alpha`` after
    Holm over ``family_size`` tests: the smallest ``k`` with ``family_size * 2 / 2**k < alpha``."""
    m = max(1, family_size)
    k = 1
    while m * 2.0 / 2.0**k >= alpha:
        k += 1
    return k


def new_row(
    mode: str,
    metric: str,
    test: PairedTest,
    thresholds: Thresholds,
    summaries: tuple[Any, Any],
    alpha: float,
    include_skipped: bool,
    family: Any,
    significant: bool,
    sensitivity: Any = None,
) -> CheckRow:
    """The row of one mode × metric before its verdict: the test, thresholds and floor means.

    Args:
        mode: The mode.
        metric: The metric.
        test: The paired test (new − baseline), Holm-adjusted over ``family``.
        thresholds: The gate's thresholds.
        summaries: ``(new, baseline)`` :class:`~heta_nb.model.summary.MetricSummary` (or None).
        alpha: The significance level.
        include_skipped: Whether floors read Heta's mean (skipped counted as 0).
        family: The comparison's family of this mode (None when not tested).
        significant: Whether the adjusted p-value is below ``alpha``.
        sensitivity: The comparison's :class:`~heta_nb.comparison.sensitivity.Sensitivity` of the
            test (its minimum detectable difference and McNemar's test), or None.

    Returns:
        The row, its verdict still empty.
    """
    drop = thresholds.drop(mode, metric)
    floor = thresholds.floor(mode, metric)
    means = []
    for summary in summaries:
        if summary is None:
            means.append(math.nan)
        else:
            means.append(summary.mean if include_skipped else summary.shown)
    new_summary, base_summary = summaries
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
        significant=significant,
        wins=test.wins,
        ties=test.ties,
        losses=test.losses,
        max_drop=str(drop),
        tolerated=drop.allowed(test.mean_a),
        floor=floor,
        floor_mean=means[0],
        floor_failed=floor is not None and not (math.isfinite(means[0]) and means[0] >= floor),
        baseline_floor_mean=means[1],
        family="" if family is None else family.text,
        family_size=0 if family is None else family.size,
        new_evaluator_errors=0 if new_summary is None else new_summary.evaluator_errors,
        baseline_evaluator_errors=0 if base_summary is None else base_summary.evaluator_errors,
        min_detectable_difference=math.nan if sensitivity is None else sensitivity.mdd,
        mcnemar_p=math.nan if sensitivity is None or sensitivity.mcnemar is None else sensitivity.mcnemar.p_value,
    )


def _p(row: CheckRow, alpha: float) -> str:
    p = p_shown(row.p_adjusted, alpha)
    return f"p{p}" if p.startswith("<") else f"p={p}"


def _untested(row: CheckRow) -> CheckRow:
    nan = math.nan
    return replace(
        row,
        min_detectable_difference=nan,
        mcnemar_p=nan,
        n=0,
        baseline_mean=nan,
        new_mean=nan,
        diff=nan,
        ci_low=nan,
        ci_high=nan,
        p_value=nan,
        p_adjusted=nan,
        significant=False,
        wins=0,
        ties=0,
        losses=0,
        family="",
        family_size=0,
    )


def _unverified(row: CheckRow, alpha: float, confidence: float) -> str:
    """Why a drop larger than the tolerated one could not be tested, and what to do."""
    drop = -row.diff
    changed = row.wins + row.losses
    needed = changed_cases_needed(row.family_size, alpha)
    tests = f"{row.family_size} test{'s' if row.family_size != 1 else ''}"
    head = f"dropped by {drop:.3f} ({_p(row, alpha)}), more than the {row.max_drop} tolerated, but "
    if changed < needed:
        why = (
            f"{changed} of {row.n} cases changed ({row.losses} fell); too few cases to test at alpha {alpha:g} "
            f"over {tests} (at least {needed} changed cases needed)"
        )
    else:
        ci = f"[{row.ci_low:+.3f}, {row.ci_high:+.3f}]" if math.isfinite(row.ci_low) else "n/a"
        why = f"the {confidence:.0%} interval {ci} is wider than the drop: too few cases to tell it from noise"
    return head + why + "; add cases, or set a floor or --max-drop (--allow-unverified passes it)"


def judge(
    row: CheckRow,
    *,
    comparable: bool,
    broken: bool,
    alpha: float,
    confidence: float,
    not_applicable: tuple[str, str] = ("", ""),
    errored: str = "",
    incomparable: str = "",
    strict_floors: bool = False,
    compared: str = "",
) -> CheckRow:
    """The row with its verdict and reason.

    Args:
        row: The row from :func:`new_row`.
        comparable: Whether the pair is comparable.
        broken: Whether the new report errored on every case of the mode.
        alpha: The significance level.
        confidence: The intervals' confidence level.
        not_applicable: Why the metric is n/a in the baseline and in the new report ("" where not).
        errored: Why the metric's scores are mostly evaluator errors ("" when they are not).
        incomparable: Why the metric means different things in the two reports (its LLM judge
            differs: ``"judge differs: model 'a' vs 'b'"``), or "".
        strict_floors: Fail a floor the baseline failed too, even when nothing changed.
        compared: The comparison's verdict of the row (``Comparison.verdict``): an "inconclusive"
            one stays a "no detectable change" that says so, never "underpowered".

    Returns:
        The judged row.
    """
    before, after = not_applicable
    if incomparable:
        why = incomparable if incomparable.startswith("not calibrated") else f"not comparable: {incomparable}"
        return replace(_untested(row), verdict="not comparable", reason=why)
    if errored:
        return replace(_untested(row), verdict="evaluator errors", reason=errored)
    if after and not before:  # the new report stopped producing it: measured, and a regression
        return replace(row, verdict="regression", reason=f"n/a in the new report ({after}); the baseline had it")
    if after:
        return replace(_untested(row), verdict="n/a", reason=f"{after} (not tested)")
    drop = -row.diff
    unverified = (
        comparable
        and not broken
        and row.n > 0
        and not row.significant
        and math.isfinite(drop)
        and drop > row.tolerated + _EPSILON
    )
    if row.floor_failed:
        shown = "no scored case" if math.isnan(row.floor_mean) else f"{row.floor_mean:.3f}"
        base_failed = not (math.isfinite(row.baseline_floor_mean) and row.baseline_floor_mean >= (row.floor or 0.0))
        changed = broken or unverified or (row.significant and drop > row.tolerated)
        if strict_floors or not base_failed or changed or not comparable:
            return replace(row, verdict="regression", reason=f"new mean {shown} is below the floor {row.floor:g}")
        base = "no scored case" if math.isnan(row.baseline_floor_mean) else f"{row.baseline_floor_mean:.3f}"
        row = replace(
            row,
            reason=f"below the floor {row.floor:g} ({shown}) as the baseline was ({base}): not a new failure "
            "(--strict-floors fails it)",
        )
    if broken:
        return replace(row, verdict="regression", reason="the new report errored on every case of this mode")
    if not comparable:
        return replace(row, verdict="not comparable", reason="the reports are not comparable (see the reasons)")
    if row.n == 0:
        return replace(row, verdict="not comparable", reason="no case has a usable score in both reports")
    notes = [row.reason] if row.reason else []
    errors = [
        f"{count:,} evaluator error{'s' if count != 1 else ''} in the {side} report (left out)"
        for count, side in ((row.new_evaluator_errors, "new"), (row.baseline_evaluator_errors, "baseline"))
        if count
    ]
    notes.extend(errors)
    extra = "".join(f"; {note}" for note in notes)
    p = _p(row, alpha)
    if row.significant and drop > 0:
        tolerance = f"{row.max_drop}" + (f" = {row.tolerated:.3f}" if row.max_drop.endswith("%") else "")
        if drop > row.tolerated:
            return replace(
                row,
                verdict="regression",
                reason=f"dropped by {drop:.3f} ({p}), more than the {tolerance} tolerated{extra}",
            )
        return replace(
            row, verdict="within tolerance", reason=f"dropped by {drop:.3f} ({p}), within {tolerance}{extra}"
        )
    if unverified:
        return replace(row, verdict="unverified drop", reason=_unverified(row, alpha, confidence) + extra)
    if row.significant and row.diff > 0:
        return replace(row, verdict="improvement", reason=f"rose by {row.diff:.3f} ({p}){extra}")
    mdd = row.min_detectable_difference
    if compared.startswith("inconclusive"):  # compare's word for it: the unadjusted CI excludes 0
        reason = f"inconclusive: difference {row.diff:+.3f} ({p}); the unadjusted CI excludes 0, the adjusted p not"
        return replace(row, verdict="no detectable change", reason=reason + extra)
    if math.isfinite(mdd) and mdd > max(row.tolerated, abs(row.diff)) + _EPSILON:
        tolerated = f"; the {row.max_drop} tolerated cannot be verified" if row.tolerated > 0 else ""
        return replace(
            row,
            verdict="underpowered",
            reason=f"difference {row.diff:+.3f} ({p}); differences under {mdd:.3g} cannot be told apart with "
            f"{row.n} cases{tolerated}{extra}",
        )
    return replace(row, verdict="no detectable change", reason=f"difference {row.diff:+.3f} ({p}){extra}")
