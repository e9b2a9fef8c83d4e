"""``heta-nb demo``: evaluate two real Heta recipes on the bundled benchmark."""

from __future__ import annotations

import argparse
import errno
import os
import sys
from pathlib import Path

from heta_nb._util.fs import open_regular_file
from heta_nb.cli.args import text_arg
from heta_nb.cli.command import Command
from heta_nb.errors import HetaNbError

__all__ = ["register"]


def register(command: Command) -> None:
    """Add ``demo`` to the parser."""
    demo = command(
        "demo",
        help="evaluate two real Heta recipes on the bundled benchmark (needs the [heta] extra)",
        description="Evaluate two real Heta recipes on the bundled benchmark, save the reports in a store "
        "(replacing an earlier demo's) and write comparison.html, report.html, report.ipynb and summary CSVs "
        "(replacing an earlier demo's; other files of those names only with --force). Needs heta-framework: "
        "pip install 'heta-nb[heta]'.",
    )
    demo.add_argument(
        "-o",
        "--output",
        type=text_arg,
        default="demo-output",
        help="folder for the exported files (default: demo-output)",
    )
    demo.add_argument(
        "--store", type=text_arg, default="demo-store", help="report store folder, Heta's layout (default: demo-store)"
    )
    demo.add_argument("-q", "--quiet", action="store_true", help="no progress output")
    demo.add_argument("--force", action="store_true", help="replace output files the demo did not write")
    demo.set_defaults(func=_cmd_demo)


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
        with open_regular_file(path, max_bytes=1 << 62) as handle:  # a FIFO or a device is no demo output
            data = handle.read(16 << 20)
    except OSError:
        return False
    if path.endswith(".csv"):
        return data.startswith(b"query_mode,metric,")
    return markers[Path(path).suffix] in data
