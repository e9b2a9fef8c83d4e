"""``heta_nb.plan``: how many cases a benchmark needs to tell a difference of a given size.

From a :class:`~heta_nb.comparison.Comparison` the spread is the observed paired one (the
standard error of the test, clustered when the comparison clusters), so the answer is the
benchmark's own. From one report there is no second recipe to pair with: the spread of a
difference between two recipes is taken as ``sqrt(2)`` times the spread of the metric's scores,
as if the two recipes' scores were uncorrelated case by case. Recipes scored on the same cases
are usually positively correlated, which makes the paired spread smaller, so this errs on the
side of more cases, and says so.

The count is the normal approximation of :func:`heta_nb.stats.power.cases_needed` at the
family's level (``alpha / tests``, Holm's first step), the same formula every comparison's
``min_detectable_difference`` uses.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np

from heta_nb.stats.power import cases_needed, detectable_difference

__all__ = ["Plan", "plan"]


@dataclass(frozen=True)
class Plan:
    """How many cases it takes to detect ``difference`` in ``metric`` with ``power``."""

    metric: str
    mode: str
    difference: float
    """The difference to detect (absolute, in the metric's units)."""
    cases: int
    """Cases needed (complete pairs); 0 when the spread is unknown (see ``reason``)."""
    cases_now: int
    """Cases the source compares (or scores) today."""
    detectable_now: float
    """The smallest difference detected today with ``power`` (NaN when unknown)."""
    sd: float
    """The standard deviation of one paired difference the count uses."""
    power: float
    alpha: float
    tests: int
    """Tests in the family (the level is ``alpha / tests``)."""
    basis: str
    """Where the spread comes from, in words (observed pairs, or one report's assumption)."""
    reason: str = ""
    """Why the count is unknown (empty when it is known)."""

    @property
    def text(self) -> str:
        """``"detecting a change of 0.02 in answer_f1 (extractive_answer) with 80% power ... takes
        1,234 cases; the benchmark has 190 (it detects 0.058 now)"``."""
        head = (
            f"detecting a change of {self.difference:g} in {self.metric} ({self.mode}) with {self.power:.0%} "
            f"power at alpha {self.alpha:g}" + (f" over {self.tests} tests" if self.tests > 1 else "")
        )
        if self.reason:
            return f"{head}: unknown, {self.reason}"
        now = f"{self.detectable_now:.3g}" if math.isfinite(self.detectable_now) else "n/a"
        enough = "enough" if self.cases <= self.cases_now else f"{self.cases - self.cases_now:,} more"
        return (
            f"{head} takes {self.cases:,} cases; the benchmark has {self.cases_now:,} ({enough}; "
            f"it detects {now} now). Spread: {self.basis}"
        )

    def record(self) -> dict[str, Any]:
        """The fields as a plain dict (JSON-ready)."""
        return asdict(self)

    def __repr__(self) -> str:
        return self.text


def plan(
    source: Any,
    metric: str,
    difference: float,
    *,
    mode: str | None = None,
    system: int | str | None = None,
    power: float = 0.8,
    alpha: float | None = None,
    tests: int | None = None,
) -> Plan:
    """How many cases it takes to detect a change of ``difference`` in ``metric``.

    Args:
        source: A :class:`~heta_nb.comparison.Comparison` (its observed paired spread) or a
            report (anything :func:`heta_nb.load_report` accepts: the spread of its scores).
        metric: The metric.
        difference: The change to detect, in the metric's units (> 0).
        mode: With a report, the query mode (default: the first that scores ``metric``).
        system: With a comparison, the tested system (default: the first).
        power: The probability of detecting a true change of ``difference``.
        alpha: The two-sided level (default: the comparison's, else 0.05).
        tests: Tests corrected together (default: the comparison's family size, else 1).

    Returns:
        The :class:`Plan`.

    Raises:
        ValueError: An unknown metric, mode or system, or invalid numbers.
    """
    from heta_nb.comparison.result import Comparison

    if not (isinstance(difference, (int, float)) and math.isfinite(difference) and difference > 0):
        raise ValueError(f"difference must be a number > 0, got {difference!r}")
    if isinstance(source, Comparison):
        return _from_comparison(source, metric, float(difference), system, power, alpha, tests)
    from heta_nb.model.io import load_report

    report = load_report(source)
    return _from_report(report, metric, float(difference), mode, power, 0.05 if alpha is None else alpha, tests or 1)


def _from_comparison(
    comparison: Any, metric: str, difference: float, system: int | str | None, power: float,
    alpha: float | None, tests: int | None,
) -> Plan:  # fmt: skip
    test = comparison.test(system, metric)
    name = comparison.systems[comparison._system(system)]
    mode = comparison.system_info[comparison._system(system)].mode
    alpha = comparison.alpha if alpha is None else alpha
    tests = tests or max(1, comparison.family(system).size)
    seen = comparison.sensitivity(system, metric)
    n = test.n
    basis = f"the observed paired differences of {name} against {comparison.baseline_of(system)}"
    if seen is None or not math.isfinite(seen.se) or n < 2:
        why = comparison.verdict(system, metric) if seen is None else "fewer than two compared cases"
        return Plan(metric, mode, difference, 0, n, math.nan, math.nan, power, alpha, tests, basis, why)
    sd = seen.se * math.sqrt(n)  # clustered: the spread of one case's difference, design effect included
    if seen.clustered is not None:
        basis += f", clustered by {comparison.clustering.by} (design effect {seen.clustered.design_effect:.2f})"
    return _plan(metric, mode, difference, sd, n, power, alpha, tests, basis)


def _from_report(
    report: Any, metric: str, difference: float, mode: str | None, power: float, alpha: float, tests: int
) -> Plan:
    columns = report.columns
    if metric not in columns.metrics:
        raise ValueError(f"metric {metric!r} is not in the report; metrics: {list(columns.metrics)}")
    column = columns.metric(metric)
    na = columns.not_applicable()
    scored = columns.mode[column.rows[column.numeric]]
    modes = [m for m in columns.modes if (m, metric) not in na and np.any(scored == columns.modes.index(m))]
    if mode is None:
        if not modes:
            raise ValueError(f"no mode has numeric {metric!r} scores (n/a: {'; '.join(na.values()) or 'none'})")
        mode = modes[0]
    elif mode not in report.modes:
        raise ValueError(f"mode {mode!r} is not in the report; modes: {list(report.modes)}")
    keep = column.numeric & ~column.skipped & (columns.mode[column.rows] == columns.modes.index(mode))
    values = column.values[keep]
    basis = (
        f"the spread of {report.report_id}'s {mode} {metric} scores times sqrt(2), as if two recipes' scores were "
        "uncorrelated case by case (they are usually correlated, which needs fewer cases: compare two reports "
        "and plan from the comparison for the paired figure)"
    )
    if values.size < 2:
        return Plan(metric, mode, difference, 0, int(values.size), math.nan, math.nan, power, alpha, tests, basis,
                    "fewer than two scored cases")  # fmt: skip
    sd = float(np.std(values, ddof=1)) * math.sqrt(2.0)
    return _plan(metric, mode, difference, sd, int(values.size), power, alpha, tests, basis)


def _plan(
    metric: str, mode: str, difference: float, sd: float, n: int, power: float, alpha: float, tests: int, basis: str
) -> Plan:
    if sd == 0.0:
        return Plan(metric, mode, difference, 0, n, 0.0, 0.0, power, alpha, tests, basis,
                    "the differences have no spread (every case the same)")  # fmt: skip
    needed = cases_needed(sd, difference, alpha=alpha, power=power, tests=tests)
    now = detectable_difference(sd, n, alpha=alpha, power=power, tests=tests)
    return Plan(metric, mode, difference, needed, n, now, sd, power, alpha, tests, basis)
