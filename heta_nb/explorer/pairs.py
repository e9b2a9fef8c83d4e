"""The explorer's table of a comparison: one row per case of the baseline and one other
system, both systems' scores, coloured deltas and the quick filters."""

from __future__ import annotations

import math
from collections.abc import Mapping
from functools import cached_property, partial
from typing import TYPE_CHECKING, Any, cast

import numpy as np

from heta_nb._util.frames import frame as frame_of
from heta_nb.explorer.case_data import CaseDataLimits, benchmark_case, pair_case_data
from heta_nb.explorer.columns import (
    STATUSES,
    Cell,
    Column,
    MetricArrays,
    metric_arrays,
    row_column,
    text_cell,
    text_column,
)
from heta_nb.explorer.labels import LabelIndex
from heta_nb.model import EvaluationCaseResult
from heta_nb.render.env import format_number

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd

    from heta_nb.comparison import Comparison

__all__ = ["QUICK_FILTERS", "STAGE_LABEL", "UNCHANGED", "PairTable"]

STAGE_LABEL = "stage"
"""The label key of a comparison's stages (``stage = retrieval``...)."""
UNCHANGED = "unchanged"
"""The stage label of a case whose outcome did not change."""

QUICK_FILTERS = ("regressions", "improvements", "differing")
"""``regressions``/``improvements``: the system is worse / better than the baseline on the
chosen metric (beyond the comparison's tie tolerance); ``differing``: any compared metric
differs, or only one of the two has a response."""

_OK, _ERROR, _SKIPPED, _NA = (STATUSES.index(s) for s in ("ok", "error", "skipped", "n/a"))


class _Side:
    """One system's results, aligned on the table's rows."""

    def __init__(self, results: list[Mapping[str, Any] | None], metrics: tuple[str, ...]) -> None:
        self.results = results
        self.missing = np.array([r is None for r in results], dtype=bool)
        self.error = np.array([r is not None and r["error"] is not None for r in results], dtype=bool)
        self.arrays: dict[str, MetricArrays] = metric_arrays(results, metrics)


