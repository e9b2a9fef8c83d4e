"""The in-page source: a report's or comparison's explorer as one JSON payload for a standalone page.

The kernel explorer (:class:`~heta_nb.explorer.Explorer`) filters, sorts and pages in
Python and sends one page of rows; a standalone page (or any static viewer) has no kernel,
so it embeds every row and lets ``assets/engine.js`` do the same work in the browser. Both
read the same tables (:class:`~heta_nb.explorer.table.ReportTable`, one
:class:`~heta_nb.explorer.pairs.PairTable` per compared system), so the rows, cells,
statuses, labels and case panels are the kernel's own:

* ``cells``: every column's cell texts and classes (and titles where there are some),
  exactly :meth:`Column.cells <heta_nb.explorer.columns.Column.cells>`;
* ``sort``: each column's sort key per row (numbers, or the ranks of text as the kernel
  sorts it), which the range filters read too (a metric, or a comparison's delta);
* ``status``: per metric (and ``""``: over every score) each row's status code;
* ``labels``, ``differing``, ``unstable`` (rows whose LLM judges disagreed across
  repeats), ``modes`` and the rest the filters read;
* ``cases``: the case panel's data of every row (:mod:`heta_nb.explorer.case_data`).

A comparison's payload also has ``grid``: the case × system grid of every compared system
(:func:`heta_nb.explorer.grid_view.grid_page_data`), which ``engine.js``'s ``PageGrid`` pages.

A report's payload also has ``review``: the report id and the sample its review mode
proposes (:func:`heta_nb.reviews.review_sample`), ``[[case_id, mode], ...]``; the page keeps
verdicts in the browser and offers them as a file for :func:`heta_nb.import_reviews`.
"""

from __future__ import annotations

import functools
import math
import re
from collections.abc import Sequence
from dataclasses import replace
from importlib import resources
from typing import Any

import numpy as np

from heta_nb.explorer.case_data import CaseDataLimits, benchmark_case, case_data, expected_data
from heta_nb.explorer.columns import STATUSES, number_cell
from heta_nb.explorer.filters import text_ranks
from heta_nb.explorer.grid_view import grid_page_data
from heta_nb.explorer.pairs import PairTable
from heta_nb.explorer.table import ReportTable
from heta_nb.reviews import review_sample

__all__ = [
    "PAGE_FORMAT",
    "comparison_page_data",
    "page_script",
    "page_styles",
    "report_page_data",
    "rows_page_data",
    "table_page_data",
]

PAGE_FORMAT = 1
"""The payload's ``format``: what ``engine.js`` reads."""


class _Classes:
    """Cell classes as small integer codes (a page has thousands of cells and a dozen classes)."""

    def __init__(self) -> None:
        self.names: list[str] = []
        self._codes: dict[str, int] = {}

    def codes(self, names: list[str]) -> list[int]:
        """:meth:`code` of many names."""
        known = self._codes
        return [known[name] if name in known else self.code(name) for name in names]

    def code(self, name: str) -> int:
        found = self._codes.get(name)
        if found is None:
            found = self._codes[name] = len(self.names)
            self.names.append(name)
        return found


def _json_number(value: float) -> float | None:
    return float(value) if math.isfinite(value) else None


def _sort_keys(values: Any, numeric: bool) -> list[float | str | None]:
    """Each row's sort key: a number, ``"inf"``/``"-inf"`` (JSON has no infinities) or None
    (missing: last either way), or for text the kernel's rank of it."""
    if numeric:
        array = np.asarray(values, dtype="float64")
        out: list[float | str | None] = array.tolist()
        for i in np.flatnonzero(~np.isfinite(array)).tolist():
            value = array[i]
            out[i] = None if math.isnan(value) else ("inf" if value > 0 else "-inf")
        return out
    ranks = text_ranks(values)
    return [None if math.isnan(r) else int(r) for r in ranks.tolist()]


def _codes(values: np.ndarray) -> str:
    """Small integer codes as one string of digits (a row a character)."""
    return "".join(map(str, values.tolist()))


