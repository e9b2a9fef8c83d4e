"""The case explorer: search, filter, sort and page a report's or a comparison's cases in the
kernel, and open one, in a widget that never holds more than one page of rows."""

from __future__ import annotations

from typing import Any

from heta_nb.explorer.explorer import PAGE_SIZE, Explorer
from heta_nb.explorer.filters import Filters
from heta_nb.explorer.sources import ReportSource, RunSource, Source

__all__ = ["PAGE_SIZE", "Explorer", "Filters", "ReportSource", "RunSource", "Source", "explore"]


def explore(obj: Any, *, benchmark: Any = None, page_size: int = PAGE_SIZE, **filters: Any) -> Explorer:
    """Explore the cases of a report, a comparison or a store in a widget.

    Args:
        obj: an ``EvaluationReport``, a ``Comparison`` (both systems side by side), a
            ``ReportStore`` (pick a report first), a running evaluation (``heta_nb.start``'s
            handle: the cases finished so far, refreshed as they finish, then the final
            report), a report path or ``STORE:KB/REPORT_ID``.
        benchmark: the benchmark the report was run on, for the label filter, expected
            answers and evidence, and results marked relevant / not relevant / not judged.
        page_size: rows per page (the browser holds one page at a time).
        **filters: initial filters, e.g. ``status="error"`` (see :class:`Filters`).

    Returns:
        The :class:`Explorer`; display it (last line of a cell) to get the widget, and read
        ``explorer.selection`` (the filtered DataFrame) and ``explorer.case`` afterwards.
    """
    explorer = Explorer(obj, benchmark=benchmark, page_size=page_size)
    if filters:
        explorer.filter(**filters)
    return explorer
