"""How far to trust each metric: its verdicts against people's, and people against each other.

A metric (or LLM judge) is binarised per case result as its score's ``passed`` when the
score has one, else ``value >= threshold`` (bools as they are); people's verdict is
positive when the reviewers' mean value is at least 0.5 (``correct`` 1, ``partly`` 0.5,
``wrong`` 0; skips left out). Against them each metric gets accuracy, true-positive and
true-negative rates, Cohen's kappa with a bootstrap interval and the confusion table
(a metric that is n/a in a mode, say an answer metric in a mode with no answers, is not
counted there),
plus a bias probe: how the metric's value and people's follow the answer's length. A
metric is **calibrated** when its kappa is at least ``floor`` (0.6) on at least
``min_labels`` (50) reviewed case results; anything else says why not.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from heta_nb.stats.agreement import Agreement, BinaryAgreement, alpha_with_ci, binary_agreement, kappa_with_ci

__all__ = ["FLOOR", "MIN_LABELS", "Calibration", "MetricCalibration", "calibrate", "human_values", "reviewer_agreement"]

FLOOR = 0.6
"""The kappa a metric needs to be calibrated."""
MIN_LABELS = 50
"""The reviewed case results it needs."""


def human_values(reviews: pd.DataFrame) -> dict[tuple[str, str], float]:
    """People's value per reviewed case result: the mean of the reviewers' last verdicts (skips left out)."""
    rated = reviews.dropna(subset=["value"])
    grouped = rated.groupby(["case_id", "query_mode"], sort=False)["value"].mean()
    return {(str(c), str(m)): float(v) for (c, m), v in grouped.items()}


def _metric_verdict(score: Mapping[str, Any], threshold: float) -> bool | None:
    if score.get("value") == "error" or (score.get("metadata") or {}).get("skipped") is True:
        return None
    passed = score.get("passed")
    if isinstance(passed, bool):
        return passed
    value = score.get("value")
    if isinstance(value, bool):
        return value
    if isinstance(value, (int, float)) and math.isfinite(value):
        return float(value) >= threshold
    return None


@dataclass(frozen=True)
class MetricCalibration:
    """One metric against people."""

    metric: str
    n: int
    agreement: BinaryAgreement | None
    """Accuracy, rates, kappa and its interval, the confusion table (None: nothing to compare)."""
    calibrated: bool
    reason: str
    """Why it is, or is not, calibrated."""
    length_bias: dict[str, float] = field(default_factory=dict)
    """Correlation with the answer's length (in words): ``metric`` and ``people`` (NaN: undefined)."""

    def record(self) -> dict[str, Any]:
        """As a row of :meth:`Calibration.table`."""
        data: dict[str, Any] = {
            "metric": self.metric,
            "n": self.n,
            "calibrated": self.calibrated,
            "reason": self.reason,
        }
        if self.agreement is not None:
            data.update(self.agreement.record())
        data["length_corr_metric"] = self.length_bias.get("metric", math.nan)
        data["length_corr_people"] = self.length_bias.get("people", math.nan)
        return data


@dataclass(frozen=True)
class Calibration:
    """Every metric of a report against its reviews; :meth:`is_calibrated` is what the gate asks."""

    metrics: dict[str, MetricCalibration]
    floor: float
    min_labels: int
    reviewed: int
    judge_versions: dict[str, str] = field(default_factory=dict)
    """The version of each LLM judge of the reviewed report: a calibration holds for that judge only."""

    def gate_reason(self, metric: str, version: str | None) -> str:
        """Why a check may not gate on judge ``metric`` of ``version`` ("" when it may)."""
        if not self.is_calibrated(metric):
            return f"not calibrated: {self.why(metric)} (--require-calibrated)"
        calibrated = self.judge_versions.get(metric)
        if version is not None and calibrated is not None and calibrated != version:
            return (
                f"not calibrated: the reviews calibrated judge version {calibrated!r}, this report's is {version!r} "
                "(--require-calibrated)"
            )
        return ""

    def is_calibrated(self, metric: str) -> bool:
        """Whether ``metric`` met the floor on enough labels."""
        found = self.metrics.get(metric)
        return bool(found and found.calibrated)

    def why(self, metric: str) -> str:
        """Why ``metric`` is (not) calibrated."""
        found = self.metrics.get(metric)
        return found.reason if found is not None else f"{metric!r} has no reviewed score"

    def table(self) -> pd.DataFrame:
        """One row per metric: n, calibrated, reason, accuracy, rates, kappa and its interval, confusion, bias."""
        return pd.DataFrame([m.record() for m in self.metrics.values()])

    def lines(self) -> list[str]:
        """``"faithfulness: calibrated (kappa 0.71 [0.58, 0.82], n=60)"`` per metric."""
        return [
            f"{m.metric}: {'calibrated' if m.calibrated else 'not calibrated'} ({m.reason})"
            for m in self.metrics.values()
        ]

    def _repr_html_(self) -> str:
        """The table, escaped, under the rule it applies."""
        import html

        head = html.escape(repr(self).splitlines()[0])
        columns = ["metric", "calibrated", "n", "reason", "accuracy", "sensitivity", "specificity"]
        table = self.table()
        shown = table[[c for c in columns if c in table.columns]]
        return (
            f"<div class='heta-calibration'><p>{head}</p>{shown.to_html(index=False, escape=True, na_rep='n/a')}</div>"
        )

    def __repr__(self) -> str:
        rule = f"kappa >= {self.floor:g} on >= {self.min_labels:,}"
        head = f"Calibration against {self.reviewed:,} reviewed case results ({rule})"
        return "\n".join([head, *("  " + line for line in self.lines())])


