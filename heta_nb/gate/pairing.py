"""Whether two reports can be checked against each other, and which modes and metrics are checked.

A pair is *not comparable* when a paired difference would not mean "the recipe changed":
another benchmark (name, version, split or documents), a mode or metric missing on one
side, or a report that is cancelled, failed or one shard of a run. Case-set differences
are found later, from the comparison's overlap.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

from heta_nb._util.text import listing
from heta_nb.llm_judges.binding import judge_difference
from heta_nb.model.report import EvaluationReport

__all__ = ["Pairing", "pair_reports"]


@dataclass
class Pairing:
    """The modes and metrics to check, and why the pair is not comparable (if it is not)."""

    modes: list[str]
    metrics: dict[str, list[str]]
    """Per mode, the metrics checked (numeric in both reports)."""
    reasons: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    broken: list[str] = field(default_factory=list)
    """Modes in which the new report errored on every case (the baseline did not): regressions."""
    errored: dict[str, dict[str, str]] = field(default_factory=dict)
    """Per mode, the metrics whose scores are mostly evaluator errors in either report, and why:
    not tested, a row of their own (verdict ``evaluator errors``); not in :attr:`metrics`."""
    incomparable: dict[str, dict[str, str]] = field(default_factory=dict)
    """Per mode, the metrics whose LLM judge differs between the reports (``"judge differs: ..."``):
    not tested, a row of their own (verdict ``not comparable``); not in :attr:`metrics`."""


def _mostly_errors(new: EvaluationReport, baseline: EvaluationReport) -> dict[str, dict[str, str]]:
    """Per mode, metrics whose evaluator raised on more than half the answered cases of either report."""
    found: dict[str, dict[str, str]] = {}
    for side, report in (("new", new), ("baseline", baseline)):
        for item in report.metric_summaries():
            answered = item.cases - item.errors
            if item.evaluator_errors and answered > 0 and item.evaluator_errors * 2 > answered:
                why = (
                    f"{item.evaluator_errors:,} of {answered:,} scores in the {side} report are evaluator errors: "
                    "the metric cannot be checked (see the cases' scores for the error)"
                )
                mine = found.setdefault(item.mode, {})
                mine[item.metric] = f"{mine[item.metric]}; {why}" if item.metric in mine else why
    return found


def _numeric_metrics(report: EvaluationReport) -> dict[str, list[str]]:
    """Per mode, the metrics with at least one numeric (number or bool) score, in evaluator order."""
    found: dict[str, list[str]] = {mode: [] for mode in report.modes}
    for item in report.metric_summaries():
        if item.kind in ("bool", "number") and item.metric not in found[item.mode]:
            found[item.mode].append(item.metric)
    return found


def _as_list(value: Sequence[str] | str | None) -> list[str] | None:
    if value is None:
        return None
    return list(dict.fromkeys([value] if isinstance(value, str) else [str(v) for v in value]))


def _incomplete(report: EvaluationReport, side: str) -> list[str]:
    settings = report.metadata.get("heta_nb")
    if not isinstance(settings, Mapping):
        return []
    out = []
    status = settings.get("status")
    if isinstance(status, str) and status != "complete":
        out.append(
            f"the {side} report is {status} ({settings.get('done', '?')} of {settings.get('total', '?')} case results)"
        )
    shard = settings.get("shard")
    if isinstance(shard, Mapping) and isinstance(shard.get("index"), int) and isinstance(shard.get("count"), int):
        out.append(
            f"the {side} report is shard {shard['index'] + 1} of {shard['count']}; merge the shards first "
            "(heta_nb.merge_reports)"
        )
    return out


def pair_reports(
    new: EvaluationReport,
    baseline: EvaluationReport,
    *,
    modes: Sequence[str] | str | None,
    metrics: Sequence[str] | str | None,
    extra_metrics: Callable[[str], Sequence[str]] = lambda mode: (),
) -> Pairing:
    """Choose the modes and metrics of a check and list what makes the pair not comparable.

    Args:
        new: The new report.
        baseline: The baseline report.
        modes: Modes asked for (default: every mode both reports have).
        metrics: Metrics asked for (default: every metric with numeric scores in both, per mode).
        extra_metrics: Per mode, metrics that must be checked too (those a floor names).

    Returns:
        The :class:`Pairing`.
    """
    reasons: list[str] = []
    warnings: list[str] = []
    if new.benchmark.key != baseline.benchmark.key:
        reasons.append(f"the benchmarks differ: new ran {new.benchmark.key!r}, baseline ran {baseline.benchmark.key!r}")
    keys = [r.metadata.get("benchmark_document_keys") for r in (new, baseline)]
    if all(isinstance(k, tuple) and k for k in keys):
        ours, theirs = (frozenset(k) for k in keys)  # type: ignore[arg-type]
        if ours != theirs:
            reasons.append(
                f"the benchmark's documents differ (new {len(ours):,}, baseline {len(theirs):,}, "
                f"{len(ours & theirs):,} in both)"
            )
    reasons.extend(_incomplete(new, "new"))
    reasons.extend(_incomplete(baseline, "baseline"))

    wanted_modes = _as_list(modes)
    if wanted_modes is not None:
        chosen = wanted_modes
        for side, report in (("new", new), ("baseline", baseline)):
            missing = [m for m in chosen if m not in report.modes]
            if missing:
                reasons.append(
                    f"the {side} report has no mode {listing(missing, 5, quote=True)} (its modes: {list(report.modes)})"
                )
        chosen = [m for m in chosen if m in new.modes and m in baseline.modes]
    else:
        chosen = [m for m in baseline.modes if m in new.modes]
        only = [
            (side, [m for m in a.modes if m not in b.modes])
            for side, a, b in (("new", new, baseline), ("baseline", baseline, new))
        ]
        for side, names in only:
            if names:
                warnings.append(f"mode(s) {listing(names, 5, quote=True)} only in the {side} report are not checked")
        if not chosen:
            reasons.append(
                f"the reports share no query mode (new: {list(new.modes)}, baseline: {list(baseline.modes)})"
            )

    numeric = {"new": _numeric_metrics(new), "baseline": _numeric_metrics(baseline)}
    errored = _mostly_errors(new, baseline)
    differ = {
        metric: why
        for metric in dict.fromkeys(m for found in numeric.values() for names in found.values() for m in names)
        if (why := judge_difference(new.metadata, baseline.metadata, metric))
    }
    for side in numeric:  # a mostly-errored metric is a row of its own, numeric or not
        for mode, failing in errored.items():
            if mode in numeric[side]:
                numeric[side][mode] = [m for m in numeric[side][mode] if m not in failing]
    wanted = _as_list(metrics)
    per_mode: dict[str, list[str]] = {}
    broken: list[str] = []
    for mode in chosen:
        have = {side: found.get(mode, []) for side, found in numeric.items()}
        failing = errored.get(mode, {})
        extra = [m for m in extra_metrics(mode) if m not in failing]
        if wanted is not None or extra:
            names = [m for m in dict.fromkeys([*(wanted or []), *extra]) if m not in failing]
            if wanted is None:
                names = list(dict.fromkeys([*(m for m in have["baseline"] if m in have["new"]), *names]))
        else:
            names = [m for m in have["baseline"] if m in have["new"]]
            for side, other in (("new", "baseline"), ("baseline", "new")):
                only_here = [m for m in have[side] if m not in have[other]]
                if only_here:
                    warnings.append(
                        f"metric(s) {listing(only_here, 5, quote=True)} of mode {mode!r} have numeric scores only in "
                        f"the {side} report and are not checked"
                    )
        if not have["new"] and have["baseline"] and _all_errors(new, mode):
            # the new recipe fails every case: a regression on every metric, not an incomparable pair
            broken.append(mode)
            names = names or list(have["baseline"])
            have["new"] = list(names)
        for side, report in (("new", new), ("baseline", baseline)):
            missing = [m for m in names if m not in have[side]]
            if missing and _all_errors(report, mode):
                reasons.append(f"the {side} report errored on every case of mode {mode!r}")
            elif missing:
                reasons.append(
                    f"the {side} report has no numeric {listing(missing, 5, quote=True)} scores in mode {mode!r}"
                )
        names = [m for m in names if m in have["new"] and m in have["baseline"]]
        if names:
            per_mode[mode] = names
        elif wanted is None and not extra and not failing:
            reasons.append(f"mode {mode!r}: the reports have no numeric metric in common")
    incomparable = {}
    for mode in chosen:
        judged = {m: why for m, why in differ.items() if m in per_mode.get(mode, []) and m not in errored.get(mode, {})}
        if judged:
            incomparable[mode] = judged
            per_mode[mode] = [m for m in per_mode[mode] if m not in judged]
    kept_errors = {
        mode: {m: why for m, why in found.items() if wanted is None or m in wanted}
        for mode, found in errored.items()
        if mode in chosen
    }
    kept = [m for m in chosen if m in per_mode or kept_errors.get(m) or incomparable.get(m)]
    return Pairing(
        modes=kept,
        metrics={m: per_mode.get(m, []) for m in kept},
        reasons=reasons,
        warnings=warnings,
        broken=broken,
        errored={m: e for m, e in kept_errors.items() if e},
        incomparable=incomparable,
    )


def _all_errors(report: EvaluationReport, mode: str) -> bool:
    counts = report.mode_counts().get(mode)
    return counts is not None and counts.cases > 0 and counts.errors == counts.cases
