"""One column table per report (:class:`ReportColumns`): numpy arrays of every case result's
codes, latency, texts and scores, from which every view derives without a loop per row.

Built once from the report's :class:`~heta_nb.model.collect.RowCollector` and kept on the
(immutable) report as ``report.columns``; numpy is imported only here.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from functools import cached_property
from typing import Any

import numpy as np

from heta_nb import stats
from heta_nb.model.collect import BOOL, ERROR, FLOAT, INT, PASSED, PASSED_TRUE, SKIPPED, TEXT, MetricRows, RowCollector
from heta_nb.model.summary import MetricSummary

__all__ = ["ANSWER_METRICS", "MetricColumn", "ReportColumns", "required_input"]

ANSWER_METRICS = frozenset(("exact_match", "em", "f1", "contains", "rouge_l", "bleu", "faithfulness"))
"""Metric names (besides ``answer_*``) that score the response's answer (``faithfulness``: an LLM judge's)."""
RESULT_METRICS = frozenset(("context_precision", "context_recall"))
"""Metric names (besides the retrieval metrics ``ndcg@5``...) that score the retrieved results (LLM judges)."""

_RETRIEVAL_PREFIXES = ("evidence_recall@", "recall@", "ndcg@", "mrr@", "map@", "precision@", "hit@", "hits@")


def required_input(metric: str) -> str:
    """What a metric scores: ``"answer"`` (``answer_*`` and :data:`ANSWER_METRICS`),
    ``"results"`` (the built-in retrieval metrics, ``ndcg@5``...) or ``""`` (unknown: a
    custom evaluator is never n/a)."""
    name = metric.strip().lower()
    if name.startswith("answer_") or name in ANSWER_METRICS:
        return "answer"
    if name in RESULT_METRICS:
        return "results"
    if name.startswith(_RETRIEVAL_PREFIXES) or name.startswith(tuple("beir_" + p for p in _RETRIEVAL_PREFIXES)):
        return "results"
    return ""


class MetricColumn:
    """Every score of one metric, one entry per score in report order (numpy arrays).

    A case result normally has each metric once; one that has it twice has two entries
    (:meth:`first` and :meth:`last` pick one per row where a view needs that).
    """

    __slots__ = ("_source", "flags", "kinds", "name", "positions", "rows", "values")

    def __init__(self, name: str, source: MetricRows) -> None:
        self.name = name
        self._source = source
        self.rows = np.frombuffer(source.rows, dtype=np.int32) if len(source) else np.zeros(0, np.int32)
        """The row of each entry (non-decreasing)."""
        self.values = np.frombuffer(source.values, dtype=np.float64) if len(source) else np.zeros(0)
        """The value as Heta's summary counts it (bool 1.0/0.0); NaN for text and errors."""
        self.kinds = np.frombuffer(source.kinds, dtype=np.int8) if len(source) else np.zeros(0, np.int8)
        """``collect.BOOL``, ``FLOAT``, ``INT``, ``TEXT`` or ``ERROR`` per entry."""
        self.flags = np.frombuffer(source.flags, dtype=np.int8) if len(source) else np.zeros(0, np.int8)
        self.positions = np.frombuffer(source.positions, dtype=np.int32) if len(source) else np.zeros(0, np.int32)
        """Each score's index in its case result's ``scores``."""

    @property
    def numeric(self) -> np.ndarray:
        """Entries with a number or a bool (what Heta's summary averages)."""
        mask: np.ndarray = (self.kinds == BOOL) | (self.kinds == FLOAT) | (self.kinds == INT)
        return mask

    @property
    def skipped(self) -> np.ndarray:
        """Entries whose ``metadata.skipped`` is true."""
        mask: np.ndarray = (self.flags & SKIPPED) != 0
        return mask

    @property
    def passed(self) -> np.ndarray:
        """``passed`` per entry as int8: -1 null, 0 false, 1 true."""
        out: np.ndarray = np.where((self.flags & PASSED) != 0, ((self.flags & PASSED_TRUE) != 0).astype(np.int8), -1)
        return out.astype(np.int8)

    def value(self, entry: int) -> Any:
        """Entry ``entry``'s value as stored (number, bool or text)."""
        return self._source.value(entry)

    def raw_values(self, entries: np.ndarray | None = None) -> np.ndarray:
        """The stored values of ``entries`` (default: all) as an object array: floats,
        bools, ints and text exactly as in the report."""
        chosen = np.arange(self.rows.size) if entries is None else np.asarray(entries, dtype=np.intp)
        out = self.values[chosen].astype(object)
        kinds = self.kinds[chosen]
        bools = np.flatnonzero(kinds == BOOL)
        if bools.size:
            out[bools] = (self.values[chosen[bools]] == 1.0).tolist()
        others = np.flatnonzero((kinds != BOOL) & (kinds != FLOAT))
        value = self._source.value
        for at in others.tolist():
            out[at] = value(int(chosen[at]))
        return out

    def first(self) -> np.ndarray:
        """For each row with this metric, its first entry (an index into the arrays)."""
        keep = np.ones(self.rows.size, dtype=bool)
        keep[1:] = self.rows[1:] != self.rows[:-1]
        return np.flatnonzero(keep)

    def last(self) -> np.ndarray:
        """For each row with this metric, its last entry."""
        keep = np.ones(self.rows.size, dtype=bool)
        keep[:-1] = self.rows[:-1] != self.rows[1:]
        return np.flatnonzero(keep)


