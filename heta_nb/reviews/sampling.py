"""Which case results to review first: a sample stratified by mode (and label), leaning towards the
cases where the metrics and judges disagree, or a judge's repeats did.

Each case result gets a weight ``1 + 3 x disagreement + 2 x instability``: disagreement is
the spread (max - min) of its scores scaled to [0, 1] (a judge passing an answer that
string overlap scores 0 is a case people should look at), instability is ``1 - agreement``
of its judges' repeats. The sample takes from each stratum in proportion to its size
(at least one each while it lasts), by weighted sampling without replacement with a fixed
seed, so the same report proposes the same sample.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import numpy as np

__all__ = ["ReviewItem", "review_sample"]

ReviewItem = tuple[str, str]
"""``(case_id, query_mode)``."""


def _scaled(score: Mapping[str, Any]) -> float | None:
    """A score's value in [0, 1] for comparing metrics (bools 0/1; numbers above 1 clipped); None: not a number."""
    value = score.get("value")
    if isinstance(value, bool):
        return float(value)
    if isinstance(value, (int, float)):
        metadata = score.get("metadata")
        if isinstance(metadata, Mapping) and metadata.get("skipped") is True:
            return None
        try:
            number = float(value)
        except OverflowError:  # an integer beyond the float range
            number = math.inf if value > 0 else -math.inf
        return min(1.0, max(0.0, number)) if not math.isnan(number) else None
    return None


def _weight(result: Mapping[str, Any]) -> float:
    values: list[float] = []
    unstable = 0.0
    for score in result.get("scores") or ():
        scaled = _scaled(score)
        if scaled is not None:
            values.append(scaled)
        metadata = score.get("metadata")
        agreement = metadata.get("agreement") if isinstance(metadata, Mapping) else None
        if isinstance(agreement, (int, float)) and not isinstance(agreement, bool):
            unstable = max(unstable, 1.0 - float(agreement))
    spread = max(values) - min(values) if len(values) > 1 else 0.0
    return 1.0 + 3.0 * spread + 2.0 * unstable


def review_sample(
    report: Any, n: int, *, seed: int = 0, benchmark: Any = None, label: str | None = None
) -> list[ReviewItem]:
    """``n`` case results to review (see the module docstring), in a stable order.

    Args:
        report: the report.
        n: how many (all of them when the report has fewer).
        seed: the sample's seed.
        benchmark: the report's benchmark, to stratify by one of its case labels too.
        label: that label's name (default: none).

    Returns:
        ``(case_id, query_mode)`` pairs; errored case results (no response) are left out.
    """
    if isinstance(n, bool) or not isinstance(n, int) or n < 1:
        raise ValueError(f"sample must be a whole number >= 1, got {n!r}")
    labels: dict[str, str] = {}
    if benchmark is not None and label:
        for case in benchmark.cases:
            labels[str(case.case_id)] = str(case.labels.get(label, ""))
    strata: dict[tuple[str, str], list[tuple[ReviewItem, float]]] = {}
    for result in report.raw["case_results"]:
        if result.get("response") is None:
            continue
        item = (str(result["case_id"]), str(result["query_mode"]))
        strata.setdefault((item[1], labels.get(item[0], "")), []).append((item, _weight(result)))
    total = sum(len(members) for members in strata.values())
    if total <= n:
        return [item for members in strata.values() for item, _ in members]
    rng = np.random.default_rng(seed)
    quotas = {key: max(1, round(n * len(members) / total)) for key, members in strata.items()}
    while sum(quotas.values()) > n:  # (rounding up every stratum may ask for too many)
        largest = max(quotas, key=lambda key: quotas[key])
        quotas[largest] -= 1
    chosen: list[ReviewItem] = []
    for key, members in strata.items():
        take = min(quotas[key], len(members))
        weights = np.array([w for _, w in members], dtype=float)
        picked = rng.choice(len(members), size=take, replace=False, p=weights / weights.sum())
        chosen.extend(members[i][0] for i in sorted(picked.tolist()))
    return chosen
