"""``heta-nb compare``, ``list`` and ``show``: reading reports in the terminal."""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
import warnings
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from heta_nb.cli import output
from heta_nb.cli.args import names_arg, seed_arg, text_arg
from heta_nb.cli.command import Command
from heta_nb.cli.exports import REPORT_HELP

__all__ = ["register"]


def register(command: Command) -> None:
    """Add ``compare``, ``list`` and ``show`` to the parser."""
    comparison = command("compare", help="compare recipes (or modes) with paired statistics")
    comparison.add_argument(
        "reports", type=text_arg, nargs="+", help="two or more reports, or one report (its modes are compared)"
    )
    comparison.add_argument(
        "-o", "--output", type=text_arg, default=None, help="write .html or .ipynb instead of printing"
    )
    comparison.add_argument(
        "--names", type=names_arg, default=None, help="comma-separated display names, one per system"
    )
    comparison.add_argument("--modes", type=names_arg, default=None, help="comma-separated modes to compare")
    comparison.add_argument("--metrics", type=names_arg, default=None, help="comma-separated metrics")
    comparison.add_argument("--seed", type=seed_arg, default=0, help="resampling seed, >= 0 (default 0)")
    comparison.add_argument("--force", action="store_true", help="replace the -o file if it exists")
    comparison.set_defaults(func=_cmd_compare)

    listing = command("list", help="list the reports in a store")
    listing.add_argument("store", type=text_arg, help="store folder or fsspec URL")
    listing.set_defaults(func=_cmd_list)

    show = command("show", help="print a report's summary in the terminal")
    show.add_argument("report", type=text_arg, help=REPORT_HELP)
    show.set_defaults(func=_cmd_show)


def _cmd_compare(args: argparse.Namespace) -> int:
    from heta_nb.comparison import compare

    if args.output:
        output.check_suffix(args.output, (*output.HTML_SUFFIXES, ".ipynb"), "compare")
        output.check_output(args.output, force=args.force, inputs=args.reports)
    with warnings.catch_warnings(record=True) as caught:  # loading warns too; printed below, once each
        warnings.simplefilter("always")
        reports = [output.report(item) for item in args.reports]
        if args.output:
            output.check_output(args.output, force=args.force, inputs=args.reports, reports=reports)
        comparison = compare(*reports, names=args.names, modes=args.modes, metrics=args.metrics, seed=args.seed)
    messages = [*comparison.warnings, *(str(item.message) for item in caught)]
    for warning in dict.fromkeys(messages):  # each once, in order
        print(f"heta-nb: warning: {warning}", file=sys.stderr)
    if args.output:
        with output.writing():
            if Path(args.output).suffix.lower() == ".ipynb":
                output.write_notebook(comparison, args.output, force=args.force)
            else:
                from heta_nb.export import export

                export(comparison, args.output)
        output.note(f"wrote {args.output}")
    else:
        output.out(repr(comparison))
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
        output.out(f"no reports in {args.store}{hint}")
        return 0
    columns = ["kb", "report_id", "benchmark", "modes", "cases", "errors", "status", "started_at"]
    output.out(frame[columns].to_string(index=False))
    return 0


def _cmd_show(args: argparse.Namespace) -> int:
    report = output.report(args.report)
    frame = report.summary_frame()
    columns = ["query_mode", "metric", "mean", "n", "errors", "skipped", "ci_low", "ci_high"]
    with _pandas_options():
        table = frame[columns].to_string(index=False)
    notes = [f"  note: {m} {n}: {note}" for m, n, note in zip(frame.query_mode, frame.metric, frame.note) if note]
    output.out("\n".join([repr(report), table, *notes]))
    return 0


def _pandas_options() -> contextlib.AbstractContextManager[Any]:
    import pandas as pd

    return pd.option_context("display.float_format", "{:.4f}".format, "display.width", 160)
