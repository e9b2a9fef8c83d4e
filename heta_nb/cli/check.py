"""``heta-nb check``: the regression gate for CI (exit 0 pass, 1 a regression or unverified drop, 2 could not check)."""

from __future__ import annotations

import argparse
import os
import sys
import traceback
import warnings
from pathlib import Path
from typing import Any

from heta_nb._util.text import describe_error, one_line
from heta_nb.cli import output
from heta_nb.cli.args import UsageError, seed_arg, split_names, text_arg
from heta_nb.cli.command import Command
from heta_nb.errors import HetaNbError

__all__ = ["register"]

_SUFFIXES = {".md": "markdown", ".markdown": "markdown", ".json": "json", ".xml": "junit", ".txt": "text"}
EPILOG = (
    "NEW and OLD are report.json paths or URLs, or STORE:KB/REPORT_ID (STORE:KB for the newest report of a "
    "knowledge base, STORE:KB~1 for the one before it). Exit codes: 0 nothing regressed, 1 a regression or "
    "an unverified drop, 2 a usage or input error (including a pair that cannot be compared and a metric "
    "whose evaluator failed on most cases). In a GitHub Actions job: "
    'heta-nb check NEW --baseline OLD --format markdown >> "$GITHUB_STEP_SUMMARY"'
)


def register(command: Command) -> None:
    """Add ``check`` to the parser."""
    check = command(
        "check",
        help="gate a report on a baseline: exit 1 when a metric regressed (for CI)",
        description="Compare NEW with a baseline case by case, mode with mode (paired tests, Holm-corrected "
        "over each mode's metrics, as heta-nb compare) and fail on a significant drop larger than --max-drop, "
        "on a larger drop too few cases can test (an unverified drop; --allow-unverified passes it), or on a "
        "mean below a --floor.",
        epilog=EPILOG,
    )
    check.add_argument("new", type=text_arg, metavar="NEW", help="the new report")
    check.add_argument("--baseline", type=text_arg, required=True, metavar="OLD", help="the baseline report")
    check.add_argument(
        "--metric", action="append", default=None, metavar="M", help="a metric to check (repeat, or comma-separate)"
    )
    check.add_argument(
        "--mode",
        action="append",
        default=None,
        metavar="MODE",
        help="a query mode to check (repeat, or comma-separate)",
    )
    check.add_argument(
        "--max-drop",
        action="append",
        default=None,
        metavar="X",
        help="drop tolerated before a significant drop fails: 0.02 absolute or 2%% of the baseline mean; "
        "METRIC=X (or METRIC/MODE=X) for one metric (repeat)",
    )
    check.add_argument(
        "--floor",
        action="append",
        default=None,
        metavar="M=V",
        help="fail when the new mean of metric M is below V: a bare M=V applies to every mode that has M, "
        "M/MODE=V to that mode only (and wins over M=V); a mode whose baseline was below V too and that did "
        "not drop is not failed unless --strict-floors (repeat)",
    )
    check.add_argument(
        "--strict-floors",
        action="store_true",
        help="fail every mode below its floor, even one the baseline left below it too and that did not change",
    )
    check.add_argument(
        "--allow-unverified",
        action="store_true",
        help="pass drops larger than --max-drop that are too small a sample to test (their rows still say so)",
    )
    check.add_argument("--alpha", type=float, default=0.05, help="significance level (default 0.05)")
    check.add_argument(
        "--max-new-errors",
        type=int,
        default=None,
        metavar="N",
        help="fail when more than N cases per mode start erroring",
    )
    check.add_argument(
        "--allow-different-cases",
        action="store_true",
        help="check the cases both reports have when their case sets differ (default: not comparable)",
    )
    check.add_argument("--include-skipped", action="store_true", help="count skipped scores as the 0 Heta recorded")
    check.add_argument("--seed", type=seed_arg, default=0, help="resampling seed, >= 0 (default 0)")
    check.add_argument("--resamples", type=int, default=10_000, help="bootstrap/permutation resamples (default 10000)")
    check.add_argument(
        "--format",
        choices=("text", "markdown", "json", "junit"),
        default=None,
        help="output format (default: from the -o suffix .md/.json/.xml, else text)",
    )
    check.add_argument(
        "--require-calibrated",
        action="store_true",
        help="gate an LLM judge only where people calibrated it: kappa >= 0.6 on >= 50 reviews of NEW "
        "(its reviews folder beside its report.json); an uncalibrated judge is not comparable (exit 2)",
    )
    output.add_cluster_options(check)
    check.add_argument("-o", "--output", type=text_arg, default=None, help="write the output to this file")
    check.add_argument("--force", action="store_true", help="replace the -o file if it exists")
    check.set_defaults(func=_cmd_check)


def _names(values: list[str] | None) -> list[str] | None:
    if not values:
        return None
    return [name for value in values for name in split_names(value) or []] or None


def _assignments(values: list[str] | None, option: str) -> dict[str, str]:
    from heta_nb.gate.thresholds import parse_assignment

    found = {}
    for value in values or []:
        try:
            name, number = parse_assignment(value, option)
        except ValueError as exc:
            raise UsageError(str(exc)) from None
        found[name] = number
    return found


