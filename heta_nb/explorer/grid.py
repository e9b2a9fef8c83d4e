"""The case × system grid of a comparison: one row per aligned case, one column per compared
system (several recipes, several modes of one report, a sweep's recipes), each cell the chosen
metric's verdict on that case (pass / fail, or the score in a colour band), with the system's
answer for the hover and the word diff of two cells.

Every cell says what it is: ``n/a`` (the metric is not applicable in that system's mode),
``error`` (the system, or its evaluator, failed on that case), ``missing`` (no result for the
case), ``skipped`` and ``no score`` are never shown as a 0. A row *disagrees* when the systems'
verdicts differ: two scores further apart than the comparison's ``tie_tolerance`` (pass and
fail for a pass/fail metric), or a system that errored where another has a score.

The arrays come from each report's column table (no case result is opened), so 10,000 cases
× 6 systems build in well under a second; the cells of one metric are made when first asked
for. :mod:`heta_nb.explorer.grid_view` pages them (the kernel) and embeds them (a page).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from heta_nb._util.text import shorten
from heta_nb.explorer.columns import MetricArrays, metric_arrays_of_columns
from heta_nb.render.env import format_number

if TYPE_CHECKING:  # pragma: no cover
    from heta_nb.comparison import Comparison

__all__ = ["ANSWER_CHARS", "FAIL", "PASS", "SCORE", "STATES", "TEXT_CHARS", "GridData", "MetricGrid"]

ANSWER_CHARS = 400
"""Characters of an answer (or an error message) a cell keeps for its hover and diff."""
TEXT_CHARS = 400
"""Characters of a case id and a query (the grid cuts them further by width, with a title)."""

STATES = ("score", "pass", "fail", "skipped", "n/a", "error", "missing", "no score", "text")
"""What a cell can be (its code is the index): a number, a pass / fail, a skipped score, n/a,
an error (the case's or the evaluator's), no result, a result without this score, a text value."""
SCORE, PASS, FAIL, SKIPPED, NA, ERROR, MISSING, NONE, TEXT = range(len(STATES))
_EVALUATOR_ERROR = len(STATES)  # shown as an error; no verdict (the metric failed, not the system)

BANDS = 5
"""Colour bands of a number (``hx-g-b0`` lowest to ``hx-g-b4`` highest)."""

_FIXED: dict[int, tuple[str, str]] = {
    PASS: ("✓ pass", "hx-g-pass"),
    FAIL: ("✗ fail", "hx-g-fail"),
    SKIPPED: ("skipped", "hx-g-skip"),
    NA: ("n/a", "hx-g-na"),
    ERROR: ("error", "hx-g-error"),
    _EVALUATOR_ERROR: ("error", "hx-g-error"),
    MISSING: ("missing", "hx-g-missing"),
    NONE: ("no score", "hx-g-none"),
}
NO_RESULT = "no result for this case"
NO_ANSWER = "no answer (this mode returns results only)"
EMPTY_ANSWER = "(an empty answer)"


@dataclass
class MetricGrid:
    """One metric's cells over the grid (``systems × cases`` arrays).

    Attributes:
        metric: the metric.
        codes: each cell's state (:data:`STATES`; an evaluator error has its own code, shown as an error).
        values: each cell's number (NaN where the cell shows none).
        texts: ``{(system, row): text}`` of text values.
        binary: every value is a pass / fail.
        scale: the numbers' colour scale ``(low, high)``: ``(0, 1)`` when every number lies in it.
        disagree: per row, whether the systems' verdicts differ.
        not_applicable: per system, why the metric is n/a in its mode (``""``: it is not).
    """

    metric: str
    codes: np.ndarray
    values: np.ndarray
    texts: dict[tuple[int, int], str]
    binary: bool
    scale: tuple[float, float]
    disagree: np.ndarray
    not_applicable: tuple[str, ...]

    @property
    def disagreeing(self) -> int:
        """How many rows disagree."""
        return int(np.count_nonzero(self.disagree))

    def band(self, value: float) -> int:
        """The colour band (0 to 4) of a number."""
        low, high = self.scale
        if math.isnan(value) or not high > low:
            return BANDS // 2
        if math.isinf(value):
            return BANDS - 1 if value > 0 else 0
        share = (value / 2 - low / 2) / (high / 2 - low / 2)  # halved: scores near ±1e308 do not overflow
        return BANDS // 2 if not math.isfinite(share) else min(BANDS - 1, max(0, int(share * BANDS)))

    def cell(self, k: int, i: int) -> tuple[str, str]:
        """``(text, class)`` of system ``k``'s cell on row ``i``."""
        code = int(self.codes[k, i])
        if code in _FIXED:
            return _FIXED[code]
        if code == TEXT:
            return (shorten(self.texts.get((k, i), ""), 24), "hx-g-text")
        value = float(self.values[k, i])
        return (format_number(value), f"hx-g-b{self.band(value)}")

    def cells(self, k: int) -> tuple[list[tuple[str, str]], np.ndarray]:
        """Every cell of system ``k`` as a pool of distinct ``(text, class)`` and each row's index in it
        (a page embeds a metric's cells so: a score has few distinct texts)."""
        pool: list[tuple[str, str]] = []
        known: dict[tuple[str, str], int] = {}
        index = np.zeros(self.codes.shape[1], dtype=np.int64)
        codes = self.codes[k]
        numbers = np.flatnonzero(codes == SCORE)
        if numbers.size:  # distinct numbers formatted once
            distinct, inverse = np.unique(self.values[k, numbers], return_inverse=True)
            made = [(format_number(float(v)), f"hx-g-b{self.band(float(v))}") for v in distinct.tolist()]
            positions = [known.setdefault(cell, len(known)) for cell in made]
            pool.extend(dict.fromkeys(made))
            index[numbers] = np.asarray(positions, dtype=np.int64)[inverse.reshape(-1)]
        for i in np.flatnonzero(codes != SCORE).tolist():
            cell = self.cell(k, i)
            found = known.get(cell)
            if found is None:
                found = known[cell] = len(pool)
                pool.append(cell)
            index[i] = found
        return pool, index

    def legend(self) -> list[list[str]]:
        """``[class, text]`` of the colours this metric uses, then the states without a verdict."""
        if self.binary:
            items = [["hx-g-pass", "✓ pass"], ["hx-g-fail", "✗ fail"]]
        else:
            low, high = self.scale
            step = (high - low) / BANDS
            items = []
            for band in range(BANDS):
                start = low + band * step
                end = high if band == BANDS - 1 else start + step
                items.append([f"hx-g-b{band}", f"{format_number(start, 2)}–{format_number(end, 2)}"])
        present = set(np.unique(self.codes).tolist())
        for code, (text, cls) in _FIXED.items():
            if code in present and code not in (PASS, FAIL, _EVALUATOR_ERROR):
                items.append([cls, text])
        if _EVALUATOR_ERROR in present and ERROR not in present:
            items.append(["hx-g-error", "error"])
        return items


