"""Score summaries: Heta's exact ``score_summary`` (:func:`heta_score_summary`) and heta_nb's
honest statistics (:func:`summarize_metrics`: n, errors, skipped, spread and a CI).
"""

from __future__ import annotations

import math
from array import array
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any, Protocol

from heta_nb import stats
from heta_nb._util.text import plural

__all__ = [
    "EXACT_NUMBERS",
    "HasRaw",
    "MetricCollector",
    "MetricSummary",
    "as_float",
    "heta_score_summary",
    "is_evaluator_error",
    "numeric_value",
    "summarize_metrics",
]


class HasRaw(Protocol):
    """A record read through its JSON object: an ``EvaluationCaseResult`` or ``EvaluationReport``.

    The summaries need only ``raw``, so this module does not import the records (which
    import it for their ``numeric``, ``score_summary`` and ``metric_summaries``).
    """

    @property
    def raw(self) -> dict[str, Any]:
        """The record's JSON object."""
        ...


EXACT_NUMBERS = frozenset((float, int, bool))
"""Types whose ``float()`` is :func:`numeric_value` (bool -> 1.0/0.0)."""


def is_evaluator_error(score: Mapping[str, Any]) -> bool:
    """Whether a score's JSON object records an evaluator that raised (value ``"error"``,
    the cause in ``metadata.error``), as the runner writes it."""
    return score["value"] == "error" and isinstance(score["metadata"].get("error"), Mapping)


def numeric_value(value: Any) -> float | None:
    """A score value as Heta's summary counts it: bool -> 1.0/0.0, number -> float, else None.

    An integer beyond the float range is ``inf`` or ``-inf`` (see :func:`as_float`).
    """
    if type(value) in EXACT_NUMBERS:  # the common case, first
        try:
            return float(value)
        except OverflowError:
            return as_float(value)
    if isinstance(value, bool):
        return 1.0 if value else 0.0
    if isinstance(value, (int, float)):
        return as_float(value)
    return None


def as_float(value: float | int) -> float:
    """``float(value)``, with an integer too large for a float as ``inf`` or ``-inf``.

    JSON allows an integer of any size (Python reads ``1`` and 400 zeros as ``int``), where
    ``float()`` raises ``OverflowError``; Heta 0.1.2's summary crashes on such a
    report, heta_nb counts it as the infinity it rounds to.
    """
    try:
        return float(value)
    except OverflowError:
        return math.inf if value > 0 else -math.inf


def heta_score_summary(case_results: Iterable[HasRaw]) -> dict[str, float]:
    """Heta 0.1.2's ``score_summary`` of ``case_results``, bit for bit (same order of sums).

    Heta's summary is the plain mean of every numeric score per ``"{mode}.{score name}"``
    key: bools count as 1.0/0.0, strings are left out, errored cases are silently dropped
    (they have no scores) and skipped scores (0.0/False when a case has no gold data) are
    averaged in. :func:`summarize_metrics` adds what it hides.

    One difference: an integer score beyond the float range counts as ``inf``/``-inf``
    (see :func:`as_float`), where Heta's ``float()`` raises ``OverflowError``.

    Values are grouped per mode, then per score name, without building Heta's
    ``"mode.name"`` key for every score; when two pairs would share a key (mode
    ``"a.b"`` with score ``"c"``, mode ``"a"`` with score ``"b.c"``), Heta's own
    single-list order is rebuilt so the sums stay identical.

    Args:
        case_results: ``EvaluationCaseResult`` objects (only their ``raw`` is read).

    Returns:
        ``{"mode.score name": mean}``, keys sorted, as Heta writes ``score_summary``.
    """
    results = case_results if isinstance(case_results, (list, tuple)) else list(case_results)
    by_mode: dict[str, dict[str, list[float]]] = {}
    for result in results:
        data = result.raw
        mode = data["query_mode"]
        lists = by_mode.get(mode)
        if lists is None:
            lists = by_mode[mode] = {}
        for score in data["scores"]:
            numeric = numeric_value(score["value"])
            if numeric is None:
                continue
            items = lists.get(score["name"])
            if items is None:
                lists[score["name"]] = [numeric]
            else:
                items.append(numeric)
    values = {f"{mode}.{name}": items for mode, lists in by_mode.items() for name, items in lists.items()}
    if len(values) < sum(len(lists) for lists in by_mode.values()):
        return _heta_score_summary_keyed(results)
    return {key: sum(items) / len(items) for key, items in sorted(values.items()) if items}


