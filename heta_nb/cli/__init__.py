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
import os
import sys
import traceback
from collections.abc import Sequence
from typing import Any

from heta_nb._util.text import describe_error
from heta_nb.cli import check, demo, exports, leaderboard, output, reports
from heta_nb.cli.args import UsageError
from heta_nb.errors import HetaNbError, ReportFormatError

__all__ = ["build_parser", "main"]


def build_parser() -> argparse.ArgumentParser:
    """The argument parser with every subcommand."""
    parser = argparse.ArgumentParser(
        prog="heta-nb",
        description="Show, list, compare and export Heta evaluation reports (and run a demo evaluation).",
        epilog="REPORT is a report.json path or URL, or STORE:KB/REPORT_ID (STORE:KB for the newest). "
        "Exit codes: 0 success, 1 the operation failed, 2 bad usage, 130 interrupted.",
    )
    parser.add_argument("--debug", action="store_true", help="show tracebacks on errors")
    parser.add_argument("--version", action="version", version=_version(), help="show the versions and exit")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)

    def command(name: str, **kwargs: Any) -> argparse.ArgumentParser:
        item = sub.add_parser(name, **kwargs)
        # also after the command; SUPPRESS keeps the top-level --debug when it is not given here
        item.add_argument("--debug", action="store_true", default=argparse.SUPPRESS, help="show tracebacks on errors")
        item.set_defaults(parser=item)
        return item

    for module in (exports, reports, demo):
        module.register(command)
    check.register(command)
    leaderboard.register(command)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the CLI and return its exit code (argparse exits with 2 on bad usage)."""
    parser = build_parser()
    _check_command(parser, sys.argv[1:] if argv is None else list(argv))
    args = parser.parse_args(argv)
    try:
        return int(args.func(args))
    except UsageError as exc:
        args.parser.error(str(exc))  # exits with 2, after the command's usage line
        raise  # not reached
    except BrokenPipeError:  # the reader went away (`heta-nb show ... | head`): stop quietly
        output.silence_stdout()
        return 1
    except KeyboardInterrupt:
        print("heta-nb: interrupted", file=sys.stderr)
        return 130
    except Exception as exc:  # anything else is still one line; --debug shows where
        if args.debug:
            traceback.print_exc()
        if isinstance(exc, OSError) and exc.filename == "stdout":
            output.silence_stdout()  # so the interpreter's final flush does not fail again
        if isinstance(exc, ReportFormatError) and len(str(exc).splitlines()) > 1:
            for line in str(exc).splitlines():  # a malformed report: one problem per line, each its path
                print(f"heta-nb: error: {line.strip()}", file=sys.stderr)
        else:
            print(f"heta-nb: error: {_message(exc)}", file=sys.stderr)
        return 1


def _check_command(parser: argparse.ArgumentParser, argv: Sequence[str]) -> None:
    """A misspelt command exits 2 naming the closest one (``did you mean 'check'?``)."""
    import difflib

    word = next((item for item in argv if not item.startswith("-")), None)
    commands = next(
        (list(action.choices) for action in parser._actions if isinstance(action, argparse._SubParsersAction)), []
    )
    if word is None or word in commands:
        return
    close = difflib.get_close_matches(word, commands, n=1, cutoff=0.6)
    if close:
        parser.error(f"unknown command {word!r}; did you mean {close[0]!r}?")


def _version() -> str:
    """``heta-nb 0.2.0 (heta-framework 0.1.2, Python 3.11.7)``: read from metadata, nothing imported."""
    from importlib.metadata import PackageNotFoundError, version

    from heta_nb._version import __version__

    try:
        heta = f"heta-framework {version('heta-framework')}"
    except PackageNotFoundError:
        heta = "heta-framework not installed"
    return f"heta-nb {__version__} ({heta}, Python {sys.version.split()[0]})"


_EXPECTED = (HetaNbError, ValueError, KeyError, OSError, ImportError)


def _message(exc: Exception) -> str:
    """One line: the message of an expected error, else its type and message."""
    message = str(exc.args[0]) if isinstance(exc, KeyError) and exc.args else describe_error(exc)
    if isinstance(exc, OSError) and not isinstance(exc, HetaNbError) and exc.strerror and exc.filename is not None:
        message = f"{os.fsdecode(exc.filename)}: {exc.strerror}"  # not "[Errno 13] Permission denied: 'x'"
    if not isinstance(exc, _EXPECTED) or not message:
        # ArithmeticError (OverflowError from bad report data), RecursionError, RunFailedError, ...
        message = f"{type(exc).__name__}: {message}" if message else type(exc).__name__
    # its lines joined, each kept as it is (one_line would also collapse the spaces inside a line)
    return " ".join(line.strip() for line in message.splitlines() if line.strip()) or type(exc).__name__
