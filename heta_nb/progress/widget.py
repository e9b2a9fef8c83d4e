"""The live runner widget: an ipywidgets view of a run's events.

``RunWidget`` is an event subscriber (the runner knows nothing about it). Events
arrive on the run's thread; each one is folded into a :class:`RunState` with the
pure reducer, and the widgets are updated by one ``flush()`` that applies every
trait change inside ``hold_sync()``, throttled to at most ``1 / min_interval``
flushes per second, with a forced flush when the run ends so the final state is
never lost. When the run ends the bar turns green (red when cancelled or failed)
and the final report is shown as ordinary output (a ``display_id`` update), so a
saved notebook shows the result even where widgets do not render; the widget's own output
carries a static line (``text/plain`` and ``text/html``: what the run did, sent again when it
starts and ends) instead of the widget's repr. "Explore results so
far" opens the case explorer on the live run below the bar (it refreshes as cases finish
and becomes the final report's explorer when the run ends).
"""

from __future__ import annotations

import threading
import time
import weakref
from collections.abc import Callable
from typing import Any

from heta_nb._util.throttle import Scheduler, Throttle, thread_timer
from heta_nb.runner.events import Event
from heta_nb.runner.state import RunState, reduce

__all__ = ["INTERRUPT_HINT", "RunWidget"]

INTERRUPT_HINT = (
    '<span class="heta-hint">To stop: interrupt the kernel (&#9632; in the toolbar, or I, I); '
    "the finished cases are kept as a partial report.</span>"
)
"""Shown instead of the Cancel button where a click could not reach the blocked kernel."""

_TERMINAL = frozenset({"run_finished"})
_PROMPT = frozenset({"run_started", "build_started", "build_finished", "unit_started", "warning"})


