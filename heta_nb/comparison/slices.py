"""Which slices moved: the paired difference of every slice of the cases (a benchmark label, a
case field, any grouping), with the multiplicity across slices controlled.

For each tested system, metric and slice the cases the pair compares that fall in the slice get
the comparison's paired test (its seed and tie tolerance; at most 2,000 resamples, more when many
slices are tested: :func:`slice_resamples`). When the comparison clusters, each slice's interval
and p-value are cluster-robust (CR1, t on ``G - 1`` df: cheap for many slices). A slice with
fewer than ``min_cases`` cases is not tested: it says it is too small instead of showing a wide
interval as a finding. The slices of one system and metric are one family, adjusted together by
Holm (family-wise error) or Benjamini-Hochberg (false discovery rate), named in every row. The
slices that moved come first.
"""

from __future__ import annotations

import math
from dataclasses import replace
from typing import TYPE_CHECKING, Any, Literal

import numpy as np

from heta_nb._util.frames import frame as frame_of
from heta_nb.comparison.groups import NO_GROUP, case_groups, grouping_name
from heta_nb.comparison.sensitivity import sensitivity_of
from heta_nb.comparison.significance import is_significant, verdict_text
from heta_nb.stats.batch import paired_tests
from heta_nb.stats.clustered import clustered_mean_difference
from heta_nb.stats.multiple import benjamini_hochberg
from heta_nb.stats.paired import PairedTest, holm

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd


__all__ = ["MIN_SLICE_CASES", "SLICE_COLUMNS", "slice_lines", "slice_resamples", "slice_tests"]

MIN_SLICE_CASES = 10
"""Slices with fewer cases are not tested (too small to say anything a reader should act on)."""

SLICE_COLUMNS = (
    "system",
    "baseline",
    "mode",
    "metric",
    "slice_by",
    "slice",
    "n",
    "mean",
    "baseline_mean",
    "mean_diff",
    "ci_low",
    "ci_high",
    "p_value",
    "p_adjusted",
    "correction",
    "family_size",
    "significant",
    "verdict",
    "min_detectable_difference",
)
"""Columns of :meth:`~heta_nb.comparison.Comparison.slices`."""

_CORRECTIONS = {"holm": "Holm", "bh": "Benjamini-Hochberg"}


def slice_tests(
    comparison: Any,
    by: Any = "labels",
    *,
    metrics: list[str] | None = None,
    benchmark: Any = None,
    correction: Literal["holm", "bh"] = "holm",
    min_cases: int = MIN_SLICE_CASES,
) -> pd.DataFrame:
    """The paired difference per slice; see :meth:`~heta_nb.comparison.Comparison.slices`."""
    if correction not in _CORRECTIONS:
        raise ValueError(f"correction must be 'holm' or 'bh', got {correction!r}")
    if isinstance(min_cases, bool) or not isinstance(min_cases, int) or min_cases < 2:
        raise ValueError(f"min_cases must be an integer >= 2, got {min_cases!r}")
    aligned = comparison._aligned
    benchmark = benchmark if benchmark is not None else comparison.benchmark
    chosen = list(metrics) if metrics is not None else list(comparison.metrics)
    for metric in chosen:
        if metric not in comparison.metrics:
            raise ValueError(f"metric {metric!r} is not compared; metrics: {list(comparison.metrics)}")
    groupings = _groupings(by, aligned.case_ids, benchmark)
    rows: list[dict[str, Any]] = []
    for name, groups in groupings:
        rows.extend(_rows(comparison, name, groups, chosen, correction, min_cases))
    frame = frame_of(rows, columns=list(SLICE_COLUMNS))
    if len(frame):
        for column in ("n", "family_size"):
            frame[column] = frame[column].astype("int64")
        frame["significant"] = frame["significant"].astype("bool")
    frame.attrs.update(correction=_CORRECTIONS[correction], min_cases=min_cases, alpha=comparison.alpha)
    return frame


