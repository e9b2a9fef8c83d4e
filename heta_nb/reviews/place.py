"""Where a report's reviews live: in its store, under the report's folder, or at a path the user names.

In a local report store: ``_heta/knowledge_bases/{kb}/evaluations/{report_id}/reviews/``
(beside ``report.json``, which is never touched). Elsewhere (a report in memory, a remote
store), a folder given as ``path=``. Once a report's reviews have been placed in this
process, later calls find them without being told again.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from heta_nb.reviews.log import ReviewLog
from heta_nb.store.names import report_prefix

__all__ = ["placed_log", "review_log", "reviews_line"]

_PLACED: dict[str, Path] = {}
"""report_id -> its reviews folder, as placed in this process."""


def _local_root(store: Any) -> Path:
    from heta_nb.store import ReportStore

    target = store if isinstance(store, ReportStore) else ReportStore(store)
    root = target.local_folder
    if root is None:
        raise ValueError(
            f"reviews are kept in a local store folder; {target.location!r} is not one: pass path= (a folder)"
        )
    return root


def review_log(report: Any, *, store: Any = None, path: str | os.PathLike[str] | None = None) -> ReviewLog:
    """The :class:`ReviewLog` of ``report`` (see the module docstring).

    Raises:
        ValueError: no place is known (neither ``store=`` nor ``path=``, and none placed before).
    """
    report_id = str(report.report_id)
    if path is not None:
        folder = Path(path)
    elif store is not None:
        folder = _local_root(store) / report_prefix(report.knowledge_base_name, report_id) / "reviews"
    elif report_id in _PLACED:
        folder = _PLACED[report_id]
    else:
        raise ValueError(
            f"where are the reviews of report {report_id!r}? pass store= (the report's local store) or path= (a folder)"
        )
    _PLACED[report_id] = folder
    return ReviewLog(folder, report_id)


def placed_log(report: Any) -> ReviewLog | None:
    """The reviews of ``report`` if they were placed in this process (a review, an import), else None."""
    folder = _PLACED.get(str(getattr(report, "report_id", "")))
    return ReviewLog(folder, str(report.report_id)) if folder is not None else None


def reviews_line(report: Any) -> str:
    """``"reviews: 60 case results by ana, bo (124 verdicts)"`` for a report whose reviews are known
    in this process ("" otherwise): what the report's header and text repr say of them."""
    log = placed_log(report)
    if log is None:
        return ""
    history = log.history()
    if not history:
        return ""
    latest = {(r.case_id, r.query_mode) for r in history}
    reviewers = sorted({r.reviewer for r in history})
    shown = ", ".join(reviewers[:5]) + (f" +{len(reviewers) - 5}" if len(reviewers) > 5 else "")
    told = f"{len(history):,} verdicts; heta_nb.calibrate says which metrics people confirm"
    return f"reviews: {len(latest):,} case results by {shown} ({told})"
