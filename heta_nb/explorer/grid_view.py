"""The explorer's grid view of a comparison, from both sources.

In a notebook, :class:`GridView` keeps the grid's state (the view shown, the metric, the
disagreement filter, the page) and sends the widget one page of rows as the ``grid`` trait;
the browser sets ``view``, ``grid_metric``, ``grid_disagree`` and ``grid_page``. A standalone
page embeds every row instead (:func:`grid_page_data`) and ``assets/grid.js``'s ``PageGrid``
makes the same ``grid`` value in the browser. Both give the one UI (``assets/grid.js``, drawn
by ``assets/explorer.js``) this value::

    {"available", "systems": [[name, column title]...], "metrics", "metric", "binary",
     "disagree" (the filter is on), "disagreeing" (rows), "total", "matched", "page", "pages",
     "count_text", "page_text", "empty", "error", "legend": [[class, text]...],
     "rows": [{"row", "id", "q", "d" (disagrees), "c": [[text, class, hover, answered]...]}]}

``answered``: 0 the system has no answer (the hover says why), 1 the hover is its answer, 2 its
answer is empty.
"""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING, Any

import numpy as np

from heta_nb._util.text import describe_error, shorten
from heta_nb.explorer.grid import FAIL, PASS, SCORE, STATES, TEXT_CHARS, GridData, MetricGrid

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd

    from heta_nb.comparison import Comparison

__all__ = ["GRID_PAGE_SIZE", "VIEWS", "GridView", "grid_page_data"]

GRID_PAGE_SIZE = 50
"""Rows per page of the grid (the browser holds one page)."""
VIEWS = ("", "grid")
"""The explorer's views of a comparison: ``""`` the pair table (the baseline and one system), ``"grid"``."""
_TRAITS = ("view", "grid_metric", "grid_disagree", "grid_page")


def count_text(matched: int, total: int, disagreeing: int, metric: str) -> str:
    """``"12 of 300 cases · the systems disagree on 12 (answer_f1)"`` (the page writes the same)."""
    return f"{matched:,} of {total:,} cases · the systems disagree on {disagreeing:,} ({metric})"


def page_text(page: int, pages: int, matched: int, size: int) -> str:
    """``"1–50 · page 1 of 6"``, or ``""`` when nothing matches."""
    if not matched:
        return ""
    start = page * size
    return f"{start + 1:,}–{min(start + size, matched):,} · page {page + 1:,} of {pages:,}"


def empty_text(total: int, disagree: bool, metric: str) -> str:
    """What the grid says when no row is shown."""
    if not total:
        return "The comparison has no cases."
    return f"The systems agree on every case on {metric}." if disagree else ""


