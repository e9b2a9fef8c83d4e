"""The ``heta-nb`` command line (also ``python -m heta_nb``).

It only composes library calls. REPORT is a ``report.json`` path or URL, or
``STORE:KB/REPORT_ID`` (``STORE:KB`` for the newest report of a KB). Exit codes:
0 success, 1 the operation failed (bad input, missing report, ...), 2 bad usage
(including an empty argument or an output whose extension does not match the
command), 130 interrupted. Errors are one line on stderr; ``--debug`` (before or after
the command) shows the traceback. Commands that write files never replace an
existing one unless ``--force``, and never an input report, even one named as
``STORE:KB/REPORT_ID``.
"""

from __future__ import annotations

import argparse
import contextlib
import errno
import os
import sys
import traceback
import warnings
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from heta_nb.errors import HetaNbError

__all__ = ["build_parser", "main"]


def _report(text: str):  # noqa: ANN202 - a report
    from heta_nb.store.locate import resolve_report

    return resolve_report(text)


def _split(text: str | None) -> list[str] | None:
    return [part.strip() for part in text.split(",") if part.strip()] if text else None


def _text(value: str) -> str:
    """An argument that must not be empty (argparse turns the error into exit code 2)."""
    if not value.strip():
        raise argparse.ArgumentTypeError("must not be empty")
    return value


def _names(value: str) -> list[str]:
    """A comma-separated list with at least one name."""
    names = _split(value)
    if not names:
        raise argparse.ArgumentTypeError(f"expected comma-separated names, got {value!r}")
    return names


def _seed(value: str) -> int:
    """A non-negative integer."""
    try:
        number = int(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"invalid int value: {value!r}") from None
    if number < 0:
        raise argparse.ArgumentTypeError(f"must be a non-negative integer, got {number}")
    return number


class _UsageError(Exception):
    """Bad usage found after parsing: exit code 2, like argparse's own errors."""


_HTML = (".html", ".htm")


def _check_suffix(output: str, allowed: Sequence[str], command: str) -> None:
    """Refuse an output whose extension belongs to the other export format."""
    suffix = Path(output).suffix.lower()
    if command == "html" and suffix == ".ipynb":
        raise _UsageError(f"{output}: html writes an HTML page; use `heta-nb notebook` for a .ipynb file")
    if command == "notebook" and suffix in _HTML:
        raise _UsageError(f"{output}: notebook writes a .ipynb file; use `heta-nb html` for an HTML page")
    if command == "compare" and suffix not in allowed:
        shown = suffix or "(none)"
        raise _UsageError(f"{output}: unknown export format {shown!r}; use {', '.join(allowed[:-1])} or {allowed[-1]}")


def _out(text: str) -> None:
    """Print the command's product to stdout; a closed or full stdout is an error, not silence."""
    if sys.stdout is None:
        raise OSError(errno.EBADF, "is closed; nothing can be printed", "stdout")
    _print(text)


def _note(text: str) -> None:
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
def _writing() -> Iterator[None]:
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


def _exists(path: str | os.PathLike[str]) -> FileExistsError:
    return FileExistsError(f"{os.fspath(path)}: already exists; --force replaces it")


def _check_output(
    output: str, *, force: bool, inputs: Sequence[str] = (), example: str = "report.html", reports: Sequence[Any] = ()
) -> None:
    """Refuse to write over an input report, or over any existing file without --force."""
    from heta_nb.model.io import local_report_file

    if os.path.isdir(output):
        raise IsADirectoryError(f"{output}: is a folder; give the file to write (e.g. {os.path.join(output, example)})")
    files = [*filter(None, map(local_report_file, inputs)), *_stored_files(inputs, reports)]
    for item in files:
        if _same_file(item, output):
            raise FileExistsError(f"{output}: is the input report; not replacing it (even with --force)")
    if not force and os.path.lexists(output):
        raise _exists(output)


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


def _write_notebook(obj: Any, output: str, *, force: bool, source: Any = None) -> None:
    from heta_nb.notebook import to_notebook

    try:
        to_notebook(obj, output, source=source, overwrite=force)
    except FileExistsError as exc:  # overwrite=False refused the notebook or its companion
        if isinstance(exc, HetaNbError) or exc.filename is None:
            raise
        raise _exists(exc.filename) from None


