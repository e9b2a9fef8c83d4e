"""The ``heta-nb`` command line (also ``python -m heta_nb``).

It only composes library calls. REPORT is a ``report.json`` path or URL, or
``STORE:KB/REPORT_ID`` (``STORE:KB`` for the newest report of a KB). Exit codes:
0 success, 1 the operation failed (bad input, missing report, ...), 2 bad usage.
Errors are one line on stderr; ``--debug`` shows the traceback. Commands that write
files never replace an existing one unless ``--force`` (and never an input report).
"""

from __future__ import annotations

import argparse
import os
import sys
import traceback
import warnings
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from heta_nb.errors import HetaNbError

__all__ = ["build_parser", "main"]


def _report(text: str):  # noqa: ANN202 - a report
    from heta_nb.locate import resolve_report

    return resolve_report(text)


def _split(text: str | None) -> list[str] | None:
    return [part.strip() for part in text.split(",") if part.strip()] if text else None


def _same_file(a: str | os.PathLike[str], b: str) -> bool:
    try:
        return os.path.samefile(a, b)
    except (OSError, ValueError):
        return False


def _exists(path: str | os.PathLike[str]) -> FileExistsError:
    return FileExistsError(f"{os.fspath(path)}: already exists; --force replaces it")


def _check_output(output: str, *, force: bool, inputs: Sequence[str] = ()) -> None:
    """Refuse to write over an input report, or over any existing file without --force."""
    from heta_nb.model.io import local_report_file

    if os.path.isdir(output):
        raise IsADirectoryError(
            f"{output}: is a folder; give the file to write (e.g. {os.path.join(output, 'report.html')})"
        )
    for item in filter(None, map(local_report_file, inputs)):
        if _same_file(item, output):
            raise FileExistsError(f"{output}: is the input report; not replacing it (even with --force)")
    if not force and os.path.lexists(output):
        raise _exists(output)


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

    _check_output(args.output, force=args.force, inputs=[args.report])
    to_html(_report(args.report), args.output)
    print(f"wrote {args.output}")
    return 0


def _cmd_notebook(args: argparse.Namespace) -> int:
    _check_output(args.output, force=args.force, inputs=[args.report])
    from heta_nb.model.io import local_path

    local = local_path(args.report)
    # a local path goes to to_notebook as is, so it never rewrites that file as the companion
    report = args.report if local is not None and local.exists() else _report(args.report)
    _write_notebook(report, args.output, force=args.force, source=args.source)
    print(f"wrote {args.output}")
    return 0


def _cmd_compare(args: argparse.Namespace) -> int:
    from heta_nb.comparison import compare

    if args.output:
        _check_output(args.output, force=args.force, inputs=args.reports)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        comparison = compare(
            *[_report(item) for item in args.reports],
            names=_split(args.names),
            modes=_split(args.modes),
            metrics=_split(args.metrics),
            seed=args.seed,
        )
    messages = [*comparison.warnings, *(str(item.message) for item in caught)]
    for warning in dict.fromkeys(messages):  # each once, in order
        print(f"heta-nb: warning: {warning}", file=sys.stderr)
    if args.output:
        if Path(args.output).suffix.lower() == ".ipynb":
            _write_notebook(comparison, args.output, force=args.force)
        else:
            from heta_nb.export import export

            export(comparison, args.output)
        print(f"wrote {args.output}")
    else:
        print(repr(comparison))
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
        print(f"no reports in {args.store}")
        return 0
    columns = ["kb", "report_id", "benchmark", "modes", "cases", "errors", "status", "started_at"]
    print(frame[columns].to_string(index=False))
    return 0


def _cmd_show(args: argparse.Namespace) -> int:
    report = _report(args.report)
    print(repr(report))
    frame = report.summary_frame()
    columns = ["query_mode", "metric", "mean", "n", "errors", "skipped", "ci_low", "ci_high"]
    with _pandas_options():
        print(frame[columns].to_string(index=False))
    notes = [f"{m} {n}: {note}" for m, n, note in zip(frame.query_mode, frame.metric, frame.note) if note]
    for note in notes:
        print(f"  note: {note}")
    return 0


def _pandas_options():  # noqa: ANN202 - a context manager
    import pandas as pd

    return pd.option_context("display.float_format", "{:.4f}".format, "display.width", 160)


