"""Review mode: a reviewer's verdicts on a report's case results, given in the explorer.

``report.review(...)`` (:func:`heta_nb.explorer.review`) or the explorer's Review button
starts review mode on an explorer of one report. Each explorer has a :class:`ReviewMode`
(``explorer.review``): it proposes a sample (:func:`~heta_nb.reviews.review_sample`),
takes each verdict the browser sends (``correct`` / ``partly`` / ``wrong`` / ``skip``,
with an optional note), appends it to the report's review log at once
(:meth:`~heta_nb.reviews.ReviewLog.add`: the log is crash-safe), opens the next case of
the sample the reviewer has not judged and sends back the progress. A bad message (an
unknown case, a verdict that is none, a name that cannot be a file name) becomes the
review's ``error`` in the browser, never an exception in the kernel.

Blind review hides the scores: the widget then gets no metric, status or latency column,
no status counts, no status, metric or quick filter, and each case keeps only its query,
answer, retrieved results (without their scores and relevance marks), citations, expected
answers and error (:func:`blind_case`); nothing of the scores reaches the browser. A
standalone page does the same in ``assets/engine.js`` over the sample its JSON embeds.

The widget's ``review`` trait (:meth:`ReviewMode.state`): ``available`` (a report's
explorer), ``on``, ``reviewer``, ``blind``, ``done``, ``total``, ``progress_text`` ("37
of 60 reviewed": the sample's cases with a verdict of the reviewer), ``complete``,
``sample`` and ``reviewed`` (table rows), ``mine`` (the reviewer's last verdict and note
on the open case, or None), ``reviews`` (each reviewer's last verdict on it, ``[reviewer,
verdict, note]``; blind: only the reviewer's own), ``error``, ``where`` and ``download``
(a page offers its reviews as a file; the kernel has them on disk).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

from heta_nb._util.text import describe_error
from heta_nb.explorer.table import ReportTable
from heta_nb.reviews import Review, ReviewLog, review_log, review_sample
from heta_nb.store.names import safe_slug

__all__ = ["BLIND_COLUMNS", "BLIND_KEYS", "MAX_NOTE_CHARS", "ReviewMode", "blind_case", "reviewer_name", "verdict_text"]

BLIND_COLUMNS = frozenset({"row", "case_id", "query_mode", "query", "answer"})
"""The table's columns a blind reviewer sees (no status, metric or latency)."""

BLIND_KEYS = ("q", "x", "a", "r", "rn", "c", "e")
"""The case data a blind reviewer's panel gets: query, expected, answer, results, citations, error."""

MAX_NOTE_CHARS = 4000
"""The longest note a verdict takes."""

SAMPLE = 60
"""Case results proposed for review by default."""


def blind_case(case: Mapping[str, Any] | None) -> dict[str, Any] | None:
    """A report case's panel data (``{"kind", "row", "id", "mode", "data"}``) without any score.

    Only :data:`BLIND_KEYS` of the data stay; each retrieved result keeps its id, source and
    text (its retrieval score and relevance mark become ``""``). Other kinds pass unchanged.
    """
    if case is None:
        return None
    if case.get("kind") != "report":
        return dict(case)
    data = case.get("data") or {}
    kept = {key: data[key] for key in BLIND_KEYS if key in data}
    if "r" in kept:
        kept["r"] = [[r[0], "", "", r[3], r[4]] for r in kept["r"]]
    return {**case, "data": kept}


def verdict_text(verdict: str | float) -> str:
    """A stored verdict as the panel says it (``partly``; a number as ``0.8``)."""
    return verdict if isinstance(verdict, str) else f"{verdict:g}"


def reviewer_name(name: Any) -> str:
    """The reviewer's name, stripped, once it is known to make a safe file name.

    Raises:
        ValueError: not a string, empty, or no safe file name (:func:`~heta_nb.store.names.safe_slug`).
    """
    if not isinstance(name, str) or not name.strip():
        raise ValueError("reviewer: give your name (it names your reviews file)")
    safe_slug(name, "reviewer")
    return name.strip()