def table_page_data(
    table: ReportTable | PairTable, classes: _Classes, limits: CaseDataLimits, titles: _Classes | None = None
) -> dict[str, Any]:
    """One table's rows for the page: its columns' cells and sort keys, what the filters read,
    and each row's case panel data. Cell classes (and titles, which repeat: "n/a: ...") are
    codes into ``classes`` (and ``titles``)."""
    titles = titles if titles is not None else _Classes()
    rows = np.arange(table.n)
    columns = []
    for column in table.columns:
        cells = column.cells(rows)
        shown = {str(i): titles.code(cell[2]) for i, cell in enumerate(cells) if cell[2]}
        columns.append(
            {
                "key": column.key,
                "label": column.label,
                "numeric": column.numeric,
                "metric": column.metric,
                "t": [cell[0] for cell in cells],
                "c": classes.codes([cell[1] for cell in cells]),
                "h": shown,
                "sort": _sort_keys(column.values(), column.numeric),
            }
        )
    status = {"": _codes(table.status_codes(None))}
    for metric in table.metrics:
        status[metric] = _codes(table.status_codes(metric))
    labels = table.labels
    label_rows: dict[str, list[str]] = {key: labels.values[key].tolist() for key in labels.keys}
    out: dict[str, Any] = {
        "title": table.title,
        "n": table.n,
        "columns": columns,
        "status": status,
        "metrics": list(table.metrics),
        "quick": list(table.quick_filters),
        "labels": {"available": labels.available, "choices": labels.choices(), "rows": label_rows},
        "case_ids": table.case_ids.tolist(),
    }
    if isinstance(table, ReportTable):
        modes = list(table.modes)
        position = {mode: i for i, mode in enumerate(modes)}
        if table.quick_filters:
            out["unstable"] = _codes(table.unstable.astype(np.int8))
        out.update(
            kind="report",
            modes=modes,
            mode=_codes(np.array([position[m] for m in table.modes_column.tolist()], dtype=np.int64))
            if len(modes) <= 10
            else [position[m] for m in table.modes_column.tolist()],
            cases=[
                case_data(
                    table.case_json(i),
                    benchmark_case(table.benchmark, str(table.case_ids[i])),
                    limits,
                    not_applicable=table.not_applicable_of(i),
                )
                for i in rows.tolist()
            ],
        )
    else:
        out.update(
            kind="comparison",
            system=table.other_name,
            baseline=table.base_name,
            modes=[],
            tolerance=table.tolerance,
            differing=_codes(table.quick_mask("differing", None).astype(np.int8)),
            cases=[table.case_data(i, replace(limits, results=3)) for i in rows.tolist()],
        )
    return out


def _expected(benchmark: Any, case_ids: Sequence[str], limits: CaseDataLimits) -> dict[str, Any]:
    if benchmark is None:
        return {}
    found = {}
    for case_id in dict.fromkeys(case_ids):
        gold = benchmark_case(benchmark, case_id)
        if gold is not None:
            found[case_id] = expected_data(gold, limits)
    return found


def report_page_data(
    report: Any, limits: CaseDataLimits, benchmark: Any = None, *, review: int = 60, seed: int = 0
) -> dict[str, Any]:
    """A report's explorer for a standalone page (see the module docstring); ``review``: the
    size of the sample its review mode proposes (``seed``: the sample's)."""
    classes, titles = _Classes(), _Classes()
    table = ReportTable(report, benchmark)
    data = table_page_data(table, classes, limits, titles)
    sample: list[tuple[str, str]] = []
    if table.n and review >= 1:
        try:
            sample = review_sample(report, review, seed=seed, benchmark=benchmark)
        except OverflowError:  # (a score no float holds, e.g. a 400-digit integer: the page proposes none)
            sample = []
    return {
        "format": PAGE_FORMAT,
        "kind": "report",
        "title": table.title,
        "statuses": list(STATUSES),
        "tables": {"": data},
        "systems": [],
        "classes": classes.names,
        "titles": titles.names,
        "expected": _expected(benchmark, data["case_ids"], limits),
        "noun": "case results",
        "review": {"report_id": str(report.report_id), "sample": [list(item) for item in sample]},
    }