class GridData:
    """The grid of a comparison: its rows (the aligned cases), each system's result per row,
    the answers and notes the cells show on hover, and each metric's :class:`MetricGrid`.

    Args:
        comparison: a comparison holding its reports (``heta_nb.compare(...)``).

    Raises:
        ValueError: the comparison does not hold its reports.
    """

    def __init__(self, comparison: Comparison) -> None:
        if not comparison.reports:
            raise ValueError("grid: this comparison does not hold its reports; build it with heta_nb.compare(...)")
        self.comparison = comparison
        self.systems: tuple[str, ...] = tuple(comparison.systems)
        self.metrics: tuple[str, ...] = tuple(comparison.metrics)
        self.tolerance = float(comparison.tie_tolerance)
        self.include_skipped = bool(comparison.include_skipped)
        # The rows as compare() aligns the cases: by (run unit, case id), or by case id alone when
        # the units differ; in first-seen order, the baseline system's cases first.
        by_case = comparison.overlap.key == "case_id"
        bases = sorted(set(range(len(self.systems))) - set(comparison.base_of))
        first = bases[0] if bases else 0
        index: dict[Any, int] = {}
        self.case_ids: list[str] = []
        self.units: list[str | None] = []
        self.queries: list[str] = []
        found: dict[int, tuple[np.ndarray, np.ndarray]] = {}
        for k in [first, *(k for k in range(len(self.systems)) if k != first)]:
            info = comparison.system_info[k]
            columns = comparison.reports[info.report_index].columns
            rows = columns.mode_rows(info.mode)
            ids = columns.case_ids[columns.case[rows]].tolist() if rows.size else []
            units = [columns.units[u] if 0 <= u < len(columns.units) else None for u in columns.unit[rows].tolist()]
            positions: list[int] = []
            for case_id, unit, query in zip(ids, units, columns.queries[rows].tolist()):
                key = case_id if by_case else (unit or "", case_id)
                at = index.get(key)
                if at is None:
                    at = index[key] = len(self.case_ids)
                    self.case_ids.append(str(case_id))
                    self.units.append(unit)
                    self.queries.append("" if query is None else str(query))
                positions.append(at)
            found[k] = (np.asarray(positions, dtype=np.intp), rows)
        self.n = len(self.case_ids)
        self.rows = np.full((len(self.systems), self.n), -1, dtype=np.intp)
        """Per system and grid row, the row of its report's column table (-1: no result)."""
        for k, (where, report_rows) in found.items():
            self.rows[k, where[::-1]] = report_rows[::-1]  # the first result of a case wins
        self._arrays: dict[tuple[int, str], MetricArrays] = {}
        self._grids: dict[str, MetricGrid] = {}
        self._notes: list[tuple[list[str | None], list[str]]] | None = None

    # -- per system ------------------------------------------------------------------------
    def _columns(self, k: int) -> Any:
        info = self.comparison.system_info[k]
        return self.comparison.reports[info.report_index].columns

    def errored(self, k: int) -> np.ndarray:
        """Per row, whether system ``k``'s result is an error."""
        rows = self.rows[k]
        out = np.zeros(self.n, dtype=bool)
        have = rows >= 0
        out[have] = ~self._columns(k).ok[rows[have]]
        return out

    def answers(self, k: int) -> tuple[list[str | None], list[str]]:
        """System ``k``'s answer per row (None: none) and the hover text per row: the answer, else
        why there is none (no result, the error, a mode without answers). Both cut to
        :data:`ANSWER_CHARS`."""
        if self._notes is None:
            self._notes = [self._answers(j) for j in range(len(self.systems))]
        return self._notes[k]

    def _answers(self, k: int) -> tuple[list[str | None], list[str]]:
        columns = self._columns(k)
        answers: list[str | None] = [None] * self.n
        titles = [NO_RESULT] * self.n
        rows = self.rows[k]
        have = np.flatnonzero(rows >= 0)
        if not have.size:
            return answers, titles
        report_rows = rows[have]
        texts = columns.answers[report_rows].tolist()
        failed = columns.error[report_rows].tolist()
        messages = columns.messages[report_rows].tolist()
        for i, answer, code, message in zip(have.tolist(), texts, failed, messages):
            if answer is not None:
                shown = shorten(answer, ANSWER_CHARS)
                answers[i] = shown
                titles[i] = shown or EMPTY_ANSWER
            elif code >= 0:
                titles[i] = shorten(f"{columns.error_types[code]}: {message or ''}", ANSWER_CHARS)
            else:
                titles[i] = NO_ANSWER
        return answers, titles

    def header(self, k: int, metric: str | None = None) -> str:
        """System ``k``'s column title: its name, report and mode, its baseline, and why ``metric`` is n/a."""
        info = self.comparison.system_info[k]
        name = info.name
        lines = [shorten(name, 200), shorten(f"report {info.report_id} · mode {info.mode}", 200)]
        if self.comparison.is_baseline(name):
            lines.append("baseline")
        elif name in self.comparison.baselines:
            lines.append(shorten(f"compared with {self.comparison.baselines[name]}", 200))
        if metric is not None:
            why = self.comparison.not_applicable(name, metric)
            if why:
                lines.append(shorten(f"{metric} n/a: {why}", 200))
        return "\n".join(lines)

    # -- per metric ------------------------------------------------------------------------
    def metric(self, metric: str) -> MetricGrid:
        """The cells of ``metric`` (made on first use).

        Raises:
            ValueError: a metric the comparison does not compare.
        """
        found = self._grids.get(metric)
        if found is None:
            if metric not in self.metrics:
                raise ValueError(f"grid: metric {metric!r} is not compared; metrics: {list(self.metrics)}")
            found = self._grids[metric] = self._metric(metric)
        return found

    def _metric_arrays(self, k: int, metric: str) -> MetricArrays:
        report_index = self.comparison.system_info[k].report_index
        found = self._arrays.get((report_index, metric))
        if found is None:
            found = metric_arrays_of_columns(self._columns(k), [metric])[metric]
            self._arrays[(report_index, metric)] = found
        return found

    def _metric(self, metric: str) -> MetricGrid:
        shape = (len(self.systems), self.n)
        codes = np.full(shape, MISSING, dtype=np.int8)
        values = np.full(shape, math.nan)
        texts: dict[tuple[int, int], str] = {}
        binary = True
        reasons = []
        for k in range(len(self.systems)):
            arrays = self._metric_arrays(k, metric)
            why = self.comparison.not_applicable(self.systems[k], metric)
            reasons.append(why)
            have = np.flatnonzero(self.rows[k] >= 0)
            rows = self.rows[k, have]
            number = arrays.values[rows]
            text = arrays.text or {}
            state = np.where(np.isnan(number), TEXT, SCORE).astype(np.int8)
            state[arrays.skipped[rows]] = SKIPPED
            if why:
                state[:] = NA
            state[~arrays.present[rows]] = NONE
            state[arrays.errors[rows]] = _EVALUATOR_ERROR
            state[~self._columns(k).ok[rows]] = ERROR
            codes[k, have] = state
            values[k, have] = number
            for at in np.flatnonzero(state == TEXT).tolist():
                texts[(k, int(have[at]))] = text.get(int(rows[at]), "")
            if np.any(state == SCORE) and arrays.kind != "bool":
                binary = False
        scored = codes == SCORE
        if binary:
            codes[scored & (values == 1.0)] = PASS
            codes[scored & (values != 1.0)] = FAIL
        numbers = values[scored]
        finite = numbers[np.isfinite(numbers)]
        if finite.size and float(finite.min()) >= 0.0 and float(finite.max()) <= 1.0:
            scale = (0.0, 1.0)
        else:
            scale = (float(finite.min()), float(finite.max())) if finite.size else (0.0, 1.0)
        return MetricGrid(metric, codes, values, texts, binary, scale, self._disagree(codes, values), tuple(reasons))

    def _disagree(self, codes: np.ndarray, values: np.ndarray) -> np.ndarray:
        """Rows where the verdicts differ (see the module docstring)."""
        if not self.n:
            return np.zeros(0, dtype=bool)
        verdict = (codes == SCORE) | (codes == PASS) | (codes == FAIL)
        if self.include_skipped:
            verdict |= (codes == SKIPPED) & np.isfinite(values)
        high = np.where(verdict, values, -np.inf).max(axis=0)
        low = np.where(verdict, values, np.inf).min(axis=0)
        scored = verdict.sum(axis=0)
        with np.errstate(invalid="ignore"):
            apart = (scored >= 2) & (high - low > self.tolerance)
        errored = (codes == ERROR).any(axis=0)
        result: np.ndarray = apart | (errored & (scored > 0))
        return result
