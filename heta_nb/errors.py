"""The exceptions heta_nb raises on purpose.

Every error a user can cause with bad input is one of these, with a message that
names the source (file, URL or object) and the field, so nobody has to read a
traceback from deep inside the library.
"""

from __future__ import annotations

from collections.abc import Sequence

__all__ = [
    "BenchmarkFormatError",
    "HetaNbError",
    "HetaNbUserError",
    "HetaNbUserTypeError",
    "MissingDependencyError",
    "ReportExistsError",
    "ReportFormatError",
    "ReportInUseError",
    "ReportNotFoundError",
    "StoreError",
    "UnsafeNameError",
]


class HetaNbError(Exception):
    """Base class of every error heta_nb raises deliberately."""


class HetaNbUserError(HetaNbError, ValueError):
    """Bad input found before any work started: an unknown name, mode, metric or setting.

    Its message says what to change (``unknown evaluator 'recal@5'; did you mean
    'recall@5'?``), so after ``%load_ext heta_nb`` a notebook shows that one line and not
    the traceback (``%tb`` still shows it). A ``ValueError`` too, for code that catches those.
    """


class HetaNbUserTypeError(HetaNbUserError, TypeError):
    """A :class:`HetaNbUserError` for a value of the wrong type (also a ``TypeError``)."""


class ReportFormatError(HetaNbError, ValueError):
    """A report could not be read: invalid JSON, unknown schema or bad fields.

    Attributes:
        source: A short description of where the report came from (a path, URL, ...).
        problems: One line per problem found, each starting with its JSON path.
    """

    def __init__(self, source: str, problems: Sequence[str], *, more: bool = False) -> None:
        self.source = source
        self.problems = tuple(problems)
        lines = [f"{source}: {problem}" for problem in self.problems]
        if more:
            lines.append(f"{source}: (further problems not shown)")
        super().__init__("\n".join(lines) if lines else f"{source}: invalid report")


class BenchmarkFormatError(HetaNbError, ValueError):
    """A benchmark file could not be read; the message names the file, line and field."""


class UnsafeNameError(HetaNbError, ValueError):
    """A knowledge-base name or report id cannot be used as a store key."""


class StoreError(HetaNbError):
    """A report store operation failed."""


class ReportNotFoundError(StoreError, FileNotFoundError):
    """No report exists at the requested path, URL or store key."""


class ReportExistsError(StoreError, FileExistsError):
    """A different report is already stored under the same key."""


class ReportInUseError(StoreError):
    """Another run is writing this report right now (it holds the lock on its checkpoint)."""


class MissingDependencyError(HetaNbError, ImportError):
    """An optional dependency is needed; the message names the pip extra."""
