"""``check(new, baseline)``: pair the reports, compare each mode (Holm per mode), judge each row, decide."""

from __future__ import annotations

import datetime
import time
import warnings
from collections.abc import Mapping, Sequence
from typing import Any, Literal

from heta_nb.comparison import Comparison, HetaComparisonWarning, compare
from heta_nb.comparison.significance import is_significant, untested_test
from heta_nb.gate.changes import case_changes
from heta_nb.gate.pairing import pair_reports
from heta_nb.gate.result import VERDICTS, CaseChange, CheckResult, ErrorCheck, describe_report
from heta_nb.gate.thresholds import Thresholds
from heta_nb.gate.verdicts import judge, new_row
from heta_nb.model.report import EvaluationReport
from heta_nb.stats.paired import PairedTest

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
    allow_unverified: bool = False,
    strict_floors: bool = False,
    resamples: int = 10_000,
    confidence: float = 0.95,
    seed: int = 0,
    include_skipped: bool = False,
    correction: Literal["holm", "none"] = "holm",
    calibration: Any = None,
    reviews: Mapping[str, Any] | None = None,
    benchmark: Any = None,
    cluster_by: Any = None,
    cluster_method: Literal["robust", "bootstrap"] = "robust",
) -> CheckResult:
    """Gate a new report against a baseline: did any metric regress?

    For each mode × metric, the paired difference new − baseline over the cases both
    reports scored, with its bootstrap CI and permutation p-value: exactly
    :func:`heta_nb.compare` of the two reports, mode with mode, so the same pair gets the
    same numbers there, here and on a leaderboard. Holm's correction runs over each
    mode's metrics (the family every output names: "Holm over the 6 metrics of
    extractive_answer"). Each row's verdict:

    * **regression**: the drop is significant (adjusted p < ``alpha``) and larger than
      ``max_drop``; or the new mean is below the metric's floor (unless the baseline's was
      too and nothing changed, see ``strict_floors``); or the new report errored on every
      case of the mode; or the new report stopped producing a metric the baseline had;
    * **unverified drop**: the new mean is lower by more than ``max_drop`` but the drop is
      not significant: too few cases changed for the test to flag any drop at this family
      size, or the interval is wider than the drop. It fails unless ``allow_unverified``,
      and the reason says why and what to do (a gate that cannot test a collapse must not
      pass it as "no change");
    * **evaluator errors**: the metric's evaluator raised on most scored cases in either
      report: it cannot be checked (exit code 2, a JUnit ``<error>``);
    * **within tolerance**: a significant drop no larger than ``max_drop``;
    * **improvement**: a significant rise;
    * **underpowered**: no significant difference, no drop beyond ``max_drop``, but the
      benchmark could not have seen one: the row's ``min_detectable_difference`` (80 % power,
      at the family's level) is larger than both the change and ``max_drop`` (exit code 0; the
      reason names the size it can see);
    * **no detectable change**: no significant difference, no drop beyond ``max_drop``, and a
      drop of ``max_drop`` would have been detected;
    * **n/a**: the mode cannot produce the metric in either report: not tested (JUnit
      ``<skipped>``);
    * **not comparable**: no case has a usable score in both reports.

    The whole pair is **not comparable** (every row says so, except floors, which judge the
    new report alone) when the benchmarks differ (name, version, split or documents), a
    mode or metric asked for is missing on one side, a report is cancelled, failed or a
    shard, or (with ``require_same_cases``) the case sets differ. The overall verdict is
    the most severe row verdict (regression first): ``ok`` (exit code 0) unless something
    regressed or dropped unverified (1), or the pair is not comparable or a metric's
    evaluator failed (2).

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
        max_drop: The drop tolerated: absolute (``0.02``) or relative to the baseline mean
            (``"2%"``); a mapping gives it per ``metric`` or ``metric/mode`` (key ``"*"``:
            every other metric). A significant drop above it is a regression, one that
            cannot be verified an unverified drop.
        floors: ``{"ndcg@10": 0.6}``: the new mean (the headline mean: every scored case
            of the mode) must reach it, whatever the baseline. A key ``metric`` applies to
            **every mode** that has the metric; ``metric/mode`` to that mode only (and wins
            over the bare key). A floor's metric is checked even when ``metrics`` leaves it
            out. A mode whose baseline was below the floor too and that did not drop is
            not failed by it (a floor judges what changed) unless ``strict_floors``.
        alpha: Significance level of the adjusted p-values.
        max_new_errors: Cases per mode allowed to start erroring (None: listed, not gated).
        pass_at: Pass marks for the flipped cases, per ``metric`` or ``metric/mode``.
        require_same_cases: A pair whose case sets differ is not comparable; ``False``
            checks the cases both have (with a warning).
        allow_unverified: Let unverified drops pass (their rows still say so).
        strict_floors: Fail every mode below its floor, even one whose baseline was below it
            too and that did not change.
        resamples: Bootstrap and permutation resamples.
        confidence: Confidence level of the intervals.
        seed: Seed of every test (the same inputs give the same numbers).
        include_skipped: Count skipped scores (no gold data) as the 0 Heta recorded.
        correction: ``"holm"`` (each mode's metrics as one family) or ``"none"``.
        calibration: gate the new report's LLM judges only where people calibrated them: a
            :class:`~heta_nb.reviews.calibration.Calibration` (``heta_nb.calibrate(reviewed_report)``); a
            judge it does not find calibrated (kappa under its floor, too few labels, or another
            judge version) is a "not comparable" row ("not calibrated: ..."), not tested (CLI:
            ``--require-calibrated``). Default None: no such requirement.
        reviews: ``{"new": ..., "baseline": ...}``, each report's reviews (``report.reviews(...)``):
            the notes add people's prediction-powered estimate of each mode's difference
            (:mod:`heta_nb.comparison.people`). It informs; the verdicts stay the paired tests'.
        benchmark: The benchmark both reports ran, for ``cluster_by`` (its labels and evidence).
        cluster_by: Cluster the cases as :func:`heta_nb.compare` does (``"document"``, a label
            field, a ``{case_id: group}`` mapping): intervals and p-values treat clusters as units.
        cluster_method: ``"robust"`` (default) or ``"bootstrap"`` (see :func:`heta_nb.compare`).

    Returns:
        The :class:`~heta_nb.gate.CheckResult`.

    Raises:
        ValueError: Bad settings (a negative ``max_drop``, ``alpha`` outside (0, 1), a
            threshold naming no checked metric, ...).
        heta_nb.ReportFormatError: A report that cannot be read (and other load errors).
    """
    from heta_nb.store.locate import resolve_report

    started = time.perf_counter()
    checked_at = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
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
    uncalibrated = _uncalibrated(new_report, calibration)
    for mode in pairing.modes:  # an uncalibrated judge is not tested, nor in a Holm family: a row of its own
        held = {m: why for m, why in uncalibrated.items() if m in pairing.metrics[mode]}
        if held:
            pairing.metrics[mode] = [m for m in pairing.metrics[mode] if m not in held]
            pairing.incomparable[mode] = {**pairing.incomparable.get(mode, {}), **held}
    errored_names = sorted({m for found in [*pairing.errored.values(), *pairing.incomparable.values()] for m in found})
    unknown = thresholds.unknown_keys(pairing.modes, [*checked, *errored_names]) if pairing.modes else []
    if unknown:
        raise ValueError(
            f"max_drop, floors or pass_at name {unknown}, which is no checked metric or metric/mode "
            f"(checked: {checked}, modes: {pairing.modes})"
        )
    reasons, found_warnings = list(pairing.reasons), list(pairing.warnings)
    notes: list[str] = []
    comparisons: dict[str, Comparison] = {}
    tests: dict[tuple[str, str], PairedTest] = {}
    families: dict[str, Any] = {}
    mode_seconds: dict[str, float] = {}
    not_applicable: dict[tuple[str, str], tuple[str, str]] = {}
    """(mode, metric) -> why it is n/a in the baseline, in the new report ("" where it is not):
    the metrics n/a in the new report (in both: not tested; in the new one only: a regression)."""
    for mode in pairing.modes:
        if not pairing.metrics[mode]:
            continue  # only mostly-errored metrics: nothing to test
        mode_started = time.perf_counter()
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
                correction=correction,
                reviews=reviews,
                benchmark=benchmark,
                cluster_by=cluster_by,
                cluster_method=cluster_method,
            )
        comparisons[mode] = comparison
        mode_seconds[mode] = round(time.perf_counter() - mode_started, 6)
        families[mode] = comparison.family("new")
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

    new_summaries = {(s.mode, s.metric): s for s in new_report.metric_summaries(confidence=confidence)}
    base_summaries = {(s.mode, s.metric): s for s in base_report.metric_summaries(confidence=confidence)}
    rows = []
    for mode in pairing.modes:
        failing = pairing.errored.get(mode, {})
        differ = pairing.incomparable.get(mode, {})
        untested_why = {**failing, **differ}
        for metric in [*pairing.metrics[mode], *(m for m in untested_why if m not in pairing.metrics[mode])]:
            key = (mode, metric)
            test = tests.get(key) or untested_test(resamples, seed, confidence, untested_why.get(metric, "not tested"))
            tested = key in tests and not all(not_applicable.get(key, ("", "x")))  # n/a in both: not tested
            row = new_row(
                mode,
                metric,
                test,
                thresholds,
                (new_summaries.get(key), base_summaries.get(key)),
                alpha,
                include_skipped,
                families.get(mode) if tested else None,
                is_significant(test, alpha),
                comparisons[mode].sensitivity("new", metric) if tested else None,
            )
            rows.append(
                judge(
                    row,
                    comparable=not reasons,
                    broken=mode in pairing.broken,
                    alpha=alpha,
                    confidence=confidence,
                    not_applicable=not_applicable.get(key, ("", "")),
                    errored=failing.get(metric, ""),
                    incomparable=differ.get(metric, ""),
                    strict_floors=strict_floors,
                    compared=comparisons[mode].verdict("new", metric) if tested else "",
                )
            )
    flips: list[CaseChange] = []
    error_changes: list[CaseChange] = []
    error_checks: list[ErrorCheck] = []
    if not reasons:
        flips, error_changes, error_checks = case_changes(
            new_report,
            base_report,
            {mode: names for mode, names in pairing.metrics.items() if names},
            by_case={mode: c.overlap.key == "case_id" for mode, c in comparisons.items()},
            thresholds=thresholds,
            include_skipped=include_skipped,
            max_new_errors=max_new_errors,
        )
    found = {row.verdict for row in rows}
    if allow_unverified:
        found.discard("unverified drop")
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
            "families": {mode: family.text for mode, family in families.items()},
            "family_sizes": {mode: family.size for mode, family in families.items()},
            "family_size": max((f.size for f in families.values()), default=0),
            "include_skipped": bool(include_skipped),
            "require_same_cases": bool(require_same_cases),
            "allow_unverified": bool(allow_unverified),
            "strict_floors": bool(strict_floors),
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
        why=_why(comparisons) if not reasons else {},
        checked_at=checked_at,
        duration_s=round(time.perf_counter() - started, 6),
        mode_seconds=mode_seconds,
    )


