"""What the commands share: loading a REPORT argument, printing, and writing outputs safely.

No command replaces an existing file without ``--force``, nor ever an input report.
"""

from __future__ import annotations

import contextlib
import errno
import os
import shlex
import sys
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from heta_nb.cli.args import UsageError
from heta_nb.errors import HetaNbError

if TYPE_CHECKING:  # pragma: no cover
    from heta_nb.model import EvaluationReport

__all__ = [
    "HTML_SUFFIXES",
    "check_output",
    "check_suffix",
    "exists_error",
    "known_names",
    "note",
    "out",
    "refuse_html_export",
    "report",
    "require_html_suffix",
    "short_time",
    "silence_stdout",
    "write_notebook",
    "writing",
]


def report(text: str) -> EvaluationReport:
    """The report a REPORT argument names (a path, a URL or ``STORE:KB[/ID]``).

    A store folder given as a report is refused with the way to name one of its reports.
    """
    from heta_nb.errors import ReportNotFoundError
    from heta_nb.store.locate import resolve_report, store_folder_hint

    if text == "-":  # the report on standard input (`cat report.json | heta-nb show -`)
        from heta_nb.store.locate import stdin_report

        return stdin_report()
    hint = store_folder_hint(text)
    if hint is not None:
        raise ReportNotFoundError(f"{hint}; `heta-nb list {shlex.quote(text)}` lists them")
    refuse_html_export(text)
    try:
        return resolve_report(text)
    except ReportNotFoundError as exc:
        known = _knowledge_bases_hint(text)
        if known is None:
            raise
        raise ReportNotFoundError(f"{exc}; {known}") from None


def refuse_html_export(text: str) -> None:
    """Refuse a local HTML page (``heta-nb html``'s output) given where a report.json was expected."""
    from heta_nb._util.fs import open_regular_file
    from heta_nb.errors import ReportFormatError

    try:
        with open_regular_file(text) as file:  # a FIFO or a device is refused here: the loader says so
            start = file.read(512)
    except (OSError, ValueError):  # not a local file: the loader says why
        return
    head = start.decode("utf-8", "replace").lstrip("\ufeff \t\r\n").lower()
    if head.startswith(("<!doctype html", "<html")):
        raise ReportFormatError(
            text, ["this is an HTML export (heta-nb html), not a report.json; pass the report it was made from"]
        )


def _knowledge_bases_hint(text: str) -> str | None:
    """For ``STORE:KB[/ID]`` whose KB the store does not have: the KBs it has (the closest first)."""
    import difflib

    from heta_nb.errors import HetaNbError
    from heta_nb.store import ReportStore
    from heta_nb.store.locate import split_store_reference
    from heta_nb.store.names import safe_slug

    reference = split_store_reference(text)
    if reference is None:
        return None
    root, kb, _ = reference
    try:
        rows = ReportStore(root).summaries(on_error="ignore", missing_ok=True)
        wanted = {safe_slug(name, "knowledge base") for name in (kb, kb.rpartition("~")[0]) if name}
    except (HetaNbError, OSError, ValueError):
        return None
    names = {row.knowledge_base: row.knowledge_base_name or row.knowledge_base for row in rows}
    if not names or wanted & names.keys():
        return None  # an empty store, or a known KB (a wrong report id lists the KB's ids)
    shown = sorted(set(names.values()))
    close = difflib.get_close_matches(kb, shown, n=1, cutoff=0.6)
    listed = ", ".join(map(repr, shown[:10])) + (", ..." if len(shown) > 10 else "")
    return f"knowledge bases in {root}: {listed}" + (f"; did you mean {close[0]!r}?" if close else "")


def benchmark(text: str | None) -> Any:
    """The benchmark a ``--benchmark`` argument names (a JSONL folder, a BEIR folder...), or None."""
    if text is None:
        return None
    from heta_nb.benchmark.load import load_benchmark

    return load_benchmark(text)