def _cmd_html(args: argparse.Namespace) -> int:
    from heta_nb.export import to_html

    _check_suffix(args.output, _HTML, "html")
    _check_output(args.output, force=args.force, inputs=[args.report])
    report = _report(args.report)
    _check_output(args.output, force=args.force, inputs=[args.report], reports=[report])
    with _writing():
        to_html(report, args.output)
    _note(f"wrote {args.output}")
    return 0


def _cmd_notebook(args: argparse.Namespace) -> int:
    _check_suffix(args.output, (".ipynb",), "notebook")
    _check_output(args.output, force=args.force, inputs=[args.report], example="report.ipynb")
    from heta_nb.model.io import local_path

    local = local_path(args.report)
    # a local path goes to to_notebook as is, so it never rewrites that file as the companion
    if local is not None and local.exists():
        report: Any = args.report
    else:
        report = _report(args.report)
        _check_output(args.output, force=args.force, inputs=[args.report], example="report.ipynb", reports=[report])
    with _writing():
        _write_notebook(report, args.output, force=args.force, source=args.source)
    _note(f"wrote {args.output}")
    return 0


def _cmd_compare(args: argparse.Namespace) -> int:
    from heta_nb.comparison import compare

    if args.output:
        _check_suffix(args.output, (*_HTML, ".ipynb"), "compare")
        _check_output(args.output, force=args.force, inputs=args.reports)
    with warnings.catch_warnings(record=True) as caught:  # loading warns too; printed below, once each
        warnings.simplefilter("always")
        reports = [_report(item) for item in args.reports]
        if args.output:
            _check_output(args.output, force=args.force, inputs=args.reports, reports=reports)
        comparison = compare(*reports, names=args.names, modes=args.modes, metrics=args.metrics, seed=args.seed)
    messages = [*comparison.warnings, *(str(item.message) for item in caught)]
    for warning in dict.fromkeys(messages):  # each once, in order
        print(f"heta-nb: warning: {warning}", file=sys.stderr)
    if args.output:
        with _writing():
            if Path(args.output).suffix.lower() == ".ipynb":
                _write_notebook(comparison, args.output, force=args.force)
            else:
                from heta_nb.export import export

                export(comparison, args.output)
        _note(f"wrote {args.output}")
    else:
        _out(repr(comparison))
    return 0


def _cmd_list(args: argparse.Namespace) -> int:
    from heta_nb.store import ReportStore  # it refuses a missing folder, or a file, by name

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        frame = ReportStore(args.store).list()
    problems = [
        (str(p.get("key")), f"{p.get('key')}: {p.get('error')}") if isinstance(p, Mapping) else (str(p), str(p))
        for p in frame.attrs.get("problems", []) or []
    ]
    # a store warning that only sums up the problems is not printed a second time
    others = [str(w.message) for w in caught if not any(key in str(w.message) for key, _ in problems)]
    for line in dict.fromkeys([*(line for _, line in problems), *others]):
        print(f"heta-nb: warning: {line}", file=sys.stderr)
    if frame.empty:
        hint = ""
        if os.path.isfile(os.path.join(args.store, "report.json")):
            hint = f" (it holds a report.json, not a store: heta-nb show {args.store})"
        _out(f"no reports in {args.store}{hint}")
        return 0
    columns = ["kb", "report_id", "benchmark", "modes", "cases", "errors", "status", "started_at"]
    _out(frame[columns].to_string(index=False))
    return 0


def _cmd_show(args: argparse.Namespace) -> int:
    report = _report(args.report)
    frame = report.summary_frame()
    columns = ["query_mode", "metric", "mean", "n", "errors", "skipped", "ci_low", "ci_high"]
    with _pandas_options():
        table = frame[columns].to_string(index=False)
    notes = [f"  note: {m} {n}: {note}" for m, n, note in zip(frame.query_mode, frame.metric, frame.note) if note]
    _out("\n".join([repr(report), table, *notes]))
    return 0


def _pandas_options():  # noqa: ANN202 - a context manager
    import pandas as pd

    return pd.option_context("display.float_format", "{:.4f}".format, "display.width", 160)


