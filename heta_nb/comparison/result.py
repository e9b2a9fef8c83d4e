"""The :class:`Comparison` value: its lookups, plain data, pandas views, plots and text."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from heta_nb._util.frames import frame as frame_of
from heta_nb.comparison.align import Aligned
from heta_nb.comparison.headline import differing_metrics, verdict_lines
from heta_nb.comparison.overlap import Overlap
from heta_nb.comparison.sensitivity import Clustering, Sensitivity
from heta_nb.comparison.significance import Family, is_significant, untested, verdict_text
from heta_nb.comparison.systems import System, index_of
from heta_nb.model.record import RichDisplay
from heta_nb.model.report import EvaluationReport
from heta_nb.stats.paired import PairedTest

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd
    from matplotlib.axes import Axes

__all__ = ["SUMMARY_COLUMNS", "Comparison"]

SUMMARY_COLUMNS = (
    "system",
    "metric",
    "baseline",
    "mode",
    "n",
    "mean",
    "baseline_mean",
    "mean_diff",
    "ci_low",
    "ci_high",
    "p_value",
    "p_adjusted",
    "family",
    "family_size",
    "wins",
    "ties",
    "losses",
    "significant",
    "verdict",
    "min_detectable_difference",
    "mcnemar_p",
    "clusters",
    "design_effect",
)
"""Columns of :meth:`Comparison.summary_frame` (and keys of :meth:`Comparison.summary_rows`)."""


class Comparison(RichDisplay):
    """Paired comparison of systems against their baselines (build it with :func:`compare`).

    Attributes:
        systems: System names, in order (the baselines included).
        system_info: One :class:`System` per name (report id, mode, benchmark...).
        metrics: Metrics compared.
        baseline: Name of the baseline: the baseline report's when several reports are
            paired mode by mode (its system of each mode is that mode's baseline), else
            the baseline system's.
        baselines: ``{system: its baseline system}`` for every tested system.
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
        baseline: str,
        base_of: dict[int, int],
        families: dict[int, Family],
        aligned: Aligned,
        tests: dict[tuple[int, int], PairedTest],
        warnings: list[str],
        notes: list[str],
        settings: dict[str, Any],
        reports: tuple[EvaluationReport, ...] = (),
        arguments: dict[str, Any] | None = None,
        not_applicable: dict[tuple[int, int], str] | None = None,
        incomparable: dict[tuple[int, int], str] | None = None,
        human: pd.DataFrame | None = None,
        sensitivity: dict[tuple[int, int], Sensitivity] | None = None,
        clustering: Clustering | None = None,
        benchmark: Any = None,
    ) -> None:
        self.reports: tuple[EvaluationReport, ...] = reports
        """The compared reports (what exports save next to a notebook)."""
        self.arguments: dict[str, Any] = dict(arguments or {})
        """The ``compare()`` arguments that rebuild this comparison from the reports."""
        self.system_info: tuple[System, ...] = tuple(systems)
        self.systems: tuple[str, ...] = tuple(s.name for s in systems)
        self.metrics: tuple[str, ...] = aligned.metrics
        self.baseline: str = baseline
        self.baselines: dict[str, str] = {systems[k].name: systems[b].name for k, b in base_of.items()}
        self.paired_by_mode: bool = bool(settings.get("paired_by_mode", False))
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
        self._base_of = dict(base_of)
        self._families = dict(families)
        self._aligned = aligned
        self._tests = tests
        own = dict(not_applicable or {})
        self._na_own = own
        """``{(system, metric): reason}``: the metric is n/a in that system's mode."""
        self._sensitivity = dict(sensitivity or {})
        """``{(system, metric): Sensitivity}``: what each test can see (MDD, McNemar, clusters)."""
        self.clustering: Clustering | None = clustering
        """How the cases are clustered (``compare(cluster_by=...)``), or None."""
        self.benchmark: Any = benchmark
        """The benchmark given to ``compare`` (labels and evidence for slices and clusters), or None."""
        self._human = human
        self._why: dict[str, Any] | None = None
        self._stages: pd.DataFrame | None = None
        """People's estimate of each difference (``compare(..., reviews=)``), or None."""
        self._incomparable = dict(incomparable or {})
        """``{(system, metric): "judge differs: ..."}``: not tested, the numbers mean different things."""
        self._not_applicable = {
            **untested(own, [s.mode for s in systems], self._base_of, len(self.metrics)),
            **self._incomparable,
        }

    @property
    def base_of(self) -> dict[int, int]:
        """Each tested system's baseline system (indexes into :attr:`system_info`)."""
        return dict(self._base_of)

    def human_estimates(self) -> pd.DataFrame | None:
        """Where people reviewed both reports (``compare(..., reviews=)``): per system and metric, the
        prediction-powered estimate of the difference in the rate people give, with the reviews-alone
        interval beside it (:mod:`heta_nb.comparison.people`); None without reviews."""
        return None if self._human is None else self._human.copy()

    # -- lookups -------------------------------------------------------------------------
    @property
    def candidates(self) -> tuple[str, ...]:
        """The systems tested against a baseline, in order."""
        return tuple(name for k, name in enumerate(self.systems) if k in self._base_of)

    def is_baseline(self, system: str) -> bool:
        """Whether ``system`` is a baseline (of some tested system) rather than tested."""
        return system in self.systems and self.systems.index(system) not in self._base_of

    def baseline_of(self, system: int | str | None = None) -> str:
        """The baseline system ``system`` is tested against (default: the first tested system)."""
        return self.systems[self._base_of[self._system(system)]]

    def family(self, system: int | str | None = None) -> Family:
        """The tests corrected together with ``system``'s: its metrics against its baseline
        (:attr:`~heta_nb.comparison.significance.Family.text`: "Holm over the 6 metrics of ...")."""
        return self._families[self._system(system)]

    @property
    def family_text(self) -> str:
        """The multiplicity convention in words, for headers: the one family's text, or
        ``"Holm over each system's 6 metrics against its baseline"`` when there are several."""
        families = list(self._families.values())
        if len(families) == 1:
            return families[0].text
        sizes = sorted({f.size for f in families})
        count = f"{sizes[0]}" if len(sizes) == 1 else f"{sizes[0]}-{sizes[-1]}"
        how = "Holm" if self.correction == "holm" else "no correction"
        return f"{how} over each system's {count} metrics against its baseline, per pair ({len(families)} families)"

    def description(self) -> str:
        """What is compared with what, in words: ``"large-chunks vs baseline 'small-chunks',
        mode by mode (full_text_search, extractive_answer; saltmarsh_isles:1:test)"``."""
        benchmarks = ", ".join(sorted({s.benchmark for s in self.system_info}))
        if self.paired_by_mode:
            reports = list(dict.fromkeys(s.report_id for s in self.system_info))
            base_reports = {self.system_info[b].report_id for b in self._base_of.values()}
            others = [r for r in reports if r not in base_reports]
            modes = list(dict.fromkeys(s.mode for s in self.system_info))
            return f"{', '.join(others)} vs baseline {self.baseline!r}, mode by mode ({', '.join(modes)}; {benchmarks})"
        more = len(self.candidates) - 6
        shown = ", ".join(self.candidates[:6]) + (f" and {more} more" if more > 0 else "")
        return f"{shown} vs baseline {self.baseline!r} ({benchmarks})"

    @property
    def family_size(self) -> int:
        """Tests corrected together in the largest family (a system's metrics against its baseline)."""
        return max((f.size for f in self._families.values()), default=0)

    def _system(self, system: int | str | None) -> int:
        if system is None:
            return next(k for k in range(len(self.systems)) if k in self._base_of)
        index = index_of(system, self.systems, "system")
        if index not in self._base_of:
            raise ValueError(f"{self.systems[index]!r} is a baseline; pick another system")
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
        key = (self._system(system), self._metric(metric))
        why = self._not_applicable.get(key)
        return self._untested_text(key, why) if why else verdict_text(self._tests[key], self.alpha, self._mdd(key))

    def _mdd(self, key: tuple[int, int]) -> float:
        """The minimum detectable difference of a test (NaN when untested)."""
        found = self._sensitivity.get(key)
        return found.mdd if found is not None else float("nan")

    def sensitivity(self, system: int | str, metric: str) -> Sensitivity | None:
        """What the test of ``system`` on ``metric`` can see: its minimum detectable difference,
        McNemar's test (0/1 metrics) and the clustered interval (None when not tested)."""
        return self._sensitivity.get((self._system(system), self._metric(metric)))

    def _untested_text(self, key: tuple[int, int], why: str) -> str:
        """``"not comparable: judge differs: ..."`` or ``"n/a: ..."``."""
        return f"not comparable: {why}" if key in self._incomparable else f"n/a: {why}"

    def not_applicable(self, system: int | str, metric: str) -> str:
        """Why ``metric`` is n/a in ``system``'s own mode (the baseline may be named), or ``""``."""
        return self._na_own.get((index_of(system, self.systems, "system"), self._metric(metric)), "")

    def headline(self) -> list[str]:
        """The verdict first, one line per system: ``"large-chunks vs small-chunks: 0 better,
        1 worse (answer_f1, -0.026 [-0.042, -0.010]), 4 no detectable difference"``."""
        return [line["text"] for line in verdict_lines(self.summary_rows())]

    def differing_metrics(self, system: int | str | None = None) -> list[str]:
        """The metrics ordered by how clearly ``system`` differs from the baseline
        (significant first, n/a last): what the plots show."""
        return differing_metrics(self.summary_rows(), self.systems[self._system(system)])

    def aligned_values(self, metric: str) -> dict[str, np.ndarray]:
        """Per system, the scores of ``metric`` on the aligned cases (same order for all)."""
        j = self._metric(metric)
        mask = self._common_mask(j)
        return {name: self._aligned.values[k, j, mask].copy() for k, name in enumerate(self.systems)}

    def _common_mask(self, j: int) -> np.ndarray:
        """The cases of metric ``j`` every system is compared on (every pair's cases)."""
        mask: np.ndarray = np.logical_and.reduce([self._aligned.mask[k, j] for k in self._base_of])
        return mask

    def deltas(self, metric: str, system: int | str | None = None) -> np.ndarray:
        """Per case ``system`` is compared on, ``system - its baseline`` (default: the first tested system)."""
        j, k = self._metric(metric), self._system(system)
        mask = self._aligned.mask[k, j]
        deltas: np.ndarray = self._aligned.values[k, j, mask] - self._aligned.values[self._base_of[k], j, mask]
        return deltas

    # -- plain data ----------------------------------------------------------------------
    def summary_rows(self) -> list[dict[str, Any]]:
        """One dict per (non-baseline system, metric), keys :data:`SUMMARY_COLUMNS`, plain Python values."""
        rows = []
        for k, name in enumerate(self.systems):
            if k not in self._base_of:
                continue
            family = self._families[k]
            for j, metric in enumerate(self.metrics):
                t = self._tests[(k, j)]
                why = self._not_applicable.get((k, j))
                seen = self._sensitivity.get((k, j))
                mcnemar = seen.mcnemar if seen is not None else None
                clustered = seen.clustered if seen is not None else None
                rows.append(
                    {
                        "system": name,
                        "metric": metric,
                        "baseline": self.systems[self._base_of[k]],
                        "mode": self.system_info[k].mode,
                        "n": t.n,
                        "mean": t.mean_b,
                        "baseline_mean": t.mean_a,
                        "mean_diff": t.mean_diff,
                        "ci_low": t.ci_low,
                        "ci_high": t.ci_high,
                        "p_value": t.p_value,
                        "p_adjusted": t.p_value_adjusted,
                        "family": "" if why else family.text,
                        "family_size": 0 if why else family.size,
                        "wins": t.wins,
                        "ties": t.ties,
                        "losses": t.losses,
                        "significant": not why and is_significant(t, self.alpha),
                        "verdict": self._untested_text((k, j), why)
                        if why
                        else verdict_text(t, self.alpha, self._mdd((k, j))),
                        "min_detectable_difference": self._mdd((k, j)),
                        "mcnemar_p": mcnemar.p_value if mcnemar is not None else float("nan"),
                        "clusters": clustered.clusters if clustered is not None else 0,
                        "design_effect": clustered.design_effect if clustered is not None else float("nan"),
                    }
                )
        return rows

    def to_context(self) -> dict[str, Any]:
        """Everything a template needs, as plain data (dicts, lists, str, numbers)."""
        from heta_nb.comparison.plain import plain_data

        return plain_data(self)

    # -- pandas views --------------------------------------------------------------------
    def summary_frame(self) -> pd.DataFrame:
        """One row per (non-baseline system, metric); columns :data:`SUMMARY_COLUMNS`.

        ``mean`` and ``baseline_mean`` are over the cases the pair is compared on (``n``),
        ``mean_diff`` = system - baseline with its bootstrap CI, ``p_value`` the permutation
        p-value and ``p_adjusted`` the Holm-adjusted one over ``family`` (the system's
        metrics against its baseline, ``family_size`` tests), which ``significant`` and
        ``verdict`` use. ``min_detectable_difference`` is the smallest difference the test
        detects with 80 % power at the family's level (a non-significant test below it reads
        "underpowered"), ``mcnemar_p`` McNemar's exact p-value for 0/1 metrics (NaN otherwise),
        ``clusters`` and ``design_effect`` the clusters the interval and p-value treat as units
        (``compare(cluster_by=...)``; 0 and NaN without clustering). An n/a row (not tested) has
        ``n`` 0, NaN numbers and an empty family.
        """

        frame = frame_of(self.summary_rows(), columns=list(SUMMARY_COLUMNS))
        for name in ("n", "wins", "ties", "losses", "clusters"):
            frame[name] = frame[name].astype("int64")
        frame["significant"] = frame["significant"].astype("bool")
        frame["family_size"] = frame["family_size"].astype("int64")
        frame.attrs.update(
            baseline=self.baseline,
            confidence=self.confidence,
            alpha=self.alpha,
            correction=self.correction,
            family=self.family_text,
        )
        return frame

    def cases_frame(self, metric: str | None = None) -> pd.DataFrame:
        """Per case every pair compares: ``unit, case_id, query``, each system's value,
        ``delta <system>`` (against its own baseline).

        With ``metric=None`` every metric is stacked, with a leading ``metric`` column.
        Deltas are ``system - baseline``; rows keep the baseline report's case order.
        """
        from heta_nb.comparison.cases import cases_frame

        return cases_frame(self, metric)

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
        from heta_nb.comparison.cases import extremes

        return extremes(self, self._metric(metric), self._system(system), n, improved=improved)

    # -- why it changed -------------------------------------------------------------------
    def stages(self, *, answer: str | None = None, evidence: str | None = None) -> pd.DataFrame:
        """Where the answer was lost: one row per case that got worse or better (per tested
        system), with its ``stage``: ``retrieval``, ``generation``, ``both``, ``neither`` (the
        output did not change) or ``unknown`` (:mod:`heta_nb.comparison.stages` has the rules).
        ``answer`` / ``evidence`` name the metrics read (default: the first answer metric and
        the first evidence metric compared)."""
        from heta_nb.comparison.stages import case_stages

        if answer is None and evidence is None:  # the views' table (why(), the explorer): once
            if self._stages is None:
                self._stages = case_stages(self)
            return self._stages.copy()
        return case_stages(self, answer=answer, evidence=evidence)

    def stage_counts(self, *, answer: str | None = None, evidence: str | None = None) -> pd.DataFrame:
        """:meth:`stages` counted per system, mode and direction, one column per stage."""
        from heta_nb.comparison.stages import stage_counts

        return stage_counts(self.stages(answer=answer, evidence=evidence))

    def slices(
        self,
        by: Any = "labels",
        *,
        metrics: list[str] | None = None,
        benchmark: Any = None,
        correction: str = "holm",
        min_cases: int = 10,
    ) -> pd.DataFrame:
        """Which slices moved: the paired difference of every slice, per tested system and metric.

        ``by``: ``"labels"`` (every label key of the benchmark), a label or metadata field
        (``"labels.topic"``), ``"document"``, a ``{case_id: slice}`` mapping or a function of the
        case. The slices of one system and metric are adjusted together (``correction="holm"`` or
        ``"bh"``, Benjamini-Hochberg), named in each row; a slice under ``min_cases`` cases says it
        is too small. The slices that moved come first (:mod:`heta_nb.comparison.slices`).
        """
        from heta_nb.comparison.slices import slice_tests

        return slice_tests(
            self, by, metrics=metrics, benchmark=benchmark, correction=correction,  # type: ignore[arg-type]
            min_cases=min_cases,
        )  # fmt: skip

    def recipe_changes(self) -> list[Any]:
        """What differs between each compared report's recipe and KB and its baseline report's
        (:class:`~heta_nb.comparison.recipes.RecipeChanges`, one per pair of reports)."""
        from heta_nb.comparison.why import pair_recipe_changes

        return pair_recipe_changes(self)

    def why(self) -> dict[str, Any]:
        """Why it changed, as the views show it: recipe changes, stage lines and counts, the
        slices that moved (:func:`heta_nb.comparison.why.why_it_changed`; computed once: the
        comparison does not change, and its text and HTML views both read it)."""
        from copy import deepcopy

        from heta_nb.comparison.why import why_it_changed

        if self._why is None:
            self._why = why_it_changed(self)
        return deepcopy(self._why)

    # -- plots ---------------------------------------------------------------------------
    def plot_paired(self, metric: str, system: int | str | None = None, ax: Axes | None = None) -> Axes:
        """Scatter of per-case scores, baseline (x) vs ``system`` (y), with the diagonal.

        Points above the diagonal are cases ``system`` wins. Discrete scores (at most 12
        distinct values, e.g. bools or recall over 1–2 documents) are jittered (seeded by
        ``seed``) so that stacked points stay visible. Like :mod:`heta_nb.plots`, draws on
        ``ax`` or a new pyplot-free figure, and sets ``ax.heta_nb_info``.
        """
        from heta_nb.comparison.figures import plot_paired

        return plot_paired(self, self._metric(metric), self._system(system), ax)

    def plot_deltas(self, metric: str, system: int | str | None = None, ax: Axes | None = None) -> Axes:
        """Histogram of per-case deltas (``system - baseline``) with the mean and its CI marked.

        At most 25 distinct deltas are drawn as one bar each, more as a histogram.
        """
        from heta_nb.comparison.figures import plot_deltas

        return plot_deltas(self, self._metric(metric), self._system(system), ax)

    # -- text ----------------------------------------------------------------------------
    def __repr__(self) -> str:
        from heta_nb._util.unicode import valid_text
        from heta_nb.comparison.text import comparison_text

        return valid_text(comparison_text(self))  # printable and UTF-8 whatever the names hold
