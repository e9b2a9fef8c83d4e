"""Human reviews of a report's case results: stored beside the report, imported, sampled.

Modules: ``log`` (a report's append-only review files, one per reviewer), ``place``
(where they live: the report's store folder or a path), ``exchange`` (``report.reviews()``
and ``import_reviews``), ``sampling`` (which cases to review first), ``calibration`` (each
metric against people, people against each other), ``estimates`` (prediction-powered
estimates from a metric and the reviews). The report itself is never changed.
"""

from __future__ import annotations

from heta_nb.reviews.calibration import Calibration, MetricCalibration, calibrate, reviewer_agreement
from heta_nb.reviews.estimates import ppi, ppi_difference
from heta_nb.reviews.exchange import REVIEW_COLUMNS, import_reviews, reviews_frame
from heta_nb.reviews.log import VERDICTS, Review, ReviewLog, verdict_value
from heta_nb.reviews.place import review_log
from heta_nb.reviews.sampling import review_sample

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
