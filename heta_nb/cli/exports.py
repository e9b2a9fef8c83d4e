"""``heta-nb html`` and ``heta-nb notebook``: one report as an offline page or a notebook."""

from __future__ import annotations

import argparse
from typing import Any

from heta_nb.cli import output
from heta_nb.cli.args import text_arg
from heta_nb.cli.command import Command

__all__ = ["register"]

REPORT_HELP = "the report (path, URL or STORE:KB/REPORT_ID)"


def register(command: Command) -> None:
    """Add ``html`` and ``notebook`` to the parser."""
    html = command(
        "html",
        help="export a report as one standalone, offline HTML file",
        description="Write one report as a single HTML page that works offline: its summary, figures and "
        "the case explorer,\nwith every case embedded (nothing is fetched when it is opened).",
        epilog="example:\n  heta-nb html runs/report.json -o report.html\n"
        "  heta-nb html 'demo-store:saltmarsh isles' -o newest.html",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    html.add_argument("report", type=text_arg, help=REPORT_HELP)
    html.add_argument(
        "-o", "--output", type=text_arg, required=True, help="the .html file to write (- : standard output)"
    )
    html.add_argument("--force", action="store_true", help="replace the output file if it exists")
    html.set_defaults(func=_cmd_html)

    notebook = command(
        "notebook",
        help="export a report as a notebook (.ipynb) with its outputs",
        description="Write a notebook that loads the report and shows its summary, figures and explorer,\n"
        "with the outputs already in it (a copy of the report is saved next to it unless --source).",
        epilog="example:\n  heta-nb notebook runs/report.json -o report.ipynb\n"
        "  heta-nb notebook runs/report.json -o report.ipynb --source s3://bucket/runs/report.json",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    notebook.add_argument("report", type=text_arg, help=REPORT_HELP)
    notebook.add_argument("-o", "--output", type=text_arg, required=True, help="the .ipynb file to write")
    notebook.add_argument(
        "--source",
        type=text_arg,
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


def _cmd_html(args: argparse.Namespace) -> int:
    from heta_nb.export import to_html

    if args.output == "-":  # standard output: the page itself, nothing else printed there
        output.out(to_html(output.report(args.report)))
        return 0
    output.check_suffix(args.output, output.HTML_SUFFIXES, "html")
    output.check_output(args.output, force=args.force, inputs=[args.report])
    report = output.report(args.report)
    output.check_output(args.output, force=args.force, inputs=[args.report], reports=[report])
    output.require_html_suffix(args.output)  # after the checks that say "is a folder" or "is the input report"
    with output.writing():
        to_html(report, args.output)
    output.note(f"wrote {args.output}")
    return 0


def _cmd_notebook(args: argparse.Namespace) -> int:
    output.check_suffix(args.output, (".ipynb",), "notebook")
    output.check_output(args.output, force=args.force, inputs=[args.report], example="report.ipynb")
    output.refuse_html_export(args.report)
    from heta_nb.model.io import local_path

    local = local_path(args.report)
    # a local path goes to to_notebook as is, so it never rewrites that file as the companion
    if local is not None and local.exists():
        report: Any = args.report
    else:
        report = output.report(args.report)
        output.check_output(
            args.output, force=args.force, inputs=[args.report], example="report.ipynb", reports=[report]
        )
    with output.writing():
        output.write_notebook(report, args.output, force=args.force, source=args.source)
    output.note(f"wrote {args.output}")
    return 0