def _ints(values: Any, dtype: type[np.generic] = np.int32) -> np.ndarray:
    return np.frombuffer(values, dtype=dtype).copy() if len(values) else np.zeros(0, dtype)


def _objects(items: Sequence[Any]) -> np.ndarray:
    """An object array of ``items`` (texts), element for element."""
    return np.fromiter(items, dtype=object, count=len(items))  # no detour through a unicode array


class ReportColumns:
    """A report's case results as columns: row ``i`` is ``case_results[i]``.

    Attributes:
        n: Rows (case results).
        modes: The report's modes (``report.modes``); ``mode`` holds indexes into it.
        case_ids: Unique case ids in first-seen order; ``case`` indexes into it.
        units: Benchmark run units (``metadata.benchmark_run_unit``, None when absent);
            ``unit`` indexes into it.
        error_types: Error types in first-seen order; ``error`` indexes into it, -1 for none.
        ok: Rows without an error.
        latency: ``latency_ms`` (NaN where null; ``latency_null`` marks those).
        queries, answers, top_texts, messages: Object arrays of text (None where absent):
            the query, the answer, the first result's text, the error message.
        n_results: Results in each response (0 without one).
        metrics: Score names in first-seen (evaluator) order; :meth:`metric` gives one.
    """

    def __init__(self, rows: RowCollector, modes: Sequence[str]) -> None:
        self.rows_source = rows
        self.n = rows.n
        self.modes: tuple[str, ...] = tuple(modes)
        order = {mode: index for index, mode in enumerate(self.modes)}
        remap = np.array([order[mode] for mode in rows.mode_index], dtype=np.int32)
        self.mode = remap[_ints(rows.mode_code)] if self.n else np.zeros(0, np.int32)
        self.case = _ints(rows.case_code)
        self.units: tuple[str | None, ...] = tuple(rows.unit_index)
        self.unit = _ints(rows.unit_code)
        self.error_types: tuple[str, ...] = tuple(rows.error_index)
        self.error = _ints(rows.error_code)
        self.ok = self.error < 0
        self.latency = np.frombuffer(rows.latency, dtype=np.float64) if self.n else np.zeros(0)
        self.latency_null = np.zeros(self.n, dtype=bool)
        self.latency_null[rows.latency_null] = True
        self.n_results = _ints(rows.n_results).astype(np.int64)
        self.metrics: tuple[str, ...] = tuple(rows.metric_index)
        self._metrics = {name: MetricColumn(name, rows.metrics[slot]) for name, slot in rows.metric_index.items()}

    # -- text columns, made when first read (the summary views need none of them) ----------
    @cached_property
    def case_ids(self) -> np.ndarray:
        """Unique case ids, in first-seen order (``case`` indexes into it)."""
        return _objects(list(self.rows_source.case_index))

    @cached_property
    def queries(self) -> np.ndarray:
        """Each row's query."""
        return _objects(self.rows_source.queries)

    @cached_property
    def answers(self) -> np.ndarray:
        """Each row's answer (None without one)."""
        return _objects(self.rows_source.answers)

    @cached_property
    def top_texts(self) -> np.ndarray:
        """The text of each row's first result (None without results)."""
        return _objects(self.rows_source.top_texts)

    @cached_property
    def messages(self) -> np.ndarray:
        """Each row's error message (None without an error)."""
        messages = self.rows_source.messages
        out = np.full(self.n, None, dtype=object)
        if messages:
            out[np.fromiter(messages, dtype=np.intp, count=len(messages))] = _objects(list(messages.values()))
        return out

    def metric(self, name: str) -> MetricColumn:
        """The scores of metric ``name`` (KeyError if the report has none)."""
        return self._metrics[name]

    def mode_rows(self, mode: str) -> np.ndarray:
        """The rows of ``mode``, in report order."""
        return np.flatnonzero(self.mode == self.modes.index(mode)) if mode in self.modes else np.zeros(0, np.intp)

    def not_applicable(self) -> dict[tuple[str, str], str]:
        """``{(mode, metric): reason}`` for the metrics a mode cannot produce: an answer
        metric (:func:`required_input` ``"answer"``) in a mode none of whose responses carries
        an answer (Heta's ``full_text_search``), a retrieval metric (``"results"``) in a
        mode that never returns a result; in both cases only when every score of it in the
        mode is 0 (a score above 0 shows the evaluator did without the input). The one
        place this is decided; every view reads it through
        :attr:`MetricSummary.not_applicable`.
        """
        found: dict[tuple[str, str], str] = {}
        needs = {name: need for name in self.metrics if (need := required_input(name))}
        if not needs or not self.n:
            return found
        answers = self.rows_source.answers
        for name, need in needs.items():
            column = self._metrics[name]
            numeric = column.numeric
            rows = column.rows[numeric]
            if not rows.size:
                continue
            entry_mode = self.mode[rows]
            scored = np.bincount(entry_mode, minlength=len(self.modes))
            # a score above 0 without the input shows the evaluator does not need it; only
            # modes whose scores are all 0 are candidates (most reports have none: no text scan)
            nonzero = np.bincount(entry_mode, weights=column.values[numeric] != 0.0, minlength=len(self.modes))
            what = "answers" if need == "answer" else "retrieved results"
            for m in np.flatnonzero((scored > 0) & (nonzero == 0)).tolist():
                mine = rows[entry_mode == m]
                if need == "answer":
                    present = any(answers[row] for row in mine.tolist())  # None and "" are no answer
                else:
                    present = bool(np.any(self.n_results[mine] > 0))
                if not present:
                    found[(self.modes[m], name)] = f"{self.modes[m]} returns no {what}"
        return found

    def metric_summaries(self, *, confidence: float = 0.95) -> list[MetricSummary]:
        """One :class:`~heta_nb.model.summary.MetricSummary` per mode × metric with scores,
        in mode then metric order; bit for bit what the per-score walk gives (Heta's sums)."""
        cases = np.bincount(self.mode, minlength=len(self.modes)) if self.n else np.zeros(len(self.modes), np.int64)
        absent = self.not_applicable()
        errors = np.bincount(self.mode[~self.ok], minlength=len(self.modes)) if self.n else cases
        found: dict[tuple[int, int], MetricSummary] = {}
        for j, name in enumerate(self.metrics):
            column = self._metrics[name]
            entry_mode = self.mode[column.rows]
            numeric = column.numeric
            for m in np.unique(entry_mode).tolist():
                here = entry_mode == m
                chosen = here & numeric
                found[(m, j)] = _summary(
                    self.modes[m],
                    name,
                    column.values[chosen],
                    bool(np.any(column.kinds[chosen] != BOOL)),
                    column.skipped[chosen],
                    int(cases[m]),
                    int(errors[m]),
                    int(np.count_nonzero(here & (column.kinds == ERROR))),
                    confidence,
                    absent.get((self.modes[m], name), ""),
                )
        return [found[key] for key in sorted(found)]


