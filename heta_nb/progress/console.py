"""Progress in a terminal: one line, rewritten at most every ``min_interval`` seconds.

Used automatically outside notebooks (quiet with ``progress=False``). It folds the
runner's events with the same pure reducer as the notebook widget. It does not print the
run's warnings: the :mod:`warnings` module does (:class:`~heta_nb.runner.events.HetaRunWarning`),
whatever the display.
"""

from __future__ import annotations

import sys
import threading
import time
from collections.abc import Callable
from typing import IO

from heta_nb._util.text import compact_duration
from heta_nb.runner.events import BuildFinished, BuildStep, Event, RunWarning
from heta_nb.runner.state import RunState, reduce

__all__ = ["ConsoleProgress", "format_state_line"]


def format_state_line(state: RunState) -> str:
    """One status line: done/total, percent, rate, ETA, errors, evaluator errors (scores whose
    evaluator raised, when there are some), and the first metric's running mean of the scored
    values per mode (the report's convention; "n/a" where a mode cannot produce it)."""
    percent = 100 * state.fraction
    rate = state.rate
    parts = [
        f"{state.done:,}/{state.total:,} ({percent:.0f}%)",
        f"{rate:.1f}/s" if rate else "-/s",
        f"ETA {compact_duration(state.eta_s)}",
        f"errors {state.errors}",
    ]
    if state.build_status == "running":
        running = [name for name, status in state.build_steps if status == "running"]
        parts.insert(0, f"building {running[0] if running else '...'}")
    failed = sum(sum(p.evaluator_errors.values()) for p in state.per_mode.values())
    if failed:
        parts.append(f"evaluator errors {failed}")
    if state.modes and state.metrics:
        metric = state.metrics[0]
        means = []
        for mode in state.modes:
            if state.not_applicable(mode, metric):
                means.append(f"{mode} n/a")
            elif (value := state.mean_scored(mode, metric)) is not None:
                means.append(f"{mode} {value:.3f}")
        if means:
            parts.append(f"{metric} (mean of scored): " + ", ".join(means[:3]))
    return " | ".join(parts)


class ConsoleProgress:
    """An event subscriber that prints progress to a terminal (stderr by default).

    Args:
        stream: where to write.
        min_interval: seconds between redraws (the final state is always printed).
        clock: time source (tests inject a fake one).
    """

    def __init__(
        self,
        stream: IO[str] | None = None,
        *,
        min_interval: float = 0.25,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.stream = stream or sys.stderr
        self.min_interval = min_interval
        self.clock = clock
        self.state = RunState()
        self.redraws = 0
        self._last = float("-inf")
        self._lock = threading.Lock()
        self._tty = bool(getattr(self.stream, "isatty", lambda: False)())
        if not self._tty:  # a log file or CI output: fewer, whole lines
            self.min_interval = max(min_interval, 2.0)
        self._width = 0
        self._logged: tuple[int, int] | None = None

    def _progress_key(self) -> tuple[int, int]:
        return (self.state.done, self.state.errors)

    def __call__(self, event: Event) -> None:
        with self._lock:
            self.state = reduce(self.state, event)
            kind = event.kind
            if kind == "run_started":
                bench = self.state.benchmark
                self._print(
                    f"heta_nb: evaluating {self.state.knowledge_base_name!r} on {bench.get('name')} "
                    f"({bench.get('split')}), modes {', '.join(self.state.modes)}: {self.state.total:,} results"
                    + (f", {self.state.resumed:,} resumed" if self.state.resumed else "")
                )
            elif isinstance(event, RunWarning):
                # printed by the warnings module (a HetaRunWarning, just after this event), not here:
                # end the progress line for it, and redraw with the next event
                self._end_line()
                return
            elif isinstance(event, BuildStep) and not self._tty and event.status == "running":
                steps = len(self.state.build_steps)
                self._print(f"heta_nb: building step {event.index + 1}/{steps}: {event.name}")
            elif isinstance(event, BuildFinished):
                note = f"; {event.note}" if event.note else ""
                self._print(
                    f"heta_nb: built {event.knowledge_base_name!r} ({event.status}, {event.seconds:.1f} s{note})"
                )
            elif kind == "run_finished":
                if self.state.started_t is not None and (self._tty or self._logged != self._progress_key()):
                    # the final figures, unless the run never started (a "0/0 (100%)" line
                    # would be false) or a log's last line already shows them
                    self._redraw(force=True)
                self._end_line()
                self._print(
                    f"heta_nb: {self.state.status}: {self.state.done:,}/{self.state.total:,} results, "
                    f"{self.state.errors} errors, {compact_duration(self.state.elapsed_s)}"
                    + (f" ({self.state.error})" if self.state.error else "")
                )
                return
            if self.state.status == "running" and (self._tty or self.state.done > self.state.resumed):
                # a log gets progress lines once results arrive; a terminal line shows the build too
                self._redraw(force=self._tty and kind in ("build_step", "unit_started"))

    def _redraw(self, *, force: bool = False) -> None:
        now = self.clock()
        if not force and now - self._last < self.min_interval:
            return
        self._last = now
        self.redraws += 1
        line = format_state_line(self.state)
        self._logged = self._progress_key()
        if self._tty:
            padding = " " * max(0, self._width - len(line))
            self.stream.write("\r" + line + padding)
            self._width = len(line)
        else:
            self.stream.write(line + "\n")
        self.stream.flush()

    def _end_line(self) -> None:
        if self._tty and self._width:
            self.stream.write("\n")
            self._width = 0

    def _print(self, text: str) -> None:
        self._end_line()
        self.stream.write(text + "\n")
        self.stream.flush()