def _heta_score_summary_keyed(case_results: Iterable[HasRaw]) -> dict[str, float]:
    """Heta's algorithm as written: one list per ``"mode.name"`` key, in report order."""
    values: dict[str, list[float]] = {}
    for result in case_results:
        data = result.raw
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
    out. The interval is Wilson for boolean scores and for numbers that are all 0 or 1
    (proportions), else Student-t (clipped to [0, 1] when every value lies there); NaN
    bounds mean "not enough data".
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
    evaluator_errors: int = 0
    """Scores of this metric whose evaluator raised (value ``"error"``): not in ``n``."""

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
            parts.append(f"{plural(self.errors, 'errored case', grouping=False)} not counted")
        if self.skipped:
            parts.append(f"{plural(self.skipped, 'skipped score', grouping=False)} averaged in as 0")
        if self.evaluator_errors:
            parts.append(f"{plural(self.evaluator_errors, 'evaluator error', grouping=False)} not counted")
        other = self.missing - self.errors - self.evaluator_errors
        if other > 0:
            parts.append(f"{plural(other, 'case', grouping=False)} without this score")
        return "; ".join(parts)


def summarize_metrics(report: HasRaw, *, confidence: float = 0.95) -> list[MetricSummary]:
    """One :class:`MetricSummary` per mode × metric, in mode then evaluator order.

    Args:
        report: An ``EvaluationReport`` (only its ``raw`` JSON object is read).
        confidence: The confidence level of the intervals.

    Returns:
        The summaries; ``EvaluationReport.metric_summaries`` keeps them per level.
    """
    collector = MetricCollector(report.raw["query_modes"])
    add = collector.add
    for result in report.raw["case_results"]:
        add(result)
    return collector.summaries(confidence=confidence)


class MetricCollector:
    """Accumulates, one case result at a time, what :func:`summarize_metrics` needs.

    A caller that walks every case result anyway (the HTML renderer) feeds the same
    pass and gets identical summaries, instead of walking a large report twice.

    Args:
        modes: the report's ``query_modes`` (their order comes first, duplicates dropped).
    """

    __slots__ = ("cases", "errors", "metrics", "modes", "_series")

    def __init__(self, modes: Iterable[str] = ()) -> None:
        self.modes: dict[str, None] = dict.fromkeys(modes)
        """Modes in report order (``query_modes``, then modes only seen in results)."""
        self.metrics: dict[str, None] = {}
        """Score names in first-seen order (the report's ``metric_names``)."""
        self.cases: dict[str, int] = dict.fromkeys(self.modes, 0)
        self.errors: dict[str, int] = dict.fromkeys(self.modes, 0)
        # mode -> score name -> [values, has a non-bool number, skipped positions or None,
        #                        scores whose evaluator raised]
        self._series: dict[str, dict[str, list[Any]]] = {}

    def _mode(self, mode: str) -> dict[str, list[Any]]:
        series: dict[str, list[Any]] = {}
        self._series[mode] = series
        if mode not in self.modes:
            self.modes[mode] = None
            self.cases[mode] = 0
            self.errors[mode] = 0
        return series

    def add(self, result: Mapping[str, Any]) -> None:
        """Count one case result, given in its JSON form (``EvaluationCaseResult.raw``)."""
        mode = result["query_mode"]
        series = self._series.get(mode)
        if series is None:
            series = self._mode(mode)
        self.cases[mode] += 1
        if result["error"] is not None:
            self.errors[mode] += 1
        for score in result["scores"]:
            value = score["value"]
            kind = type(value)
            entry = series.get(score["name"])
            if entry is None:
                entry = series[score["name"]] = [array("d"), False, None, 0]
                self.metrics.setdefault(score["name"], None)
            if kind is float:
                entry[1] = True
            elif kind is bool:
                value = 1.0 if value else 0.0
            elif kind is int:
                entry[1] = True
                value = as_float(value)
            else:
                numeric = numeric_value(value)
                if numeric is None:  # text: counted by name only
                    if is_evaluator_error(score):
                        entry[3] += 1
                    continue
                if not isinstance(value, bool):
                    entry[1] = True
                value = numeric
            if score["metadata"].get("skipped") is True:
                if entry[2] is None:
                    entry[2] = []
                entry[2].append(len(entry[0]))
            entry[0].append(value)

    def values(self, mode: str, metric: str) -> Sequence[float]:
        """The numeric values collected so far for ``metric`` in ``mode`` (do not modify)."""
        entry = self._series.get(mode, {}).get(metric)
        return entry[0] if entry is not None else ()

    def skipped_positions(self, mode: str, metric: str) -> Sequence[int]:
        """Positions in :meth:`values` of the skipped scores (``metadata.skipped``), increasing."""
        entry = self._series.get(mode, {}).get(metric)
        return entry[2] or () if entry is not None else ()

    def summaries(self, *, confidence: float = 0.95) -> list[MetricSummary]:
        """One :class:`MetricSummary` per mode × metric seen, in mode then metric order."""
        summaries = []
        for mode in self.modes:
            series = self._series.get(mode)
            if series is None:
                continue
            for metric in self.metrics:
                entry = series.get(metric)
                if entry is None:
                    continue
                nums, plain, skips, failed = entry
                summary = _summary(
                    mode, metric, nums, plain, skips or (), self.cases[mode], self.errors[mode], confidence
                )
                summaries.append(replace(summary, evaluator_errors=failed) if failed else summary)
        return summaries


