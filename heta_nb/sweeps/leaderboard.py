"""The :class:`Leaderboard`: recipes × benchmarks × metrics, with the differences from a baseline that are real."""

from __future__ import annotations

import os
import warnings
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, overload

from heta_nb._util.frames import frame as frame_of
from heta_nb._util.unicode import valid_text
from heta_nb.comparison.notes import HetaComparisonWarning
from heta_nb.model.record import RichDisplay
from heta_nb.model.report import EvaluationReport
from heta_nb.sweeps.board import Board, Cell, build_board
from heta_nb.sweeps.plan import SweepError
from heta_nb.sweeps.views import FRAME_COLUMNS, board_context, board_rows, board_text, board_why, wide_frame

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd
    from matplotlib.axes import Axes

    from heta_nb.comparison import Comparison
    from heta_nb.render.standalone import Page

__all__ = ["Leaderboard"]


class Leaderboard(RichDisplay):
    """Recipes × benchmarks × metrics: means with CIs, paired tests against a baseline, ranks.

    Build it with :meth:`from_reports` or :meth:`from_store` (``heta_nb.sweep`` returns one).
    A *system* is a recipe in one query mode (``recipe · mode`` when the reports have
    several modes); a *column* is one metric on one benchmark.

    * Each cell shows the report's own one summary: the mean of the scored values with its
      confidence interval, as every view shows it first, and the column's rank (1 = best
      mean; ties share a rank). A metric a mode cannot produce reads n/a (never 0, never
      ranked); evaluator errors are shown beside the mean.
    * On each benchmark, every other recipe is compared with the baseline recipe in the
      same mode, case by case, with exactly the statistics of :func:`heta_nb.compare`
      applied to the two reports (paired sign-flip permutation test, bootstrap CI of the
      mean difference, the same ``seed``): the aligned cases are those both answered.
    * Each pair's tests are Holm-adjusted over its metrics (one recipe against the
      baseline, on one benchmark, in one mode): the family :func:`heta_nb.compare` and
      :func:`heta_nb.check` use, so the same pair reads the same everywhere. A difference is
      *real* when its adjusted p-value is below ``alpha``. Only differences from the
      baseline are tested, not every pair.

    Attributes:
        recipes, benchmarks, modes, metrics: what the board shows, in order.
        baselines: benchmark -> its baseline recipe.
        warnings: why some numbers need care (incomplete reports, comparability).
        notes: remarks (reports missing for some pairs...).
        failures: pairs a sweep could not finish (``{"recipe", "benchmark", "phase", "error"}``).
        store: where the reports are stored (None: in memory).
    """

    def __init__(
        self,
        board: Board,
        *,
        store: Any = None,
        arguments: Mapping[str, Any] | None = None,
        failures: Sequence[Mapping[str, Any]] = (),
        benchmark_objects: Mapping[str, Any] | None = None,
    ) -> None:
        self._board = board
        self._benchmark_objects = dict(benchmark_objects or {})
        self.recipes: tuple[str, ...] = tuple(board.recipes)
        self.benchmarks: tuple[str, ...] = tuple(board.benchmarks)
        self.modes: tuple[str, ...] = tuple(board.modes)
        self.metrics: tuple[str, ...] = tuple(board.metrics)
        self.baselines: dict[str, str] = dict(board.baselines)
        self.warnings: list[str] = list(board.warnings)
        self.notes: list[str] = list(board.notes)
        self.failures: list[dict[str, Any]] = [dict(f) for f in failures]
        self.store = store
        self.arguments: dict[str, Any] = dict(arguments or {})
        """The options that rebuild this board from its reports (``baseline``, ``metrics``...)."""
        for failure in self.failures:
            self.warnings.append(
                f"{failure['recipe']} × {failure['benchmark']}: {failure['phase']}"
                + (f" ({failure['error']})" if failure.get("error") else "")
                + "; not on the board"
            )

    # -- building --------------------------------------------------------------------------
    @classmethod
    def from_reports(
        cls,
        reports: Sequence[Any],
        *,
        baseline: str | Mapping[str, str] | None = None,
        metrics: Sequence[str] | str | None = None,
        modes: Sequence[str] | str | None = None,
        resamples: int = 10_000,
        confidence: float = 0.95,
        seed: int = 0,
        alpha: float = 0.05,
        include_skipped: bool = False,
        store: Any = None,
        failures: Sequence[Mapping[str, Any]] = (),
        benchmark_objects: Mapping[str, Any] | None = None,
    ) -> Leaderboard:
        """A leaderboard over ``reports`` (reports, paths, anything ``load_report`` takes).

        A report's recipe and benchmark are the ones a sweep recorded (``metadata.sweep``);
        otherwise ``metadata.recipe`` or its knowledge-base name, and its benchmark's name
        (``name:version:split`` where names repeat). Of two reports for one pair the newer
        is used, and the same report given twice is used once: both with a
        :class:`~heta_nb.comparison.HetaComparisonWarning` (as ``compare`` warns of the same
        report twice), and in :attr:`warnings`.

        Args:
            reports: the reports.
            baseline: the baseline recipe (default: the first), or one per benchmark
                (``{benchmark: recipe}``).
            metrics: metrics shown and tested (default: every numeric metric).
            modes: query modes (default: every mode of the reports).
            resamples, confidence, seed, include_skipped: as in :func:`heta_nb.compare`.
            alpha: the significance level, after Holm's correction over each pair's metrics.
            store: where the reports are stored (what the notebook sections reload).
            failures: pairs a sweep could not finish (shown as warnings).
            benchmark_objects: the benchmarks by name, for the explorer's case panel
                (expected answers and evidence).

        Raises:
            SweepError: no reports, or an unknown baseline, metric or mode.
        """
        from heta_nb.model.io import load_report

        loaded = [r if isinstance(r, EvaluationReport) else load_report(r) for r in reports]
        options = {"baseline": baseline, "metrics": metrics, "modes": modes, "seed": seed, "alpha": alpha}
        board = build_board(
            loaded,
            baseline=baseline,
            metrics=metrics,
            modes=modes,
            resamples=resamples,
            confidence=confidence,
            seed=seed,
            alpha=alpha,
            include_skipped=include_skipped,
        )
        options.update(resamples=resamples, confidence=confidence, include_skipped=include_skipped)
        made = cls(board, store=store, arguments=options, failures=failures, benchmark_objects=benchmark_objects)
        made.warnings = _warn_dropped(loaded, made.warnings)
        return made

    @classmethod
    def from_store(cls, store: Any, *, sweep: str | None = None, **options: Any) -> Leaderboard:
        """A leaderboard over the reports of a store (only those of sweep ``sweep`` if given).

        Args:
            store: a store folder, fsspec URL or ``ReportStore``.
            sweep: keep only the reports of the sweep with this ``name``.
            **options: as :meth:`from_reports` (``baseline``, ``metrics``, ``modes``...).

        Raises:
            SweepError: the store holds no (matching) report.
        """
        from heta_nb.store import ReportStore

        reports_store = store if isinstance(store, ReportStore) else ReportStore(store)
        reports = [reports_store.load_key(s.key) for s in reports_store.summaries()]
        if sweep is not None:
            reports = [r for r in reports if _sweep_name(r) == sweep]
        if not reports:
            which = f" of sweep {sweep!r}" if sweep is not None else ""
            raise SweepError(f"{reports_store.location}: no report{which} to put on a leaderboard")
        board = cls.from_reports(reports, store=store, **options)
        board.arguments["sweep"] = sweep
        return board

    # -- lookups -----------------------------------------------------------------------
    @property
    def reports(self) -> tuple[EvaluationReport, ...]:
        """The reports on the board, one per (recipe, benchmark)."""
        return tuple(e.report for e in self._board.entries)

    @property
    def family_size(self) -> int:
        """Tests Holm-adjusted together in the largest family (one pair's metrics in one mode)."""
        return self._board.family_size

    @property
    def family_text(self) -> str:
        """The multiplicity convention in words (each pair's metrics, as ``compare`` and ``check``)."""
        return self._board.family_text

    @property
    def systems(self) -> tuple[str, ...]:
        """The rows' names (recipes, or ``recipe · mode``)."""
        return tuple(s["name"] for s in board_context(self._board)["systems"])

    def _mode(self, mode: str | None) -> str:
        if mode is None:
            if len(self.modes) > 1:
                raise ValueError(f"the board has several modes {list(self.modes)}: pass mode=")
            return self.modes[0]
        if mode not in self.modes:
            raise ValueError(f"mode {mode!r} is not on the board; modes: {list(self.modes)}")
        return mode

    def cell(self, recipe: str, benchmark: str, metric: str, mode: str | None = None) -> Cell:
        """One cell: mean, CI, rank, and its paired test against the baseline (``cell.test``)."""
        key = (benchmark, recipe, self._mode(mode), metric)
        if key not in self._board.cells:
            raise KeyError(f"no cell for recipe {recipe!r}, benchmark {benchmark!r}, metric {metric!r}")
        return self._board.cells[key]

    def report(self, recipe: str, benchmark: str) -> EvaluationReport:
        """The report of one (recipe, benchmark) pair."""
        for entry in self._board.entries:
            if entry.recipe == recipe and entry.benchmark == benchmark:
                return entry.report
        raise KeyError(f"no report for recipe {recipe!r} on benchmark {benchmark!r}")

    def comparison(self, benchmark: str, recipe: str, mode: str | None = None) -> Comparison:
        """The :class:`~heta_nb.comparison.Comparison` of ``recipe`` with the baseline on ``benchmark``.

        Its p-values are the board's: Holm over the pair's metrics.
        """
        key = (benchmark, recipe, self._mode(mode))
        if key not in self._board.comparisons:
            raise KeyError(f"{recipe!r} is not compared on {benchmark!r} (the baseline, or a report is missing)")
        return self._board.comparisons[key]

    def human_estimates(
        self, reviews: Mapping[tuple[str, str], pd.DataFrame], *, confidence: float = 0.95
    ) -> pd.DataFrame:
        """Where people reviewed a recipe's report and its baseline's on a benchmark: per recipe and
        metric, the prediction-powered estimate of the difference in the rate people give
        (:mod:`heta_nb.comparison.people`), with the reviews-alone interval beside it.

        Args:
            reviews: ``{(recipe, benchmark): that report's reviews}`` (``report.reviews(...)``).

        Returns:
            One row per (benchmark, recipe, metric) with reviews on both sides; none without.
        """
        import pandas as pd

        from heta_nb.comparison.people import HUMAN_COLUMNS, human_estimates

        frames = []
        for (benchmark, recipe, _mode), comparison in self._board.comparisons.items():
            baseline = self.baselines.get(benchmark)
            mine, theirs = reviews.get((recipe, benchmark)), reviews.get((baseline, benchmark)) if baseline else None
            if mine is None or theirs is None:
                continue
            table = human_estimates(
                comparison.reports,
                ["baseline", "new"],  # (the board compares the baseline's report, then the recipe's)
                comparison.system_info,
                comparison.base_of,
                comparison.metrics,
                {"baseline": theirs, "new": mine},
                confidence,
            )
            frames.append(table.assign(benchmark=benchmark, recipe=recipe))
        columns = ["benchmark", "recipe", *HUMAN_COLUMNS]
        found = pd.concat(frames, ignore_index=True) if frames else pd.DataFrame(columns=columns)
        return found.reindex(columns=columns).drop_duplicates(subset=["benchmark", "recipe", "system", "metric"])

    def explore(
        self, benchmark: str | None = None, recipe: str | None = None, mode: str | None = None, **filters: Any
    ) -> Any:
        """Open the case explorer on one pair's comparison with the baseline (or on a report).

        Args:
            benchmark: the benchmark (default: the first).
            recipe: the recipe compared with the baseline (default: the first other recipe;
                the baseline itself opens its report).
            mode: the query mode (needed when the board has several).
            **filters: the explorer's first filters (see ``heta_nb.explore``).
        """
        benchmark = benchmark or self.benchmarks[0]
        baseline = self.baselines[benchmark]
        recipe = recipe or next((r for r in self.recipes if r != baseline), baseline)
        target: Any = self.report(recipe, benchmark) if recipe == baseline else self.comparison(benchmark, recipe, mode)
        opener = getattr(target, "explore", None)
        if opener is None:
            from heta_nb.errors import MissingDependencyError

            raise MissingDependencyError("this heta_nb has no case explorer (explore() arrives with heta_nb.explore)")
        return opener(benchmark=self._benchmark_objects.get(benchmark), **filters)

    # -- data --------------------------------------------------------------------------
    def rows(self) -> list[dict[str, Any]]:
        """One dict per (benchmark, recipe, mode, metric); keys :data:`~heta_nb.sweeps.views.FRAME_COLUMNS`."""
        return board_rows(self._board)

    def frame(self, wide: bool = False) -> pd.DataFrame:
        """The board as a DataFrame.

        Args:
            wide: False (default): one row per (benchmark, recipe, mode, metric) with the
                mean, CI, rank, and the paired difference from the baseline (``mean_diff``,
                its CI, ``p_value``, Holm ``p_adjusted``, ``significant``, ``verdict``,
                wins/ties/losses). True: one row per system, the means in
                ``(benchmark, metric)`` columns and its mean rank.
        """

        if wide:
            return wide_frame(self._board)
        frame = frame_of(self.rows(), columns=list(FRAME_COLUMNS))
        frame["rank"] = frame["rank"].astype("Int64")
        for name in ("n", "errors", "evaluator_errors", "n_paired", "wins", "ties", "losses"):
            frame[name] = frame[name].astype("int64")  # counts stay integers ("89", never "89.000")
        for name in ("best", "is_baseline", "significant"):
            frame[name] = frame[name].astype("bool")
        frame.attrs.update(
            alpha=self._board.settings["alpha"], family_size=self.family_size, family=self._board.family_text
        )
        return frame

    def to_context(self) -> dict[str, Any]:
        """Everything the HTML view needs, as plain data."""
        return {**board_context(self._board), "why": board_why(self._board)}  # why: what the page shows below

    # -- views -------------------------------------------------------------------------
    def plot(
        self, metric: str | None = None, *, kind: str = "heatmap", mode: str | None = None, ax: Axes | None = None
    ) -> Axes:
        """One metric as a systems × benchmarks heatmap (``kind="heatmap"``) or dots with CIs (``"dots"``).

        Args:
            metric: the metric (default: the first).
            kind: ``"heatmap"`` or ``"dots"``.
            mode: keep one query mode (default: all systems).
            ax: draw here (default: a new standalone figure).
        """
        from heta_nb.plots.leaderboard import plot_leaderboard

        frame = self.frame()
        if mode is not None:
            frame = frame[frame["mode"] == self._mode(mode)]
        return plot_leaderboard(frame, metric, kind=kind, ax=ax)  # type: ignore[arg-type]

    def figure(self, metric: str | None = None, kind: str = "heatmap") -> Any:
        """:meth:`plot` as a notebook figure (SVG plus a caption), what :meth:`sections` stores."""
        from heta_nb.sweeps.export import figure_view

        return figure_view(self, metric or self.metrics[0], kind)

    @overload
    def to_html(self, path: None = None, *, title: str | None = None) -> str: ...

    @overload
    def to_html(self, path: str | os.PathLike[str], *, title: str | None = None) -> Path: ...

    def to_html(self, path: str | os.PathLike[str] | None = None, *, title: str | None = None) -> str | Path:
        """A standalone, offline HTML page of the board: the path written (atomically), or without
        ``path`` the page's text (as :func:`heta_nb.to_html`)."""
        from heta_nb.export import to_html

        return to_html(self, path, title=title)

    def standalone_document(self, limits: Any = None, title: str | None = None) -> Page:
        """The standalone page (what ``heta_nb.to_html(board)`` writes)."""
        from heta_nb.sweeps.export import board_html

        return board_html(self, title=title)

    def sections(self, source: Any = None) -> list[Any]:
        """Notebook cells presenting the board (nbformat v4, outputs stored).

        Args:
            source: what the notebook reloads the board from: a store (default: the
                board's own) or a list of report files.
        """
        from heta_nb.sweeps.export import board_sections

        return board_sections(self, source)

    def notebook_sections(self, source: Any = None) -> list[Any]:
        """The cells ``heta_nb.sections(board)`` returns (see :meth:`sections`)."""
        return self.sections(source)

    def __repr__(self) -> str:
        return valid_text(board_text(self._board))  # printable and UTF-8 whatever the names hold


