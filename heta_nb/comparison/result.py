"""The :class:`Comparison` value: its lookups, plain data, pandas views, plots and text."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

import numpy as np

from heta_nb._util.frames import frame as frame_of
from heta_nb.comparison.align import Aligned
from heta_nb.comparison.headline import differing_metrics, verdict_lines
from heta_nb.comparison.overlap import Overlap
from heta_nb.comparison.significance import is_significant, verdict_text
from heta_nb.comparison.systems import System, index_of
from heta_nb.model.record import RichDisplay
from heta_nb.model.report import EvaluationReport
from heta_nb.stats.format import p_text
from heta_nb.stats.paired import PairedTest

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd
    from matplotlib.axes import Axes

__all__ = ["SUMMARY_COLUMNS", "Comparison", "untested"]

SUMMARY_COLUMNS = (
    "system",
    "metric",
    "baseline",
    "n",
    "mean",
    "baseline_mean",
    "mean_diff",
    "ci_low",
    "ci_high",
    "p_value",
    "p_adjusted",
    "wins",
    "ties",
    "losses",
    "significant",
    "verdict",
)
"""Columns of :meth:`Comparison.summary_frame` (and keys of :meth:`Comparison.summary_rows`)."""


class Comparison(RichDisplay):
    """Paired comparison of systems against a baseline (build it with :func:`compare`).

    Attributes:
        systems: System names, in order (the baseline included).
        system_info: One :class:`System` per name (report id, mode, benchmark...).
        metrics: Metrics compared.
        baseline: Name of the baseline system.
        warnings: Plain-language reasons the systems may not be fully comparable (also
            issued as :class:`HetaComparisonWarning`).
        notes: Plain-language remarks that are not warnings (skipped scores left out or
            counted, text-only metrics not compared).
        overlap: Case counts: aligned per metric, missing, errors, skipped per system.
        resamples, confidence, seed, alpha, tie_tolerance, correction, include_skipped:
            The settings used.
    """

    def __init__(
        self,
        *,
        systems: list[System],
        baseline: int,
        aligned: Aligned,
        tests: dict[tuple[int, int], PairedTest],
        warnings: list[str],
        notes: list[str],
        settings: dict[str, Any],
        reports: tuple[EvaluationReport, ...] = (),
        arguments: dict[str, Any] | None = None,
        not_applicable: dict[tuple[int, int], str] | None = None,
    ) -> None:
        self.reports: tuple[EvaluationReport, ...] = reports
        """The compared reports (what exports save next to a notebook)."""
        self.arguments: dict[str, Any] = dict(arguments or {})
        """The ``compare()`` arguments that rebuild this comparison from the reports."""
        self.system_info: tuple[System, ...] = tuple(systems)
        self.systems: tuple[str, ...] = tuple(s.name for s in systems)
        self.metrics: tuple[str, ...] = aligned.metrics
        self.baseline: str = systems[baseline].name
        self.warnings: list[str] = list(warnings)
        self.notes: list[str] = list(notes)
        self.overlap: Overlap = aligned.overlap
        self.resamples: int = settings["resamples"]
        self.confidence: float = settings["confidence"]
        self.seed: int = settings["seed"]
        self.alpha: float = settings["alpha"]
        self.tie_tolerance: float = settings["tie_tolerance"]
        self.correction: str = settings["correction"]
        self.include_skipped: bool = settings["include_skipped"]
        self._base = baseline
        self._aligned = aligned
        self._tests = tests
        own = dict(not_applicable or {})
        self._na_own = own
        """``{(system, metric): reason}``: the metric is n/a in that system's mode."""
        self._not_applicable = untested(own, [s.mode for s in systems], baseline, len(self.metrics))

    # -- lookups -------------------------------------------------------------------------
    @property
    def family_size(self) -> int:
        """Number of tests corrected together (every non-baseline system × metric with data)."""
        return sum(1 for t in self._tests.values() if not math.isnan(t.p_value))

    def _system(self, system: int | str | None) -> int:
        if system is None:
            return next(k for k in range(len(self.systems)) if k != self._base)
        index = index_of(system, self.systems, "system")
        if index == self._base:
            raise ValueError(f"{self.systems[index]!r} is the baseline; pick another system")
        return index

    def _metric(self, metric: str) -> int:
        if metric not in self.metrics:
            raise ValueError(f"metric {metric!r} is not compared; metrics: {list(self.metrics)}")
        return self.metrics.index(metric)

    def test(self, system: int | str, metric: str) -> PairedTest:
        """The :class:`~heta_nb.stats.paired.PairedTest` of ``system`` vs the baseline on ``metric``."""
        return self._tests[(self._system(system), self._metric(metric))]

    def significant(self, system: int | str, metric: str) -> bool:
        """Whether the Holm-adjusted p-value (or raw, with ``correction="none"``) is below ``alpha``."""
        return is_significant(self.test(system, metric), self.alpha)

    def verdict(self, system: int | str, metric: str) -> str:
        """Plain words: ``"better (p=0.003)"``, ``"no detectable difference (p=0.41)"``, ``"worse (...)"``,
        ``"inconclusive (...)"`` or ``"n/a: full_text_search returns no answers"`` (not tested)."""
        why = self._not_applicable.get((self._system(system), self._metric(metric)))
        return f"n/a: {why}" if why else verdict_text(self.test(system, metric), self.alpha)

    def not_applicable(self, system: int | str, metric: str) -> str:
        """Why ``metric`` is n/a in ``system``'s own mode (the baseline may be named), or ``""``."""
        return self._na_own.get((index_of(system, self.systems, "system"), self._metric(metric)), "")

    def headline(self) -> list[str]:
        """The verdict first, one line per system: ``"large-chunks vs small-chunks: 0 better,
        1 worse (answer_f1, -0.026 [-0.042, -0.010]), 4 no detectable difference"``."""
        return [line["text"] for line in verdict_lines(self.summary_rows(), self.baseline)]

    def differing_metrics(self, system: int | str | None = None) -> list[str]:
        """The metrics ordered by how clearly ``system`` differs from the baseline
        (significant first, n/a last): what the plots show."""
        return differing_metrics(self.summary_rows(), self.systems[self._system(system)])

    def aligned_values(self, metric: str) -> dict[str, np.ndarray]:
        """Per system, the scores of ``metric`` on the aligned cases (same order for all)."""
        j = self._metric(metric)
        mask = self._aligned.mask[j]
        return {name: self._aligned.values[k, j, mask].copy() for k, name in enumerate(self.systems)}

    def deltas(self, metric: str, system: int | str | None = None) -> np.ndarray:
        """Per aligned case, ``system - baseline`` (system default: the first non-baseline one)."""
        j, k = self._metric(metric), self._system(system)
        mask = self._aligned.mask[j]
        deltas: np.ndarray = self._aligned.values[k, j, mask] - self._aligned.values[self._base, j, mask]
        return deltas

    # -- plain data ----------------------------------------------------------------------
    def summary_rows(self) -> list[dict[str, Any]]:
        """One dict per (non-baseline system, metric), keys :data:`SUMMARY_COLUMNS`, plain Python values."""
        rows = []
        for k, name in enumerate(self.systems):
            if k == self._base:
                continue
            for j, metric in enumerate(self.metrics):
                t = self._tests[(k, j)]
                why = self._not_applicable.get((k, j))
                rows.append(
                    {
                        "system": name,
                        "metric": metric,
                        "baseline": self.baseline,
                        "n": t.n,
                        "mean": math.nan if why and (k, j) in self._na_own else t.mean_b,
                        "baseline_mean": math.nan if why and (self._base, j) in self._na_own else t.mean_a,
                        "mean_diff": math.nan if why else t.mean_diff,
                        "ci_low": t.ci_low,
                        "ci_high": t.ci_high,
                        "p_value": t.p_value,
                        "p_adjusted": t.p_value_adjusted,
                        "wins": t.wins,
                        "ties": t.ties,
                        "losses": t.losses,
                        "significant": not why and is_significant(t, self.alpha),
                        "verdict": f"n/a: {why}" if why else verdict_text(t, self.alpha),
                    }
                )
        return rows

    def to_context(self) -> dict[str, Any]:
        """Everything a template needs, as plain data (dicts, lists, str, numbers)."""
        return {
            "systems": [
                {
                    "name": s.name,
                    "report_id": s.report_id,
                    "mode": s.mode,
                    "knowledge_base_name": s.knowledge_base_name,
                    "benchmark": s.benchmark,
                    "is_baseline": s.name == self.baseline,
                }
                for s in self.system_info
            ],
            "baseline": self.baseline,
            "metrics": list(self.metrics),
            "rows": self.summary_rows(),
            "warnings": list(self.warnings),
            "notes": list(self.notes),
            "overlap": self.overlap.to_dict(),
            "settings": {
                "resamples": self.resamples,
                "confidence": self.confidence,
                "seed": self.seed,
                "alpha": self.alpha,
                "tie_tolerance": self.tie_tolerance,
                "correction": self.correction,
                "family_size": self.family_size,
                "include_skipped": self.include_skipped,
            },
        }

    # -- pandas views --------------------------------------------------------------------
    def summary_frame(self) -> pd.DataFrame:
        """One row per (non-baseline system, metric); columns :data:`SUMMARY_COLUMNS`.

        ``mean`` and ``baseline_mean`` are over the aligned cases (``n``), ``mean_diff`` =
        system - baseline with its bootstrap CI, ``p_value`` the permutation p-value and
        ``p_adjusted`` the Holm-adjusted one (family: every row), which ``significant``
        and ``verdict`` use.
        """

        frame = frame_of(self.summary_rows(), columns=list(SUMMARY_COLUMNS))
        for name in ("n", "wins", "ties", "losses"):
            frame[name] = frame[name].astype("int64")
        frame["significant"] = frame["significant"].astype("bool")
        frame.attrs.update(
            baseline=self.baseline, confidence=self.confidence, alpha=self.alpha, correction=self.correction
        )
        return frame

    def cases_frame(self, metric: str | None = None) -> pd.DataFrame:
        """Per aligned case: ``unit, case_id, query``, each system's value, ``delta <system>``.

        With ``metric=None`` every metric is stacked, with a leading ``metric`` column.
        Deltas are ``system - baseline``; rows keep the baseline report's case order.
        """
        import pandas as pd

        if metric is None:
            frames = [self.cases_frame(m) for m in self.metrics]
            for m, frame in zip(self.metrics, frames):
                frame.insert(0, "metric", m)
            return pd.concat(frames, ignore_index=True)
        j = self._metric(metric)
        where = np.flatnonzero(self._aligned.mask[j])
        columns: dict[str, Any] = {
            "unit": [self._aligned.units[i] for i in where],
            "case_id": [self._aligned.case_ids[i] for i in where],
            "query": [self._aligned.queries[i] for i in where],
        }
        base_values = self._aligned.values[self._base, j, where]
        for k, name in enumerate(self.systems):
            columns[name] = self._aligned.values[k, j, where]
        for k, name in enumerate(self.systems):
            if k != self._base:
                columns[f"delta {name}"] = self._aligned.values[k, j, where] - base_values
        frame = frame_of(columns)
        frame.attrs.update(metric=metric, baseline=self.baseline)
        return frame

    def explore(self, *, benchmark: Any = None, **filters: Any) -> Any:
        """Both systems side by side per case, coloured deltas, quick filters (an
        :class:`~heta_nb.explorer.Explorer`); see :func:`heta_nb.explore`."""
        from heta_nb.explorer import explore

        return explore(self, benchmark=benchmark, **filters)

    def most_improved(self, metric: str, n: int = 10, system: int | str | None = None) -> pd.DataFrame:
        """The ``n`` cases where ``system`` beats the baseline by most (largest positive delta first)."""
        return self._extremes(metric, n, system, improved=True)

    def most_regressed(self, metric: str, n: int = 10, system: int | str | None = None) -> pd.DataFrame:
        """The ``n`` cases where ``system`` falls furthest below the baseline (most negative delta first)."""
        return self._extremes(metric, n, system, improved=False)

    def _extremes(self, metric: str, n: int, system: int | str | None, *, improved: bool) -> pd.DataFrame:

        j, k = self._metric(metric), self._system(system)
        where = np.flatnonzero(self._aligned.mask[j])
        a = self._aligned.values[self._base, j, where]
        b = self._aligned.values[k, j, where]
        d = b - a
        keep = np.flatnonzero(d > self.tie_tolerance if improved else d < -self.tie_tolerance)
        order = keep[np.argsort(-d[keep] if improved else d[keep], kind="stable")][: max(0, int(n))]
        name = self.systems[k]
        frame = frame_of(
            {
                "unit": [self._aligned.units[where[i]] for i in order],
                "case_id": [self._aligned.case_ids[where[i]] for i in order],
                "query": [self._aligned.queries[where[i]] for i in order],
                self.baseline: a[order],
                name: b[order],
                "delta": d[order],
            }
        )
        frame.attrs.update(metric=metric, baseline=self.baseline, system=name)
        return frame

    # -- plots ---------------------------------------------------------------------------
    def plot_paired(self, metric: str, system: int | str | None = None, ax: Axes | None = None) -> Axes:
        """Scatter of per-case scores, baseline (x) vs ``system`` (y), with the diagonal.

        Points above the diagonal are cases ``system`` wins. Discrete scores (at most 12
        distinct values, e.g. bools or recall over 1–2 documents) are jittered (seeded by
        ``seed``) so that stacked points stay visible. Like :mod:`heta_nb.plots`, draws on
        ``ax`` or a new pyplot-free figure, and sets ``ax.heta_nb_info``.
        """
        j, k = self._metric(metric), self._system(system)
        mask = self._aligned.mask[j]
        x = self._aligned.values[self._base, j, mask]
        y = self._aligned.values[k, j, mask]
        t = self._tests[(k, j)]
        ax, palette = _axes(ax, (4.8, 4.6))
        jittered = False
        if x.size:
            both = np.concatenate([x, y])
            lo, hi = float(both.min()), float(both.max())
            span = hi - lo or 1.0
            if np.unique(both).size <= 12:
                jittered = True
                rng = np.random.default_rng(self.seed)
                width = 0.025 * span
                x = x + rng.uniform(-width, width, x.size)
                y = y + rng.uniform(-width, width, y.size)
            ax.scatter(x, y, s=14, alpha=0.45, linewidths=0, color=palette[0])
            pad = 0.06 * span
            ax.plot([lo - pad, hi + pad], [lo - pad, hi + pad], color="#888888", linestyle="--", linewidth=1)
            ax.set_xlim(lo - pad, hi + pad)
            ax.set_ylim(lo - pad, hi + pad)
        else:
            ax.text(0.5, 0.5, "no aligned cases", ha="center", va="center", transform=ax.transAxes)
        ax.set_xlabel(f"{self.baseline} (baseline)", parse_math=False)
        ax.set_ylabel(self.systems[k], parse_math=False)
        note = f"{t.wins} better, {t.ties} tied, {t.losses} worse" + (" (jittered)" if jittered else "")
        ax.set_title(f"{metric}, {t.n} cases\n{note}", fontsize="medium", parse_math=False)
        ax.heta_nb_info = self._plot_info("paired", metric, k, t, jittered=jittered)  # type: ignore[attr-defined]
        return ax

    def plot_deltas(self, metric: str, system: int | str | None = None, ax: Axes | None = None) -> Axes:
        """Histogram of per-case deltas (``system - baseline``) with the mean and its CI marked.

        At most 25 distinct deltas are drawn as one bar each, more as a histogram.
        """
        j, k = self._metric(metric), self._system(system)
        d = self.deltas(metric, k)
        t = self._tests[(k, j)]
        ax, palette = _axes(ax, (5.6, 3.6))
        if d.size:
            levels, counts = np.unique(d, return_counts=True)
            if levels.size <= 25:
                step = float(np.min(np.diff(levels))) if levels.size > 1 else 1.0
                ax.bar(levels, counts, width=0.8 * step, color=palette[0], alpha=0.75)
            else:
                ax.hist(d, bins="auto", color=palette[0], alpha=0.75)
            ax.axvline(0.0, color="#888888", linewidth=1, linestyle=":")
            pct = f"{self.confidence * 100:g}%"
            if math.isfinite(t.ci_low) and math.isfinite(t.ci_high):
                ax.axvspan(t.ci_low, t.ci_high, color=palette[1], alpha=0.25, label=f"{pct} CI of the mean")
            ax.axvline(t.mean_diff, color=palette[3], linewidth=2, label=f"mean {t.mean_diff:+.3g}")
            ax.legend(fontsize="small", frameon=False)
        else:
            ax.text(0.5, 0.5, "no aligned cases", ha="center", va="center", transform=ax.transAxes)
        ax.set_xlabel(f"{metric}: {self.systems[k]} − {self.baseline}", parse_math=False)
        ax.set_ylabel("cases")
        ax.set_title(f"{metric}, {t.n} cases: {verdict_text(t, self.alpha)}", fontsize="medium", parse_math=False)
        ax.heta_nb_info = self._plot_info("deltas", metric, k, t)  # type: ignore[attr-defined]
        return ax

    def _plot_info(self, plot: str, metric: str, k: int, t: PairedTest, **extra: Any) -> dict[str, Any]:
        return {
            "plot": plot,
            "metric": metric,
            "system": self.systems[k],
            "baseline": self.baseline,
            "n": t.n,
            "mean_diff": t.mean_diff,
            "ci": (t.ci_low, t.ci_high),
            "wins": t.wins,
            "ties": t.ties,
            "losses": t.losses,
            **extra,
        }

    # -- text ----------------------------------------------------------------------------
    def __repr__(self) -> str:
        pct = f"{self.confidence * 100:g}%"
        head = (
            f"Comparison of {len(self.systems)} systems vs baseline {self.baseline!r} "
            f"({', '.join(sorted({s.benchmark for s in self.system_info}))}); "
            f"{'Holm' if self.correction == 'holm' else 'no'} correction over {self.family_size} test(s)"
        )
        table = [("system", "metric", "n", "base", "mean", "diff", f"{pct} CI", "p_adj", "verdict")]
        for row in self.summary_rows():
            table.append(
                (
                    row["system"],
                    row["metric"],
                    str(row["n"]),
                    _num(row["baseline_mean"]),
                    _num(row["mean"]),
                    _num(row["mean_diff"], sign=True),
                    f"[{_num(row['ci_low'], sign=True)}, {_num(row['ci_high'], sign=True)}]",
                    p_text(row["p_adjusted"], self.alpha),
                    row["verdict"],
                )
            )
        widths = [max(len(r[i]) for r in table) for i in range(len(table[0]))]
        right = {2, 3, 4, 5, 7}
        lines = [*self.headline(), head]
        for r in table:
            cells = [c.rjust(w) if i in right else c.ljust(w) for i, (c, w) in enumerate(zip(r, widths))]
            lines.append("  ".join(cells).rstrip())
        if self.warnings:
            lines.append(f"{len(self.warnings)} warning(s):")
            lines.extend(f"  - {w}" for w in self.warnings)
        if self.notes:
            lines.append("notes:")
            lines.extend(f"  - {note}" for note in self.notes)
        return "\n".join(lines)