class PairTable:
    """Rows of a comparison: the baseline against one other system, case by case.

    Rows are the baseline's cases in its report order, then cases only the other system
    has; a case is ``(run unit, case_id)`` as :func:`~heta_nb.comparison.compare` aligns them.

    Args:
        comparison: the comparison (it holds its reports).
        system: the other system (name or index; default the first non-baseline one).
        benchmark: for case labels and the expected answers in the case panel.
    """

    kind = "comparison"

    def __init__(self, comparison: Comparison, system: int | str | None = None, benchmark: Any = None) -> None:
        if not comparison.reports:
            raise ValueError("explore: this comparison does not hold its reports; build it with heta_nb.compare(...)")
        self.comparison = comparison
        self.benchmark = benchmark
        info = {s.name: s for s in comparison.system_info}
        names = list(comparison.candidates)
        if system is None:
            other = names[0]
        elif isinstance(system, int) and not isinstance(system, bool):
            other = comparison.systems[system]
        else:
            other = str(system)
        if other not in names:
            raise ValueError(f"system: {other!r} is not one of the compared systems {names}")
        self.base_name, self.other_name = comparison.baseline_of(other), other
        self.systems: tuple[str, ...] = tuple(names)
        keyed = [self._keyed(info[name]) for name in (self.base_name, other)]
        order = list(dict.fromkeys([*keyed[0], *keyed[1]]))
        self.n = len(order)
        self.keys = order
        self.metrics: tuple[str, ...] = tuple(comparison.metrics)
        self.sides = tuple(_Side([side.get(k) for k in order], self.metrics) for side in keyed)
        self.case_ids = np.array([k[1] for k in order], dtype=object)
        self.units = [k[0] or None for k in order]
        self.queries = np.array(
            [(a or b or {}).get("query", "") for a, b in zip(self.sides[0].results, self.sides[1].results)],
            dtype=object,
        )
        self.tolerance = float(comparison.tie_tolerance)
        self.include_skipped = bool(comparison.include_skipped)
        self.modes: tuple[str, ...] = ()
        self.quick_filters: tuple[str, ...] = QUICK_FILTERS
        self.labels = LabelIndex(benchmark, self.case_ids)
        self.labels.add(
            STAGE_LABEL if STAGE_LABEL not in self.labels.values else f"comparison {STAGE_LABEL}", self._stages()
        )
        self.title = f"{other} vs {self.base_name} (baseline)"
        self._deltas: dict[str, np.ndarray] = {}

    def _stages(self) -> np.ndarray:
        """Each row's stage (:meth:`~heta_nb.comparison.Comparison.stages`: where a changed case
        was lost or won), ``unchanged`` for the others: the ``stage = ...`` label filter."""
        stages = self.comparison.stages()
        mine = stages[stages["system"] == self.other_name]
        found = {(u or "", c): s for u, c, s in zip(mine["unit"], mine["case_id"], mine["stage"])}
        return np.array([found.get((k[0] or "", k[1]), UNCHANGED) for k in self.keys], dtype=object)

    def _keyed(self, system: Any) -> dict[tuple[str, str], Mapping[str, Any]]:
        report = self.comparison.reports[system.report_index]
        found: dict[tuple[str, str], Mapping[str, Any]] = {}
        for result in report.raw["case_results"]:
            if result["query_mode"] != system.mode:
                continue
            unit = result["metadata"].get("benchmark_run_unit")
            found.setdefault((unit if isinstance(unit, str) else "", result["case_id"]), result)
        return found

    # -- what the filters read -------------------------------------------------------------
    @cached_property
    def search_text(self) -> list[str]:
        """Case id, query, both answers and both errors per row, case-folded."""
        texts = []
        for case_id, query, a, b in zip(self.case_ids, self.queries, *(s.results for s in self.sides)):
            parts = [case_id, query]
            for result in (a, b):
                if result is not None:
                    response, error = result["response"], result["error"]
                    parts.append((response or {}).get("answer") or "")
                    if error is not None:
                        parts.append(f"{error['error_type']} {error['message']}")
            texts.append("\n".join(parts).casefold())
        return texts

    def mode_mask(self, mode: str) -> np.ndarray:  # pragma: no cover - validated away: no modes
        raise ValueError("a comparison has no mode filter; choose the system instead")

    def delta(self, metric: str) -> np.ndarray:
        """Per row, the other system's value minus the baseline's (NaN: not comparable; read-only)."""
        found = self._deltas.get(metric)
        if found is None:
            a, b = (s.arrays[metric] for s in self.sides)
            values_a, values_b = a.values.copy(), b.values.copy()
            if not self.include_skipped:
                values_a[a.skipped] = np.nan
                values_b[b.skipped] = np.nan
            found = self._deltas[metric] = values_b - values_a
            found.flags.writeable = False
        return found

    def status_codes(self, metric: str | None) -> np.ndarray:
        """``error`` if either side failed (or its evaluator did), else ``n/a`` if either has no
        result or no score, else ``skipped`` if either was skipped, else ``ok``."""
        error = self.sides[0].error | self.sides[1].error
        missing = self.sides[0].missing | self.sides[1].missing
        names = [metric] if metric is not None else list(self.metrics)
        skipped = np.zeros(self.n, dtype=bool)
        absent = missing.copy()
        for name in names:
            for side in self.sides:
                arrays = side.arrays[name]
                error |= arrays.errors
                skipped |= arrays.skipped
                absent |= ~arrays.present & ~side.error
        codes = np.full(self.n, _OK, dtype=np.uint8)
        codes[skipped] = _SKIPPED
        codes[absent] = _NA
        codes[error] = _ERROR
        return codes

    def range_values(self, metric: str) -> np.ndarray:
        """A comparison's range filters the delta of the metric."""
        return self.delta(metric)

    def quick_mask(self, name: str, metric: str | None) -> np.ndarray:
        """Rows of one of :data:`QUICK_FILTERS` (``metric`` default: the first compared one)."""
        if name == "differing":
            differ = self.sides[0].missing | self.sides[1].missing | (self.sides[0].error != self.sides[1].error)
            for m in self.metrics:
                with np.errstate(invalid="ignore"):
                    differ |= np.abs(self.delta(m)) > self.tolerance
            return differ
        if not self.metrics:
            return np.zeros(self.n, dtype=bool)
        delta = self.delta(metric or self.metrics[0])
        with np.errstate(invalid="ignore"):
            return delta < -self.tolerance if name == "regressions" else delta > self.tolerance

    # -- columns -------------------------------------------------------------------------
    @cached_property
    def columns(self) -> list[Column]:
        """Row, case, query, both statuses, then per metric ``baseline → system`` sorted by delta."""
        columns = [
            row_column(self.n),
            text_column("case_id", "case", self.case_ids, 40, "hx-id"),
            Column("status", "status", False, self._status_keys, self._status_cell),
            text_column("query", "query", self.queries, 80),
        ]
        for metric in self.metrics:
            columns.append(
                Column(
                    f"delta {metric}",
                    f"Δ {metric}",
                    True,
                    partial(self.delta, metric),
                    partial(self._pair_cell, metric),
                    metric=metric,
                )
            )
        return columns

    def _side_status(self, k: int, i: int) -> str:
        side = self.sides[k]
        if side.missing[i]:
            return "—"
        result = side.results[i]
        return "✗ " + str(result["error"]["error_type"]) if result is not None and result["error"] else "✓"

    def _status_keys(self) -> np.ndarray:
        return np.array([f"{self._side_status(0, i)} {self._side_status(1, i)}" for i in range(self.n)], dtype=object)

    def _status_cell(self, i: int) -> Cell:
        a, b = self._side_status(0, i), self._side_status(1, i)
        cls = "hx-ok" if a == b == "✓" else "hx-bad"
        return (f"{a} / {b}", cls, f"{self.base_name}: {a}; {self.other_name}: {b}")

    def _pair_cell(self, metric: str, i: int) -> Cell:
        a, b = (s.arrays[metric] for s in self.sides)
        texts = []
        for arrays, side in ((a, self.sides[0]), (b, self.sides[1])):
            if side.missing[i] or side.error[i] or arrays.errors[i]:
                texts.append("error" if side.error[i] or arrays.errors[i] else "—")
            elif not arrays.present[i]:
                texts.append("—")
            elif arrays.skipped[i]:
                texts.append("skip")
            else:
                texts.append(format_number(float(arrays.values[i]), 2))
        delta = float(self.delta(metric)[i]) if self.n else float("nan")
        if np.isnan(delta):
            return (f"{texts[0]} → {texts[1]}", "hx-na", "not comparable")
        title = f"{self.other_name} − {self.base_name} = {delta:+.4g}"
        if delta > self.tolerance:
            return (f"{texts[0]} → {texts[1]} (+{format_number(delta, 2)})", "hx-up", title)
        if delta < -self.tolerance:
            return (f"{texts[0]} → {texts[1]} ({format_number(delta, 2)})", "hx-down", title)
        return (f"{texts[0]} → {texts[1]}", "hx-level", title)

    # -- what a user takes away ------------------------------------------------------------
    def frame(self, rows: np.ndarray) -> pd.DataFrame:
        """Rows ``rows``: unit, case, query, each side's status, and per metric both values and the delta."""
        import pandas as pd

        data: dict[str, Any] = {
            "unit": [self.units[i] for i in rows],
            "case_id": self.case_ids[rows],
            "query": self.queries[rows],
        }
        for k, name in enumerate((self.base_name, self.other_name)):
            data[f"status {name}"] = [
                "missing" if self.sides[k].missing[i] else "error" if self.sides[k].error[i] else "ok" for i in rows
            ]
        for metric in self.metrics:
            for k, name in enumerate((self.base_name, self.other_name)):
                data[f"{metric} {name}"] = self.sides[k].arrays[metric].values[rows]
            data[f"delta {metric}"] = self.delta(metric)[rows]
        frame = frame_of(data, index=pd.Index(rows, name="row"))
        frame.attrs.update(baseline=self.base_name, system=self.other_name)
        return frame

    def case(self, row: int) -> dict[str, EvaluationCaseResult | None]:
        """Both systems' results of table row ``row`` (None where a system has none)."""
        return {
            name: EvaluationCaseResult.from_raw(cast("dict[str, Any]", r))
            if (r := side.results[row]) is not None
            else None
            for name, side in zip((self.base_name, self.other_name), self.sides)
        }

    def describe_row(self, row: int) -> str:
        """The case id of a row."""
        return str(self.case_ids[row])

    def delta_rows(self, row: int) -> list[list[str]]:
        """Per metric ``[metric, baseline value, system value, delta, class]`` of row ``row``, as text
        (what the case panel's table of differences shows)."""
        out = []
        for metric in self.metrics:
            texts = []
            for side in self.sides:
                arrays = side.arrays[metric]
                if side.missing[row] or side.error[row] or arrays.errors[row]:
                    texts.append("error" if side.error[row] or arrays.errors[row] else "—")
                elif not arrays.present[row]:
                    texts.append("—")
                elif arrays.text and row in arrays.text:
                    texts.append(text_cell(arrays.text[row], 24)[0])
                else:
                    shown = float(arrays.values[row])
                    value = ("✓" if shown else "✗") if arrays.kind == "bool" else format_number(shown)
                    texts.append(f"skipped ({value})" if arrays.skipped[row] else value)
            delta = float(self.delta(metric)[row])
            if math.isnan(delta):
                out.append([metric, *texts, "—", "hx-na"])
                continue
            cls = "hx-up" if delta > self.tolerance else "hx-down" if delta < -self.tolerance else "hx-level"
            out.append([metric, *texts, f"{delta:+.3f}", cls])
        return out

    def case_data(self, row: int, limits: CaseDataLimits) -> dict[str, Any]:
        """Row ``row``'s case panel data: both systems' cases and the deltas
        (:func:`~heta_nb.explorer.case_data.pair_case_data`)."""

        sides = [(name, side.results[row]) for name, side in zip((self.base_name, self.other_name), self.sides)]
        gold = benchmark_case(self.benchmark, str(self.case_ids[row]))
        return pair_case_data(sides, self.delta_rows(row), gold, limits)
