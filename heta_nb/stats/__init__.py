"""Statistics for summaries and comparisons: confidence intervals and p-values as text.

Dependency-free; the paired resampling tests (numpy) are in :mod:`heta_nb.stats.paired`.
Agreement between raters (:mod:`heta_nb.stats.agreement`), prediction-powered inference
(:mod:`heta_nb.stats.ppi`), McNemar's test (:mod:`heta_nb.stats.discordant`), clustered intervals
(:mod:`heta_nb.stats.clustered`) and power (:mod:`heta_nb.stats.power`) use numpy too: their
names are imported on first use. Benjamini-Hochberg's adjustment (:mod:`heta_nb.stats.multiple`)
is dependency-free.
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
from heta_nb.stats.multiple import benjamini_hochberg

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
    from heta_nb.stats.clustered import ClusteredInterval, clustered_mean_difference
    from heta_nb.stats.discordant import EXACT_MAX, McNemar, mcnemar_exact
    from heta_nb.stats.power import (
        PowerNote,
        cases_needed,
        detectable_difference,
        min_detectable_difference,
        power_note,
    )
    from heta_nb.stats.ppi import CHOICE_MARGIN, DEFAULT_FOLDS, PPIEstimate, ppi_mean, ppi_mean_difference

_AGREEMENT = (
    "Agreement",
    "BinaryAgreement",
    "alpha_with_ci",
    "benjamini_hochberg",
    "binary_agreement",
    "cohen_kappa",
    "kappa_with_ci",
    "krippendorff_alpha",
)
_PPI = ("CHOICE_MARGIN", "DEFAULT_FOLDS", "PPIEstimate", "ppi_mean", "ppi_mean_difference")
_CLUSTERED = ("ClusteredInterval", "clustered_mean_difference")
_DISCORDANT = ("EXACT_MAX", "McNemar", "mcnemar_exact")
_POWER = ("PowerNote", "cases_needed", "detectable_difference", "min_detectable_difference", "power_note")

__all__ = [
    "CHOICE_MARGIN",
    "DEFAULT_FOLDS",
    "EXACT_MAX",
    "Agreement",
    "BinaryAgreement",
    "ClusteredInterval",
    "McNemar",
    "PPIEstimate",
    "PowerNote",
    "alpha_with_ci",
    "benjamini_hochberg",
    "binary_agreement",
    "cases_needed",
    "clustered_mean_difference",
    "cohen_kappa",
    "detectable_difference",
    "expanded_percentile_alpha",
    "is_binary",
    "kappa_with_ci",
    "krippendorff_alpha",
    "mcnemar_exact",
    "mean",
    "min_detectable_difference",
    "p_digits",
    "p_text",
    "power_note",
    "ppi_mean",
    "ppi_mean_difference",
    "sample_std",
    "student_t_cdf",
    "student_t_ppf",
    "t_interval",
    "wilson_interval",
]


def __getattr__(name: str) -> Any:
    """The numpy-backed names, imported on first use so ``heta_nb.stats`` stays light."""
    if name in _AGREEMENT:
        from heta_nb.stats import agreement as module
    elif name in _PPI:
        from heta_nb.stats import ppi as module  # type: ignore[no-redef]
    elif name in _CLUSTERED:
        from heta_nb.stats import clustered as module  # type: ignore[no-redef]
    elif name in _DISCORDANT:
        from heta_nb.stats import discordant as module  # type: ignore[no-redef]
    elif name in _POWER:
        from heta_nb.stats import power as module  # type: ignore[no-redef]
    else:
        raise AttributeError(f"module 'heta_nb.stats' has no attribute {name!r}")
    value = getattr(module, name)
    globals()[name] = value
    return value
