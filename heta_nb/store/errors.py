"""The store's own exceptions and warning (the shared ones are in :mod:`heta_nb.errors`)."""

from __future__ import annotations

from heta_nb.errors import ReportNotFoundError, StoreError

__all__ = ["ReportStoreWarning", "StoreNotADirectoryError", "StoreNotFoundError"]


class StoreNotFoundError(ReportNotFoundError):
    """The store folder does not exist (a store is created by saving to it)."""


class StoreNotADirectoryError(StoreError, NotADirectoryError):
    """The store root is a file (or lies under one), not a folder."""


class ReportStoreWarning(UserWarning):
    """A listing left out reports it could not read, or found temporary files of saves killed mid-write."""