class RunWidget:
    """Live progress of one evaluation: bar, counts, rate, ETA, errors, running means,
    KB build steps, a Cancel button and "Explore results so far" (the case explorer).

    Args:
        run: the :class:`~heta_nb.runner.handle.EvaluationRun` (for the Cancel button
            and the final report); None for a view fed by hand (tests, replays).
        min_interval: seconds between widget updates (0.1: at most 10 per second).
        clock: time source for the throttle (tests inject a fake one).
        schedule: how trailing updates are scheduled (tests record them).
        show_report: show the final report as ordinary output when the run ends.
        cancel: what the Cancel button calls (default: ``run.cancel``).
        cancellable: show the Cancel button; False where a click could not reach the
            kernel (a blocking call it cannot pump messages for): the widget then says
            how to interrupt instead.
    """

    def __init__(
        self,
        run: Any = None,
        *,
        min_interval: float = 0.1,
        clock: Callable[[], float] = time.monotonic,
        schedule: Scheduler = thread_timer,
        show_report: bool = True,
        cancel: Callable[[], None] | None = None,
        cancellable: bool = True,
    ) -> None:
        import ipywidgets as w

        self._run = weakref.ref(run) if run is not None else None
        self._cancel = cancel
        self.cancellable = cancellable
        self._lock = threading.Lock()
        # one flush at a time (the run's thread and the throttle's timer thread both flush),
        # and a flush that finds the run ended while it drew draws again: a trailing flush
        # that read an older state can never leave it on screen over the final one
        self._flush_lock = threading.RLock()
        self.state = RunState()
        self.flushes = 0
        self.show_report = show_report
        self._report_handle: Any = None
        self._widget_handle: Any = None
        self._finished_shown = False
        self.title = w.HTML(value="")
        self.bar = w.IntProgress(value=0, min=0, max=1, bar_style="info", layout=w.Layout(width="100%", height="22px"))
        self.stats = w.HTML(value="")
        self.build = w.HTML(value="")
        self.means = w.HTML(value="")
        self.errors = w.HTML(value="")
        self.cancel_button = w.Button(
            description="Cancel",
            icon="stop",
            button_style="warning",
            tooltip="Stop the run; finished cases are kept (partial report)",
        )
        self.cancel_button.on_click(self._on_cancel)
        self.explore_button = w.Button(
            description="Explore results so far",
            icon="table",
            tooltip="Open the case explorer on the cases finished so far (it follows the run)",
            layout=w.Layout(width="auto", min_width="max-content", flex="0 0 auto"),
        )
        self.explore_button.on_click(self._on_explore)
        if run is None:
            self.explore_button.layout.display = "none"
        self.explorer: Any = None
        """The explorer the button opened (``heta_nb.explore(run)``), once it has."""
        self.explorer_box = w.VBox([], layout=w.Layout(width="100%"))
        self.interrupt_hint = w.HTML(value=INTERRUPT_HINT if not cancellable else "")
        if not cancellable:
            self.cancel_button.layout.display = "none"
        for widget, hook in (
            (self.title, "heta-title"),
            (self.bar, "heta-progress-main"),
            (self.stats, "heta-counter"),
            (self.build, "heta-build"),
            (self.means, "heta-means"),
            (self.errors, "heta-errors"),
            (self.cancel_button, "heta-cancel"),
            (self.explore_button, "heta-explore"),
            (self.interrupt_hint, "heta-interrupt-hint"),
        ):
            widget.add_class(hook)
        header = w.HBox(
            [self.bar, self.cancel_button, self.explore_button, self.interrupt_hint],
            layout=w.Layout(align_items="center", width="100%"),
        )
        self.box = w.VBox(
            [self.title, header, self.stats, self.build, self.means, self.errors, self.explorer_box],
            layout=w.Layout(width="100%", max_width="1100px"),
        )
        self.box.add_class("heta-run")
        self._throttle = Throttle(self.flush, min_interval=min_interval, clock=clock, schedule=schedule)

    # -- events ---------------------------------------------------------------------
    def __call__(self, event: Event) -> None:
        with self._lock:
            self.state = reduce(self.state, event)
        kind = event.kind
        self._throttle.request(force=kind in _TERMINAL or kind in _PROMPT)
        if kind == "run_started":
            self._update_static()  # the static line names the KB and the benchmark from now on
        if kind in _TERMINAL:
            self._finish()

    def _on_cancel(self, _button: Any = None) -> None:
        run = self._run() if self._run is not None else None
        self.cancel_button.disabled = True
        self.cancel_button.description = "Cancelling…"
        if self._cancel is not None:
            self._cancel()
        elif run is not None:
            run.cancel()

    def _on_explore(self, _button: Any = None) -> None:
        """Open the explorer on the run below the bar; later clicks hide and show it again."""
        run = self._run() if self._run is not None else None
        if self.explorer is not None:
            shown = self.explorer_box.layout.display != "none"
            self.explorer_box.layout.display = "none" if shown else None
            self.explore_button.description = "Show the explorer" if shown else "Hide the explorer"
            return
        if run is None:
            self.explore_button.disabled = True
            self.explore_button.description = "The run is gone"
            return
        from heta_nb.explorer import explore

        self.explorer = explore(run)
        self.explorer_box.children = (self.explorer.widget,)
        self.explore_button.description = "Hide the explorer"

    def comm_ids(self) -> frozenset[str]:
        """The comm ids of the widget's parts (what a blocking wait must keep answering)."""
        parts = (
            self.box,
            self.title,
            self.bar,
            self.stats,
            self.build,
            self.means,
            self.errors,
            self.cancel_button,
            self.explore_button,
        )
        return frozenset(str(part.model_id) for part in parts if part.model_id)

    # -- drawing --------------------------------------------------------------------
    def flush(self) -> None:
        """Apply the newest state to the widgets (one batched message per widget)."""
        with self._flush_lock:
            while True:
                with self._lock:
                    state = self.state
                self._draw(state)
                with self._lock:
                    newer = self.state
                if newer is state or not newer.finished:
                    return  # a newer running state comes with its own (throttled) flush

    def _final_summaries(self, state: RunState) -> list[Any]:
        """The finished run's report summaries (the numbers every view shows), or [] while it runs."""
        if not state.finished or self._run is None:
            return []
        report = getattr(getattr(self._run(), "_engine", None), "report", None)
        if report is None:
            return []
        try:
            return list(report.metric_summaries())
        except Exception:  # noqa: BLE001 - the widget keeps its running means
            return []

    def _draw(self, state: RunState) -> None:
        from heta_nb.render import render_widget_parts

        parts = render_widget_parts(state, self._final_summaries(state))
        total = max(1, state.total)
        bar_style = {"complete": "success", "cancelled": "danger", "failed": "danger"}.get(state.status, "info")
        with self.bar.hold_sync():
            self.bar.max = total
            # a complete run of no cases is a full bar, not an empty one
            self.bar.value = total if state.status == "complete" and not state.total else min(state.done, total)
            self.bar.bar_style = bar_style
        for widget, name in (
            (self.title, "title"),
            (self.stats, "stats"),
            (self.build, "build"),
            (self.means, "means"),
            (self.errors, "errors"),
        ):
            value = parts[name]
            if widget.value != value:
                with widget.hold_sync():
                    widget.value = value
        if state.finished and self.interrupt_hint.value:
            self.interrupt_hint.value = ""
        if state.finished:
            with self.cancel_button.hold_sync():
                self.cancel_button.disabled = True
                self.cancel_button.description = state.status.capitalize()
                self.cancel_button.button_style = "success" if state.status == "complete" else "danger"
            if self.explorer is None and self.explore_button.description != "Explore the report":
                self.explore_button.description = "Explore the report"
        self.flushes += 1

    def _finish(self) -> None:
        self._update_static()
        if self._finished_shown or not self.show_report or self._report_handle is None:
            return
        run = self._run() if self._run is not None else None
        report = getattr(getattr(run, "_engine", None), "report", None)
        self._finished_shown = True
        try:
            if report is not None:
                self._report_handle.update(report)
            else:
                from heta_nb._util.static import Static

                state = self.state
                said = f": {state.error}" if state.error else ""
                self._report_handle.update(Static(f"heta_nb: the run ended ({state.status}) without a report{said}"))
        except Exception:  # noqa: BLE001 - the widget already shows the final state
            pass

    def static_text(self) -> str:
        """The widget's ``text/plain`` (and, as one line, its ``text/html``) where widgets do not run."""
        from heta_nb._util.text import compact_duration
        from heta_nb.progress.console import format_state_line

        with self._lock:
            state = self.state
        bench = state.benchmark.get("name")
        who = "heta_nb evaluation"
        if state.knowledge_base_name:
            who += f" of {state.knowledge_base_name!r}"
        if bench:
            split = state.benchmark.get("split")
            who += f" on {bench}" + (f" ({split})" if split else "")
        if not state.finished:
            now = "starting" if state.status == "pending" else format_state_line(state)
            return f"{who}: {now} (the live progress is a Jupyter widget; this is a static copy)"
        line = f"{who}: {state.done:,}/{state.total:,} results, {state.status}, {state.errors:,} errors"
        if state.started_t is not None:
            line += f", {compact_duration(state.elapsed_s)}"
        if state.error:
            line += f" ({state.error})"
        run = self._run() if self._run is not None else None
        if self.show_report and getattr(getattr(run, "_engine", None), "report", None) is not None:
            line += " — the report is below"
        return line

    def _update_static(self) -> None:
        """Send the widget's output again with its static line as it is now (the view is kept)."""
        if self._widget_handle is None:
            return
        try:
            self._widget_handle.update(self)
        except Exception:  # noqa: BLE001 - the live widget still shows the state
            pass

    # -- notebook ---------------------------------------------------------------------
    def display(self) -> None:
        """Show the widget (with its static line for viewers without widgets), plus a static
        placeholder that becomes the final report."""
        from IPython.display import display

        from heta_nb._util.static import Static

        self._widget_handle = display(self, display_id=True)
        if self.show_report:
            self._report_handle = display(
                Static(
                    "heta_nb: the report appears here when the run ends.",
                    '<p class="heta-pending"><em>heta_nb: the report appears here when the run ends.</em></p>',
                ),
                display_id=True,
            )

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> Any:
        """The widget's view, with :meth:`static_text` as its ``text/plain`` and ``text/html``."""
        from heta_nb._util.static import WithFallback

        return WithFallback(self.box, self.static_text)._repr_mimebundle_()
