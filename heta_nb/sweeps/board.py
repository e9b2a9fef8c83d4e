"""The numbers of a leaderboard: each cell's mean and CI, the paired tests against the baseline, ranks.

A *system* is a recipe in one query mode; a *column* is one metric on one benchmark.
Each cell's mean, n and confidence interval are the report's own one summary
(:class:`~heta_nb.model.summary.MetricSummary`: the mean of the scored values, as every
view shows it first); a cell whose metric the mode cannot produce (or that only has
evaluator errors) has no number and says why: it is never ranked. Each non-baseline
system is compared with the baseline recipe (same benchmark, same mode) by
:func:`heta_nb.compare` on the two reports alone, Holm-adjusted over that pair's metrics
(the family ``compare`` and ``check`` use), so every test here equals theirs. Ranks are
per column, over the cells with a number, best mean first, ties sharing a rank.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from heta_nb.comparison import Comparison, compare
from heta_nb.comparison.significance import verdict_text
from heta_nb.model.report import EvaluationReport
from heta_nb.stats.paired import PairedTest
from heta_nb.sweeps.plan import SweepError

__all__ = ["Board", "Cell", "Entry", "build_board", "entries_of", "tag_of", "verdict_of"]


@dataclass(frozen=True)
class Entry:
    """One report of the board, with the recipe and benchmark it stands for."""

    recipe: str
    benchmark: str
    report: EvaluationReport


@dataclass(frozen=True)
class Cell:
    """One system's figures on one column (a benchmark's metric)."""

    recipe: str
    mode: str
    benchmark: str
    metric: str
    n: int = 0
    mean: float = math.nan
    ci_low: float = math.nan
    ci_high: float = math.nan
    cases: int = 0
    errors: int = 0
    report_id: str = ""
    rank: int | None = None
    best: bool = False
    is_baseline: bool = False
    test: PairedTest | None = None
    """The paired test against the baseline (p_value_adjusted: Holm over :attr:`family`)."""
    significant: bool = False
    status: str = ""
    """The summary's status (``"scored"``, ``"n/a"``, ``"errored"``...); ``""``: no report or metric."""
    reason: str = ""
    """Why there is no number (``"full_text_search returns no answers"``), or ``""``."""
    evaluator_errors: int = 0
    family: str = ""
    """The tests corrected together with this cell's ("Holm over the 6 metrics of ...")."""
    verdict: str = ""
    """The comparison's verdict of this cell's test (``Comparison.verdict``), or ``""`` untested."""
    min_detectable_difference: float = math.nan
    """The smallest difference the cell's test detects with 80 % power (NaN: untested)."""

    @property
    def present(self) -> bool:
        """Whether the system has a mean on this column (an n/a cell has none, and is not ranked)."""
        return self.status == "scored" and self.n > 0 and not math.isnan(self.mean)

    @property
    def direction(self) -> int:
        """+1 significantly better than the baseline, -1 worse, 0 neither (or the baseline)."""
        if not self.significant or self.test is None:
            return 0
        return 1 if self.test.mean_diff > 0 else -1


@dataclass
class Board:
    """Everything a :class:`~heta_nb.sweeps.leaderboard.Leaderboard` shows, computed once."""

    entries: list[Entry]
    recipes: list[str]
    benchmarks: list[str]
    modes: list[str]
    metrics: list[str]
    baselines: dict[str, str]
    """Benchmark -> its baseline recipe."""
    cells: dict[tuple[str, str, str, str], Cell]
    """``(benchmark, recipe, mode, metric)`` -> cell."""
    comparisons: dict[tuple[str, str, str], Comparison]
    """``(benchmark, recipe, mode)`` -> the comparison with the baseline."""
    settings: dict[str, Any]
    warnings: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    @property
    def family_size(self) -> int:
        """Tests Holm-adjusted together in the largest family (one pair's metrics)."""
        return max((c.family(c.candidates[0]).size for c in self.comparisons.values()), default=0)

    @property
    def family_text(self) -> str:
        """The multiplicity convention in words: ``"Holm over the 6 metrics of one recipe
        against the baseline in one mode (per pair)"``."""
        sizes = sorted({c.family(c.candidates[0]).size for c in self.comparisons.values()})
        if not sizes:
            return "no tests"
        count = f"{sizes[0]}" if len(sizes) == 1 else f"{sizes[0]}-{sizes[-1]}"
        noun = "metric" if count == "1" else "metrics"
        return f"Holm over the {count} {noun} of each recipe vs the baseline, per benchmark and mode"


