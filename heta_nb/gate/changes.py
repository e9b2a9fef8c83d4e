"""Cases whose outcome changed between two reports: flipped pass/fail per metric, and errors started or fixed.

A score *passes* when Heta says so (its ``passed`` is a bool), else when its bool value is
true, else when its number is above 0 (something relevant found, some answer overlap) or,
with a pass mark for that metric, at least the mark. Skipped scores (no gold data) and
text values neither pass nor fail. Cases are matched as the comparison matched them.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from heta_nb.gate.result import CaseChange, ErrorCheck
from heta_nb.gate.thresholds import Thresholds
from heta_nb.model.report import EvaluationReport
from heta_nb.model.summary import numeric_value

__all__ = ["case_changes", "passes"]


def passes(score: Mapping[str, Any], mark: float | None, *, include_skipped: bool = False) -> bool | None:
    """Whether one raw score passes (None: it can neither pass nor fail).

    Args:
        score: A raw score (``name``, ``value``, ``passed``, ``metadata``).
        mark: The pass mark of its metric, if any (else a number passes above 0).
        include_skipped: Judge skipped scores too (as the value Heta recorded).

    Returns:
        True, False, or None for a skipped, text or non-finite score.
    """
    if score["metadata"].get("skipped") is True and not include_skipped:
        return None
    if isinstance(score["passed"], bool):
        return score["passed"]
    value = score["value"]
    if isinstance(value, bool):
        return value
    number = numeric_value(value)
    if number is None or number != number or number in (float("inf"), float("-inf")):
        return None
    return number >= mark if mark is not None else number > 0.0


def _index(report: EvaluationReport, mode: str, by_case: bool) -> dict[Any, Mapping[str, Any]]:
    found: dict[Any, Mapping[str, Any]] = {}
    for result in report.raw["case_results"]:
        if result["query_mode"] != mode:
            continue
        unit = result["metadata"].get("benchmark_run_unit")
        key = result["case_id"] if by_case else (unit if isinstance(unit, str) else "", result["case_id"])
        found.setdefault(key, result)  # the first result of a case, as the comparison uses
    return found


def _error_text(error: Mapping[str, Any] | None) -> str | None:
    return None if error is None else f"{error['error_type']}: {error['message']}"


def _unit(result: Mapping[str, Any]) -> str | None:
    unit = result["metadata"].get("benchmark_run_unit")
    return unit if isinstance(unit, str) else None


def case_changes(
    new: EvaluationReport,
    baseline: EvaluationReport,
    metrics: Mapping[str, Sequence[str]],
    *,
    by_case: Mapping[str, bool],
    thresholds: Thresholds,
    include_skipped: bool,
    max_new_errors: int | None,
) -> tuple[list[CaseChange], list[CaseChange], list[ErrorCheck]]:
    """The flipped cases, the error changes and the error counts of every checked mode.

    Args:
        new: The new report.
        baseline: The baseline report.
        metrics: Per checked mode, its metrics.
        by_case: Per mode, whether cases are matched by ``case_id`` alone (as the comparison did).
        thresholds: The pass marks.
        include_skipped: Judge skipped scores too.
        max_new_errors: Errors allowed to start per mode (None: listed, not gated).

    Returns:
        ``(flips, error_changes, error_checks)``, flips in baseline case order, broke before fixed.
    """
    flips: list[CaseChange] = []
    error_changes: list[CaseChange] = []
    checks: list[ErrorCheck] = []
    for mode, names in metrics.items():
        ours = _index(new, mode, by_case.get(mode, False))
        theirs = _index(baseline, mode, by_case.get(mode, False))
        marks = {metric: thresholds.pass_mark(mode, metric) for metric in names}
        broke: list[CaseChange] = []
        fixed: list[CaseChange] = []
        introduced = repaired = 0
        for key, before in theirs.items():
            after = ours.get(key)
            if after is None:
                continue
            common = {"mode": mode, "case_id": before["case_id"], "query": before["query"], "unit": _unit(before)}
            if (before["error"] is None) != (after["error"] is None):
                started = after["error"] is not None
                introduced += started
                repaired += not started
                error_changes.append(
                    CaseChange(
                        kind="new error" if started else "error fixed",
                        baseline=_error_text(before["error"]),
                        new=_error_text(after["error"]),
                        **common,
                    )
                )
                continue
            if after["error"] is not None:
                continue
            old_scores = {s["name"]: s for s in before["scores"]}
            new_scores = {s["name"]: s for s in after["scores"]}
            for metric in names:
                a, b = old_scores.get(metric), new_scores.get(metric)
                if a is None or b is None:
                    continue
                was = passes(a, marks[metric], include_skipped=include_skipped)
                now = passes(b, marks[metric], include_skipped=include_skipped)
                if was is None or now is None or was == now:
                    continue
                change = CaseChange(
                    kind="fixed" if now else "broke", metric=metric, baseline=a["value"], new=b["value"], **common
                )
                (fixed if now else broke).append(change)
        flips.extend(broke)
        flips.extend(fixed)
        checks.append(
            ErrorCheck(
                mode=mode,
                baseline_errors=sum(1 for r in theirs.values() if r["error"] is not None),
                new_errors=sum(1 for r in ours.values() if r["error"] is not None),
                introduced=introduced,
                fixed=repaired,
                allowed=max_new_errors,
            )
        )
    return flips, error_changes, checks