class GridView:
    """The grid of one comparison as the explorer shows it (``explorer.grid``).

    Args:
        comparison: the comparison (it holds its reports).
        page_size: rows per page.
    """

    def __init__(self, comparison: Comparison, page_size: int = GRID_PAGE_SIZE) -> None:
        self.comparison = comparison
        self.page_size = page_size
        self.view = ""
        """``"grid"`` while the explorer shows the grid, ``""`` the pair table."""
        self.metric: str = comparison.metrics[0] if comparison.metrics else ""
        self.disagree = False
        """Only the rows where the systems disagree."""
        self.page = 0
        self.error = ""
        self._data: GridData | None = None
        self._widget: Any = None
        self._pushing: int | None = None
        self._lock = threading.RLock()

    @classmethod
    def of(cls, source: Any) -> GridView | None:
        """The grid of an explorer's source: a comparison holding its reports; None for anything else."""
        comparison = getattr(source, "comparison", None) if getattr(source, "kind", "") == "comparison" else None
        return cls(comparison) if comparison is not None and _usable(comparison) else None

    @property
    def data(self) -> GridData:
        """The grid's rows and cells (made on first use)."""
        with self._lock:
            if self._data is None:
                self._data = GridData(self.comparison)
            return self._data

    @property
    def cells(self) -> MetricGrid:
        """The chosen metric's cells."""
        return self.data.metric(self.metric)

    @property
    def rows(self) -> np.ndarray:
        """The grid rows shown (every row, or those where the systems disagree), in order."""
        grid = self.cells
        return np.flatnonzero(grid.disagree) if self.disagree else np.arange(self.data.n)

    @property
    def pages(self) -> int:
        """Pages of the rows shown (at least 1)."""
        return max(1, -(-int(self.rows.size) // self.page_size))

    # -- actions ---------------------------------------------------------------------------
    def show(
        self, metric: str | None = None, *, disagree: bool | None = None, page: int | None = None, view: str = "grid"
    ) -> GridView:
        """Show the grid (``view="grid"``; ``""``: the pair table) on ``metric``, only where the
        systems ``disagree``, at ``page`` (0-based, clamped); None keeps each as it is.

        Raises:
            ValueError: a metric the comparison does not compare, or an unknown view.
        """
        with self._lock:
            if view not in VIEWS:
                raise ValueError(f"view: expected 'grid' or '' (the pair table), got {view!r}")
            if metric:
                self.data.metric(metric)  # (raises for an unknown metric)
                if metric != self.metric:
                    self.metric, self.page = metric, 0
            if disagree is not None and bool(disagree) != self.disagree:
                self.disagree, self.page = bool(disagree), 0
            if page is not None:
                self.page = int(page)
            self.view = view
            self.error = ""
            if view == "grid":
                self.page = min(max(self.page, 0), self.pages - 1)
            self.push()
        return self

    def frame(self, metric: str | None = None) -> pd.DataFrame:
        """The grid as a DataFrame: ``unit, case_id, query``, per system its value, status
        (:data:`~heta_nb.explorer.grid.STATES`) and answer, and ``disagree``; the rows shown
        (``disagree`` filter included) when ``metric`` is None, else every row on ``metric``."""
        from heta_nb._util.frames import frame as frame_of

        data = self.data
        grid = data.metric(metric or self.metric)
        rows = self.rows if metric is None else np.arange(data.n)
        columns: dict[str, Any] = {
            "unit": [data.units[i] for i in rows.tolist()],
            "case_id": [data.case_ids[i] for i in rows.tolist()],
            "query": [data.queries[i] for i in rows.tolist()],
        }
        states = np.array([*STATES, "error"], dtype=object)
        for k, name in enumerate(data.systems):
            shows = np.isin(grid.codes[k, rows], (SCORE, PASS, FAIL))  # the cells that show a value
            columns[name] = np.where(shows, grid.values[k, rows], np.nan)
            columns[f"{name} status"] = states[grid.codes[k, rows].astype(np.intp)]
            answers = data.answers(k)[0]
            columns[f"{name} answer"] = [answers[i] for i in rows.tolist()]
        columns["disagree"] = grid.disagree[rows]
        out = frame_of(columns)
        out.attrs.update(metric=grid.metric, systems=list(data.systems))
        return out

    # -- what the widget shows -------------------------------------------------------------
    def output(self) -> dict[str, Any]:
        """The ``grid`` value (module docstring); outside the grid view only its choices (no cell is made)."""
        comparison = self.comparison
        out: dict[str, Any] = {
            "available": True,
            "metrics": list(comparison.metrics),
            "metric": self.metric,
            "disagree": self.disagree,
            "error": self.error,
            "rows": [],
        }
        if self.view != "grid":
            return {**out, "systems": [[shorten(s, 80), s] for s in comparison.systems]}
        data, grid = self.data, self.cells
        rows = self.rows
        self.page = min(max(self.page, 0), self.pages - 1)
        start = self.page * self.page_size
        shown = rows[start : start + self.page_size].tolist()
        hovers = [data.answers(k) for k in range(len(data.systems))]
        out.update(
            systems=[[shorten(name, 80), data.header(k, grid.metric)] for k, name in enumerate(data.systems)],
            binary=grid.binary,
            disagreeing=grid.disagreeing,
            total=data.n,
            matched=int(rows.size),
            page=self.page,
            pages=self.pages,
            count_text=count_text(int(rows.size), data.n, grid.disagreeing, grid.metric),
            page_text=page_text(self.page, self.pages, int(rows.size), self.page_size),
            empty="" if rows.size else empty_text(data.n, self.disagree, grid.metric),
            legend=grid.legend(),
            rows=[
                {
                    "row": i,
                    "id": shorten(data.case_ids[i], TEXT_CHARS),
                    "q": shorten(data.queries[i], TEXT_CHARS),
                    "d": bool(grid.disagree[i]),
                    "c": [
                        [*grid.cell(k, i), hovers[k][1][i], _answered(hovers[k][0][i])]
                        for k in range(len(data.systems))
                    ],
                }
                for i in shown
            ],
        )
        return out

    def attach(self, widget: Any) -> None:
        """Drive ``widget``'s grid: push its state now and on every change the browser makes."""
        self._widget = widget
        widget.observe(self._on_input, names=list(_TRAITS))
        self.push()

    def push(self) -> None:
        """Send the grid's state and page to the widget (if there is one)."""
        widget = self._widget
        if widget is None:
            return
        with self._lock:
            self._pushing = threading.get_ident()
            try:
                with widget.hold_sync():
                    widget.view = self.view
                    widget.grid_metric = self.metric
                    widget.grid_disagree = self.disagree
                    widget.grid_page = self.page
                    widget.grid = self.output()
            finally:
                self._pushing = None

    def _on_input(self, change: dict[str, Any]) -> None:
        if self._pushing == threading.get_ident():
            return
        widget = self._widget
        try:
            self.show(
                str(widget.grid_metric) or None,
                disagree=bool(widget.grid_disagree),
                page=int(widget.grid_page),
                view=str(widget.view),
            )
        except (ValueError, TypeError) as exc:
            self.error = describe_error(exc)
            self.push()

    def __repr__(self) -> str:
        shown = "shown" if self.view == "grid" else "not shown"
        return (
            f"<GridView {len(self.comparison.systems)} systems × {self.comparison.overlap.cases:,} cases on "
            f"{self.metric}{', only where they disagree' if self.disagree else ''} ({shown})>"
        )


def grid_page_data(comparison: Comparison) -> dict[str, Any] | None:
    """The grid of a comparison for a standalone page (``assets/grid.js``'s ``PageGrid`` reads it);
    None when the comparison holds no reports.

    Every row is embedded; texts repeat little: each system's hover texts (its answers, or why
    there is none) are codes into one pool (``answered``: per row ``0`` no answer, ``1`` the
    hover is the answer, ``2`` an empty answer), each metric's cells codes into a pool of distinct
    ``[text, class]``. Keys are never data: metrics, systems and rows are lists in order.
    """
    if not _usable(comparison):
        return None
    data = GridData(comparison)
    pool: list[str] = []
    known: dict[str, int] = {}

    def code(text: str) -> int:
        found = known.get(text)
        if found is None:
            found = known[text] = len(pool)
            pool.append(text)
        return found

    hovers, answered = [], []
    for k in range(len(data.systems)):
        answers, titles = data.answers(k)
        hovers.append([code(title) for title in titles])
        answered.append("".join(str(_answered(a)) for a in answers))
    metrics = []
    for metric in data.metrics:
        grid = data.metric(metric)
        cells, codes = [], []
        for k in range(len(data.systems)):
            made, index = grid.cells(k)
            cells.append([list(cell) for cell in made])
            codes.append(index.tolist())
        metrics.append(
            {
                "name": metric,
                "binary": grid.binary,
                "heads": [data.header(k, metric) for k in range(len(data.systems))],
                "cells": cells,
                "codes": codes,
                "d": "".join("1" if d else "0" for d in grid.disagree.tolist()),
                "count": grid.disagreeing,
                "legend": grid.legend(),
            }
        )
    return {
        "n": data.n,
        "size": GRID_PAGE_SIZE,
        "systems": [shorten(name, 80) for name in data.systems],
        "ids": [shorten(c, TEXT_CHARS) for c in data.case_ids],
        "queries": [shorten(q, TEXT_CHARS) for q in data.queries],
        "texts": pool,
        "hovers": hovers,
        "answered": answered,
        "metrics": metrics,
    }


def _answered(answer: str | None) -> int:
    """A cell's ``answered`` code (module docstring)."""
    return 0 if answer is None else 1 if answer else 2


def _usable(comparison: Any) -> bool:
    """Whether a comparison can show a grid: it holds its reports and compares a metric."""
    return bool(getattr(comparison, "reports", ())) and bool(comparison.metrics)