def _cmd_demo(args: argparse.Namespace) -> int:
    from heta_nb._util.optional import require

    require("heta_framework", extra="heta", purpose="heta-nb demo")  # before it prints anything
    from heta_nb.demo import run_demo

    _check_demo_targets(args.output, args.store, force=args.force)  # before the minute of work
    if sys.stdout is None:
        raise OSError(errno.EBADF, "is closed; nothing can be printed", "stdout")
    run_demo(args.output, args.store, progress=False if args.quiet else "console")
    return 0


def _check_demo_targets(output: str, store: str, *, force: bool) -> None:
    """Refuse a file where a folder goes, and (without --force) files the demo did not write."""
    from heta_nb.demo import RECIPE_CHUNKS

    for folder, what in ((output, "-o"), (store, "--store")):
        if os.path.lexists(folder) and not os.path.isdir(folder):
            raise NotADirectoryError(f"{folder}: is not a folder ({what} names the folder the demo writes to)")
    names = ["comparison.html", "report.html", "report.ipynb", *(f"{name}.summary.csv" for name in RECIPE_CHUNKS)]
    for name in names:
        path = os.path.join(output, name)
        if not force and os.path.lexists(path) and not _from_a_demo(path):
            raise FileExistsError(f"{path}: already exists and was not written by heta-nb demo; --force replaces it")
    companion = os.path.join(output, "report.report.json")  # to_notebook never replaces another report
    if os.path.lexists(companion) and not _demo_report(companion, next(iter(RECIPE_CHUNKS))):
        raise FileExistsError(
            f"{companion}: already exists and is not a demo report; not replacing it (even with --force)"
        )


def _demo_report(path: str, report_id: str) -> bool:
    """Whether ``path`` holds the demo's report ``report_id`` (an earlier demo's copy)."""
    from heta_nb.model.io import load_report

    try:
        return bool(load_report(path).report_id == report_id)
    except (HetaNbError, OSError, ValueError):
        return False


def _from_a_demo(path: str) -> bool:
    """Whether ``path`` looks like an output of an earlier demo (which the demo replaces)."""
    markers = {".html": b'<meta name="generator" content="heta_nb', ".ipynb": b'"generated_by": "heta_nb'}
    try:
        with open(path, "rb") as handle:
            data = handle.read(16 << 20)
    except OSError:
        return False
    if path.endswith(".csv"):
        return data.startswith(b"query_mode,metric,")
    return markers[Path(path).suffix] in data