def cluster_args(args: Any) -> dict[str, Any]:
    """``benchmark``, ``cluster_by`` and ``cluster_method`` for compare / check from the options."""
    gold = benchmark(getattr(args, "benchmark", None))
    by = getattr(args, "cluster_by", None)
    if by and gold is None:
        raise UsageError(f"--cluster-by {by}: reads the benchmark's cases; give --benchmark PATH too")
    return {"benchmark": gold, "cluster_by": by or None, "cluster_method": getattr(args, "cluster_method", "robust")}


def add_cluster_options(parser: Any) -> None:
    """``--benchmark``, ``--cluster-by`` and ``--cluster-method`` (compare and check)."""
    from heta_nb.cli.args import text_arg

    parser.add_argument(
        "--benchmark", type=text_arg, default=None,
        help="the benchmark the reports ran (its case labels and evidence: slices, stages, --cluster-by)",
    )  # fmt: skip
    parser.add_argument(
        "--cluster-by", type=text_arg, default=None,
        help="cluster the cases: 'document' (each case's source document) or a case label such as labels.topic; "
        "intervals and p-values then treat the clusters as units (needs --benchmark)",
    )  # fmt: skip
    parser.add_argument(
        "--cluster-method", choices=("robust", "bootstrap"), default="robust",
        help="cluster-robust errors (default) or a cluster bootstrap",
    )  # fmt: skip


def known_names(kind: str, wanted: Sequence[str] | None, known: Sequence[str]) -> list[str] | None:
    """``wanted`` if every name is one of ``known`` (None stays None); else the closest name as a hint.

    Raises:
        ValueError: ``unknown metric 'ndgc@5'; did you mean 'ndcg@5'?``
    """
    import difflib

    if wanted is None:
        return None
    for name in wanted:
        if name not in known:
            close = difflib.get_close_matches(name, list(known), n=1, cutoff=0.6)
            hint = f"did you mean {close[0]!r}?" if close else f"the report has {', '.join(map(repr, known)) or 'none'}"
            raise ValueError(f"unknown {kind} {name!r}; {hint}")
    return list(wanted)


def short_time(text: str, *, utc: bool = False) -> str:
    """An ISO-8601 time to the second: ``2026-12-02 13:11:13 UTC`` (``utc=True``: in UTC, no suffix).

    Text that is not such a time is returned as it is.
    """
    from datetime import datetime, timezone

    try:
        moment = datetime.fromisoformat(str(text).replace("Z", "+00:00"))
    except (TypeError, ValueError):
        return str(text)
    if utc:
        if moment.tzinfo is not None:
            moment = moment.astimezone(timezone.utc)
        return moment.strftime("%Y-%m-%d %H:%M:%S")
    offset = moment.utcoffset()
    if offset is None:
        zone = ""
    elif not offset:
        zone = " UTC"
    else:
        zone = " " + moment.strftime("%z")[:3] + ":" + moment.strftime("%z")[3:]
    return moment.strftime("%Y-%m-%d %H:%M:%S") + zone


HTML_SUFFIXES = (".html", ".htm")


def check_suffix(output: str, allowed: Sequence[str], command: str) -> None:
    """Refuse an output whose extension belongs to the other export format."""
    suffix = Path(output).suffix.lower()
    if command == "html" and suffix == ".ipynb":
        raise UsageError(f"{output}: html writes an HTML page; use `heta-nb notebook` for a .ipynb file")
    if command == "notebook" and suffix in HTML_SUFFIXES:
        raise UsageError(f"{output}: notebook writes a .ipynb file; use `heta-nb html` for an HTML page")
    if command == "compare" and suffix not in allowed:
        shown = suffix or "(none)"
        raise UsageError(f"{output}: unknown export format {shown!r}; use {', '.join(allowed[:-1])} or {allowed[-1]}")