def _groupings(by: Any, case_ids: list[str], benchmark: Any) -> list[tuple[str, np.ndarray]]:
    """``[(slice_by, each case's slice)]``; ``"labels"`` is every label key of the benchmark."""
    if isinstance(by, str) and by == "labels":
        if benchmark is None:
            raise ValueError("slices by label read the benchmark's cases: pass benchmark= (to compare or slices)")
        keys = sorted({key for case in getattr(benchmark, "cases", ()) for key in (case.labels or {})})
        if not keys:
            raise ValueError("the benchmark's cases have no labels; name a field or pass a {case_id: slice} mapping")
        return [(f"labels.{key}", _as_slices(case_groups(f"labels.{key}", case_ids, benchmark))) for key in keys]
    return [(grouping_name(by), _as_slices(case_groups(by, case_ids, benchmark)))]


def _as_slices(groups: list[Any]) -> np.ndarray:
    out = np.empty(len(groups), dtype=object)
    out[:] = [NO_GROUP if g is None else str(g) for g in groups]
    return out


def _rows(
    comparison: Any, by: str, groups: np.ndarray, metrics: list[str], correction: str, min_cases: int
) -> list[dict[str, Any]]:
    """The rows of one grouping: every tested system × metric × slice, adjusted per system × metric."""
    aligned = comparison._aligned
    values = sorted(set(groups.tolist()), key=lambda v: (v == NO_GROUP, v))
    keys: list[tuple[int, int, str]] = []
    small: list[tuple[int, int, str, int]] = []
    in_slice = {value: groups == value for value in values}
    for k in comparison.base_of:
        for metric in metrics:
            j = comparison.metrics.index(metric)
            if comparison.verdict(k, metric).startswith(("n/a", "not comparable")):
                continue
            for value in values:
                n = int(np.count_nonzero(aligned.mask[k, j] & in_slice[value]))
                if n >= min_cases:
                    keys.append((k, j, value))
                elif n:
                    small.append((k, j, value, n))
    tests = _tests(comparison, keys, groups)
    out: list[dict[str, Any]] = []
    families: dict[tuple[int, int], list[int]] = {}
    for index, (k, j, _) in enumerate(keys):
        families.setdefault((k, j), []).append(index)
    adjust = holm if correction == "holm" else benjamini_hochberg
    for (k, j), members in families.items():
        adjusted = adjust([tests[i].p_value for i in members])
        base = comparison.base_of[k]
        for i, p in zip(members, adjusted):
            test = replace(tests[i], p_value_adjusted=p)
            where = aligned.mask[k, j] & (groups == keys[i][2])
            seen = sensitivity_of(
                test, aligned.values[base, j, where], aligned.values[k, j, where],
                alpha=comparison.alpha, tests=len(members),
            )  # fmt: skip
            out.append(_row(comparison, k, j, by, keys[i][2], test, correction, len(members), seen.mdd))
    out.sort(key=lambda r: (not r["significant"], r["p_adjusted"], -abs(r["mean_diff"])))
    for k, j, value, n in small:
        out.append(_row(comparison, k, j, by, value, None, correction, 0, math.nan, n=n, min_cases=min_cases))
    return out


def _largest_family(keys: list[tuple[int, int, str]]) -> int:
    """The most slices adjusted together (one system and metric)."""
    sizes: dict[tuple[int, int], int] = {}
    for k, j, _ in keys:
        sizes[(k, j)] = sizes.get((k, j), 0) + 1
    return max(sizes.values(), default=1)


def slice_resamples(resamples: int, tests: int) -> int:
    """Resamples of the slice tests: the comparison's, at most 2,000 (slices screen many
    subsets), but enough for a Holm-adjusted p-value over a family of ``tests`` slices to reach
    0.05: the smallest p-value a resampling test can give is about ``1 / resamples``."""
    return min(resamples, max(2_000, 40 * tests))