def untested(own: dict[tuple[int, int], str], modes: list[str], base: int, metrics: int) -> dict[tuple[int, int], str]:
    """The tests left out as n/a, ``{(system, metric): reason}``, given where each metric is
    n/a in a system's own mode (``own``): when it is n/a on both sides, or on one side of
    two *different* modes (a mode that returns no answers by design). The same mode of two
    recipes is still tested: a recipe whose mode stopped answering is a real regression."""
    out: dict[tuple[int, int], str] = {}
    for k, mode in enumerate(modes):
        if k == base:
            continue
        for j in range(metrics):
            mine, theirs = own.get((k, j), ""), own.get((base, j), "")
            if (mine and theirs) or ((mine or theirs) and mode != modes[base]):
                out[(k, j)] = mine or theirs
    return out


def _num(value: float, *, sign: bool = False) -> str:
    if math.isnan(value):
        return "n/a"
    return f"{value:+.3f}" if sign else f"{value:.3f}"


def _axes(ax: Axes | None, size: tuple[float, float]) -> tuple[Axes, tuple[str, ...]]:
    """``ax`` (or the axes of a new pyplot-free figure) and the package's colour palette."""
    from heta_nb.plots import PALETTE
    from heta_nb.plots.style import new_axes

    # a PlotFigure, as in heta_nb.plots: no layout engine, and it displays as an image by itself
    return new_axes(ax, size), PALETTE