def tag_of(report: EvaluationReport) -> tuple[str | None, str | None]:
    """The ``(recipe, benchmark)`` a sweep recorded in the report's metadata (None where it did not)."""
    sweep = report.metadata.get("sweep")
    if isinstance(sweep, Mapping):
        recipe, benchmark = sweep.get("recipe"), sweep.get("benchmark")
        return (recipe if isinstance(recipe, str) else None, benchmark if isinstance(benchmark, str) else None)
    recipe = report.metadata.get("recipe")
    return (recipe if isinstance(recipe, str) and recipe.strip() else None, None)


def entries_of(reports: Sequence[EvaluationReport], found: list[str]) -> list[Entry]:
    """Tag each report; of two for one (recipe, benchmark), the newer is kept (and said)."""
    tagged = []
    keys = {r.benchmark.key for r in reports}
    by_name: dict[str, set[str]] = {}
    for key in keys:
        by_name.setdefault(key.split(":")[0], set()).add(key)
    for report in reports:
        recipe, benchmark = tag_of(report)
        if benchmark is None:
            name = report.benchmark.name
            benchmark = name if len(by_name.get(name, ())) == 1 else report.benchmark.key
        tagged.append(Entry(recipe or report.knowledge_base_name, benchmark, report))
    kept: dict[tuple[str, str], Entry] = {}
    for entry in tagged:
        pair = (entry.recipe, entry.benchmark)
        other = kept.get(pair)
        if other is None or (entry.report.finished_at or "") > (other.report.finished_at or ""):
            if other is not None:
                found.append(
                    f"{entry.recipe} × {entry.benchmark}: reports {other.report.report_id!r} and "
                    f"{entry.report.report_id!r}; the newer ({entry.report.report_id!r}) is used"
                )
            kept[pair] = entry
        else:
            found.append(
                f"{entry.recipe} × {entry.benchmark}: reports {other.report.report_id!r} and "
                f"{entry.report.report_id!r}; the newer ({other.report.report_id!r}) is used"
            )
    return list(kept.values())


def _in_sweep_order(names: list[str], entries: list[Entry], key: str) -> list[str]:
    """``names`` (unique) in the order a sweep gave them (``metadata.sweep[key]``), others after, as met."""
    order: list[str] = []
    for entry in entries:
        sweep = entry.report.metadata.get("sweep")
        given = sweep.get(key) if isinstance(sweep, Mapping) else None
        if isinstance(given, (list, tuple)):
            order.extend(str(x) for x in given)
    position = {name: i for i, name in enumerate(dict.fromkeys(order))}
    unique = list(dict.fromkeys(names))
    return sorted(unique, key=lambda n: (position.get(n, len(position)), unique.index(n)))


def _numeric(report: EvaluationReport) -> dict[tuple[str, str], Any]:
    """The report's summaries of metrics that have (or would have) numbers: every status but labels."""
    return {(s.mode, s.metric): s for s in report.metric_summaries() if s.status != "labels"}


def _choose(given: Sequence[str] | str | None, seen: list[str], what: str) -> list[str]:
    if given is None:
        return seen
    chosen = [given] if isinstance(given, str) else list(dict.fromkeys(given))
    unknown = [x for x in chosen if x not in seen]
    if unknown or not chosen:
        raise SweepError(f"{what} {unknown or chosen!r} not in the reports; they have {seen}")
    return chosen


