"""pandas tables of reports: cases, tidy scores, mode × metric summaries, distributions, store listings.

pandas is imported when a function here is called, never by the model.

Modules: :mod:`~heta_nb.tables.report` (:func:`cases_frame`, :func:`scores_frame`,
:func:`summary_frame`), :mod:`~heta_nb.tables.distributions` (:func:`score_quantiles`,
:func:`label_breakdown`, :func:`worst_cases`, :func:`latency_quantiles`) and
:mod:`~heta_nb.tables.listing` (:func:`summaries_frame`, a store listing).
"""

from __future__ import annotations

from heta_nb.tables.distributions import (
    DEFAULT_QUANTILES,
    LATENCY_COLUMNS,
    MISSING_LABEL,
    label_breakdown,
    latency_quantiles,
    score_quantiles,
    worst_cases,
)
from heta_nb.tables.listing import LISTING_COLUMNS, ListedReport, summaries_frame
from heta_nb.tables.report import CASE_COLUMNS, SUMMARY_COLUMNS, cases_frame, scores_frame, summary_frame

__all__ = [
    "CASE_COLUMNS",
    "DEFAULT_QUANTILES",
    "LATENCY_COLUMNS",
    "LISTING_COLUMNS",
    "MISSING_LABEL",
    "SUMMARY_COLUMNS",
    "ListedReport",
    "cases_frame",
    "label_breakdown",
    "latency_quantiles",
    "score_quantiles",
    "scores_frame",
    "summaries_frame",
    "summary_frame",
    "worst_cases",
]
