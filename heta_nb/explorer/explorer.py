"""The :class:`Explorer`: filters, sort, paging and the open case, kept in the kernel and
mirrored to its widget one page at a time; readable back as ``selection`` and ``case``."""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING, Any

import numpy as np

from heta_nb._util.text import describe_error
from heta_nb.explorer.case_data import OPEN_CASE_LIMITS, benchmark_case, case_data
from heta_nb.explorer.columns import STATUSES, Column
from heta_nb.explorer.filters import Filtered, Filters, apply_filters, text_ranks
from heta_nb.explorer.grid_view import GridView
from heta_nb.explorer.live import LiveRefresh
from heta_nb.explorer.pairs import PairTable
from heta_nb.explorer.review import ReviewMode
from heta_nb.explorer.sources import Source, as_source
from heta_nb.explorer.table import ReportTable

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd

__all__ = ["PAGE_SIZE", "Explorer"]

PAGE_SIZE = 50
"""Rows per page: the browser never holds more than one page of rows."""

_INPUTS = ("search", "mode", "status", "label", "metric", "low", "high", "quick", "sort", "descending")


class Explorer:
    """Explore a report's (or a comparison's) cases: search, filter, sort, page, open one.

    Build it with :func:`heta_nb.explore`. Everything runs in the kernel; the widget gets
    one page of rows at a time and the open case's panel. Every action is also a method,
    so a notebook can drive it and read back what was found. On a running evaluation it
    refreshes itself as cases finish (:mod:`heta_nb.explorer.live`), from another thread:
    its state is guarded by a lock.

    Args:
        obj: an ``EvaluationReport``, a ``Comparison``, a ``ReportStore`` (pick a report in
            the widget, or with :meth:`choose`), a running evaluation (``heta_nb.start``:
            its results so far, then its final report), a report path or ``STORE:KB/REPORT_ID``.
        benchmark: the benchmark the report was run on: case labels (the label filter),
            expected answers and evidence, and relevance judgements in the case panel.
        page_size: rows per page.
    """

    def __init__(self, obj: Any, *, benchmark: Any = None, page_size: int = PAGE_SIZE) -> None:
        if isinstance(page_size, bool) or not isinstance(page_size, int) or not 1 <= page_size <= 500:
            raise ValueError(f"page_size: expected an integer from 1 to 500, got {page_size!r}")
        self.source: Source = as_source(obj)
        self.benchmark = benchmark
        self.page_size = page_size
        self.filters = self.opened_with = Filters()  # opened_with: what Reset goes back to (explore's filters)
        self.page = 0
        self.system: str | None = None
        self._table: ReportTable | PairTable | None = None
        self._generation: Any = object()
        self._sort_keys: dict[str, np.ndarray] = {}
        self._filtered: Filtered | None = None
        self._selected: int | None = None
        self._error = ""
        self._widget: Any = None
        self._pushing: int | None = None  # the thread pushing to the widget (its changes are not the user's)
        self._lock = threading.RLock()
        self._rebuilding = threading.Lock()
        self.review = ReviewMode(self)
        """Review mode (off until ``explorer.review.start(reviewer)``; :mod:`heta_nb.explorer.review`)."""
        self.grid: GridView | None = GridView.of(self.source)  # a comparison's case × system grid, else None
        self.refresh()
        self.live = LiveRefresh(self)
        """Refreshes the explorer when its source grows (a running evaluation)."""

    # -- state a notebook reads back ---------------------------------------------------------
    @property
    def table(self) -> ReportTable | PairTable | None:
        """The rows being explored (None: a store explorer with no report chosen yet)."""
        return self._table

    @property
    def rows(self) -> np.ndarray:
        """The matching table rows, in display order."""
        return self._filtered.rows if self._filtered is not None else np.arange(0)

    @property
    def matched(self) -> int:
        """How many rows match the filters."""
        return int(self.rows.size)

    @property
    def total(self) -> int:
        """How many rows the table has."""
        return self._table.n if self._table is not None else 0

    @property
    def pages(self) -> int:
        """Number of pages of the matching rows (at least 1)."""
        return max(1, -(-self.matched // self.page_size))

    @property
    def selection(self) -> pd.DataFrame:
        """The matching rows as a DataFrame, in display order.

        For a report: its ``cases_frame()`` rows (index: position in ``case_results``); for a
        comparison: case, query, both statuses, and per metric both values and the delta.
        """
        with self._lock:
            if self._table is None:
                import pandas as pd

                return pd.DataFrame()
            return self._table.frame(self.rows)

    @property
    def case(self) -> Any:
        """The open case: an ``EvaluationCaseResult`` (a comparison: ``{system: result or None}``), or None."""
        with self._lock:
            if self._table is None or self._selected is None:
                return None
            return self._table.case(self._selected)

    @property
    def status_counts(self) -> dict[str, int]:
        """Matching rows per status (``ok``, ``error``, ``skipped``, ``n/a``)."""
        return dict(self._filtered.status_counts) if self._filtered is not None else dict.fromkeys(STATUSES, 0)

    # -- actions ---------------------------------------------------------------------------
    def filter(self, **changes: Any) -> Explorer:
        """Change filters (see :class:`~heta_nb.explorer.filters.Filters`); ``""`` or None clears one.

        Example: ``explorer.filter(search="lighthouse", status="error")``. Returns the explorer.

        Raises:
            ValueError: an unknown mode, status, metric, label, quick filter or an empty range.
        """
        self._apply(self.filters.changed(**changes), page=0)
        return self

    def sort(self, column: str | None, *, descending: bool = False) -> Explorer:
        """Sort by a column key (``explorer.columns``); None restores the report's order."""
        self._apply(self.filters.changed(sort=column, descending=descending), page=0)
        return self

    def reset(self, *, clear: bool = False) -> Explorer:
        """Back to the filters the explorer opened with (``explore(report, status="error")``), or
        clear every filter and the sort with ``clear=True`` (the open case stays open)."""
        self._apply(Filters() if clear else self.opened_with, page=0)
        return self

    def go(self, page: int) -> Explorer:
        """Show page ``page`` (0-based; clamped to the pages there are)."""
        with self._lock:
            self.page = min(max(int(page), 0), self.pages - 1)
            self._push()
        return self

    def open(self, position: int | None = None, *, case_id: str | None = None, mode: str | None = None) -> Any:
        """Open a case: the ``position``-th matching row (0-based), or by ``case_id`` (and ``mode``).

        Returns:
            The opened case (see :attr:`case`).

        Raises:
            IndexError: no such position; KeyError: no such case in the table.
        """
        if self._table is None:
            raise ValueError("open: choose a report first")
        if case_id is not None:
            hits = np.flatnonzero(self._table.case_ids == case_id)
            if mode is not None and isinstance(self._table, ReportTable):
                hits = hits[self._table.modes_column[hits] == mode]
            if hits.size == 0:
                raise KeyError(f"open: no case {case_id!r}" + (f" in mode {mode!r}" if mode else ""))
            return self._open_row(int(hits[0]))
        position = 0 if position is None else int(position)
        if not 0 <= position < self.matched:
            raise IndexError(f"open: position {position} is outside the {self.matched:,} matching rows")
        return self._open_row(int(self.rows[position]))

    def next(self) -> Any:
        """Open the next matching case (the first one when none is open)."""
        return self._step(1)

    def previous(self) -> Any:
        """Open the previous matching case (the last one when none is open)."""
        return self._step(-1)

    def close(self) -> Explorer:
        """Close the case panel."""
        with self._lock:
            self._selected = None
            self._push()
        return self

    def choose(self, key: str) -> Explorer:
        """A store's explorer: explore the report stored under ``key`` (see the widget's list)."""
        self.source.choose(key)
        self._selected = None
        self.refresh()
        return self

    def choose_system(self, system: str | None) -> Explorer:
        """A comparison's explorer: compare this system (not the baseline) with the baseline."""
        self.system = system or None
        self._selected = None
        self._generation = object()
        self.refresh()
        return self

    def refresh(self) -> Explorer:
        """Rebuild the table if the source changed (a growing report); filters and open case stay.

        The new table is built outside the explorer's lock (actions from the widget go on
        meanwhile) and swapped in under it.
        """
        with self._rebuilding:
            generation = self.source.generation
            if self._table is not None and generation == self._generation:
                with self._lock:
                    self._apply(self.filters, page=self.page)
                return self
            table = self.source.table(benchmark=self.benchmark, system=self.system)
            sort_keys: dict[str, np.ndarray] = {}
            if table is not None:  # built with the table, so that no first search or sort is slower
                table.search_text  # noqa: B018
                for column in table.columns:
                    if not column.numeric:
                        sort_keys[column.key] = text_ranks(column.values())
            with self._lock:
                key = (
                    self._table.describe_row(self._selected)
                    if self._table is not None and self._selected is not None
                    else None
                )
                self._table, self._generation, self._sort_keys = table, generation, sort_keys
                self._selected = self._find(key) if key is not None else None
                if table is not None:  # another report may lack a mode or metric filtered on: keep the search
                    try:
                        apply_filters(table, self._effective(self.filters), sort_keys=sort_keys)
                    except ValueError:
                        self.filters = Filters(search=self.filters.search)
                self._apply(self.filters, page=self.page)
        return self

    # -- internals -------------------------------------------------------------------------
    def _find(self, description: str) -> int | None:
        table = self._table
        if table is None:
            return None
        for row in range(table.n):
            if table.describe_row(row) == description:
                return row
        return None

    def _effective(self, filters: Filters) -> Filters:
        """Quick filters sort by the chosen metric's delta (worst regressions / best improvements first)."""
        table = self._table
        if filters.sort is None and filters.quick and isinstance(table, PairTable) and table.metrics:
            metric = filters.metric or table.metrics[0]
            return filters.changed(sort=f"delta {metric}", descending=filters.quick == "improvements")
        return filters

    def _apply(self, filters: Filters, *, page: int) -> None:
        with self._lock:
            if self._table is None:
                self.filters, self._filtered, self.page = filters, None, 0
                self._push()
                return
            self._filtered = apply_filters(self._table, self._effective(filters), sort_keys=self._sort_keys)
            self.filters = filters
            self._error = ""
            self.page = min(max(page, 0), self.pages - 1)
            self._push()

    def _step(self, delta: int) -> Any:
        with self._lock:
            return self._step_locked(delta)

    def _step_locked(self, delta: int) -> Any:
        rows = self.rows
        if rows.size == 0:
            return None
        where = np.flatnonzero(rows == self._selected) if self._selected is not None else np.arange(0)
        if where.size == 0:
            position = 0 if delta > 0 else rows.size - 1
        else:
            position = min(max(int(where[0]) + delta, 0), rows.size - 1)
        return self._open_row(int(rows[position]))

    def _open_row(self, row: int) -> Any:
        with self._lock:
            if self._table is None or not 0 <= row < self._table.n:
                raise IndexError(f"open: row {row} is outside the table's {self.total:,} rows")
            self._selected = row
            where = np.flatnonzero(self.rows == row)
            if where.size:
                self.page = int(where[0]) // self.page_size
            self._push()
            return self.case

    def case_json(self) -> dict[str, Any] | None:
        """The open case as the panel gets it (``kind``, ``row``, ``id``, ``mode`` and its
        :mod:`~heta_nb.explorer.case_data`), or None: what a standalone page embeds per row."""
        table, row = self._table, self._selected
        if table is None or row is None:
            return None
        if isinstance(table, PairTable):
            data = table.case_data(row, OPEN_CASE_LIMITS)
            return {"kind": "comparison", "row": row, "id": str(table.case_ids[row]), "mode": "", "data": data}
        case_id = str(table.case_ids[row])
        data = case_data(
            table.case_json(row),
            benchmark_case(self.benchmark, case_id),
            OPEN_CASE_LIMITS,
            not_applicable=table.not_applicable_of(row),
            expected=True,
        )
        return {"kind": "report", "row": row, "id": case_id, "mode": str(table.modes_column[row]), "data": data}

    @property
    def columns(self) -> list[Column]:
        """The table's columns, in order (which to show, pin and move first is the page's layout)."""
        return list(self._table.columns) if self._table is not None else []

    def page_rows(self) -> list[dict[str, Any]]:
        """The rows of the current page as the widget gets them: ``{"row", "cells"}``."""
        if self._table is None:
            return []
        start = self.page * self.page_size
        columns = self.columns
        return [
            {"row": int(row), "cells": [list(column.cell(int(row))) for column in columns]}
            for row in self.rows[start : start + self.page_size]
        ]

    def info(self) -> dict[str, Any]:
        """Counts, page, empty state and error, as the widget shows them."""
        matched, total = self.matched, self.total
        start = self.page * self.page_size
        counts = " · ".join(f"{name} {n:,}" for name, n in self.status_counts.items() if n)
        pages = f"page {self.page + 1:,} of {self.pages:,}"
        empty = ""
        if self._table is None:
            empty = self.source.empty_note() or "Nothing to explore yet."
        elif matched == 0 and self._filtered is not None:
            empty = (self.source.empty_note() if total == 0 else "") or self._filtered.advice(self.filters)
        case_text = ""
        if self._selected is not None and self._table is not None:
            where = np.flatnonzero(self.rows == self._selected)
            name = self._table.describe_row(self._selected)
            case_text = (
                f"{name} · {int(where[0]) + 1:,} of {matched:,}"
                if where.size
                else f"{name} · not in the current selection"
            )
        return {
            "matched": matched,
            "total": total,
            "page": self.page,
            "pages": self.pages,
            "count_text": f"{matched:,} of {total:,} match" + (f" · {counts}" if counts else "") + self.source.note(),
            "page_text": f"{start + 1:,}–{min(start + self.page_size, matched):,} · {pages}" if matched else "",
            "empty": empty,
            "error": self._error,
            "case_text": case_text,
        }

    def options(self) -> dict[str, Any]:
        """What the widget's controls offer."""
        table = self._table
        options: dict[str, Any] = {"statuses": list(STATUSES), "reports": [list(c) for c in self.source.choices()]}
        if table is None:
            return {**options, "title": self.source.pending_title()}
        labels = table.labels.choices()
        options.update(
            title=table.title,
            modes=list(table.modes),
            systems=list(table.systems),
            labels=labels,
            label_note="" if labels else "no labels: pass benchmark= to explore(...) to filter by case label",
            metrics=list(table.metrics),
            metric_any="metric (status, range)" if isinstance(table, ReportTable) else "order by (first metric)",
            range_note="range of the metric"
            if isinstance(table, ReportTable)
            else "range of the delta (system − baseline)",
            quick=list(table.quick_filters),
        )
        return options

    # -- the widget ------------------------------------------------------------------------
    @property
    def widget(self) -> Any:
        """The explorer's widget (created on first use)."""
        with self._lock:
            if self._widget is None:
                from heta_nb.explorer.widget import explorer_widget_class

                self._widget = explorer_widget_class()(fallback=self.source.fallback_html)
                self._widget.on_msg(self._on_message)
                self._widget.observe(self._on_input, names=[*_INPUTS, "page", "system", "report"])
                self._push()
                if self.grid is not None:
                    self.grid.attach(self._widget)
            return self._widget

    def _push(self) -> None:
        with self._lock:
            self._push_locked()

    def _push_locked(self) -> None:
        widget = self._widget
        if widget is None:
            return
        self._pushing = threading.get_ident()
        try:
            with widget.hold_sync():
                filters = self.filters
                widget.options = self.options()
                widget.columns = [
                    {"key": c.key, "label": c.label, "numeric": c.numeric, "metric": c.metric} for c in self.columns
                ]
                for name in _INPUTS:
                    setattr(widget, name, _trait(getattr(filters, name)))
                widget.system = self.system or ""
                widget.report = getattr(self.source, "chosen", None) or ""
                widget.page = self.page
                widget.rows = self.page_rows()
                widget.selected = -1 if self._selected is None else int(self._selected)
                widget.case = self.case_json()
                widget.info = self.info()
                self.review.push(widget)
        finally:
            self._pushing = None

    def _on_input(self, change: dict[str, Any]) -> None:
        if self._pushing == threading.get_ident():
            return
        name, value = change["name"], change["new"]
        try:
            if name == "page":
                self.go(value)
            elif name == "system":
                self.choose_system(value)
            elif name == "report":
                if value:
                    self.choose(value)
            else:
                self.filter(**{name: value})
        except (ValueError, KeyError, TypeError, OSError) as exc:
            self._error = describe_error(exc)
            self._push()

    def _on_message(self, widget: Any, content: Any, buffers: Any) -> None:
        action = content.get("action") if isinstance(content, dict) else None
        try:
            if action == "open":
                self._open_row(int(content["row"]))
            elif action == "next":
                self.next()
            elif action == "previous":
                self.previous()
            elif action == "close":
                self.close()
            elif action in ("reset", "clear"):
                self.reset(clear=action == "clear")
            elif isinstance(action, str) and action.startswith("review"):
                self.review.message(content)
        except (ValueError, KeyError, TypeError, IndexError) as exc:
            self._error = describe_error(exc)
            self._push()

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> Any:
        """The widget, with the static report (or comparison, store) as its ``text/html`` and text fallbacks."""
        data, metadata = self.widget._repr_mimebundle_()
        return {**data, "text/plain": self.source.fallback_text(repr(self))}, metadata

    def __repr__(self) -> str:
        if self._table is None:  # a store explorer before a report is chosen: what to do next
            choices = self.source.choices()
            what = f"choose one of {len(choices):,} reports" if choices else "no reports yet"
            return f"<Explorer {self.source.pending_title()}: {what}>"
        filters = "; ".join(text for _, text in self.filters.active())
        opened = ""
        if self._selected is not None:
            opened = f", case {self._table.describe_row(self._selected)} open"
        return (
            f"<Explorer {self._table.title}: {self.matched:,} of {self.total:,} match"
            + (f" ({filters})" if filters else "")
            + f", page {self.page + 1:,} of {self.pages:,}{opened}>"
        )


def _trait(value: Any) -> Any:
    """A filter's value as its widget trait (text; ``descending`` a bool)."""
    if isinstance(value, bool) or value is None:
        return "" if value is None else value
    return f"{value:g}" if isinstance(value, float) else str(value)
