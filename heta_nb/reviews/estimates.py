"""Prediction-powered estimates: a metric's score on every case result plus people's verdicts on the
reviewed ones give an unbiased estimate of the rate people would give, with a valid interval
(PPI++, Angelopoulos et al. 2023; :mod:`heta_nb.stats.ppi`), and the human-only one beside it.

The metric's value per case result is its number (bools as 0/1); skipped and errored scores
are left out on both sides. The labelled case results are those people reviewed (their mean
value: ``correct`` 1, ``partly`` 0.5, ``wrong`` 0); the others are unlabelled.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import pandas as pd

from heta_nb.reviews.calibration import human_values
from heta_nb.stats.ppi import PPIEstimate, ppi_mean, ppi_mean_difference

__all__ = ["ppi", "ppi_difference"]


def _metric_values(report: Any, metric: str, mode: str) -> dict[tuple[str, str], float]:
    found: dict[tuple[str, str], float] = {}
    for result in report.raw["case_results"]:
        if result["query_mode"] != mode or result.get("response") is None:
            continue
        for score in result["scores"]:
            if score["name"] != metric:
                continue
            value = score["value"]
            metadata = score.get("metadata")
            if isinstance(metadata, Mapping) and metadata.get("skipped") is True:
                continue
            if isinstance(value, bool) or (isinstance(value, (int, float)) and math.isfinite(value)):
                found[(str(result["case_id"]), mode)] = float(value)
    return found


def _mode(report: Any, mode: str | None) -> str:
    modes = list(report.modes)
    if mode is None:
        if len(modes) != 1:
            raise ValueError(f"the report has modes {modes}: say which with mode=")
        return modes[0]
    if mode not in modes:
        raise ValueError(f"the report has no mode {mode!r} (its modes: {modes})")
    return mode


def ppi(
    report: Any,
    metric: str,
    reviews: pd.DataFrame | None = None,
    *,
    mode: str | None = None,
    store: Any = None,
    path: Any = None,
    confidence: float = 0.95,
) -> PPIEstimate:
    """The rate people would give ``report``'s answers in ``mode``, from ``metric`` on every case result
    and the reviews on some (see the module docstring).

    Returns:
        A :class:`~heta_nb.stats.ppi.PPIEstimate`: ``estimate``, ``ci_low``, ``ci_high``, ``n_labeled``,
        ``n_unlabeled``, the tuning ``lam``, the human-only estimate and interval beside it, and
        ``chosen``: "ppi" only when its interval is at least 5% narrower than the reviews' alone
        (:data:`~heta_nb.stats.ppi.CHOICE_MARGIN`), else "classical" (the metric tracks people too
        weakly to help).

    Raises:
        ValueError: fewer than two reviewed case results with a score of ``metric``.
    """
    mode = _mode(report, mode)
    if reviews is None:
        reviews = report.reviews(store=store, path=path)
    people = human_values(reviews)
    values = _metric_values(report, metric, mode)
    labeled = [key for key in values if key in people]
    if len(labeled) < 2:
        raise ValueError(
            f"ppi: {len(labeled)} reviewed case result(s) of mode {mode!r} have a {metric!r} score; "
            "at least 2 are needed"
        )
    unlabeled = [key for key in values if key not in people]
    return ppi_mean(
        [people[k] for k in labeled],
        [values[k] for k in labeled],
        [values[k] for k in unlabeled],
        confidence=confidence,
    )


def ppi_difference(
    report_a: Any,
    report_b: Any,
    metric: str,
    reviews_a: pd.DataFrame | None = None,
    reviews_b: pd.DataFrame | None = None,
    *,
    mode: str | None = None,
    confidence: float = 0.95,
) -> PPIEstimate:
    """The difference ``b - a`` of the rates people would give two recipes' answers on the same cases:
    PPI++ on the per-case differences, over the cases both reports scored; labelled where people
    reviewed both answers.

    Raises:
        ValueError: fewer than two case results reviewed in both reports.
    """
    mode_a = _mode(report_a, mode)
    mode_b = _mode(report_b, mode)
    people_a = human_values(reviews_a if reviews_a is not None else report_a.reviews())
    people_b = human_values(reviews_b if reviews_b is not None else report_b.reviews())
    values_a = {k[0]: v for k, v in _metric_values(report_a, metric, mode_a).items()}
    values_b = {k[0]: v for k, v in _metric_values(report_b, metric, mode_b).items()}
    both = [case for case in values_a if case in values_b]
    labeled = [c for c in both if (c, mode_a) in people_a and (c, mode_b) in people_b]
    if len(labeled) < 2:
        raise ValueError(f"ppi_difference: {len(labeled)} case(s) reviewed in both reports; at least 2 are needed")
    unlabeled = [c for c in both if c not in set(labeled)]
    return ppi_mean_difference(
        y_a=[people_a[(c, mode_a)] for c in labeled],
        y_b=[people_b[(c, mode_b)] for c in labeled],
        yhat_a=[values_a[c] for c in labeled],
        yhat_b=[values_b[c] for c in labeled],
        yhat_unlabeled_a=[values_a[c] for c in unlabeled],
        yhat_unlabeled_b=[values_b[c] for c in unlabeled],
        confidence=confidence,
    )
