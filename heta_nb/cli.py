"""The ``heta-nb`` command line: composes library calls, adds no logic of its own.

Exit codes: 0 success, 1 the operation failed (bad input, missing report...),
2 bad usage. Errors print as one line; ``--debug`` shows the traceback.
"""

from __future__ import annotations

import argparse
import sys
import traceback
from collections.abc import Sequence

from heta_nb.errors import HetaNbError

__all__ = ["main"]


def _cmd_demo(args: argparse.Namespace) -> int:
    from heta_nb.demo import run_demo

    run_demo(args.output, args.store, progress=False if args.quiet else "console")
    return 0


def _cmd_show(args: argparse.Namespace) -> int:
    import heta_nb

    report = heta_nb.load_report(args.report)
    print(report)
    frame = report.summary_frame()
    print(frame[["query_mode", "metric", "mean", "n", "errors", "skipped", "ci_low", "ci_high"]].to_string(index=False))
    return 0


def _cmd_list(args: argparse.Namespace) -> int:
    import heta_nb

    frame = heta_nb.ReportStore(args.store).list()
    if frame.empty:
        print(f"no reports in {args.store}")
        return 0
    print(
        frame[["kb", "report_id", "benchmark", "modes", "cases", "errors", "status", "started_at"]].to_string(
            index=False
        )
    )
    return 0


def build_parser() -> argparse.ArgumentParser:
    """The argument parser (subcommands and their options)."""
    parser = argparse.ArgumentParser(
        prog="heta-nb", description="Evaluate Heta knowledge-base recipes; show, list and export evaluation reports."
    )
    parser.add_argument("--debug", action="store_true", help="show tracebacks on errors")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True
    demo = sub.add_parser("demo", help="evaluate two real Heta recipes on the bundled benchmark")
    demo.add_argument("-o", "--output", default="demo-output", help="folder for the exported files")
    demo.add_argument("--store", default="demo-store", help="report store folder (Heta layout)")
    demo.add_argument("-q", "--quiet", action="store_true", help="no progress output")
    demo.set_defaults(func=_cmd_demo)
    show = sub.add_parser("show", help="print a report's summary in the terminal")
    show.add_argument("report", help="report.json path or URL")
    show.set_defaults(func=_cmd_show)
    listing = sub.add_parser("list", help="list the reports in a store")
    listing.add_argument("store", help="store folder or fsspec URL")
    listing.set_defaults(func=_cmd_list)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the CLI; returns the exit code."""
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return int(args.func(args))
    except (HetaNbError, ValueError, OSError) as exc:
        if args.debug:
            traceback.print_exc()
        print(f"heta-nb: error: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("heta-nb: interrupted", file=sys.stderr)
        return 130
