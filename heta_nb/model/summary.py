"""Score summaries: Heta's exact ``score_summary`` (:func:`heta_score_summary`) and heta_nb's
honest statistics (:func:`summarize_metrics`: n, errors, skipped, spread and a CI).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Protocol

from heta_nb._util.text import plural
from heta_nb.model.collect import ERROR, TEXT, RowCollector

__all__ = [
    "EXACT_NUMBERS",
    "HasRaw",
    "MetricSummary",
    "as_float",
    "heta_score_summary",
    "heta_summary_of_rows",
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
    scored_ci_low: float = math.nan
    """The interval of ``mean_scored`` (skipped scores left out); NaN bounds: too few."""
    scored_ci_high: float = math.nan
    not_applicable: str = ""
    """Why the mode cannot produce this metric (e.g. ``"full_text_search returns no
    answers"``), or ``""``: then every view shows "n/a" instead of a number."""

    @property
    def applicable(self) -> bool:
        """Whether the mode can produce this metric (see :attr:`not_applicable`)."""
        return not self.not_applicable

    @property
    def n_scored(self) -> int:
        """Numeric values that were scored (skipped ones left out): the n of :attr:`shown`."""
        return self.n - self.skipped

    @property
    def shown(self) -> float:
        """The number every view shows first: the mean of the scored values (skipped left
        out, as comparisons and the gate test them); NaN when the metric is n/a or text.
        Heta's number (skipped averaged in as 0) is :attr:`mean`."""
        return self.mean_scored if self.applicable and self.kind != "text" else math.nan

    @property
    def shown_ci(self) -> tuple[float, float]:
        """The interval of :attr:`shown` (NaN bounds when n/a)."""
        if not self.applicable or self.kind == "text":
            return (math.nan, math.nan)
        return (self.scored_ci_low, self.scored_ci_high)

    @property
    def label(self) -> str:
        """How :attr:`shown` is labelled: ``"mean of 89 scored"`` or ``"n/a"``."""
        return f"mean of {self.n_scored:,} scored" if self.applicable else "n/a"

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
        """Plain words on where Heta's summary hides something, or ``""`` (an n/a metric
        says why first: ``"n/a: full_text_search returns no answers"``)."""
        if self.not_applicable:
            return f"n/a: {self.not_applicable}"
        parts = []
        if self.errors:
            parts.append(f"{plural(self.errors, 'errored case', grouping=False)} not counted")
        if self.skipped:
            parts.append(
                f"{plural(self.skipped, 'skipped score', grouping=False)} (no gold data) left out of the mean; "
                "Heta's score_summary averages them in as 0"
            )
        if self.evaluator_errors:
            parts.append(f"{plural(self.evaluator_errors, 'evaluator error', grouping=False)} not counted")
        other = self.missing - self.errors - self.evaluator_errors
        if other > 0:
            parts.append(f"{plural(other, 'case', grouping=False)} without this score")
        return "; ".join(parts)


def summarize_metrics(report: Any, *, confidence: float = 0.95) -> list[MetricSummary]:
    """One :class:`MetricSummary` per mode × metric, in mode then evaluator order.

    Args:
        report: An ``EvaluationReport`` (computed from its ``columns``).
        confidence: The confidence level of the intervals.

    Returns:
        The summaries; ``EvaluationReport.metric_summaries`` keeps them per level.
    """
    summaries: list[MetricSummary] = report.columns.metric_summaries(confidence=confidence)
    return summaries


def heta_summary_of_rows(rows: RowCollector) -> dict[str, float]:
    """:func:`heta_score_summary` of the case results ``rows`` collected, bit for bit.

    Args:
        rows: A report's :class:`~heta_nb.model.collect.RowCollector`.

    Returns:
        ``{"mode.score name": mean}``, keys sorted.
    """
    modes = list(rows.mode_index)
    grouped: dict[str, list[tuple[int, int, float]]] = {}
    sources: dict[str, set[tuple[int, str]]] = {}
    for name, slot in rows.metric_index.items():
        entries = rows.metrics[slot]
        keys = [f"{mode}.{name}" for mode in modes]
        for entry, kind in enumerate(entries.kinds):
            if kind == TEXT or kind == ERROR:
                continue
            row = entries.rows[entry]
            code = rows.mode_code[row]
            grouped.setdefault(keys[code], []).append((row, entries.positions[entry], entries.values[entry]))
            sources.setdefault(keys[code], set()).add((code, name))
    result = {}
    for key in sorted(grouped):
        items = grouped[key]
        if len(sources[key]) > 1:  # two (mode, metric) pairs share the key: Heta's one list, in report order
            items = sorted(items)
        numbers = [value for _, _, value in items]
        result[key] = sum(numbers) / len(numbers)
    return result
