"""Reviews in and out: ``report.reviews()`` as a DataFrame, and ``heta_nb.import_reviews`` from a
reviews file (the offline page's download) or a DataFrame."""

from __future__ import annotations

import os
from dataclasses import replace
from pathlib import Path
from typing import Any

import orjson
import pandas as pd

from heta_nb._util.fs import read_regular_file
from heta_nb.reviews.log import Review, utc_now
from heta_nb.reviews.place import review_log

__all__ = ["REVIEW_COLUMNS", "import_reviews", "reviews_frame"]

REVIEW_COLUMNS = ("case_id", "query_mode", "reviewer", "verdict", "value", "note", "blind", "at")


def reviews_frame(
    report: Any, *, store: Any = None, path: str | os.PathLike[str] | None = None, history: bool = False
) -> pd.DataFrame:
    """The reviews of ``report``: each reviewer's last verdict per case result (``history=True``: every one).

    Columns :data:`REVIEW_COLUMNS`; ``value`` is 1 / 0.5 / 0 for correct / partly / wrong, the
    number of a numeric verdict, and NaN for skip.
    """
    log = review_log(report, store=store, path=path)
    reviews = log.history() if history else log.latest()
    rows = [{k: v for k, v in r.record().items() if k in REVIEW_COLUMNS} for r in reviews]
    frame = pd.DataFrame(rows, columns=list(REVIEW_COLUMNS))
    frame["value"] = pd.to_numeric(frame["value"], errors="coerce").astype("float64")
    return frame


def _rows_of(source: Any) -> tuple[list[Any], str]:
    """The rows of a reviews file (JSON lines, or the page's ``{"reviews": [...]}``) or DataFrame."""
    if isinstance(source, pd.DataFrame):
        missing = [c for c in ("case_id", "query_mode", "reviewer", "verdict") if c not in source.columns]
        if missing:
            raise ValueError(f"reviews DataFrame: missing column(s) {missing}")
        rows = source.astype(object).where(source.notna(), None).to_dict("records")
        return rows, "reviews DataFrame"
    path = Path(source)
    data = read_regular_file(path)
    name = path.name
    text = data.strip()
    if text.startswith(b"{") and b'"reviews"' in text[:200]:
        try:
            document = orjson.loads(text)
        except orjson.JSONDecodeError as exc:
            raise ValueError(f"{name}: not JSON ({exc})") from None
        if not isinstance(document, dict) or not isinstance(document.get("reviews"), list):
            raise ValueError(f"{name}: 'reviews' must be a list")
        return document["reviews"], name
    rows = []
    for number, line in enumerate(data.splitlines(), start=1):
        if line.strip():
            try:
                rows.append(orjson.loads(line))
            except orjson.JSONDecodeError:
                raise ValueError(f"{name}:{number}: not a JSON line") from None
    return rows, name


def import_reviews(
    source: Any,
    *,
    report: Any,
    store: Any = None,
    path: str | os.PathLike[str] | None = None,
    reviewer: str | None = None,
) -> pd.DataFrame:
    """Store reviews beside ``report``: from the offline page's reviews file, a JSON-lines file, or a
    DataFrame with ``case_id``, ``query_mode``, ``reviewer``, ``verdict`` (``correct`` / ``partly`` /
    ``wrong`` / ``skip``, or a number in [0, 1]) and optional ``note``, ``blind``, ``at``.

    Every row is checked before any is stored: a bad one raises a one-line ValueError naming the
    file (or row) and the field; a case result the report does not have is refused.

    Args:
        source: a path or a DataFrame.
        report: the reviewed report.
        store: the report's local store (the reviews go under its folder there).
        path: or a folder of your own.
        reviewer: the reviewer of rows that name none.

    Returns:
        The reviews stored, as :func:`reviews_frame` rows.
    """
    rows, where = _rows_of(source)
    known = {(r["case_id"], r["query_mode"]) for r in report.raw["case_results"]}
    reviews = []
    for index, row in enumerate(rows):
        at = f"{where}[{index}]"
        if reviewer and isinstance(row, dict) and not row.get("reviewer"):
            row = {**row, "reviewer": reviewer}
        review = Review.from_record(row, at)  # (the checks of a reviews file's line)
        if (review.case_id, review.query_mode) not in known:
            raise ValueError(
                f"{at}: report {report.report_id!r} has no case {review.case_id!r} in mode {review.query_mode!r}"
            )
        reviewer_name, stamp = review.reviewer.strip(), review.at or utc_now()
        reviews.append(replace(review, reviewer=reviewer_name, at=stamp, report_id=str(report.report_id)))
    log = review_log(report, store=store, path=path)
    log.append(reviews)
    frame = pd.DataFrame([{k: v for k, v in r.record().items() if k in REVIEW_COLUMNS} for r in reviews])
    return frame.reindex(columns=list(REVIEW_COLUMNS))
