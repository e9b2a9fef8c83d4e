"""The :class:`History` value: a recipe's reports in time order, its rows, frame, plot and text."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from heta_nb._util.frames import frame as frame_of
from heta_nb._util.unicode import valid_text
from heta_nb.comparison.history_text import history_text
from heta_nb.comparison.result import Comparison
from heta_nb.model.record import RichDisplay
from heta_nb.model.report import EvaluationReport

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd
    from matplotlib.axes import Axes

__all__ = ["FIRST_REPORT", "HISTORY_COLUMNS", "History"]

FIRST_REPORT = "first report"
"""The verdict of the first report's rows: there is nothing before it to change from."""

HISTORY_COLUMNS = (
    "report_id",
    "started_at",
    "recipe",
    "benchmark",
    "mode",
    "metric",
    "n",
    "mean",
    "ci_low",
    "ci_high",
    "status",
    "reason",
    "previous",
    "change",
    "change_ci_low",
    "change_ci_high",
    "change_n",
    "p_adjusted",
    "verdict",
    "real",
)
"""Columns of :meth:`History.frame` (and keys of :meth:`History.rows`)."""


class History(RichDisplay):
    """A recipe's stored reports on one benchmark in time order (build it with :func:`history`).

    Attributes:
        knowledge_base: The knowledge base asked for.
        benchmark: The benchmark's name.
        location: Where the store lives.
        reports: The report ids, oldest first.
        loaded_reports: The reports themselves, in the same order.
        comparisons: Per report, ``compare(previous, report)`` (None for the first report and
            where the pair was not compared, e.g. another benchmark version).
        warnings: The comparisons' warnings, each prefixed ``"previous → report: "``.
        alpha, confidence, resamples, seed: The settings of the tests and intervals.
    """

    def __init__(
        self,
        *,
        knowledge_base: str,
        benchmark: str,
        location: str,
        reports: tuple[EvaluationReport, ...],
        rows: list[dict[str, Any]],
        comparisons: tuple[Comparison | None, ...],
        warnings: list[str],
        settings: dict[str, Any],
    ) -> None:
        self.knowledge_base: str = knowledge_base
        self.benchmark: str = benchmark
        self.location: str = location
        self.loaded_reports: tuple[EvaluationReport, ...] = reports
        self.reports: tuple[str, ...] = tuple(r.report_id for r in reports)
        self.comparisons: tuple[Comparison | None, ...] = comparisons
        self.warnings: list[str] = list(warnings)
        self.alpha: float = settings["alpha"]
        self.confidence: float = settings["confidence"]
        self.resamples: int = settings["resamples"]
        self.seed: Any = settings["seed"]
        self._rows = rows

    @property
    def modes(self) -> tuple[str, ...]:
        """The query modes shown, in first-seen order."""
        return tuple(dict.fromkeys(row["mode"] for row in self._rows))

    @property
    def metrics(self) -> tuple[str, ...]:
        """The metrics shown, in first-seen order."""
        return tuple(dict.fromkeys(row["metric"] for row in self._rows))

    # -- plain data ----------------------------------------------------------------------
    def rows(self) -> list[dict[str, Any]]:
        """One dict per report × mode × metric, keys :data:`HISTORY_COLUMNS`, plain Python values."""
        return [dict(row) for row in self._rows]

    def real_changes(self) -> list[dict[str, Any]]:
        """The rows whose change from the previous report is real (significant), oldest first."""
        return [dict(row) for row in self._rows if row["real"]]

    def to_context(self) -> dict[str, Any]:
        """Everything a template needs, as plain data (dicts, lists, str, numbers)."""
        labels = {row["report_id"]: row["recipe"] for row in self._rows}
        return {
            "knowledge_base": self.knowledge_base,
            "benchmark": self.benchmark,
            "location": self.location,
            "reports": [
                {
                    "report_id": r.report_id,
                    "started_at": r.started_at,
                    "benchmark": r.benchmark.key,
                    "recipe": labels.get(r.report_id, r.report_id),
                }
                for r in self.loaded_reports
            ],
            "modes": list(self.modes),
            "metrics": list(self.metrics),
            "rows": self.rows(),
            "warnings": list(self.warnings),
            "settings": {
                "alpha": self.alpha,
                "confidence": self.confidence,
                "resamples": self.resamples,
                "seed": self.seed,
            },
        }

    # -- views ---------------------------------------------------------------------------
    def frame(self) -> pd.DataFrame:
        """One row per report × mode × metric, oldest report first; columns :data:`HISTORY_COLUMNS`.

        ``n``, ``mean``, ``ci_low``, ``ci_high``, ``status`` and ``reason`` are the report's own
        summary of that mode and metric (NaN where there is no number: ``status`` says why);
        ``change`` (current - previous), its interval, ``change_n``, ``p_adjusted`` and
        ``verdict`` are ``compare(previous, current)``'s, and ``real`` is its ``significant``.
        """
        frame = frame_of(self.rows(), columns=list(HISTORY_COLUMNS))
        for name in ("n", "change_n"):
            frame[name] = frame[name].astype("int64")
        frame["real"] = frame["real"].astype("bool")
        frame.attrs.update(
            knowledge_base=self.knowledge_base,
            benchmark=self.benchmark,
            confidence=self.confidence,
            alpha=self.alpha,
        )
        return frame

    def plot(self, metric: str, mode: str | None = None, ax: Axes | None = None) -> Axes:
        """``metric`` per report in time order: each mean with its interval, real changes marked
        (▲/▼), n/a points left out and said; one line per mode (or ``mode`` alone).

        Like :mod:`heta_nb.plots`, draws on ``ax`` or a new pyplot-free figure and sets
        ``ax.heta_nb_info`` (the plotted numbers, per mode).
        """
        from heta_nb.plots.history import plot_history

        return plot_history(self._rows, metric, mode=mode, confidence=self.confidence, alpha=self.alpha, ax=ax)

    def __repr__(self) -> str:
        return valid_text(history_text(self))  # printable and UTF-8 whatever the names hold
