"""Finding a report from what a user types: a path, a URL, or ``STORE:kb/report_id``.

Shared by the magics and the CLI, so both understand the same spellings:

* ``report.json``, ``path/to/folder`` (its ``report.json``), ``s3://bucket/r.json``;
* ``STORE:KB/REPORT_ID`` — a report in a store (a folder or fsspec URL) by names,
  e.g. ``demo-store:saltmarsh isles/small-chunks``;
* ``STORE:KB`` — the newest report of that knowledge base;
* ``STORE:KB~N`` — the N-th before the newest (``~1``: the one before it), unless the
  store has a knowledge base named ``KB~N`` itself;
* ``-`` — standard input (the CLI: ``cat report.json | heta-nb show -``), read by
  :func:`stdin_report` (not by :func:`resolve_report`: a kernel has no stdin to read).
"""

from __future__ import annotations

import os
import re
import sys
from pathlib import Path
from typing import Any, BinaryIO

from heta_nb._util.fs import default_max_bytes
from heta_nb.errors import ReportFormatError, ReportNotFoundError
from heta_nb.model.io import decode_report
from heta_nb.model.io import load_report as load_model_report
from heta_nb.model.report import EvaluationReport
from heta_nb.store.names import KB_ROOT, safe_slug
from heta_nb.store.report_store import ReportStore
from heta_nb.store.scan import instant

__all__ = [
    "STDIN",
    "load_report",
    "newest_report",
    "resolve_report",
    "split_store_reference",
    "stdin_report",
    "store_folder_hint",
]

STDIN = "-"
"""The REPORT argument (and ``-o``) that means standard input (standard output)."""

_BACK = re.compile(r"^(?P<kb>.+)~(?P<back>[0-9]+)$")


def newest_report(store: ReportStore, knowledge_base_name: str) -> EvaluationReport:
    """The newest report of a KB (``KB``), or the N-th before it (``KB~N``).

    Reports are ordered by start time as :meth:`ReportStore.latest` orders them; a KB
    really named ``KB~N`` is taken by its name.
    """
    found = _BACK.match(knowledge_base_name)
    if found is None:
        return store.latest(knowledge_base_name)
    literal = safe_slug(knowledge_base_name, "knowledge_base_name")
    summaries = store.summaries()
    if any(s.knowledge_base == literal for s in summaries):
        return store.latest(knowledge_base_name)
    kb, back = found.group("kb"), int(found.group("back"))
    slug = safe_slug(kb, "knowledge_base_name")
    rows = sorted(
        (s for s in summaries if s.knowledge_base == slug),
        key=lambda s: (instant(s.started_at), instant(s.finished_at), s.report_id),
        reverse=True,
    )
    if back >= len(rows):
        raise ReportNotFoundError(
            f"{store.location}: knowledge base {kb!r} has {len(rows)} report(s); "
            f"{knowledge_base_name!r} asks for the one {back} before the newest"
        )
    return store.load_key(rows[back].key)


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


def resolve_report(source: Any, *, store: Any = None, max_bytes: int | None = None) -> EvaluationReport:
    """Load a report from a path, URL, store reference, or anything ``load_report`` takes.

    Args:
        source: see the module docstring; objects are passed to ``load_report``.
        store: with a store, ``source`` may also be ``KB/REPORT_ID`` or ``KB``.
        max_bytes: the largest report file read from a path or URL (see
            :func:`heta_nb.model.load_report`); a store's reports use its own limit.
    """
    if isinstance(source, (str, os.PathLike)) and not isinstance(source, Path) and store is not None:
        text = str(source)
        target = ReportStore(store)
        if "/" in text:
            kb, _, report_id = text.rpartition("/")
            return target.load(kb, report_id)
        return newest_report(target, text)
    if isinstance(source, str):
        reference = split_store_reference(source)
        if reference is not None:
            root, kb_name, wanted = reference
            store_at = ReportStore(root)
            return store_at.load(kb_name, wanted) if wanted else newest_report(store_at, kb_name)
    return load_model_report(source, max_bytes=max_bytes)