def _summary(
    mode: str,
    metric: str,
    nums: array[float],
    plain: bool,
    skips: Sequence[int],
    cases: int,
    errors: int,
    confidence: float,
) -> MetricSummary:
    nan = math.nan
    n = len(nums)
    if n == 0:
        kind = "text"
    elif not plain:
        kind = "bool"
    else:
        kind = "number"
    total = sum(nums)
    mean = total / n if n else nan
    if skips:
        # ``skips`` holds increasing positions: keep the runs between them, in order.
        scored = array("d")
        start = 0
        for position in skips:
            scored.extend(nums[start:position])
            start = position + 1
        scored.extend(nums[start:])
        mean_scored = stats.mean(scored)
    else:
        mean_scored = mean
    finite: Sequence[float]
    if math.isfinite(total):
        # A finite sum means no value is NaN or infinite, so min/max are exact.
        finite = nums
    else:
        finite = [v for v in nums if math.isfinite(v)]
    minimum = min(finite) if finite else nan
    maximum = max(finite) if finite else nan
    try:
        centre: float | None = math.fsum(nums) / n if n else None
    except (OverflowError, ValueError):
        centre = None  # the stats functions handle these cases themselves
    std = stats.sample_std(nums, centre=centre)
    if kind == "bool" or (finite is nums and 0.0 <= minimum and maximum <= 1.0 and stats.is_binary(nums)):
        # Booleans, and numbers that are all 0 or 1 (hit@K, a recall with one relevant
        # document): a proportion, whose t interval has zero width at 0 % or 100 %.
        ci = stats.wilson_interval(int(total), n, confidence)
    else:
        ci = stats.t_interval(nums, confidence, std=std, centre=centre)
        if nums and finite is nums and 0.0 <= minimum and maximum <= 1.0:
            # A score that lives in [0, 1] (recall, nDCG, F1...) cannot have a mean
            # outside it; the t interval can, for small n, so it is clipped.
            ci = (max(0.0, ci[0]), min(1.0, ci[1]))
    return MetricSummary(
        mode=mode,
        metric=metric,
        kind=kind,
        n=n,
        cases=cases,
        errors=errors,
        skipped=len(skips),
        mean=mean,
        mean_scored=mean_scored,
        std=std,
        ci_low=ci[0],
        ci_high=ci[1],
        minimum=minimum,
        maximum=maximum,
        confidence=confidence,
        values=tuple(nums),
    )