def _why(comparisons: Mapping[str, Comparison]) -> dict[str, list[str]]:
    """Why it changed, from each mode's comparison (:func:`heta_nb.comparison.why.why_it_changed`)."""
    from heta_nb.comparison.why import why_it_changed

    found: dict[str, list[str]] = {"stages": [], "recipes": [], "slices": []}
    for index, comparison in enumerate(comparisons.values()):
        why = why_it_changed(comparison)
        found["stages"].extend(why["stages"]["lines"])
        found["slices"].extend(why["slices"]["lines"])
        if index == 0:  # the same two reports in every mode
            found["recipes"] = [line for pair in why["recipes"] for line in pair["lines"]]
    return found


def _load(source: Any, resolve: Any) -> EvaluationReport:
    report: EvaluationReport = source if isinstance(source, EvaluationReport) else resolve(source)
    return report


def _uncalibrated(report: EvaluationReport, calibration: Any) -> dict[str, str]:
    """``{judge metric: "not calibrated: ..."}`` for the new report's LLM judges a check may not gate on
    (``calibration`` given: :func:`heta_nb.reviews.calibrate` of a reviewed report), else ``{}``."""
    if calibration is None:
        return {}
    judges = (report.metadata.get("heta_nb") or {}).get("judges") or {}
    found = {}
    for metric, record in judges.items():
        version = record.get("version") if isinstance(record, dict) else None
        why = calibration.gate_reason(str(metric), version if isinstance(version, str) else None)
        if why:
            found[str(metric)] = why
    return found