def build_board(
    reports: Sequence[EvaluationReport],
    *,
    baseline: str | Mapping[str, str] | None = None,
    metrics: Sequence[str] | str | None = None,
    modes: Sequence[str] | str | None = None,
    resamples: int = 10_000,
    confidence: float = 0.95,
    seed: int = 0,
    alpha: float = 0.05,
    include_skipped: bool = False,
) -> Board:
    """Every cell, test, rank and note of a leaderboard over ``reports``.

    Raises:
        SweepError: no reports, or an unknown baseline, metric or mode.
    """
    found: list[str] = []
    notes: list[str] = []
    entries = entries_of(list(reports), found)
    if not entries:
        raise SweepError("a leaderboard needs at least one report")
    recipes = _in_sweep_order([e.recipe for e in entries], entries, "recipes")
    benchmarks = _in_sweep_order([e.benchmark for e in entries], entries, "benchmarks")
    numeric = {(e.benchmark, e.recipe): _numeric(e.report) for e in entries}
    modes_seen = list(dict.fromkeys(m for e in entries for m in e.report.modes))
    metrics_seen = list(dict.fromkeys(metric for n in numeric.values() for (_, metric) in n))
    chosen_modes = _choose(modes, modes_seen, "modes")
    chosen_metrics = _choose(metrics, metrics_seen, "metrics")
    if isinstance(baseline, Mapping):
        baselines = {b: baseline.get(b, recipes[0]) for b in benchmarks}
    else:
        baselines = {b: baseline or recipes[0] for b in benchmarks}
    for recipe in baselines.values():
        if recipe not in recipes:
            raise SweepError(f"baseline {recipe!r} is not a recipe of the board; recipes: {recipes}")
    by_pair = {(e.benchmark, e.recipe): e for e in entries}
    cells: dict[tuple[str, str, str, str], Cell] = {}
    for e in entries:
        summaries = numeric[(e.benchmark, e.recipe)]
        for mode in chosen_modes:
            for metric in chosen_metrics:
                s = summaries.get((mode, metric))
                cell = Cell(
                    e.recipe, mode, e.benchmark, metric, report_id=e.report.report_id,
                    is_baseline=e.recipe == baselines[e.benchmark],
                )  # fmt: skip
                if s is not None:  # the one summary: the mean shown first everywhere (skipped left out)
                    low, high = (s.ci_low, s.ci_high) if include_skipped and s.scored else s.shown_ci
                    mean, n = (s.mean, s.n) if include_skipped and s.scored else (s.shown, s.shown_n)
                    cell = replace(
                        cell,
                        n=n,
                        mean=mean,
                        ci_low=low,
                        ci_high=high,
                        cases=s.cases,
                        errors=s.errors,
                        status=s.status,
                        reason=s.reason,
                        evaluator_errors=s.evaluator_errors,
                    )
                cells[(e.benchmark, e.recipe, mode, metric)] = cell
        info = e.report.metadata.get("heta_nb")
        status = info.get("status") if isinstance(info, Mapping) else None
        if status not in (None, "complete"):
            found.append(f"{e.recipe} × {e.benchmark}: report {e.report.report_id!r} is {status} (partial results)")
    for b in benchmarks:
        if (b, baselines[b]) not in by_pair:
            found.append(f"{b}: the baseline {baselines[b]!r} has no report there, so nothing is compared on it")
    for r in recipes:
        missing = [b for b in benchmarks if (b, r) not in by_pair]
        if missing:
            notes.append(f"{r} has no report on {', '.join(missing)} (empty cells)")
    comparisons = _compare_pairs(
        by_pair,
        baselines,
        chosen_modes,
        chosen_metrics,
        numeric,
        found,
        resamples,
        confidence,
        seed,
        include_skipped,
        alpha,
    )
    for (b, r, mode), comparison in comparisons.items():
        family = comparison.family(r)
        for metric in comparison.metrics:
            key = (b, r, mode, metric)
            if comparison.verdict(r, metric).startswith(("n/a", "not comparable")):
                continue  # not tested: no test, no verdict
            test = comparison.test(r, metric)
            seen = comparison.sensitivity(r, metric)
            cells[key] = replace(
                cells[key],
                test=test,
                significant=comparison.significant(r, metric),
                family=family.text,
                verdict=comparison.verdict(r, metric),  # the comparison's words: underpowered, inconclusive...
                min_detectable_difference=seen.mdd if seen is not None else math.nan,
            )
    _rank(cells, benchmarks, chosen_metrics)
    return Board(
        entries=entries,
        recipes=recipes,
        benchmarks=benchmarks,
        modes=chosen_modes,
        metrics=chosen_metrics,
        baselines=baselines,
        cells=cells,
        comparisons=comparisons,
        settings={
            "resamples": int(resamples),
            "confidence": float(confidence),
            "seed": int(seed),
            "alpha": float(alpha),
            "include_skipped": bool(include_skipped),
        },
        warnings=list(dict.fromkeys(found)),
        notes=notes,
    )


