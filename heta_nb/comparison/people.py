"""What people would say of each difference, where reviews exist: the prediction-powered estimate
(PPI++, :func:`heta_nb.reviews.ppi_difference`) of the difference in the rate people give, from each
metric on every case and the reviews on some, with the human-only interval beside it.

A comparison given ``reviews=`` (one reviews DataFrame per report, ``report.reviews(...)``) computes
one estimate per tested system and metric whose cases people reviewed in both reports (at least
two); the notes name, per system, the metric whose valid interval is the narrowest, and say when
no metric helps more than the reviews alone.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import pandas as pd

from heta_nb.reviews.estimates import ppi_difference

__all__ = ["HUMAN_COLUMNS", "human_estimates", "human_notes"]

HUMAN_COLUMNS = (
    "system",
    "baseline",
    "metric",
    "estimate",
    "ci_low",
    "ci_high",
    "n_labeled",
    "n_unlabeled",
    "classical_estimate",
    "classical_ci_low",
    "classical_ci_high",
    "chosen",
)


def _reviews_of(reviews: Any, index: int, label: str) -> pd.DataFrame | None:
    if isinstance(reviews, Mapping):
        found = reviews.get(label, reviews.get(index))
    elif isinstance(reviews, Sequence) and not isinstance(reviews, (str, bytes)) and index < len(reviews):
        found = reviews[index]
    else:
        found = None
    return found if isinstance(found, pd.DataFrame) and not found.empty else None


def human_estimates(
    reports: Sequence[Any],
    labels: Sequence[str],
    systems: Sequence[Any],
    base_of: Mapping[int, int],
    metrics: Sequence[str],
    reviews: Any,
    confidence: float,
) -> pd.DataFrame:
    """One row per tested system × metric with people's estimate (columns :data:`HUMAN_COLUMNS`)."""
    rows = []
    for k, b in base_of.items():
        system, base = systems[k], systems[b]
        if system.report_index == base.report_index:
            continue  # (two modes of one report: people reviewed answers, not modes' pairs)
        mine = _reviews_of(reviews, system.report_index, labels[system.report_index])
        theirs = _reviews_of(reviews, base.report_index, labels[base.report_index])
        if mine is None or theirs is None:
            continue
        for metric in metrics:
            try:
                found = ppi_difference(
                    reports[base.report_index],
                    reports[system.report_index],
                    metric,
                    theirs,
                    mine,
                    mode=base.mode if base.mode == system.mode else None,
                    confidence=confidence,
                )
            except ValueError:
                continue
            rows.append({"system": system.name, "baseline": base.name, "metric": metric, **_fields(found)})
    return pd.DataFrame(rows, columns=list(HUMAN_COLUMNS))


def _fields(found: Any) -> dict[str, Any]:
    return {name: getattr(found, name) for name in HUMAN_COLUMNS[3:]}


def human_notes(table: pd.DataFrame) -> list[str]:
    """Per system, people's estimated difference through the metric that narrows it most, in words."""
    notes = []
    for system, rows in table.groupby("system", sort=False):
        width = rows["ci_high"] - rows["ci_low"]
        best = rows.loc[width.idxmin()]
        reviewed = int(best["n_labeled"])
        head = f"people (prediction-powered, {reviewed} cases reviewed in both): {system} vs {best['baseline']}"
        alone = (best["classical_estimate"], best["classical_ci_low"], best["classical_ci_high"])
        human = f"reviews alone {alone[0]:+.3f} [{alone[1]:+.3f}, {alone[2]:+.3f}]"
        if best["chosen"] == "ppi":
            notes.append(
                f"{head}: {best['estimate']:+.3f} [{best['ci_low']:+.3f}, {best['ci_high']:+.3f}] through "
                f"{best['metric']}; {human}"
            )
        else:
            notes.append(f"{head}: {human}; no metric narrows it (they track people too weakly)")
    return notes