def _cmd_demo(args: argparse.Namespace) -> int:
    from heta_nb._optional import require

    require("heta_framework", extra="heta", purpose="heta-nb demo")  # before it prints anything
    from heta_nb.demo import run_demo

    run_demo(args.output, args.store, progress=False if args.quiet else "console")
    return 0


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
        description="Evaluate Heta knowledge-base recipes; show, list, compare and export evaluation reports.",
        epilog="REPORT is a report.json path or URL, or STORE:KB/REPORT_ID (STORE:KB for the newest).",
    )
    parser.add_argument("--debug", action="store_true", help="show tracebacks on errors")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)

    html = sub.add_parser("html", help="export a report as one standalone, offline HTML file")
    html.add_argument("report", help="the report (path, URL or STORE:KB/REPORT_ID)")
    html.add_argument("-o", "--output", required=True, help="the .html file to write")
    html.add_argument("--force", action="store_true", help="replace the output file if it exists")
    html.set_defaults(func=_cmd_html)

    notebook = sub.add_parser("notebook", help="export a report as a notebook (.ipynb) with its outputs")
    notebook.add_argument("report", help="the report (path, URL or STORE:KB/REPORT_ID)")
    notebook.add_argument("-o", "--output", required=True, help="the .ipynb file to write")
    notebook.add_argument(
        "--source", default=None, help="how the notebook reloads the report (default: a copy saved next to it)"
    )
    notebook.add_argument(
        "--force",
        action="store_true",
        help="replace the notebook (and an older copy of the same report next to it) if it exists",
    )
    notebook.set_defaults(func=_cmd_notebook)

    comparison = sub.add_parser("compare", help="compare recipes (or modes) with paired statistics")
    comparison.add_argument("reports", nargs="+", help="two or more reports (or one report with --modes)")
    comparison.add_argument("-o", "--output", default=None, help="write .html or .ipynb instead of printing")
    comparison.add_argument("--names", default=None, help="comma-separated display names")
    comparison.add_argument("--modes", default=None, help="comma-separated modes to compare")
    comparison.add_argument("--metrics", default=None, help="comma-separated metrics")
    comparison.add_argument("--seed", type=int, default=0, help="resampling seed (default 0)")
    comparison.add_argument("--force", action="store_true", help="replace the -o file if it exists")
    comparison.set_defaults(func=_cmd_compare)

    listing = sub.add_parser("list", help="list the reports in a store")
    listing.add_argument("store", help="store folder or fsspec URL")
    listing.set_defaults(func=_cmd_list)

    show = sub.add_parser("show", help="print a report's summary in the terminal")
    show.add_argument("report", help="the report (path, URL or STORE:KB/REPORT_ID)")
    show.set_defaults(func=_cmd_show)

    demo = sub.add_parser(
        "demo",
        help="evaluate two real Heta recipes on the bundled benchmark (needs the [heta] extra)",
        description="Evaluate two real Heta recipes on the bundled benchmark, save the reports in a store "
        "and write comparison.html, report.html and report.ipynb. Needs heta-framework: "
        "pip install 'heta-nb[heta]'.",
    )
    demo.add_argument(
        "-o", "--output", default="demo-output", help="folder for the exported files (default: demo-output)"
    )
    demo.add_argument("--store", default="demo-store", help="report store folder, Heta's layout (default: demo-store)")
    demo.add_argument("-q", "--quiet", action="store_true", help="no progress output")
    demo.set_defaults(func=_cmd_demo)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the CLI and return its exit code (argparse exits with 2 on bad usage)."""
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return int(args.func(args))
    except BrokenPipeError:  # the reader went away (`heta-nb show ... | head`): stop quietly
        _silence_stdout()
        return 1
    except (HetaNbError, ValueError, KeyError, OSError, ImportError, ArithmeticError, RecursionError) as exc:
        # ValueError includes UnicodeError; ArithmeticError includes OverflowError (bad report data)
        if args.debug:
            traceback.print_exc()
        message: object = exc.args[0] if isinstance(exc, KeyError) and exc.args else exc
        if isinstance(exc, (ArithmeticError, RecursionError)) or not str(message):
            message = f"{type(exc).__name__}: {message}" if str(message) else type(exc).__name__
        print(f"heta-nb: error: {message}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("heta-nb: interrupted", file=sys.stderr)
        return 130