def _silence_stdout() -> None:
    """Point stdout at /dev/null, so the interpreter's final flush does not fail again."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError, AttributeError):  # no real file descriptor (captured in tests)
        pass


def build_parser() -> argparse.ArgumentParser:
    """The argument parser with every subcommand."""
    parser = argparse.ArgumentParser(
        prog="heta-nb",
        description="Show, list, compare and export Heta evaluation reports (and run a demo evaluation).",
        epilog="REPORT is a report.json path or URL, or STORE:KB/REPORT_ID (STORE:KB for the newest). "
        "Exit codes: 0 success, 1 the operation failed, 2 bad usage, 130 interrupted.",
    )
    parser.add_argument("--debug", action="store_true", help="show tracebacks on errors")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)

    def command(name: str, **kwargs: Any) -> argparse.ArgumentParser:
        item = sub.add_parser(name, **kwargs)
        # also after the command; SUPPRESS keeps the top-level --debug when it is not given here
        item.add_argument("--debug", action="store_true", default=argparse.SUPPRESS, help="show tracebacks on errors")
        item.set_defaults(parser=item)
        return item

    report_help = "the report (path, URL or STORE:KB/REPORT_ID)"
    html = command("html", help="export a report as one standalone, offline HTML file")
    html.add_argument("report", type=_text, help=report_help)
    html.add_argument("-o", "--output", type=_text, required=True, help="the .html file to write")
    html.add_argument("--force", action="store_true", help="replace the output file if it exists")
    html.set_defaults(func=_cmd_html)

    notebook = command("notebook", help="export a report as a notebook (.ipynb) with its outputs")
    notebook.add_argument("report", type=_text, help=report_help)
    notebook.add_argument("-o", "--output", type=_text, required=True, help="the .ipynb file to write")
    notebook.add_argument(
        "--source",
        type=_text,
        default=None,
        help="path or URL the notebook reloads the report from; nothing else is written "
        "(default: a copy saved next to the notebook as NAME.report.json)",
    )
    notebook.add_argument(
        "--force",
        action="store_true",
        help="replace the notebook (and an older copy of the same report next to it) if it exists",
    )
    notebook.set_defaults(func=_cmd_notebook)

    comparison = command("compare", help="compare recipes (or modes) with paired statistics")
    comparison.add_argument(
        "reports", type=_text, nargs="+", help="two or more reports, or one report (its modes are compared)"
    )
    comparison.add_argument(
        "-o", "--output", type=_text, default=None, help="write .html or .ipynb instead of printing"
    )
    comparison.add_argument("--names", type=_names, default=None, help="comma-separated display names, one per system")
    comparison.add_argument("--modes", type=_names, default=None, help="comma-separated modes to compare")
    comparison.add_argument("--metrics", type=_names, default=None, help="comma-separated metrics")
    comparison.add_argument("--seed", type=_seed, default=0, help="resampling seed, >= 0 (default 0)")
    comparison.add_argument("--force", action="store_true", help="replace the -o file if it exists")
    comparison.set_defaults(func=_cmd_compare)

    listing = command("list", help="list the reports in a store")
    listing.add_argument("store", type=_text, help="store folder or fsspec URL")
    listing.set_defaults(func=_cmd_list)

    show = command("show", help="print a report's summary in the terminal")
    show.add_argument("report", type=_text, help=report_help)
    show.set_defaults(func=_cmd_show)

    demo = command(
        "demo",
        help="evaluate two real Heta recipes on the bundled benchmark (needs the [heta] extra)",
        description="Evaluate two real Heta recipes on the bundled benchmark, save the reports in a store "
        "(replacing an earlier demo's) and write comparison.html, report.html, report.ipynb and summary CSVs "
        "(replacing an earlier demo's; other files of those names only with --force). Needs heta-framework: "
        "pip install 'heta-nb[heta]'.",
    )
    demo.add_argument(
        "-o", "--output", type=_text, default="demo-output", help="folder for the exported files (default: demo-output)"
    )
    demo.add_argument(
        "--store", type=_text, default="demo-store", help="report store folder, Heta's layout (default: demo-store)"
    )
    demo.add_argument("-q", "--quiet", action="store_true", help="no progress output")
    demo.add_argument("--force", action="store_true", help="replace output files the demo did not write")
    demo.set_defaults(func=_cmd_demo)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the CLI and return its exit code (argparse exits with 2 on bad usage)."""
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return int(args.func(args))
    except _UsageError as exc:
        args.parser.error(str(exc))  # exits with 2, after the command's usage line
        raise  # not reached
    except BrokenPipeError:  # the reader went away (`heta-nb show ... | head`): stop quietly
        _silence_stdout()
        return 1
    except KeyboardInterrupt:
        print("heta-nb: interrupted", file=sys.stderr)
        return 130
    except Exception as exc:  # anything else is still one line; --debug shows where
        if args.debug:
            traceback.print_exc()
        if isinstance(exc, OSError) and exc.filename == "stdout":
            _silence_stdout()  # so the interpreter's final flush does not fail again
        print(f"heta-nb: error: {_message(exc)}", file=sys.stderr)
        return 1


_EXPECTED = (HetaNbError, ValueError, KeyError, OSError, ImportError)


def _message(exc: Exception) -> str:
    """One line: the message of an expected error, else its type and message."""
    message = str(exc.args[0]) if isinstance(exc, KeyError) and exc.args else str(exc)
    if isinstance(exc, OSError) and not isinstance(exc, HetaNbError) and exc.strerror and exc.filename is not None:
        message = f"{os.fsdecode(exc.filename)}: {exc.strerror}"  # not "[Errno 13] Permission denied: 'x'"
    if not isinstance(exc, _EXPECTED) or not message:
        # ArithmeticError (OverflowError from bad report data), RecursionError, RunFailedError, ...
        message = f"{type(exc).__name__}: {message}" if message else type(exc).__name__
    return " ".join(line.strip() for line in message.splitlines() if line.strip()) or type(exc).__name__
