"""Statistics for summaries and comparisons: confidence intervals and p-values as text.

Dependency-free; the paired resampling tests (numpy) are in :mod:`heta_nb.stats.paired`.
"""

from __future__ import annotations

from heta_nb.stats.format import p_digits, p_text
from heta_nb.stats.intervals import (
    expanded_percentile_alpha,
    is_binary,
    mean,
    sample_std,
    student_t_cdf,
    student_t_ppf,
    t_interval,
    wilson_interval,
)

__all__ = [
    "expanded_percentile_alpha",
    "is_binary",
    "mean",
    "p_digits",
    "p_text",
    "sample_std",
    "student_t_cdf",
    "student_t_ppf",
    "t_interval",
    "wilson_interval",
]
