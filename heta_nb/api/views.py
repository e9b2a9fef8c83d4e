"""How an entry point shows its run: the progress display and ``on_event`` (``ViewOptions``)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from heta_nb.api.waiting import InteractiveRun
from heta_nb.progress.choose import Progress, progress_subscriber
from heta_nb.progress.widget import RunWidget
from heta_nb.runner.config import RunConfig
from heta_nb.runner.events import Event
from heta_nb.runner.handle import EvaluationRun

__all__ = ["ViewOptions", "start_run", "view_subscribers"]


@dataclass(frozen=True, kw_only=True)
class ViewOptions:
    """How a run is shown while it runs (not a setting of the run: its report does not record them)."""

    progress: Progress = True
    """True (default: widget in notebooks, console elsewhere), False,
    ``"widget"``, ``"console"`` or a callable receiving each event."""
    on_event: Callable[[Event], None] | None = None
    """an extra callable receiving each event."""
    record_events: bool = False
    """also keep every event in ``run.events`` (``start`` only)."""


def view_subscribers(
    views: ViewOptions,
    run: EvaluationRun | None,
    *,
    blocking: bool = False,
    cancel: Callable[[], None] | None = None,
    show_report: bool = True,
) -> list[Callable[[Event], None]]:
    """The views' event subscribers: the progress display, then ``on_event``.

    ``blocking``, ``cancel`` and ``show_report`` go to the progress display
    (:func:`~heta_nb.progress.choose.progress_subscriber`).
    """
    subscribers = []
    display = progress_subscriber(views.progress, run, blocking=blocking, cancel=cancel, show_report=show_report)
    if display is not None:
        subscribers.append(display)
    if views.on_event is not None:
        subscribers.append(views.on_event)
    return subscribers


def start_run(config: RunConfig, views: ViewOptions, *, blocking: bool = False) -> EvaluationRun:
    """The run of ``config`` on its own thread, shown as ``views`` say.

    Its ``result()`` keeps the live widget's Cancel button working while it blocks
    (:class:`~heta_nb.api.waiting.InteractiveRun`); ``blocking`` says the caller waits at once.
    """
    run = InteractiveRun(config, record_events=views.record_events)
    for subscriber in view_subscribers(views, run, blocking=blocking):
        run.subscribe(subscriber)
        if isinstance(subscriber, RunWidget):
            run.answer_comms(subscriber.comm_ids())
    return run.start()
