"""The case explorer: search, filter, sort and page a report's or a comparison's cases in the
kernel, and open one, in a widget that never holds more than one page of rows."""

from __future__ import annotations

import os
from typing import Any

from heta_nb.explorer.explorer import PAGE_SIZE, Explorer
from heta_nb.explorer.filters import Filters
from heta_nb.explorer.sources import ReportSource, RunSource, Source

__all__ = ["PAGE_SIZE", "Explorer", "Filters", "ReportSource", "RunSource", "Source", "explore", "review"]


def explore(obj: Any, *, benchmark: Any = None, page_size: int = PAGE_SIZE, view: str = "", **filters: Any) -> Explorer:
    """Explore the cases of a report, a comparison or a store in a widget.

    Args:
        obj: an ``EvaluationReport``, a ``Comparison`` (both systems side by side), a
            ``ReportStore`` (pick a report first), a running evaluation (``heta_nb.start``'s
            handle: the cases finished so far, refreshed as they finish, then the final
            report), a report path or ``STORE:KB/REPORT_ID``.
        benchmark: the benchmark the report was run on, for the label filter, expected
            answers and evidence, and results marked relevant / not relevant / not judged.
        page_size: rows per page (the browser holds one page at a time).
        view: a comparison's view to open on: ``""`` the baseline and one system side by side,
            ``"grid"`` every system at once (cases × systems, on ``metric=`` if given: see
            :class:`~heta_nb.explorer.grid_view.GridView`, ``explorer.grid``). The widget
            switches between them.
        **filters: initial filters, e.g. ``status="error"`` (see :class:`Filters`).

    Returns:
        The :class:`Explorer`; display it (last line of a cell) to get the widget, and read
        ``explorer.selection`` (the filtered DataFrame) and ``explorer.case`` afterwards.

    Raises:
        ValueError: ``view="grid"`` for anything but a comparison holding its reports.
    """
    explorer = Explorer(obj, benchmark=benchmark, page_size=page_size)
    if filters:
        explorer.filter(**filters)
        explorer.opened_with = explorer.filters  # Reset comes back here, not to nothing
    if view:
        if explorer.grid is None:
            raise ValueError(f"view={view!r}: only a comparison built with heta_nb.compare(...) has a grid")
        explorer.grid.show(filters.get("metric") or None, view=view)
    return explorer


def review(
    report: Any,
    reviewer: str,
    *,
    sample: int = 60,
    blind: bool = False,
    store: Any = None,
    path: str | os.PathLike[str] | None = None,
    benchmark: Any = None,
    seed: int = 0,
    label: str | None = None,
    page_size: int = PAGE_SIZE,
) -> Explorer:
    """Review a report's case results in the explorer, keyboard first (``report.review(...)``).

    The explorer opens on the first case of a proposed sample (:func:`heta_nb.reviews.review_sample`,
    leaning towards cases where the metrics disagree) without your verdict. With a case open:
    ``1``/``c`` correct, ``2``/``p`` partly, ``3``/``w`` wrong, ``s`` skip, ``n`` a note (Enter
    keeps it with the verdict, Escape leaves it). Each verdict is appended to the report's
    review log at once and the next unreviewed case opens; any case you open can be reviewed
    too, and the last verdict on a case stands. Read them with ``report.reviews()``.

    Args:
        report: the report (anything :func:`explore` takes that is one report).
        reviewer: your name (it names your reviews file, so it must make a safe file name).
        sample: how many case results to propose.
        blind: hide every score, judge block, metric column and pass/fail mark while reviewing.
        store: the report's local store (the reviews go under its folder); or
        path: a folder of your own (neither: where the report's reviews were placed before).
        benchmark: the benchmark it was run on (expected answers and evidence in the panel).
        seed: the sample's seed (the same report and seed propose the same sample).
        label: a benchmark case label to stratify the sample by.
        page_size: rows per page.

    Returns:
        The :class:`Explorer` in review mode (``explorer.review``: progress, verdicts, stop).
    """
    explorer = Explorer(report, benchmark=benchmark, page_size=page_size)
    explorer.review.start(reviewer, sample=sample, blind=blind, store=store, path=path, seed=seed, label=label)
    return explorer
