"""Finding a report from what a user types: a path, a URL, or ``STORE:kb/report_id``.

Shared by the magics and the CLI, so both understand the same spellings:

* ``report.json``, ``path/to/folder`` (its ``report.json``), ``s3://bucket/r.json``;
* ``STORE:KB/REPORT_ID`` — a report in a store (a folder or fsspec URL) by names,
  e.g. ``demo-store:saltmarsh isles/small-chunks``;
* ``STORE:KB`` — the newest report of that knowledge base.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from heta_nb.model.io import load_report
from heta_nb.model.report import EvaluationReport
from heta_nb.store.report_store import ReportStore

__all__ = ["resolve_report", "split_store_reference"]


def split_store_reference(text: str) -> tuple[str, str, str | None] | None:
    """``(store, kb, report_id or None)`` for ``STORE:KB[/ID]``, else None.

    A plain path that exists is never taken for a store reference.
    """
    if os.path.exists(text):
        return None
    scheme, rest = "", text
    if "://" in text:
        scheme, rest = text.split("://", 1)
        scheme += "://"
    host = ""
    if scheme.lower() in ("http://", "https://"):  # host:port is not STORE:KB
        authority, slash, path = rest.partition("/")
        host, rest = authority + slash, path
    if ":" not in rest:
        return None
    store, _, names = rest.rpartition(":")
    store = host + store
    if not store or not names or (len(store) == 1 and store.isalpha()):  # C:\... on Windows
        return None
    if "/" in names:
        kb, _, last = names.rpartition("/")
        return scheme + store, kb, last or None
    return scheme + store, names, None


def resolve_report(source: Any, *, store: Any = None) -> EvaluationReport:
    """Load a report from a path, URL, store reference, or anything ``load_report`` takes.

    Args:
        source: see the module docstring; objects are passed to ``load_report``.
        store: with a store, ``source`` may also be ``KB/REPORT_ID`` or ``KB``.
    """
    if isinstance(source, (str, os.PathLike)) and not isinstance(source, Path) and store is not None:
        text = str(source)
        target = ReportStore(store)
        if "/" in text:
            kb, _, report_id = text.rpartition("/")
            return target.load(kb, report_id)
        return target.latest(text)
    if isinstance(source, str):
        reference = split_store_reference(source)
        if reference is not None:
            root, kb_name, wanted = reference
            store_at = ReportStore(root)
            return store_at.load(kb_name, wanted) if wanted else store_at.latest(kb_name)
    return load_report(source)
