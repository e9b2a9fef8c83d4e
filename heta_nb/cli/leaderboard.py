"""``heta-nb leaderboard STORE``: the leaderboard of a store's reports, in the terminal or as a file."""

from __future__ import annotations

import argparse
import os
import sys
import warnings
from pathlib import Path

from heta_nb.cli import output
from heta_nb.cli.args import UsageError, names_arg, seed_arg, text_arg
from heta_nb.cli.command import Command

__all__ = ["register"]

SUFFIXES = (".html", ".htm", ".ipynb", ".csv")


def register(command: Command) -> None:
    """Add ``leaderboard`` to the parser."""
    board = command(
        "leaderboard",
        help="recipes x benchmarks x metrics of a store's reports, with the real differences from a baseline",
        description="Put every report of a store on one leaderboard: each recipe's mean and CI per benchmark "
        "and metric, and paired tests against a baseline recipe (Holm-adjusted over each pair's metrics).",
    )
    board.add_argument("store", type=text_arg, help="store folder or fsspec URL")
    board.add_argument("--sweep", type=text_arg, default=None, help="only the reports of the sweep with this name")
    board.add_argument("--baseline", type=text_arg, default=None, help="the baseline recipe (default: the first)")
    board.add_argument("--metrics", type=names_arg, default=None, help="comma-separated metrics")
    board.add_argument("--modes", type=names_arg, default=None, help="comma-separated query modes")
    board.add_argument("--seed", type=seed_arg, default=0, help="resampling seed, >= 0 (default 0)")
    board.add_argument(
        "-o", "--output", type=text_arg, default=None, help="write .html, .ipynb or .csv instead of printing"
    )
    board.add_argument("--force", action="store_true", help="replace the -o file if it exists")
    board.set_defaults(func=_cmd_leaderboard)


def _cmd_leaderboard(args: argparse.Namespace) -> int:
    from heta_nb.sweeps import Leaderboard

    if args.output:
        suffix = Path(args.output).suffix.lower()
        if suffix not in SUFFIXES:
            shown = suffix or "(none)"
            raise UsageError(f"{args.output}: unknown output format {shown!r}; use .html, .ipynb or .csv")
        output.check_output(args.output, force=args.force, example="leaderboard.html")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        board = Leaderboard.from_store(
            args.store,
            sweep=args.sweep,
            baseline=args.baseline,
            metrics=args.metrics,
            modes=args.modes,
            seed=args.seed,
        )
    for message in dict.fromkeys(str(w.message) for w in caught):
        print(f"heta-nb: warning: {message}", file=sys.stderr)
    if not args.output:
        output.out(repr(board))
        return 0
    with output.writing():
        suffix = Path(args.output).suffix.lower()
        if suffix == ".csv":
            from heta_nb._util.atomic import write_atomically

            write_atomically(args.output, board.frame().to_csv(index=False).encode("utf-8"))
        elif suffix == ".ipynb":
            _write_notebook(board, args.output, args.store)
        else:
            board.to_html(args.output)
    output.note(f"wrote {args.output}")
    return 0


def _write_notebook(board: object, path: str, store: str) -> None:
    import nbformat
    from nbformat.v4 import new_notebook

    from heta_nb._util.atomic import write_atomically

    location = store if "://" in store else os.path.abspath(store)
    notebook = new_notebook(
        cells=board.sections(source=location),  # type: ignore[attr-defined]
        metadata={
            "kernelspec": {"name": "python3", "display_name": "Python 3 (ipykernel)", "language": "python"},
            "language_info": {"name": "python"},
            "heta_nb": {"generated_by": "heta-nb leaderboard"},
        },
    )
    nbformat.validate(notebook)
    write_atomically(path, (nbformat.writes(notebook) + "\n").encode("utf-8"))
