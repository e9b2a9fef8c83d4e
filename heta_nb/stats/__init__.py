"""Statistics for summaries and comparisons: confidence intervals and p-values as text.

Dependency-free; the paired resampling tests (numpy) are in :mod:`heta_nb.stats.paired`.
Agreement between raters (:mod:`heta_nb.stats.agreement`) and prediction-powered inference
(:mod:`heta_nb.stats.ppi`) use numpy too: their names are imported on first use.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

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

if TYPE_CHECKING:
    from heta_nb.stats.agreement import (
        Agreement,
        BinaryAgreement,
        alpha_with_ci,
        binary_agreement,
        cohen_kappa,
        kappa_with_ci,
        krippendorff_alpha,
    )
    from heta_nb.stats.ppi import CHOICE_MARGIN, DEFAULT_FOLDS, PPIEstimate, ppi_mean, ppi_mean_difference

_AGREEMENT = (
    "Agreement",
    "BinaryAgreement",
    "alpha_with_ci",
    "binary_agreement",
    "cohen_kappa",
    "kappa_with_ci",
    "krippendorff_alpha",
)
_PPI = ("CHOICE_MARGIN", "DEFAULT_FOLDS", "PPIEstimate", "ppi_mean", "ppi_mean_difference")

__all__ = [
    "CHOICE_MARGIN",
    "DEFAULT_FOLDS",
    "Agreement",
    "BinaryAgreement",
    "PPIEstimate",
    "alpha_with_ci",
    "binary_agreement",
    "cohen_kappa",
    "expanded_percentile_alpha",
    "is_binary",
    "kappa_with_ci",
    "krippendorff_alpha",
    "mean",
    "p_digits",
    "p_text",
    "ppi_mean",
    "ppi_mean_difference",
    "sample_std",
    "student_t_cdf",
    "student_t_ppf",
    "t_interval",
    "wilson_interval",
]


def __getattr__(name: str) -> Any:
    """The numpy-backed names (agreement, PPI), imported on first use so ``heta_nb.stats`` stays light."""
    if name in _AGREEMENT:
        from heta_nb.stats import agreement as module
    elif name in _PPI:
        from heta_nb.stats import ppi as module  # type: ignore[no-redef]
    else:
        raise AttributeError(f"module 'heta_nb.stats' has no attribute {name!r}")
    value = getattr(module, name)
    globals()[name] = value
    return value
