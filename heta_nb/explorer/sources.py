"""What an explorer explores: a report, a comparison, a store's reports or a running evaluation
(its results so far, then its final report), behind one small interface that can grow."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from heta_nb._util.text import plural
from heta_nb.explorer.pairs import PairTable
from heta_nb.explorer.table import ReportTable
from heta_nb.model import EvaluationReport

__all__ = ["ComparisonSource", "ReportSource", "RunSource", "Source", "StoreSource", "as_source"]


class Source:
    """The data behind an explorer.

    ``generation`` changes whenever the data does (an explorer's ``refresh()`` rebuilds its
    table then, keeping its filters and open case); ``table()`` builds the rows.
    """

    kind = "report"
    systems: tuple[str, ...] = ()

    @property
    def generation(self) -> Any:
        """A value that changes when the data changes."""
        return 0

    def table(self, *, benchmark: Any, system: str | None) -> ReportTable | PairTable | None:
        """The table to explore now (None: nothing chosen yet)."""
        raise NotImplementedError

    def fallback_html(self) -> str | None:
        """The static view a viewer without widgets shows instead (nbviewer, GitHub)."""
        return None

    def fallback_text(self, state: str) -> str:
        """The explorer's ``text/plain`` there: ``state`` (the explorer's repr) as a line, then what
        :meth:`static_text` says of the data (a report's or comparison's own text repr)."""
        line = state.removeprefix("<Explorer ").removesuffix(">")
        try:
            more = self.static_text()
        except Exception:  # noqa: BLE001 - the line alone still says what was there
            more = ""
        return f"Case explorer of {line} (interactive where Jupyter widgets run)" + (f"\n{more}" if more else "")

    def static_text(self) -> str:
        """The data as text, under the explorer's line ("": nothing more)."""
        return ""

    def choices(self) -> list[tuple[str, str]]:
        """``(key, label)`` of the reports one can pick (stores only)."""
        return []

    def choose(self, key: str) -> None:
        """Pick a report by key (stores only)."""
        raise ValueError("report: only a store's explorer picks reports")

    def watch(self, changed: Callable[[bool], None]) -> None:
        """Call ``changed(last)`` (from any thread) when the data may have changed; ``last``: it will not again.

        Only a growing source calls it (a running evaluation); the others never change by themselves.
        """

    def empty_note(self) -> str:
        """What the explorer says when there is no table, or a table of no rows ("": its default)."""
        return ""

    def pending_title(self) -> str:
        """The explorer's title while there is no table."""
        return "Nothing to explore yet"

    def note(self) -> str:
        """Said after the counts (a running evaluation: how far it is), starting with " · "; or ""."""
        return ""


class ReportSource(Source):
    """One report, or a function that returns the newest snapshot of a growing one.

    Args:
        report: the report, or a callable returning the current report.
        generation: for a callable, a callable whose value changes when the report grows.
    """

    def __init__(
        self, report: EvaluationReport | Callable[[], EvaluationReport], generation: Callable[[], Any] | None = None
    ) -> None:
        self._get = report if callable(report) and not isinstance(report, EvaluationReport) else (lambda: report)
        self._generation = generation

    @property
    def generation(self) -> Any:
        return self._generation() if self._generation is not None else 0

    @property
    def report(self) -> EvaluationReport:
        """The report as it is now."""
        report = self._get()
        if not isinstance(report, EvaluationReport):
            raise TypeError(f"explore: expected an EvaluationReport, got {type(report).__name__}")
        return report

    def table(self, *, benchmark: Any, system: str | None) -> ReportTable | None:
        return ReportTable(self.report, benchmark)

    def fallback_html(self) -> str | None:
        return self.report._repr_html_()

    def static_text(self) -> str:
        return _text_of(self.report)


class ComparisonSource(Source):
    """A comparison: the baseline against one other system at a time."""

    kind = "comparison"

    def __init__(self, comparison: Any) -> None:
        self.comparison = comparison
        self.systems = tuple(comparison.candidates)

    def table(self, *, benchmark: Any, system: str | None) -> PairTable:
        return PairTable(self.comparison, system or None, benchmark)

    def fallback_html(self) -> str | None:
        html: str | None = self.comparison._repr_html_()
        return html

    def static_text(self) -> str:
        return _text_of(self.comparison)


class StoreSource(Source):
    """A report store: pick a report (newest first), then explore it."""

    kind = "store"

    def __init__(self, store: Any) -> None:
        self.store = store
        self._chosen: str | None = None
        self._report: EvaluationReport | None = None
        summaries = sorted(store.summaries(), key=lambda s: (s.started_at, s.key), reverse=True)
        self._choices = [
            (s.key, f"{s.knowledge_base_name} / {s.report_id} · {s.cases:,} results · {s.started_at[:16]}")
            for s in summaries
        ]

    @property
    def generation(self) -> Any:
        return self._chosen

    def choices(self) -> list[tuple[str, str]]:
        return list(self._choices)

    def choose(self, key: str) -> None:
        if key not in {k for k, _ in self._choices}:
            raise ValueError(f"report: {key!r} is not in the store {self.store.location}")
        self._report = self.store.load_key(key)
        self._chosen = key

    @property
    def chosen(self) -> str | None:
        """The key of the report being explored, if any."""
        return self._chosen

    def table(self, *, benchmark: Any, system: str | None) -> ReportTable | None:
        return ReportTable(self._report, benchmark) if self._report is not None else None

    def pending_title(self) -> str:
        return "Report store: choose a report"

    def empty_note(self) -> str:
        if self._chosen is not None:
            return ""
        return "Choose a report above." if self._choices else "This store has no reports yet."

    def fallback_html(self) -> str | None:
        if self._report is not None:
            return self._report._repr_html_()
        from heta_nb.render.store import render_store_html

        return render_store_html(str(getattr(self.store, "location", self.store)), self._choices)

    def fallback_text(self, state: str) -> str:
        if self._report is not None:
            return super().fallback_text(state)
        where = f"Case explorer of the report store {getattr(self.store, 'location', self.store)}"
        if not self._choices:
            return f"{where}: no reports yet"
        shown = [f"  {label}  ({key})" for key, label in self._choices[:_LISTED]]
        more = len(self._choices) - len(shown)
        return "\n".join(
            [f"{where}: choose one of {plural(len(self._choices), 'report')}, newest first:", *shown]
            + ([f"  … and {more:,} more"] if more > 0 else [])
        )

    def static_text(self) -> str:
        return _text_of(self._report) if self._report is not None else ""