def require_html_suffix(output: str) -> None:
    """Refuse to write an HTML page under another extension (``-o r.pdf``)."""
    suffix = Path(output).suffix.lower()
    if suffix not in HTML_SUFFIXES:
        which = f", not {suffix!r}" if suffix else ""
        raise UsageError(f"{output}: html writes an HTML page{which}; name a .html or .htm file")


def out(text: str) -> None:
    """Print the command's product to stdout; a closed or full stdout is an error, not silence."""
    if sys.stdout is None:
        raise OSError(errno.EBADF, "is closed; nothing can be printed", "stdout")
    _print(text)


def note(text: str) -> None:
    """Print a status line (``wrote ...``); skipped when stdout is closed."""
    if sys.stdout is not None:
        _print(text)


def _print(text: str) -> None:
    try:
        print(text, flush=True)
    except BrokenPipeError:
        raise
    except OSError as exc:  # e.g. stdout on a full disk
        raise OSError(exc.errno, exc.strerror or str(exc), "stdout") from exc


@contextlib.contextmanager
def writing() -> Iterator[None]:
    """Say "cannot write" for a file the export could not write (the output or its companion).

    ``write_atomically`` already names that file rather than its hidden temporary file.
    """
    try:
        yield
    except OSError as exc:
        if isinstance(exc, HetaNbError) or exc.errno is None or exc.filename is None:
            raise
        raise OSError(exc.errno, f"cannot write: {exc.strerror}", exc.filename) from exc


def _same_file(a: str | os.PathLike[str], b: str) -> bool:
    try:
        return os.path.samefile(a, b)
    except (OSError, ValueError):
        return False


def exists_error(path: str | os.PathLike[str]) -> FileExistsError:
    return FileExistsError(f"{os.fspath(path)}: already exists; --force replaces it")


def check_output(
    output: str, *, force: bool, inputs: Sequence[str] = (), example: str = "report.html", reports: Sequence[Any] = ()
) -> None:
    """Refuse to write over an input report, or over any existing file without --force.

    A FIFO, a device or a socket (or a link to one) is never replaced, even with --force
    (said here, before the work; the writer refuses it too).
    """
    from heta_nb._util.atomic import write_target
    from heta_nb.model.io import local_report_file

    if os.path.isdir(output):
        raise IsADirectoryError(f"{output}: is a folder; give the file to write (e.g. {os.path.join(output, example)})")
    write_target(output)
    files = [*filter(None, map(local_report_file, inputs)), *_stored_files(inputs, reports)]
    for item in files:
        if _same_file(item, output):
            raise FileExistsError(f"{output}: is the input report; not replacing it (even with --force)")
    if not force and os.path.lexists(output):
        raise exists_error(output)


def _stored_files(inputs: Sequence[str], reports: Sequence[Any]) -> list[Path]:
    """The files of reports named as ``STORE:KB[/ID]`` in a local store."""
    from heta_nb.model.io import local_path
    from heta_nb.store import report_key
    from heta_nb.store.locate import split_store_reference

    files = []
    for text, report in zip(inputs, reports):
        reference = split_store_reference(text)
        root = local_path(reference[0]) if reference else None
        if root is None:
            continue
        for key in (report.report_key, _safe_key(report_key, report.knowledge_base_name, report.report_id)):
            if key:
                files.append(root / key)
    return files


def _safe_key(report_key: Any, kb: str, report_id: str) -> str | None:
    try:
        return str(report_key(kb, report_id))
    except ValueError:  # a name the store layout cannot hold
        return None


def write_notebook(obj: Any, output: str, *, force: bool, source: Any = None) -> None:
    from heta_nb.notebook import to_notebook

    try:
        to_notebook(obj, output, source=source, overwrite=force)
    except FileExistsError as exc:  # overwrite=False refused the notebook or its companion
        if isinstance(exc, HetaNbError) or exc.filename is None:
            raise
        raise exists_error(exc.filename) from None


def silence_stdout() -> None:
    """Point stdout at /dev/null, so the interpreter's final flush does not fail again."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError, AttributeError):  # no real file descriptor (captured in tests)
        pass
