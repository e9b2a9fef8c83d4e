"""Where reports live: Heta's object-store layout, on disk, fsspec or a Heta ObjectStore.

Start at :class:`ReportStore` (its docstring explains the layout and the safety rules).
"""

from __future__ import annotations

from heta_nb.store.backend import Backend, Entry
from heta_nb.store.errors import ReportStoreWarning, StoreNotADirectoryError, StoreNotFoundError
from heta_nb.store.local import LocalBackend
from heta_nb.store.locate import resolve_report, split_store_reference
from heta_nb.store.names import (
    MAX_NAME_BYTES,
    MAX_NAME_LENGTH,
    REPORT_FILE,
    SUMMARY_FILE,
    heta_slug,
    report_key,
    report_prefix,
    safe_slug,
    windows_name_problem,
)
from heta_nb.store.report_store import ReportStore
from heta_nb.store.summary import ReportSummary

__all__ = [
    "MAX_NAME_BYTES",
    "MAX_NAME_LENGTH",
    "REPORT_FILE",
    "SUMMARY_FILE",
    "Backend",
    "Entry",
    "LocalBackend",
    "ReportStore",
    "ReportStoreWarning",
    "ReportSummary",
    "StoreNotADirectoryError",
    "StoreNotFoundError",
    "heta_slug",
    "report_key",
    "report_prefix",
    "resolve_report",
    "safe_slug",
    "split_store_reference",
    "windows_name_problem",
]