def _summary(
    mode: str,
    metric: str,
    values: np.ndarray,
    plain: bool,
    skips: np.ndarray,
    cases: int,
    errors: int,
    failed: int,
    confidence: float,
    not_applicable: str = "",
) -> MetricSummary:
    """The statistics of one mode × metric; each number as the per-score walk computes it."""
    nan = math.nan
    nums: list[float] = values.tolist()
    n = len(nums)
    kind = "text" if n == 0 else "number" if plain else "bool"
    total = sum(nums)  # Python's sum, as Heta's summary: the same bits on every version
    mean = total / n if n else nan
    skipped = int(np.count_nonzero(skips))
    mean_scored = stats.mean(values[~skips].tolist()) if skipped else mean
    std, ci, minimum, maximum = _spread(values, nums, total, kind, confidence)
    scored_ci = ci
    if skipped:  # the spread shown is of the scored values, as the headline mean
        scored = values[~skips]
        scored_nums = scored.tolist()
        if scored.size:
            std, scored_ci, minimum, maximum = _spread(scored, scored_nums, sum(scored_nums), kind, confidence)
        else:
            std, scored_ci, minimum, maximum = nan, (nan, nan), nan, nan
    return MetricSummary(
        mode=mode,
        metric=metric,
        kind=kind,
        n=n,
        cases=cases,
        errors=errors,
        skipped=skipped,
        mean=mean,
        mean_scored=mean_scored,
        std=std,
        ci_low=ci[0],
        ci_high=ci[1],
        minimum=minimum,
        maximum=maximum,
        confidence=confidence,
        values=tuple(nums),
        evaluator_errors=failed,
        scored_ci_low=scored_ci[0],
        scored_ci_high=scored_ci[1],
        not_applicable=not_applicable,
    )


