"""The runner's two errors, a bad setting (before any work) and a run that failed after it started,
and the carrier of what user code raised that is not an ``Exception``."""

from __future__ import annotations

from heta_nb.errors import HetaNbError, HetaNbUserError
from heta_nb.model.report import EvaluationReport

__all__ = ["ExitRaised", "RunError", "RunFailedError"]


class RunError(HetaNbUserError):
    """The run's configuration is invalid (raised before any query): a user error, shown as one
    line in a notebook after ``%load_ext heta_nb`` (a ``ValueError`` and a ``HetaNbError`` too)."""


class RunFailedError(HetaNbError, RuntimeError):
    """The run stopped on an error after it started; ``report`` holds what finished.

    The partial report is also saved in the store (status ``failed``) with its
    checkpoint, so ``resume=True`` can finish it once the cause is fixed.
    """

    def __init__(self, message: str, report: EvaluationReport) -> None:
        super().__init__(message)
        self.report = report


class ExitRaised(Exception):  # noqa: N818 - it carries an exit, it is not one
    """A ``BaseException`` that is not an ``Exception`` (``KeyboardInterrupt``, ``SystemExit``,
    ``GeneratorExit``, gevent's ``Timeout``, trio's ``Cancelled``, pytest's ``Exit``...) raised by KB
    (or evaluator) code that ran where it must not escape as itself (a pool thread, a task of its
    own: see :mod:`heta_nb.runner.user_calls`), carried to the case runner, which records
    ``original``. One raised on a pool thread (``in_thread``) is always the callee's: Python runs
    the user's Ctrl-C on the main thread.
    """

    def __init__(self, original: BaseException, *, in_thread: bool = False) -> None:
        super().__init__(f"{type(original).__name__}: {original}")
        self.original = original
        self.in_thread = in_thread
