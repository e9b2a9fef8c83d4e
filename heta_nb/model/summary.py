"""Score summaries: Heta's exact ``score_summary`` and heta_nb's honest statistics.

Heta's summary (``heta_score_summary``) is the plain mean of every numeric score per
``"{mode}.{score name}"`` key: bools count as 1.0/0.0, strings are left out, errored
cases are silently dropped (they have no scores) and skipped scores (0.0/False when a
case has no gold data) are averaged in. heta_nb reproduces it exactly, and
``summarize_metrics`` adds what it hides: n, errors, skipped, spread and a CI.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from heta_nb import stats

if TYPE_CHECKING:  # pragma: no cover
    from heta_nb.model.report import EvaluationCaseResult, EvaluationReport

__all__ = ["MetricSummary", "heta_score_summary", "numeric_value", "summarize_metrics"]


def numeric_value(value: Any) -> float | None:
    """A score value as Heta's summary counts it: bool -> 1.0/0.0, number -> float, else None."""
    if isinstance(value, bool):
        return 1.0 if value else 0.0
    if isinstance(value, (int, float)):
        return float(value)
    return None


def heta_score_summary(case_results: Iterable[EvaluationCaseResult]) -> dict[str, float]:
    """Heta 0.1.2's ``score_summary`` of ``case_results``, bit for bit (same order of sums)."""
    values: dict[str, list[float]] = {}
    for result in case_results:
        data = result._data
        mode = data["query_mode"]
        for score in data["scores"]:
            numeric = numeric_value(score["value"])
            if numeric is not None:
                values.setdefault(f"{mode}.{score['name']}", []).append(numeric)
    return {key: sum(items) / len(items) for key, items in sorted(values.items()) if items}


@dataclass(frozen=True)
class MetricSummary:
    """Statistics of one metric in one query mode.

    ``mean`` is Heta's number (skipped scores averaged in as 0, errors left out), so it
    equals the report's ``score_summary`` entry. ``mean_scored`` leaves skipped scores
    out. The interval is Student-t for numeric scores (clipped to [0, 1] when every
    value lies there) and Wilson for boolean ones; NaN bounds mean "not enough data".
    """

    mode: str
    metric: str
    kind: str
    """``"bool"``, ``"number"`` or ``"text"`` (text scores have no mean)."""
    n: int
    """Numeric values Heta averages (skipped ones included)."""
    cases: int
    """Case results of this mode."""
    errors: int
    """Case results of this mode that errored, hence have no score at all."""
    skipped: int
    mean: float
    mean_scored: float
    std: float
    ci_low: float
    ci_high: float
    minimum: float
    maximum: float
    confidence: float
    values: tuple[float, ...]

    @property
    def key(self) -> str:
        """The ``score_summary`` key: ``"{mode}.{metric}"``."""
        return f"{self.mode}.{self.metric}"

    @property
    def missing(self) -> int:
        """Case results without a numeric score (errors, text values, evaluator gaps)."""
        return self.cases - self.n

    @property
    def note(self) -> str:
        """Plain words on where Heta's summary hides something, or ``""``."""
        parts = []
        if self.errors:
            parts.append(f"{self.errors} errored case{'s' if self.errors != 1 else ''} not counted")
        if self.skipped:
            parts.append(f"{self.skipped} skipped score{'s' if self.skipped != 1 else ''} averaged in as 0")
        other = self.missing - self.errors
        if other > 0:
            parts.append(f"{other} case{'s' if other != 1 else ''} without this score")
        return "; ".join(parts)


def summarize_metrics(report: EvaluationReport, *, confidence: float = 0.95) -> list[MetricSummary]:
    """One :class:`MetricSummary` per mode × metric, in mode then evaluator order."""
    modes = report.modes
    metrics = report.metric_names
    cases = dict.fromkeys(modes, 0)
    errors = dict.fromkeys(modes, 0)
    collected: dict[tuple[str, str], tuple[list[float], list[bool], list[bool]]] = {}
    texts: set[tuple[str, str]] = set()
    for result in report._data["case_results"]:
        mode = result["query_mode"]
        cases[mode] += 1
        if result["error"] is not None:
            errors[mode] += 1
        for score in result["scores"]:
            value = score["value"]
            key = (mode, score["name"])
            numeric = numeric_value(value)
            if numeric is None:
                texts.add(key)
                continue
            nums, bools, skips = collected.setdefault(key, ([], [], []))
            nums.append(numeric)
            bools.append(isinstance(value, bool))
            skips.append(score["metadata"].get("skipped") is True)
    summaries = []
    for mode in modes:
        for metric in metrics:
            key = (mode, metric)
            if key not in collected and key not in texts:
                continue
            nums, bools, skips = collected.get(key, ([], [], []))
            summaries.append(_summary(mode, metric, nums, bools, skips, cases[mode], errors[mode], confidence))
    return summaries


def _summary(
    mode: str,
    metric: str,
    nums: list[float],
    bools: list[bool],
    skips: list[bool],
    cases: int,
    errors: int,
    confidence: float,
) -> MetricSummary:
    nan = math.nan
    n = len(nums)
    if n == 0:
        kind = "text"
    elif all(bools):
        kind = "bool"
    else:
        kind = "number"
    scored = [v for v, s in zip(nums, skips) if not s]
    if kind == "bool":
        ci = stats.wilson_interval(int(sum(nums)), n, confidence)
    else:
        ci = stats.t_interval(nums, confidence)
        if nums and all(0.0 <= v <= 1.0 for v in nums):
            # A score that lives in [0, 1] (recall, nDCG, F1...) cannot have a mean
            # outside it; the t interval can, for small n, so it is clipped.
            ci = (max(0.0, ci[0]), min(1.0, ci[1]))
    finite = [v for v in nums if math.isfinite(v)]
    return MetricSummary(
        mode=mode,
        metric=metric,
        kind=kind,
        n=n,
        cases=cases,
        errors=errors,
        skipped=sum(skips),
        mean=stats.mean(nums),
        mean_scored=stats.mean(scored),
        std=stats.sample_std(nums),
        ci_low=ci[0],
        ci_high=ci[1],
        minimum=min(finite) if finite else nan,
        maximum=max(finite) if finite else nan,
        confidence=confidence,
        values=tuple(nums),
    )