def load_report(source: Any, *, store: Any = None, max_bytes: int | None = None) -> EvaluationReport:
    """Load a report from anything :func:`heta_nb.model.load_report` takes, or from a store by names.

    This is ``heta_nb.load_report``: a path (a ``report.json`` or its folder), an fsspec
    URL, JSON text or bytes, a dict, an ``EvaluationReport`` or Heta's own report object;
    and, as the CLI and the magics take them, ``"STORE:KB/REPORT_ID"`` (a store folder or
    URL, the knowledge base and the report id, e.g. ``"demo-store:saltmarsh isles/small-chunks"``)
    or ``"STORE:KB"`` for the newest report of that knowledge base.
    (:func:`heta_nb.model.load_report` reads the report forms only, without the store.)

    Args:
        source: the report, or where it is.
        store: a store (folder, URL or ``ReportStore``): ``source`` may then be
            ``"KB/REPORT_ID"`` or ``"KB"``.
        max_bytes: the largest file read (default 4 GiB, or ``HETA_NB_MAX_BYTES``); a
            larger one is refused before it is read, and only regular files are read.

    Returns:
        The validated, immutable report.

    Raises:
        ReportFormatError: not a valid report (the message names the file and the JSON path).
        ReportNotFoundError: nothing there; a store folder given as a report says how to
            name one of its reports.
    """
    if isinstance(source, str) and source.lstrip()[:1] in ("{", "["):
        return load_model_report(source, max_bytes=max_bytes)  # JSON text, never a store reference
    hint = store_folder_hint(source) if store is None else None
    if hint is not None:
        raise ReportNotFoundError(f"{hint}; heta_nb.ReportStore({os.fspath(source)!r}).list() lists them")
    return resolve_report(source, store=store, max_bytes=max_bytes)


def store_folder_hint(source: Any) -> str | None:
    """For a local store folder given where a report was expected: how to name one of its reports.

    Args:
        source: what was given as a report.

    Returns:
        ``"demo-store: is a report store, not a report; name a report in it as ..."`` (with a
        real example), or None when ``source`` is not a store folder.
    """
    if not isinstance(source, (str, os.PathLike)) or isinstance(source, str) and "://" in source:
        return None
    folder = Path(source)
    try:
        if not (folder / KB_ROOT).is_dir() or (folder / "report.json").exists():
            return None
        example = next(iter(sorted((folder / KB_ROOT).glob("*/evaluations/*/report.json"))), None)
    except OSError:
        return None
    name = os.fspath(source)
    hint = f"{name}: is a report store, not a report; name a report in it as '{name}:KB/REPORT_ID'"
    hint += f" ('{name}:KB' for the newest)"
    if example is not None:
        hint += f", e.g. '{name}:{example.parents[2].name}/{example.parent.name}'"
    return hint


def stdin_report(stream: BinaryIO | None = None, *, max_bytes: int | None = None) -> EvaluationReport:
    """The report piped to standard input (the CLI's ``-``), read to its end.

    Args:
        stream: a binary stream (default ``sys.stdin.buffer``).
        max_bytes: the largest report read (default 4 GiB, or ``HETA_NB_MAX_BYTES``).

    Raises:
        ReportFormatError: nothing piped in (a terminal or a closed stdin), too large, or not a report.
    """
    if stream is None:
        if sys.stdin is None or sys.stdin.isatty():
            raise ReportFormatError(
                "<stdin>", ["nothing piped in: pipe a report.json (`cat report.json | heta-nb show -`)"]
            )
        stream = sys.stdin.buffer
    limit = default_max_bytes() if max_bytes is None else max_bytes
    data = stream.read(limit + 1)
    if len(data) > limit:
        raise ReportFormatError("<stdin>", [f"larger than {limit} bytes (set HETA_NB_MAX_BYTES to read it)"])
    return decode_report(data, source="<stdin>")