def _text_of(obj: Any) -> str:
    """An object's ``text/plain`` as a notebook shows it (a report's summary), else its repr."""
    bundle = obj._repr_mimebundle_(include=("text/plain",)) if hasattr(obj, "_repr_mimebundle_") else None
    text = bundle.get("text/plain") if isinstance(bundle, dict) else None
    return text if isinstance(text, str) and text else repr(obj)


_LISTED = 20
"""Reports a store explorer's text lists (its HTML lists more)."""

_LIVE_EVENTS = frozenset({"cases_finished", "run_finished"})


class RunSource(ReportSource):
    """A running evaluation (``heta_nb.start``'s handle): the results so far, then the final report.

    ``generation`` changes as cases finish and when the run ends (the explorer then shows
    the final report, a cancelled run's partial one included); :meth:`watch` hears of it
    from the run's events.
    """

    def __init__(self, run: Any) -> None:
        self.run = run
        self._failure = ""
        self._shown: dict[str, Any] = {}
        """``metadata.heta_nb`` of the report the table was last built from."""
        super().__init__(run.partial_report, generation=self._progress)

    def _progress(self) -> Any:
        state = self.run.state
        return (state.done, state.status, self.run.done())

    def _starting(self) -> bool:
        """Still loading its benchmark (a partial report would wait for it): no table yet."""
        return self.run.state.status == "pending" and not self.run.done()

    def table(self, *, benchmark: Any, system: str | None) -> ReportTable | None:
        if self._starting():
            return None
        try:
            report = self.report
        except Exception as exc:  # noqa: BLE001 - a run that stopped before its first query has no report
            self._failure = f"The run stopped before its first case: {type(exc).__name__}: {exc}"
            return None
        info = report.raw["metadata"].get("heta_nb")
        self._shown = info if isinstance(info, dict) else {}
        table = ReportTable(report, benchmark)
        table.title = f"{self._name()} · {report.benchmark.key}"
        return table

    def _name(self) -> str:
        """What the user knows the run by: the report id they gave, else the KB's name (not ``eval_…``)."""
        run = self.run
        return str(run.report_id if getattr(run, "report_id_given", True) else run.knowledge_base_name)

    def fallback_html(self) -> str | None:
        if not self._starting():
            try:
                return self.report._repr_html_()
            except Exception:  # noqa: BLE001 - see table()
                pass
        from heta_nb._util.static import line_html

        return line_html(f"Case explorer of {self.pending_title()}: {self.empty_note()}")

    def static_text(self) -> str:
        return "" if self._starting() else _text_of(self.report)

    def watch(self, changed: Callable[[bool], None]) -> None:
        def on_event(event: Any) -> None:
            if event.kind in _LIVE_EVENTS:
                changed(event.kind == "run_finished")

        self.run.subscribe(on_event)

    def pending_title(self) -> str:
        if getattr(self.run, "report_id_given", True):
            return f"Evaluation {self.run.report_id}: starting"
        return f"Evaluation of {self.run.knowledge_base_name}: starting"

    def note(self) -> str:
        shown = self._shown
        partial = shown.get("partial")
        if isinstance(partial, dict):
            return f" · results so far: {partial.get('done', 0):,} of {partial.get('total', 0):,}, the run goes on"
        return f" · final report ({shown['status']})" if isinstance(shown.get("status"), str) else ""

    def empty_note(self) -> str:
        if self._starting():
            return "The run is loading its benchmark: the table fills in as its cases finish."
        return self._failure or "No case has finished yet: the table fills in as the run goes on."


def as_source(obj: Any) -> Source:
    """The :class:`Source` of a report, comparison, store, running evaluation, Heta report, path or ``STORE:KB/ID``.

    Raises:
        TypeError: an object the explorer cannot explore (the message says what it can).
    """
    if isinstance(obj, Source):
        return obj
    if isinstance(obj, EvaluationReport):
        return ReportSource(obj)
    from heta_nb.comparison import Comparison
    from heta_nb.store import ReportStore

    if isinstance(obj, Comparison):
        return ComparisonSource(obj)
    if isinstance(obj, ReportStore):
        return StoreSource(obj)
    from heta_nb.runner.handle import EvaluationRun

    if isinstance(obj, EvaluationRun):
        return RunSource(obj)
    if isinstance(obj, str) or hasattr(obj, "__fspath__") or type(obj).__name__ == "EvaluationReport":
        from heta_nb.store.locate import resolve_report

        return ReportSource(resolve_report(obj))
    raise TypeError(
        f"explore: cannot explore a {type(obj).__name__}; give an EvaluationReport, a Comparison, a ReportStore, "
        "a running evaluation (heta_nb.start), a report.json path or STORE:KB/REPORT_ID"
    )
