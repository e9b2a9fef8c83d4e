"""Human reviews of a report's case results: stored beside the report, imported, sampled, and
set against the metrics.

Modules: ``log`` (a report's append-only review files, one per reviewer), ``place`` (where
they live: the report's store folder or a path), ``exchange`` (``report.reviews()`` and
``import_reviews``), ``sampling`` (which cases to review first), ``calibration`` (each metric
against people, people against each other), ``estimates`` (prediction-powered estimates from
a metric and the reviews). The report itself is never changed.

The names below load on first use: the views that only ask whether a report was reviewed
(``place``) import neither pandas nor the statistics.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

__all__ = [
    "REVIEW_COLUMNS",
    "VERDICTS",
    "Calibration",
    "MetricCalibration",
    "Review",
    "ReviewLog",
    "calibrate",
    "import_reviews",
    "ppi",
    "ppi_difference",
    "review_log",
    "review_sample",
    "reviewer_agreement",
    "reviews_frame",
    "verdict_value",
]

_HOMES = {
    "REVIEW_COLUMNS": "exchange",
    "import_reviews": "exchange",
    "reviews_frame": "exchange",
    "VERDICTS": "log",
    "Review": "log",
    "ReviewLog": "log",
    "verdict_value": "log",
    "review_log": "place",
    "review_sample": "sampling",
    "Calibration": "calibration",
    "MetricCalibration": "calibration",
    "calibrate": "calibration",
    "reviewer_agreement": "calibration",
    "ppi": "estimates",
    "ppi_difference": "estimates",
}

if TYPE_CHECKING:  # pragma: no cover
    from heta_nb.reviews.calibration import Calibration, MetricCalibration, calibrate, reviewer_agreement
    from heta_nb.reviews.estimates import ppi, ppi_difference
    from heta_nb.reviews.exchange import REVIEW_COLUMNS, import_reviews, reviews_frame
    from heta_nb.reviews.log import VERDICTS, Review, ReviewLog, verdict_value
    from heta_nb.reviews.place import review_log
    from heta_nb.reviews.sampling import review_sample


def _home(name: str) -> Any:
    """The module that defines ``name`` (imported literally: the architecture test reads it)."""
    home = _HOMES.get(name)
    if home == "exchange":
        from heta_nb.reviews import exchange as module
    elif home == "log":
        from heta_nb.reviews import log as module  # type: ignore[no-redef]
    elif home == "place":
        from heta_nb.reviews import place as module  # type: ignore[no-redef]
    elif home == "sampling":
        from heta_nb.reviews import sampling as module  # type: ignore[no-redef]
    elif home == "calibration":
        from heta_nb.reviews import calibration as module  # type: ignore[no-redef]
    elif home == "estimates":
        from heta_nb.reviews import estimates as module  # type: ignore[no-redef]
    else:
        raise AttributeError(f"module 'heta_nb.reviews' has no attribute {name!r}")
    return module


def __getattr__(name: str) -> Any:
    """A public name, imported on first use."""
    value = getattr(_home(name), name)
    globals()[name] = value
    return value