def _spread(
    values: np.ndarray, nums: list[float], total: float, kind: str, confidence: float
) -> tuple[float, tuple[float, float], float, float]:
    """``(std, (ci_low, ci_high), min, max)`` of ``values`` (``nums`` the same as a list,
    ``total`` their Python sum); Wilson for bools and 0/1 numbers, else Student-t."""
    nan = math.nan
    n = len(nums)
    all_finite = math.isfinite(total)
    finite = values if all_finite else values[np.isfinite(values)]
    minimum = float(finite.min()) if finite.size else nan
    maximum = float(finite.max()) if finite.size else nan
    try:
        centre: float | None = math.fsum(nums) / n if n else None
    except (OverflowError, ValueError):
        centre = None
    if n < 2:
        std = nan
    elif centre is None:
        std = stats.sample_std(nums)
    else:
        with np.errstate(over="ignore", invalid="ignore"):
            deviations = values - centre
            squares = (deviations * deviations).tolist()
        try:
            std = math.sqrt(math.fsum(squares) / (n - 1))
        except OverflowError:  # the sum beyond the float range
            std = math.inf
    bounded = n > 0 and all_finite and 0.0 <= minimum and maximum <= 1.0
    if kind == "bool" or (bounded and bool(np.all((values == 0.0) | (values == 1.0)))):
        ci = stats.wilson_interval(int(total), n, confidence)
    else:
        ci = stats.t_interval(nums, confidence, std=std, centre=centre)
        if bounded:
            ci = (max(0.0, ci[0]), min(1.0, ci[1]))
    return std, ci, minimum, maximum


_KINDS = {BOOL: "bool", FLOAT: "number", INT: "number", TEXT: "text", ERROR: "text"}
"""How a score's kind reads in tables (an evaluator error is text: ``"error"``)."""
