"""``InteractiveRun``: a run whose blocking waits keep its live widget answering (Cancel works)."""

from __future__ import annotations

import time
from collections.abc import Iterable

from heta_nb.model.report import EvaluationReport
from heta_nb.progress.kernel_comms import comm_pump
from heta_nb.runner.handle import EvaluationRun

__all__ = ["POLL_S", "InteractiveRun"]

POLL_S = 0.05
"""Longest time a click on the widget waits for a blocked kernel to handle it."""


class InteractiveRun(EvaluationRun):
    """An :class:`~heta_nb.runner.handle.EvaluationRun` whose :meth:`result` keeps its widget live.

    In a notebook, ``result()`` (and so ``heta_nb.evaluate()``) blocks the kernel's only
    shell thread; a click on the widget's Cancel button would wait in the kernel's queue
    until the run ended. While it waits, this run handles its widget's messages every
    :data:`POLL_S` seconds (:mod:`heta_nb.progress.kernel_comms`), so Cancel stops the run
    and the partial report comes back. Everywhere else it is an ``EvaluationRun``.
    """

    _comm_ids: frozenset[str] = frozenset()

    def answer_comms(self, comm_ids: Iterable[str]) -> None:
        """Handle these comms' messages (a widget's) while :meth:`result` waits."""
        self._comm_ids = self._comm_ids | frozenset(comm_ids)

    def result(self, timeout: float | None = None) -> EvaluationReport:
        """Wait for the report, as :meth:`EvaluationRun.result`, answering the widget meanwhile."""
        pump = comm_pump(self._comm_ids) if self._comm_ids and not self.done() else None
        if pump is None:
            return super().result(timeout)
        deadline = None if timeout is None else time.monotonic() + timeout
        try:
            with pump:
                while True:
                    pump.pump()
                    wait = POLL_S if deadline is None else min(POLL_S, deadline - time.monotonic())
                    try:
                        return super().result(max(wait, 0.0))
                    except TimeoutError:
                        if self.done():
                            raise  # the run's own TimeoutError
                        if deadline is not None and time.monotonic() >= deadline:
                            message = f"evaluation {self.report_id!r} still running after {timeout} s"
                            raise TimeoutError(message) from None
        except KeyboardInterrupt:  # Ctrl-C between two waits: as in EvaluationRun.result
            self.cancel()
            return super().result(None)