def _max_drop(values: list[str] | None) -> Any:
    plain = [v for v in values or [] if "=" not in v]
    if len(plain) > 1:
        raise UsageError(f"--max-drop: give one default value, got {plain}")
    per_metric: dict[str, Any] = dict(_assignments([v for v in values or [] if "=" in v], "--max-drop"))
    if not per_metric:
        return plain[0] if plain else 0.0
    return {"*": plain[0] if plain else 0.0, **per_metric}


def _format(args: argparse.Namespace) -> str:
    if args.format:
        return str(args.format)
    if args.output:
        return _SUFFIXES.get(Path(args.output).suffix.lower(), "text")
    return "text"


def _cmd_check(args: argparse.Namespace) -> int:
    try:
        return _check(args)
    except (UsageError, KeyboardInterrupt, BrokenPipeError):
        raise
    except Exception as exc:  # exit code 1 means "regressed": every other failure is 2, on one line
        if getattr(args, "debug", False):
            traceback.print_exc()
        print(f"heta-nb: error: {_message(exc)}", file=sys.stderr)
        return 2


def _message(exc: Exception) -> str:
    if isinstance(exc, OSError) and not isinstance(exc, HetaNbError) and exc.strerror and exc.filename is not None:
        return f"{os.fsdecode(exc.filename)}: {exc.strerror}"
    text = str(exc.args[0]) if isinstance(exc, KeyError) and exc.args else describe_error(exc)
    if not isinstance(exc, (HetaNbError, ValueError, KeyError, OSError, ImportError)) or not text:
        text = f"{type(exc).__name__}: {text}" if text else type(exc).__name__
    return one_line(text)


def _check(args: argparse.Namespace) -> int:
    from heta_nb.gate import check

    floors = {name: _float(value, f"--floor {name}") for name, value in _assignments(args.floor, "--floor").items()}
    max_drop = _max_drop(args.max_drop)
    kind = _format(args)
    if args.max_new_errors is not None and args.max_new_errors < 0:
        raise UsageError(f"--max-new-errors must be >= 0, got {args.max_new_errors}")
    if args.output:
        output.check_output(args.output, force=args.force, inputs=[args.new, args.baseline], example="check.md")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        new = output.report(args.new)
        baseline = output.report(args.baseline)
        if args.output:
            output.check_output(
                args.output, force=args.force, inputs=[args.new, args.baseline], reports=[new, baseline]
            )
        metrics, modes = _known(args, new, baseline)
        result = check(
            new,
            baseline,
            metrics=metrics,
            modes=modes,
            max_drop=max_drop,
            floors=floors or None,
            alpha=args.alpha,
            max_new_errors=args.max_new_errors,
            require_same_cases=not args.allow_different_cases,
            allow_unverified=args.allow_unverified,
            strict_floors=args.strict_floors,
            resamples=args.resamples,
            seed=args.seed,
            include_skipped=args.include_skipped,
            calibration=_calibration(args.new, new) if args.require_calibrated else None,
            **output.cluster_args(args),
        )
    for message in dict.fromkeys(str(item.message) for item in caught):
        print(f"heta-nb: warning: {message}", file=sys.stderr)
    result.new["source"], result.baseline["source"] = args.new, args.baseline
    text = result.format(kind)
    if args.output:
        from heta_nb._util.atomic import write_atomically

        with output.writing():
            write_atomically(args.output, text.encode("utf-8"))
        output.note(f"heta-nb check: {result.headline} (wrote {args.output})")
    else:
        output.out(text.rstrip("\n"))
    if result.verdict in ("not comparable", "evaluator errors"):
        print(f"heta-nb: error: {result.headline.removeprefix('ERROR: ')}", file=sys.stderr)
    return result.exit_code


def _known(args: argparse.Namespace, new: Any, baseline: Any) -> tuple[list[str] | None, list[str] | None]:
    """``--metric`` and ``--mode`` if each is in one of the reports; a typo is a usage error naming the closest."""
    try:
        metrics = output.known_names("metric", _names(args.metric), _union(new.metric_names, baseline.metric_names))
        modes = output.known_names("mode", _names(args.mode), _union(new.modes, baseline.modes))
    except ValueError as exc:
        raise UsageError(str(exc).replace("the report has", "the reports have")) from None
    return metrics, modes


def _union(*names: Any) -> list[str]:
    return list(dict.fromkeys(name for group in names for name in group))


def _float(value: str, what: str) -> float:
    try:
        return float(value)
    except ValueError:
        raise UsageError(f"{what}: expected a number, got {value!r}") from None


def _calibration(source: str, report: Any) -> Any:
    """The new report calibrated against its reviews: in its store's report folder (``STORE:KB/ID``), or
    the ``reviews`` folder beside its ``report.json`` (none there: nothing is calibrated)."""
    from heta_nb.reviews import reviews_frame
    from heta_nb.reviews.calibration import calibrate
    from heta_nb.store.locate import split_store_reference

    reference = split_store_reference(source)
    if reference is not None:
        return calibrate(report, reviews_frame(report, store=reference[0]))
    return calibrate(report, reviews_frame(report, path=Path(source).parent / "reviews"))