def _note(note: Any) -> str | None:
    if note is None:
        return None
    if not isinstance(note, str):
        raise ValueError("note: expected text")
    if len(note) > MAX_NOTE_CHARS:
        raise ValueError(f"note: at most {MAX_NOTE_CHARS:,} characters (this one has {len(note):,})")
    return note.strip() or None


class ReviewMode:
    """An explorer's review mode (``explorer.review``): off until :meth:`start`.

    Args:
        explorer: the :class:`~heta_nb.explorer.Explorer` it belongs to.
    """

    def __init__(self, explorer: Any) -> None:
        self.explorer = explorer
        self.on = False
        self.reviewer = ""
        self.blind = False
        self.error = ""
        self.log: ReviewLog | None = None
        self.sample: list[tuple[str, str]] = []
        self.report_id = ""
        self.options: dict[str, Any] = {}
        """What :meth:`start` was last given (the Review button starts with the same)."""
        self._latest: dict[tuple[str, str], dict[str, Review]] = {}
        self._rows: tuple[Any, dict[tuple[str, str], int]] = (None, {})
        self._peeked: tuple[str, dict[tuple[str, str], dict[str, Review]]] = ("", {})
        """Outside review mode: a report's reviews placed before (read once), for the case panel."""

    def __repr__(self) -> str:
        if not self.on:
            return "<ReviewMode off>"
        return f"<ReviewMode {self.reviewer!r}{' blind' if self.blind else ''}: {self.progress_text}>"

    # -- what a notebook calls ---------------------------------------------------------------
    def start(
        self,
        reviewer: str,
        *,
        sample: int = SAMPLE,
        blind: bool = False,
        store: Any = None,
        path: str | os.PathLike[str] | None = None,
        seed: int = 0,
        label: str | None = None,
    ) -> ReviewMode:
        """Review the report as ``reviewer``: the first case of the sample without their verdict opens.

        Args:
            reviewer: your name (it names your reviews file: see :func:`reviewer_name`).
            sample: how many case results to propose (:func:`~heta_nb.reviews.review_sample`).
            blind: hide every score, judge, metric column and pass/fail mark while reviewing.
            store: the report's local store (the reviews go under its folder); or
            path: a folder of your own; neither: where this report's reviews were placed before
                (or a store explorer's store).
            seed: the sample's seed.
            label: a benchmark case label to stratify the sample by (the explorer's benchmark).

        Raises:
            ValueError: not a report's explorer, a bad name, or no place for the reviews.
        """
        table = self.explorer.table
        if not isinstance(table, ReportTable):
            raise ValueError("review: only a report's case results can be reviewed (explore a report)")
        name = reviewer_name(reviewer)
        report = table.report
        log = self._place(report, store, path)
        items = (
            review_sample(report, sample, seed=seed, benchmark=self.explorer.benchmark, label=label) if table.n else []
        )
        latest = _by_case(log)
        self.options = {"sample": sample, "store": store, "path": path, "seed": seed, "label": label}
        self.log, self.sample, self._latest, self.report_id = log, items, latest, str(report.report_id)
        self.reviewer, self.blind, self.on, self.error = name, bool(blind), True, ""
        if self.blind:
            self.explorer.reset(clear=True)  # (a filter or sort on a score would show through)
        self._open(self._next_item(None, here=True))
        return self

    def stop(self) -> ReviewMode:
        """Leave review mode (the reviews stay on disk and in the case panel)."""
        self.on, self.error = False, ""
        self._push()
        return self

    def verdict(self, case_id: str, mode: str, verdict: Any, *, note: Any = None, advance: bool = True) -> Review:
        """Record the reviewer's verdict on one case result, then (``advance``) open the next unreviewed one.

        Raises:
            ValueError: not in review mode, an unknown case result, a bad verdict or note.
        """
        if not self.on or self.log is None:
            raise ValueError("review: start review mode first (the Review button, or report.review(...))")
        if not isinstance(case_id, str) or not isinstance(mode, str) or (case_id, mode) not in self.rows():
            raise ValueError(f"review: report {self.report_id!r} has no case {case_id!r} in mode {mode!r}")
        review = self.log.add(case_id, mode, self.reviewer, verdict, note=_note(note), blind=self.blind)
        self._latest.setdefault((case_id, mode), {})[review.reviewer] = review
        self.error = ""
        if advance:
            self.next(after=(case_id, mode))
        else:
            self._push()
        return review

    def next(self, after: tuple[str, str] | None = None) -> bool:
        """Open the sample's next case without the reviewer's verdict, after ``after`` (default: the open case).

        Filters that hide it are cleared first. Returns False when every case of the sample has one.
        """
        return self._open(self._next_item(after))

    @property
    def done(self) -> int:
        """The sample's case results with a verdict of the reviewer."""
        return sum(1 for item in self.sample if self.reviewer in self._latest.get(item, {}))

    @property
    def progress_text(self) -> str:
        """``37 of 60 reviewed``."""
        return f"{self.done:,} of {len(self.sample):,} reviewed"

    # -- what the widget gets -----------------------------------------------------------------
    def rows(self) -> dict[tuple[str, str], int]:
        """``(case_id, mode) -> table row`` of the explorer's table (built once per table)."""
        table = self.explorer.table
        if self._rows[0] is not table:
            keys = zip(table.case_ids.tolist(), table.modes_column.tolist()) if isinstance(table, ReportTable) else ()
            self._rows = (table, {(str(c), str(m)): row for row, (c, m) in enumerate(keys)})
        return self._rows[1]

    def applies(self) -> bool:
        """Whether the explorer shows the reviewed report (a store explorer may have moved on)."""
        table = self.explorer.table
        return self.log is not None and isinstance(table, ReportTable) and str(table.report.report_id) == self.report_id

    def state(self, case: Mapping[str, Any] | None) -> dict[str, Any]:
        """The ``review`` trait, ``case`` being the open case's panel data (see the module docstring)."""
        table = self.explorer.table
        key = (str(case["id"]), str(case["mode"])) if case and case.get("kind") == "report" else None
        if not self.applies():
            here = self._peek(table).get(key, {}) if key and isinstance(table, ReportTable) else {}
            reviews = [[who, verdict_text(r.verdict), r.note or ""] for who, r in sorted(here.items())]
            return {"available": isinstance(table, ReportTable), "on": False, "error": self.error, "reviews": reviews}
        rows = self.rows()
        here = self._latest.get(key, {}) if key else {}
        own = here.get(self.reviewer)
        blind = self.on and self.blind
        shown = sorted((who, r) for who, r in here.items() if not blind or who == self.reviewer)
        done = self.done
        log = self.log
        return {
            "available": True,
            "on": self.on,
            "reviewer": self.reviewer,
            "blind": blind,
            "done": done,
            "total": len(self.sample),
            "progress_text": self.progress_text,
            "complete": bool(self.sample) and done == len(self.sample),
            "sample": [rows[item] for item in self.sample if item in rows],
            "reviewed": sorted(rows[k] for k, by in self._latest.items() if self.reviewer in by and k in rows),
            "mine": {"verdict": verdict_text(own.verdict), "note": own.note or ""} if own else None,
            "reviews": [[who, verdict_text(r.verdict), r.note or ""] for who, r in shown],
            "error": self.error,
            "where": f"saved to {log.file_of(self.reviewer)}" if log is not None and self.reviewer else "",
            "download": False,
        }

    def push(self, widget: Any) -> None:
        """Set the widget's ``review`` trait; in blind review, take every score out of what it was given."""
        widget.review = self.state(widget.case)
        if not (self.on and self.blind and self.applies()):
            return
        keep = [k for k, column in enumerate(self.explorer.columns) if column.key in BLIND_COLUMNS]
        widget.columns = [widget.columns[k] for k in keep]
        widget.rows = [{"row": r["row"], "cells": [r["cells"][k] for k in keep]} for r in widget.rows]
        widget.case = blind_case(widget.case)
        info = widget.info
        widget.info = {
            **info,
            "count_text": f"{info['matched']:,} of {info['total']:,} match{self.explorer.source.note()}",
        }
        widget.options = {**widget.options, "statuses": [], "metrics": [], "quick": []}

    def message(self, content: Mapping[str, Any]) -> None:
        """A review action from the browser; what goes wrong becomes the review's ``error``."""
        action = content.get("action")
        try:
            if action == "review_start":
                self.start(content.get("reviewer", ""), **{**self.options, "blind": content.get("blind") is True})
            elif action == "review_verdict":
                case_id: Any = content.get("case_id")
                mode: Any = content.get("mode")
                verdict: Any = content.get("verdict")
                self.verdict(
                    case_id, mode, verdict, note=content.get("note"), advance=content.get("advance") is not False
                )
            elif action == "review_next":
                self.next()
            elif action == "review_stop":
                self.stop()
            else:
                raise ValueError(f"review: unknown action {action!r}")
        except Exception as exc:  # noqa: BLE001 - the widget says what went wrong and goes on
            self.error = describe_error(exc, 300)
            self._push()

    # -- internals -------------------------------------------------------------------------------
    def _place(self, report: Any, store: Any, path: str | os.PathLike[str] | None) -> ReviewLog:
        """The report's review log: at ``store`` or ``path``, else where placed before, else the explorer's store."""
        if store is not None or path is not None:
            return review_log(report, store=store, path=path)
        try:
            return review_log(report)
        except ValueError:
            source_store = getattr(self.explorer.source, "store", None)
            if source_store is None:
                raise
            return review_log(report, store=source_store)

    def _peek(self, table: ReportTable) -> dict[tuple[str, str], dict[str, Review]]:
        """The reviews of the table's report where they were placed (or its store's), read once per report."""
        report_id = str(table.report.report_id)
        if self._peeked[0] != report_id:
            try:
                latest = _by_case(self._place(table.report, None, None))
            except (ValueError, OSError):  # not placed, or not readable: none shown (starting says why)
                latest = {}
            self._peeked = (report_id, latest)
        return self._peeked[1]

    def _next_item(self, after: tuple[str, str] | None, *, here: bool = False) -> tuple[str, str] | None:
        """The sample's first case after ``after`` (``here``: from it on) without the reviewer's verdict."""
        if after is None:
            case = self.explorer.case
            after = (str(case.case_id), str(case.query_mode)) if hasattr(case, "query_mode") else None
        start = self.sample.index(after) + (0 if here else 1) if after in self.sample else 0
        rows = self.rows()
        for item in self.sample[start:] + self.sample[:start]:
            if item in rows and self.reviewer not in self._latest.get(item, {}):
                return item
        return None

    def _open(self, item: tuple[str, str] | None) -> bool:
        if item is None:
            self._push()
            return False
        if not (self.explorer.rows == self.rows()[item]).any():
            self.explorer.reset(clear=True)
        self.explorer.open(case_id=item[0], mode=item[1])
        return True

    def _push(self) -> None:
        self.explorer.go(self.explorer.page)  # (re-sends what changed, the review state too)


def _by_case(log: ReviewLog) -> dict[tuple[str, str], dict[str, Review]]:
    """Each reviewer's last verdict, by case result."""
    latest: dict[tuple[str, str], dict[str, Review]] = {}
    for review in log.latest():
        latest.setdefault((review.case_id, review.query_mode), {})[review.reviewer] = review
    return latest
