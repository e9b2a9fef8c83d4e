"""A sweep's progress: a live table in a notebook, lines in a terminal, or any callable.

Both views take each new :class:`~heta_nb.sweeps.status.SweepState` (from any thread).
The widget redraws at most ``1 / min_interval`` times a second (always the final state,
which then stays as ordinary output, readable where widgets are not; the widget's own output
says in one line where the sweep is, never the widget's repr); the console prints
one line when a pair changes phase and a summary line at most every ``every`` seconds.
"""

from __future__ import annotations

import sys
import threading
import time
from collections.abc import Callable
from typing import IO, Any

from heta_nb._util.text import compact_duration
from heta_nb._util.throttle import Throttle
from heta_nb.sweeps.status import SweepState

__all__ = ["SweepConsole", "SweepProgress", "SweepWidget", "render_sweep_html", "sweep_view"]

SweepProgress = bool | str | Callable[[SweepState], None]
"""What ``progress=`` takes: True (widget in a notebook, lines elsewhere), False, ``"widget"``,
``"console"``, or a callable receiving each state."""


def render_sweep_html(state: SweepState) -> str:
    """The static HTML of a sweep's state (scoped CSS, no scripts, every name escaped)."""
    from heta_nb.render.context.sweep import sweep_context
    from heta_nb.render.env import environment

    return environment().get_template("sweep.html.j2").render(ctx=sweep_context(state))


class SweepConsole:
    """Lines in a terminal: one per phase change of a pair, and a periodic summary.

    Args:
        stream: where to write (stderr by default).
        every: seconds between summary lines while pairs run.
        clock: time source (tests inject one).
    """

    def __init__(
        self, stream: IO[str] | None = None, *, every: float = 5.0, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self.stream = stream or sys.stderr
        self.every = every
        self.clock = clock
        self._phases: dict[int, str] = {}
        self._last_summary = clock()
        self._lock = threading.Lock()
        self._done = False

    def __call__(self, state: SweepState) -> None:
        lines = []
        with self._lock:
            if self._done:
                return
            total = len(state.pairs)
            for pair in state.pairs:
                if self._phases.get(pair.index) == pair.phase or pair.phase == "queued":
                    continue
                self._phases[pair.index] = pair.phase
                what = f"[{pair.index + 1}/{total}] {pair.recipe} × {pair.benchmark}: {pair.phase}"
                if pair.phase in ("done", "cancelled", "failed"):
                    what += f" in {compact_duration(pair.elapsed(state.now))}"
                    if pair.total:
                        what += f" ({pair.done:,}/{pair.total:,} results, {pair.errors:,} errors)"
                if pair.message:
                    what += f": {pair.message}"
                lines.append(what)
            now = self.clock()
            if state.finished:
                self._done = True
                lines.append(self.summary(state))
            elif now - self._last_summary >= self.every:
                self._last_summary = now
                lines.append(self.summary(state))
        for line in lines:
            print(line, file=self.stream, flush=True)

    @staticmethod
    def summary(state: SweepState) -> str:
        """``sweep: 3/8 finished (2 running, 3 queued) · 2 processes · elapsed 12s · ETA 20s``."""
        finished = sum(1 for p in state.pairs if p.is_finished)
        parts = [f"sweep: {finished}/{len(state.pairs)} finished"]
        busy = [f"{n} {phase}" for phase in ("building", "running", "queued", "failed") if (n := state.count(phase))]
        if busy:
            parts[0] += f" ({', '.join(busy)})"
        parts += [state.executor, f"elapsed {compact_duration(state.elapsed_s)}"]
        if not state.finished:
            parts.append(f"ETA {compact_duration(state.eta_s)}")
        return " · ".join(parts)


class SweepWidget:
    """The live table of a sweep in a notebook (an ``ipywidgets.HTML``), throttled.

    Args:
        min_interval: seconds between redraws (0.1: at most 10 a second).
        clock: time source for the throttle (tests inject one).
    """

    def __init__(self, *, min_interval: float = 0.1, clock: Callable[[], float] = time.monotonic) -> None:
        import ipywidgets as w

        self.html = w.HTML(value="")
        self.html.add_class("heta-sweep-widget")
        self.state: SweepState | None = None
        self.flushes = 0
        self._lock = threading.Lock()
        self._flush_lock = threading.Lock()
        self._handle: Any = None
        self._view: Any = None
        self._throttle = Throttle(self.flush, min_interval=min_interval, clock=clock)

    def __call__(self, state: SweepState) -> None:
        with self._lock:
            self.state = state
        self._throttle.request(force=state.finished)

    def flush(self) -> None:
        """Draw the newest state (and, once finished, leave it as ordinary output)."""
        with self._flush_lock:
            with self._lock:
                state = self.state
            if state is None:
                return
            html = render_sweep_html(state)
            if self.html.value != html:
                self.html.value = html
            self.flushes += 1
            if state.finished and self._handle is not None:
                from heta_nb._util.static import Static

                try:
                    self._handle.update(Static(SweepConsole.summary(state), html))
                    if self._view is not None:  # its static line now points at the table
                        self._view.update(self)
                    self.html.layout.display = "none"
                except Exception:  # noqa: BLE001 - the widget already shows the final state
                    pass

    def static_text(self) -> str:
        """The widget's ``text/plain`` (and, as one line, its ``text/html``) where widgets do not run."""
        with self._lock:
            state = self.state
        if state is None:
            return "sweep: starting (the live table is a Jupyter widget; this is a static copy)"
        if state.finished:
            return SweepConsole.summary(state) + " — the table is below"
        return SweepConsole.summary(state) + " (the live table is a Jupyter widget; this is a static copy)"

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> Any:
        """The widget's view, with :meth:`static_text` as its ``text/plain`` and ``text/html``."""
        from heta_nb._util.static import WithFallback

        return WithFallback(self.html, self.static_text)._repr_mimebundle_()

    def display(self) -> None:
        """Show the widget (with its static line for viewers without widgets), plus a static
        placeholder that becomes the final table."""
        from IPython.display import display

        from heta_nb._util.static import Static

        self._view = display(self, display_id=True)
        self._handle = display(Static("sweep: the final table appears here when the sweep ends.", ""), display_id=True)


def sweep_view(progress: SweepProgress) -> Callable[[SweepState], None] | None:
    """The view ``progress=`` asks for (shown already when it is the widget)."""
    if progress is False or progress is None:
        return None
    if callable(progress):
        return progress
    choice = progress if isinstance(progress, str) else "auto"
    if choice == "auto":
        from heta_nb.progress.choose import in_notebook

        choice = "widget" if in_notebook() else "console"
    if choice == "widget":
        widget = SweepWidget()
        widget.display()
        return widget
    if choice == "console":
        return SweepConsole()
    raise ValueError(f"progress must be True, False, 'widget', 'console' or a callable, got {progress!r}")