def _warn_dropped(reports: Sequence[EvaluationReport], found: Sequence[str]) -> list[str]:
    """Warn about every report left off the board: the same report given again (identical), or an
    older one for a pair, as :func:`heta_nb.compare` warns of the same report given twice
    (:class:`~heta_nb.comparison.HetaComparisonWarning`); returns the board's warnings, reworded
    for identical reports."""
    first: dict[str, EvaluationReport] = {}
    counts: dict[str, int] = {}
    for report in reports:
        earlier = first.setdefault(report.report_id, report)
        if earlier is report or earlier == report:
            counts[report.report_id] = counts.get(report.report_id, 0) + 1
    twice = {rid: n for rid, n in counts.items() if n > 1}
    out: list[str] = []
    for message in found:
        if any(f"reports {rid!r} and {rid!r};" in message for rid in twice):
            continue  # said below, in words that fit
        out.append(message)
        if message.endswith(") is used"):
            warnings.warn(message, HetaComparisonWarning, stacklevel=3)
    for rid, n in twice.items():
        message = f"report {rid!r} is given {n} times: it is on the board once (the copies are left out)"
        out.append(message)
        warnings.warn(message, HetaComparisonWarning, stacklevel=3)
    return out


def _sweep_name(report: EvaluationReport) -> str | None:
    sweep = report.metadata.get("sweep")
    name = sweep.get("name") if isinstance(sweep, Mapping) else None
    return name if isinstance(name, str) else None
