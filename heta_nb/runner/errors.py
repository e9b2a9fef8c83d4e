"""The runner's two errors: a bad setting (before any work) and a run that failed after it started."""

from __future__ import annotations

from heta_nb.errors import HetaNbError, HetaNbUserError
from heta_nb.model.report import EvaluationReport

__all__ = ["RunError", "RunFailedError"]


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
