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
    "RECORD_KEYS",
    "STATUSES",
    "HasRaw",
    "MetricSummary",
    "best_modes",
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


STATUSES = ("scored", "n/a", "errored", "skipped", "labels")
"""What a (mode, metric) summary can show: a number (``"scored"``), or why not: the mode
cannot produce the metric (``"n/a"``), every score was an evaluator error (``"errored"``),
every score was skipped for lack of gold data (``"skipped"``), or the values are labels
(text) with no mean (``"labels"``)."""

RECORD_KEYS = (
    "query_mode",
    "metric",
    "status",
    "mean",
    "n",
    "ci_low",
    "ci_high",
    "confidence",
    "cases",
    "errors",
    "evaluator_errors",
    "skipped",
    "reason",
    "heta_mean",
    "heta_n",
    "kind",
)
"""The keys of :meth:`MetricSummary.record`: what every machine-readable output (Parquet,
MLflow, JSON, CSV) writes of a (mode, metric), under these names."""


@dataclass(frozen=True)
class MetricSummary:
    """Statistics of one metric in one query mode: the one summary every output reads.

    The headline is :attr:`shown` (the mean of the scored values: skipped scores, which
    have no gold data, left out), its n :attr:`shown_n` and interval :attr:`shown_ci`;
    :attr:`status` says when there is no number and :attr:`reason` why. ``mean`` is
    Heta's number (skipped scores averaged in as 0, errors left out), so it equals the
    report's ``score_summary`` entry; it is read as :attr:`heta_mean`, never as the
    headline. The interval is Wilson for boolean scores and for numbers that are all 0
    or 1 (proportions), else Student-t (clipped to [0, 1] when every value lies there);
    NaN bounds mean "not enough data".
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
    """Standard deviation of the scored values (skipped left out, as :attr:`shown`)."""
    ci_low: float
    """The interval of Heta's :attr:`mean` (skipped scores counted as 0)."""
    ci_high: float
    minimum: float
    """The smallest scored value (skipped left out); NaN without one."""
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
        """Numeric values that were scored (skipped ones left out)."""
        return self.n - self.skipped

    @property
    def status(self) -> str:
        """One of :data:`STATUSES`: ``"scored"`` when there is a number to show."""
        if self.not_applicable:
            return "n/a"
        if self.kind == "text":
            return "errored" if self.evaluator_errors and not self.n else "labels"
        if self.n_scored <= 0:
            return "skipped"
        return "scored"

    @property
    def scored(self) -> bool:
        """Whether there is a number to show (:attr:`status` ``"scored"``)."""
        return self.status == "scored"

    @property
    def reason(self) -> str:
        """Why there is no number, in plain words (``""`` when there is one):
        ``"full_text_search returns no answers"``, ``"every score is an evaluator error
        (95)"``, ``"every score was skipped (no gold data)"``, ``"labels, no mean"``."""
        status = self.status
        if status == "n/a":
            return self.not_applicable
        if status == "errored":
            return f"every score is an evaluator error ({self.evaluator_errors:,})"
        if status == "skipped":
            return f"every score was skipped (no gold data: {self.skipped:,})"
        if status == "labels":
            return "labels, no mean"
        return ""

    @property
    def shown(self) -> float:
        """The number every view shows first: the mean of the scored values (skipped left
        out, as comparisons and the gate test them); NaN unless :attr:`status` is
        ``"scored"``. Heta's number (skipped averaged in as 0) is :attr:`heta_mean`."""
        return self.mean_scored if self.status == "scored" else math.nan

    @property
    def shown_n(self) -> int:
        """The values behind :attr:`shown` (0 when there is no number)."""
        return self.n_scored if self.status == "scored" else 0

    @property
    def shown_ci(self) -> tuple[float, float]:
        """The interval of :attr:`shown` (NaN bounds when there is no number or too few values)."""
        if self.status != "scored":
            return (math.nan, math.nan)
        return (self.scored_ci_low, self.scored_ci_high)

    @property
    def heta_mean(self) -> float:
        """Heta's own mean (``score_summary``: skipped scores averaged in as 0), over :attr:`n`."""
        return self.mean

    @property
    def error_text(self) -> str:
        """``"95 evaluator errors"`` (what every output shows beside the value), or ``""``."""
        return plural(self.evaluator_errors, "evaluator error") if self.evaluator_errors else ""

    @property
    def label(self) -> str:
        """How :attr:`shown` is labelled: ``"mean of 89 scored"``, or the status (``"n/a"``...)."""
        return f"mean of {self.n_scored:,} scored" if self.status == "scored" else self.status

    def value_text(self, digits: int = 3) -> str:
        """:attr:`shown` as text (``"0.778"``), or ``"n/a"`` when there is no number."""
        value = self.shown
        return f"{value:.{digits}f}" if math.isfinite(value) else "n/a"

    def record(self) -> dict[str, Any]:
        """This summary as plain data under :data:`RECORD_KEYS` (NaN where there is no number).

        ``mean``, ``n``, ``ci_low`` and ``ci_high`` are the headline (:attr:`shown`,
        :attr:`shown_n`, :attr:`shown_ci`); ``heta_mean`` and ``heta_n`` are Heta's.
        """
        low, high = self.shown_ci
        return {
            "query_mode": self.mode,
            "metric": self.metric,
            "status": self.status,
            "mean": self.shown,
            "n": self.shown_n,
            "ci_low": low,
            "ci_high": high,
            "confidence": self.confidence,
            "cases": self.cases,
            "errors": self.errors,
            "evaluator_errors": self.evaluator_errors,
            "skipped": self.skipped,
            "reason": self.reason,
            "heta_mean": self.mean if self.n else math.nan,
            "heta_n": self.n,
            "kind": self.kind,
        }

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
        """Plain words on where Heta's summary hides something, or ``""`` (a metric with
        no number says why first: ``"n/a: full_text_search returns no answers"``)."""
        if self.not_applicable:
            return f"n/a: {self.not_applicable}"
        parts = []
        if self.status in ("errored", "skipped"):
            parts.append(f"{self.status}: {self.reason}")
        if self.errors:
            parts.append(f"{plural(self.errors, 'errored case', grouping=False)} not counted")
        if self.skipped:
            parts.append(
                f"{plural(self.skipped, 'skipped score', grouping=False)} (no gold data) left out of the mean; "
                "Heta's score_summary averages them in as 0"
            )
        if self.evaluator_errors and self.status != "errored":
            parts.append(f"{plural(self.evaluator_errors, 'evaluator error', grouping=False)} not counted")
        other = self.missing - self.errors - self.evaluator_errors
        if other > 0:
            parts.append(f"{plural(other, 'case', grouping=False)} without this score")
        return "; ".join(parts)


def best_modes(summaries: Iterable[MetricSummary]) -> dict[str, float]:
    """``{metric: best shown mean}`` where two or more modes have a number and they differ:
    the one rule behind every "best" mark and line (n/a and other statuses never lead).

    Args:
        summaries: Summaries of one report.

    Returns:
        The best headline mean per metric (every mode with that mean is best).
    """
    found: dict[str, list[float]] = {}
    for s in summaries:
        if s.scored and math.isfinite(s.shown):
            found.setdefault(s.metric, []).append(s.shown)
    return {metric: max(values) for metric, values in found.items() if len(values) >= 2 and max(values) > min(values)}


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