def comparison_page_data(comparison: Any, limits: CaseDataLimits, benchmark: Any = None) -> dict[str, Any]:
    """A comparison's explorer for a standalone page: one table per compared system."""
    classes, titles = _Classes(), _Classes()
    tables: dict[str, Any] = {}
    case_ids: list[str] = []
    for system in comparison.candidates:
        table = PairTable(comparison, system, benchmark)
        tables[system] = table_page_data(table, classes, limits, titles)
        case_ids.extend(tables[system]["case_ids"])
    first = next(iter(tables.values()))
    grid = grid_page_data(comparison)
    return {
        **({"grid": grid} if grid is not None else {}),
        "format": PAGE_FORMAT,
        "kind": "comparison",
        "title": first["title"],
        "statuses": list(STATUSES),
        "tables": tables,
        "systems": list(tables),
        "classes": classes.names,
        "titles": titles.names,
        "expected": _expected(benchmark, case_ids, limits),
        "noun": "cases",
    }


def rows_page_data(
    title: str,
    noun: str,
    columns: Sequence[tuple[str, str, bool]],
    rows: Sequence[Sequence[Any]],
    *,
    group: int | None = None,
    group_label: str = "mode",
) -> dict[str, Any]:
    """A plain table's explorer (no case panels): a leaderboard's cells, say.

    Args:
        title: the table's title; ``noun``: what one row is.
        columns: ``(key, label, numeric)`` of each column.
        rows: each row's values in column order (numbers: None or NaN read "—"; text as is).
        group: the column the mode filter chooses from (a leaderboard's benchmark); None: no filter.
        group_label: what the mode filter is called.
    """

    classes = _Classes()
    out_columns: list[dict[str, Any]] = []
    for k, (key, label, numeric) in enumerate(columns):
        values = [row[k] for row in rows]
        if numeric:
            numbers = [math.nan if v is None or isinstance(v, (bool, str)) else float(v) for v in values]
            cells = [
                (f"{v:,}", "hx-num", "") if isinstance(v, int) and not isinstance(v, bool) else number_cell(number)
                for v, number in zip(values, numbers)
            ]
            sort = _sort_keys(numbers, True)
        else:
            texts = ["" if v is None else str(v) for v in values]
            cells = [(text, "", "") for text in texts]
            sort = _sort_keys(np.array(texts, dtype=object), False)
        out_columns.append(
            {
                "key": key,
                "label": label,
                "numeric": numeric,
                "metric": "",
                "t": [cell[0] for cell in cells],
                "c": classes.codes([cell[1] for cell in cells]),
                "h": {},
                "sort": sort,
            }
        )
    table: dict[str, Any] = {
        "title": title,
        "n": len(rows),
        "columns": out_columns,
        "status": {},
        "metrics": [],
        "quick": [],
        "labels": {"available": False, "choices": [], "rows": {}},
        "case_ids": [" · ".join(cell["t"][i] for cell in out_columns[:3]) for i in range(len(rows))],
        "kind": "table",
        "modes": [],
    }
    if group is not None:
        groups = [str(row[group]) for row in rows]
        modes = list(dict.fromkeys(groups))
        position = {mode: i for i, mode in enumerate(modes)}
        table.update(modes=modes, mode=[position[g] for g in groups], mode_label=group_label)
    return {
        "format": PAGE_FORMAT,
        "kind": "table",
        "title": title,
        "statuses": [],
        "tables": {"": table},
        "systems": [],
        "classes": classes.names,
        "titles": [],
        "expected": {},
        "noun": noun,
    }


_EXPORTS = re.compile(r"^export (?=(class|function|const) )|^export default \{[^}]*\};?\s*$", re.MULTILINE)


@functools.cache
def page_script() -> str:
    """The explorer for a standalone page: ``engine.js``, ``grid.js`` and ``explorer.js`` as one
    inline script (their ``export`` keywords removed) that mounts every ``[data-heta-explorer]`` box."""
    parts = [_EXPORTS.sub("", _asset(name)) for name in ("engine.js", "grid.js", "explorer.js")]
    script = "\n".join(parts) + "\nmountAll(render);\n"
    if re.search(r"^export ", script, re.MULTILINE):
        raise RuntimeError("an explorer asset has an export this page cannot inline")  # pragma: no cover
    return '(function () {\n"use strict";\n' + script + "})();\n"


@functools.cache
def page_styles() -> str:
    """The explorer's stylesheet (the notebook widget's own)."""
    return _asset("explorer.css")


def _asset(name: str) -> str:
    return (resources.files("heta_nb") / "explorer" / "assets" / name).read_text(encoding="utf-8")