def _compare_pairs(
    by_pair: dict[tuple[str, str], Entry],
    baselines: dict[str, str],
    modes: list[str],
    metrics: list[str],
    numeric: dict[tuple[str, str], dict[tuple[str, str], Any]],
    found: list[str],
    resamples: int,
    confidence: float,
    seed: int,
    include_skipped: bool,
    alpha: float,
) -> dict[tuple[str, str, str], Comparison]:
    """Each recipe against its benchmark's baseline, mode by mode: exactly ``compare`` of the two reports."""
    comparisons: dict[tuple[str, str, str], Comparison] = {}
    for (b, r), entry in by_pair.items():
        base = by_pair.get((b, baselines[b]))
        if base is None or r == baselines[b]:
            continue
        for mode in modes:
            if mode not in entry.report.modes or mode not in base.report.modes:
                continue
            shared = [
                m
                for m in metrics
                if _comparable(numeric[(b, r)].get((mode, m)))
                and _comparable(numeric[(b, baselines[b])].get((mode, m)))
            ]
            if not shared:
                continue
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                try:
                    comparison = compare(
                        base.report,
                        entry.report,
                        names=[baselines[b], r],
                        modes=[mode],
                        metrics=shared,
                        resamples=resamples,
                        confidence=confidence,
                        seed=seed,
                        include_skipped=include_skipped,
                        alpha=alpha,
                    )
                except ValueError as exc:
                    found.append(f"{r} vs {baselines[b]} on {b} ({mode}): not compared ({exc})")
                    continue
            found.extend(f"{r} vs {baselines[b]} on {b} ({mode}): {w.message}" for w in caught)
            comparisons[(b, r, mode)] = comparison
    return comparisons


def _comparable(summary: Any) -> bool:
    """Whether a cell's metric has numeric scores to compare (scored, or n/a: the test decides)."""
    return summary is not None and summary.status in ("scored", "n/a", "skipped")


def _rank(cells: dict[tuple[str, str, str, str], Cell], benchmarks: list[str], metrics: list[str]) -> None:
    """Rank each column (benchmark, metric) over every system, best mean first; ties share a rank."""
    for b in benchmarks:
        for metric in metrics:
            column = [(k, c) for k, c in cells.items() if k[0] == b and k[3] == metric and c.present]
            column.sort(key=lambda kc: -kc[1].mean)
            rank, previous = 0, math.inf
            for position, (key, cell) in enumerate(column, start=1):
                if not math.isclose(cell.mean, previous, rel_tol=0.0, abs_tol=1e-12):
                    rank, previous = position, cell.mean
                cells[key] = replace(cell, rank=rank, best=rank == 1)


def verdict_of(cell: Cell, alpha: float) -> str:
    """The cell's verdict in words: the test's, or why the cell has no number (``"n/a: ..."``);
    ``""`` for a baseline cell with a number, or without a report."""
    if cell.status and cell.status != "scored":
        return f"{cell.status}: {cell.reason}"
    if cell.verdict:
        return cell.verdict
    return verdict_text(cell.test, alpha, cell.min_detectable_difference) if cell.test is not None else ""