def _correlation(x: Sequence[float], y: Sequence[float]) -> float:
    a, b = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    if len(a) < 3 or np.std(a) == 0 or np.std(b) == 0:
        return math.nan
    return float(np.corrcoef(a, b)[0, 1])


def calibrate(
    report: Any,
    reviews: pd.DataFrame | None = None,
    *,
    store: Any = None,
    path: Any = None,
    metrics: Sequence[str] | None = None,
    threshold: float = 0.5,
    floor: float = FLOOR,
    min_labels: int = MIN_LABELS,
    seed: int = 0,
) -> Calibration:
    """Each metric of ``report`` against people's verdicts (see the module docstring).

    Args:
        report: the reviewed report.
        reviews: its reviews (default: ``report.reviews(store=..., path=...)``).
        metrics: which metrics (default: every metric with a score on a reviewed case result).
        threshold: a number's pass mark when its score has no ``passed``.
        floor: the kappa a metric needs.
        min_labels: the reviewed case results it needs.
        seed: the bootstrap's seed.
    """
    if reviews is None:
        reviews = report.reviews(store=store, path=path)
    people = human_values(reviews)
    not_applicable = {(s.mode, s.metric) for s in report.metric_summaries() if s.status == "n/a"}
    predicted: dict[str, list[bool]] = {}
    truth: dict[str, list[bool]] = {}
    values: dict[str, list[float]] = {}
    lengths: dict[str, list[float]] = {}
    for result in report.raw["case_results"]:
        key = (str(result["case_id"]), str(result["query_mode"]))
        if key not in people or result.get("response") is None:
            continue
        words = float(len(str(result["response"].get("answer") or "").split()))
        for score in result["scores"]:
            name = str(score["name"])
            if (metrics is not None and name not in metrics) or (key[1], name) in not_applicable:
                continue  # (n/a in this mode: "full_text_search returns no answers", as every view says)
            verdict = _metric_verdict(score, threshold)
            if verdict is None:
                continue
            predicted.setdefault(name, []).append(verdict)
            truth.setdefault(name, []).append(people[key] >= 0.5)
            value = score["value"]
            values.setdefault(name, []).append(float(value) if isinstance(value, (int, float)) else float(verdict))
            lengths.setdefault(name, []).append(words)
    found: dict[str, MetricCalibration] = {}
    for name in metrics or predicted:
        mine = predicted.get(name, [])
        if not mine:
            found[name] = MetricCalibration(name, 0, None, False, "no reviewed case result has a score of it")
            continue
        agreement = binary_agreement(mine, truth[name], seed=seed)
        kappa = agreement.kappa
        if len(mine) < min_labels:
            ok, reason = False, f"{len(mine)} reviewed of the {min_labels} needed; {kappa.text}"
        elif not math.isfinite(kappa.value):
            ok, reason = False, f"kappa undefined ({kappa.text}): people or the metric gave one verdict only"
        elif kappa.value < floor:
            ok, reason = False, f"{kappa.text} is below the floor {floor:g}"
        else:
            ok, reason = True, kappa.text
        truth_values = [float(t) for t in truth[name]]
        bias = {
            "metric": _correlation(values[name], lengths[name]),
            "people": _correlation(truth_values, lengths[name]),
        }
        found[name] = MetricCalibration(name, len(mine), agreement, ok, reason, bias)
    judges = (report.raw["metadata"].get("heta_nb") or {}).get("judges") or {}
    versions = {str(k): str(v.get("version")) for k, v in judges.items() if isinstance(v, Mapping)}
    return Calibration(found, floor, min_labels, len(people), versions)


def reviewer_agreement(
    reviews: pd.DataFrame, *, confidence: float = 0.95, seed: int = 0
) -> tuple[Agreement | None, pd.DataFrame]:
    """People against each other: Cohen's kappa (two reviewers) or Krippendorff's alpha (more, ordinal),
    with a bootstrap interval, over the case results at least two of them rated; and those case
    results, the ones they disagree on most first (``spread``: max - min of their values).

    Returns:
        ``(agreement or None when fewer than two reviewers overlap, the table)``.
    """
    rated = reviews.dropna(subset=["value"])
    wide = rated.pivot_table(index=["case_id", "query_mode"], columns="reviewer", values="value", aggfunc="last")
    wide = wide[wide.notna().sum(axis=1) >= 2]
    table = wide.copy()
    table["spread"] = wide.max(axis=1) - wide.min(axis=1)
    table = table.sort_values("spread", ascending=False, kind="stable").reset_index()
    if wide.shape[1] < 2 or wide.empty:
        return None, table
    if wide.shape[1] == 2:
        a, b = (wide.iloc[:, i].to_numpy() for i in range(2))
        labels = [str(v) for v in a], [str(v) for v in b]
        return kappa_with_ci(labels[0], labels[1], confidence=confidence, seed=seed), table
    return alpha_with_ci(wide.to_numpy().T, level="ordinal", confidence=confidence, seed=seed), table