def _tests(comparison: Any, keys: list[tuple[int, int, str]], groups: np.ndarray) -> list[PairedTest]:
    """The paired test of each slice, in one batch (clustered like the comparison when it clusters).

    Each slice's cases are packed to the front of its row (a slice holds a fraction of the
    cases, so the batch works on the widest slice, not on every case of the comparison)."""
    if not keys:
        return []
    aligned = comparison._aligned
    where = [np.flatnonzero(aligned.mask[k, j] & (groups == value)) for k, j, value in keys]
    width = max(w.size for w in where)
    a = np.zeros((len(keys), width))
    b = np.zeros((len(keys), width))
    masks = np.zeros((len(keys), width), dtype=bool)
    for row, ((k, j, _), cases) in enumerate(zip(keys, where)):
        a[row, : cases.size] = aligned.values[comparison.base_of[k], j, cases]
        b[row, : cases.size] = aligned.values[k, j, cases]
        masks[row, : cases.size] = True
    tests = paired_tests(
        a, b, masks,
        resamples=slice_resamples(comparison.resamples, _largest_family(keys)), confidence=comparison.confidence,
        seed=comparison.seed, tie_tolerance=comparison.tie_tolerance,
    )  # fmt: skip
    clustering = comparison.clustering
    if clustering is None:
        return tests
    codes = clustering.codes()
    out = []
    for test, cases, row_a, row_b, mask in zip(tests, where, a, b, masks):
        interval = clustered_mean_difference(
            row_b[mask] - row_a[mask], codes[cases], confidence=comparison.confidence,
            method="robust", unit=clustering.unit,
        )  # fmt: skip
        out.append(replace(test, ci_low=interval.ci_low, ci_high=interval.ci_high, p_value=interval.p_value))
    return out


def _row(
    comparison: Any, k: int, j: int, by: str, value: str, test: PairedTest | None, correction: str,
    size: int, mdd: float, *, n: int = 0, min_cases: int = MIN_SLICE_CASES,
) -> dict[str, Any]:  # fmt: skip
    nan = math.nan
    system = comparison.system_info[k]
    head = {
        "system": system.name,
        "baseline": comparison.systems[comparison.base_of[k]],
        "mode": system.mode,
        "metric": comparison.metrics[j],
        "slice_by": by,
        "slice": value,
    }
    if test is None:
        return {
            **head, "n": n, "mean": nan, "baseline_mean": nan, "mean_diff": nan, "ci_low": nan, "ci_high": nan,
            "p_value": nan, "p_adjusted": nan, "correction": "", "family_size": 0, "significant": False,
            "verdict": f"too small to test ({n} case{'s' if n != 1 else ''} < {min_cases})",
            "min_detectable_difference": nan,
        }  # fmt: skip
    return {
        **head,
        "n": test.n,
        "mean": test.mean_b,
        "baseline_mean": test.mean_a,
        "mean_diff": test.mean_diff,
        "ci_low": test.ci_low,
        "ci_high": test.ci_high,
        "p_value": test.p_value,
        "p_adjusted": test.p_value_adjusted,
        "correction": f"{_CORRECTIONS[correction]} over {size} slices of {by}",
        "family_size": size,
        "significant": is_significant(test, comparison.alpha),
        "verdict": verdict_text(test, comparison.alpha, mdd),
        "min_detectable_difference": mdd,
    }


def slice_lines(slices: pd.DataFrame, limit: int = 5) -> list[str]:
    """The slices that moved, one line each: ``"labels.topic = tides: answer_f1 -0.081 [-0.12, -0.04],
    worse (p=0.003; Holm over 6 slices of labels.topic)"``; or a line saying none did."""
    moved = slices[slices["significant"]]
    if moved.empty:
        tested = int((slices["family_size"] > 0).sum())
        small = int((slices["family_size"] == 0).sum())
        return [f"no slice moved detectably ({tested} slice tests, {small} slices too small to test)"]
    lines = []
    for row in moved.head(limit).to_dict("records"):
        lines.append(
            f"{row['system']}: {row['slice_by']} = {row['slice']}: {row['metric']} {row['mean_diff']:+.3f} "
            f"[{row['ci_low']:+.3f}, {row['ci_high']:+.3f}], {row['verdict']} ({row['correction']})"
        )
    if len(moved) > limit:
        lines.append(f"… and {len(moved) - limit} more slices moved")
    return lines
