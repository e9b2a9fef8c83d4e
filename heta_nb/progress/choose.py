"""Choosing a run's progress display from ``progress=``: widget, console line, a callable, or none."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from heta_nb.runner.events import Event

if TYPE_CHECKING:  # pragma: no cover
    from heta_nb.runner.handle import EvaluationRun

__all__ = ["Progress", "in_notebook", "progress_subscriber"]

Progress = bool | str | Callable[[Event], None]
"""What ``progress=`` takes."""


def in_notebook() -> bool:
    """Whether this runs in a Jupyter kernel (an IPython ZMQ shell)."""
    try:
        from IPython import get_ipython
    except ImportError:
        return False
    shell = get_ipython()
    return shell is not None and type(shell).__name__ == "ZMQInteractiveShell"


def progress_subscriber(
    progress: Progress,
    run: EvaluationRun | None,
    *,
    blocking: bool = False,
    cancel: Callable[[], None] | None = None,
    show_report: bool = True,
) -> Callable[[Event], None] | None:
    """The display for ``progress``: the widget in a notebook, the console line elsewhere, or the callable itself.

    Args:
        progress: what ``progress=`` was given.
        run: the run the widget's Cancel button stops and whose report it shows.
        blocking: the caller blocks until the run ends (``evaluate()``): the widget shows
            its Cancel button only where the wait can answer it (see
            :mod:`heta_nb.progress.kernel_comms`), else how to interrupt.
        cancel: what the Cancel button calls instead of ``run.cancel``.
        show_report: the widget shows the final report when the run ends.
    """
    if progress is False or progress is None:
        return None
    if callable(progress):
        return progress
    choice = progress if isinstance(progress, str) else "auto"
    if choice == "auto":
        choice = "widget" if in_notebook() else "console"
    if choice == "widget":
        from heta_nb.progress.kernel_comms import comm_pump_available
        from heta_nb.progress.widget import RunWidget

        cancellable = not blocking or comm_pump_available()
        widget = RunWidget(run=run, cancel=cancel, cancellable=cancellable, show_report=show_report)
        widget.display()
        return widget
    if choice == "console":
        from heta_nb.progress.console import ConsoleProgress

        return ConsoleProgress()
    raise ValueError(f"progress must be True, False, 'widget', 'console' or a callable, got {progress!r}")
