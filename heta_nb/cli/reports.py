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

from heta_nb._util.text import compact_duration, one_line, shorten
from heta_nb.cli import output
from heta_nb.cli.args import names_arg, seed_arg, text_arg
from heta_nb.cli.command import Command
from heta_nb.cli.exports import REPORT_HELP

__all__ = ["register", "score_table"]


def register(command: Command) -> None:
    """Add ``compare``, ``list`` and ``show`` to the parser."""
    comparison = command(
        "compare",
        help="compare recipes (or modes) with paired statistics",
        description="Compare reports case by case: each mode against the same mode of the first report,\n"
        "with paired tests (Holm-corrected over the metrics); one report alone compares its modes.",
        epilog="example:\n  heta-nb compare baseline.json candidate.json --metrics ndcg@10,recall@10\n"
        "  heta-nb compare 'demo-store:saltmarsh isles~1' 'demo-store:saltmarsh isles' -o changes.html",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
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
    comparison.add_argument(
        "--across-modes",
        action="store_true",
        help="with several reports, test every report × mode against the first one's first mode "
        "(default: each mode against the same mode of the first report)",
    )
    comparison.add_argument("--metrics", type=names_arg, default=None, help="comma-separated metrics")
    comparison.add_argument("--seed", type=seed_arg, default=0, help="resampling seed, >= 0 (default 0)")
    comparison.add_argument("--force", action="store_true", help="replace the -o file if it exists")
    output.add_cluster_options(comparison)
    comparison.set_defaults(func=_cmd_compare)

    listing = command(
        "list",
        help="list the reports in a store",
        description="List every report in a store (a folder or fsspec URL): its knowledge base, id,\n"
        "benchmark, modes, results, errors, status and start time.",
        epilog="example:\n  heta-nb list demo-store\n  heta-nb list s3://bucket/heta-store",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    listing.add_argument("store", type=text_arg, help="store folder or fsspec URL")
    listing.add_argument("--format", choices=("text", "json"), default="text", help="text (default) or JSON rows")
    listing.set_defaults(func=_cmd_list)

    show = command(
        "show",
        help="print a report's summary in the terminal",
        description="Print a report's summary: each mode's metrics with their intervals, errors and notes.",
        epilog="example:\n  heta-nb show runs/report.json --metrics ndcg@10\n"
        "  heta-nb show 'demo-store:saltmarsh isles/small-chunks'",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    show.add_argument("report", type=text_arg, help=REPORT_HELP)
    show.add_argument("--modes", type=names_arg, default=None, help="comma-separated modes to show (default: all)")
    show.add_argument("--metrics", type=names_arg, default=None, help="comma-separated metrics to show (default: all)")
    show.add_argument("--format", choices=("text", "json"), default="text", help="text (default) or JSON rows")
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
        comparison = compare(
            *reports,
            names=args.names,
            modes=args.modes,
            metrics=args.metrics,
            seed=args.seed,
            across_modes=args.across_modes,
            **output.cluster_args(args),
        )
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
        output.out(_coloured(repr(comparison), comparison))
    return 0


_TONES = {"worse": "\033[31m", "better": "\033[32m", "mixed": "\033[33m"}


def _coloured(text: str, comparison: Any) -> str:
    """``text`` with the verdict lines (its first lines) in red, green or yellow, when stdout is
    a terminal and ``NO_COLOR`` is not set."""
    if os.environ.get("NO_COLOR") or not sys.stdout.isatty():
        return text
    from heta_nb.comparison.headline import verdict_lines

    tones = [line["tone"] for line in verdict_lines(comparison.summary_rows())]
    lines = text.split("\n")
    for i, tone in enumerate(tones[: len(lines)]):
        if tone in _TONES:
            lines[i] = f"{_TONES[tone]}{lines[i]}\033[0m"
    return "\n".join(lines)


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
    columns = ["kb", "report_id", "benchmark", "modes", "cases", "errors", "status", "started_at"]
    if args.format == "json":  # every listed report, as rows (an empty store: [])
        output.out(_json_rows(frame[columns] if not frame.empty else frame))
        return 0
    if frame.empty:
        hint = ""
        if os.path.isfile(os.path.join(args.store, "report.json")):
            hint = f" (it holds a report.json, not a store: heta-nb show {args.store})"
        output.out(f"no reports in {args.store}{hint}")
        return 0
    # a "case" is one benchmark question; each row counts its results (case × mode)
    shown = frame[columns].rename(columns={"cases": "results", "started_at": "started (UTC)"})
    shown["started (UTC)"] = [output.short_time(value, utc=True) for value in shown["started (UTC)"]]
    output.out(shown.to_string(index=False))
    return 0


def _json_rows(frame: Any) -> str:
    """A DataFrame as a JSON list of row objects (NaN as null, text as it is)."""
    import json

    rows = json.loads(frame.to_json(orient="records", date_format="iso", force_ascii=False)) if len(frame) else []
    return json.dumps(rows, ensure_ascii=False, indent=1)


def _cmd_show(args: argparse.Namespace) -> int:
    report = output.report(args.report)
    modes = output.known_names("mode", args.modes, report.modes)
    metrics = output.known_names("metric", args.metrics, report.metric_names)
    frame = report.summary_frame()
    if modes is not None:
        frame = frame[frame.query_mode.isin(modes)]
    if metrics is not None:
        frame = frame[frame.metric.isin(metrics)]
    if args.format == "json":  # the summary rows every view reads (n/a and NaN as null)
        output.out(_json_rows(frame))
        return 0
    with _pandas_options():
        table = score_table(frame).to_string(index=False) if len(frame) else "(no scores)"
    lines = [*_header(report), "", table]
    if len(frame):
        lines += [
            "",
            "mean: of the scored values (skipped scores and errored results left out), as compare tests it; "
            "heta_mean: Heta's score_summary (skipped scores counted as 0); n/a: the mode cannot produce the "
            "metric; errored: every score was an evaluator error",
        ]
    notes = _grouped_notes(list(zip(frame.query_mode, frame.metric, frame.note)))
    if notes:
        lines += ["", "notes:", *(f"  - {note}" for note in notes)]
    warnings_seen = report.metadata.get("heta_nb", {}).get("warnings") if isinstance(report.metadata, Mapping) else None
    if isinstance(warnings_seen, (list, tuple)) and warnings_seen:
        lines += ["", f"run warnings ({len(warnings_seen)}):"]
        lines += [f"  - {shorten(one_line(w), 200)}" for w in dict.fromkeys(map(str, warnings_seen))]
    output.out("\n".join(lines))
    return 0


def score_table(frame: Any) -> Any:
    """The terminal table of a summary frame (the one summary): the mean of the scored
    values with its CI and n, evaluator errors beside it, skipped and errors, and Heta's
    number; the status (``n/a``, ``errored``...) where there is no mean."""
    import math

    import pandas as pd

    def number(value: float) -> str:
        return f"{value:.3f}" if math.isfinite(value) else "n/a"

    scored = (frame["status"] == "scored").to_numpy()
    confidence = frame.attrs.get("confidence", 0.95)
    cis = [
        f"[{lo:.3f}, {hi:.3f}]" if ok and math.isfinite(lo) and math.isfinite(hi) else ""
        for ok, lo, hi in zip(scored, frame["ci_low"], frame["ci_high"])
    ]
    return pd.DataFrame(
        {
            "query_mode": frame["query_mode"].to_numpy(),
            "metric": frame["metric"].to_numpy(),
            "mean": [number(v) if ok else str(status) for ok, v, status in zip(scored, frame["mean"], frame["status"])],
            f"{confidence:.0%} CI": cis,
            "n": [f"{v:,}" if ok else "" for ok, v in zip(scored, frame["n"])],
            "evaluator errors": [f"{v:,}" if v else "" for v in frame["evaluator_errors"]],
            "skipped": frame["skipped"].to_numpy(),
            "errors": frame["errors"].to_numpy(),
            "heta_mean": [number(v) for v in frame["heta_mean"]],
        }
    )


def _header(report: Any) -> list[str]:
    """A few labelled lines: what was evaluated, on what, how many results, when."""
    bench = report.benchmark
    benchmark = f"{bench.name} {bench.version}".strip()
    details = ", ".join(part for part in (f"split {bench.split}" if bench.split else "", bench.task_type) if part)
    counts = report.mode_counts()
    cases = len({r["case_id"] for r in report.raw["case_results"]})
    results = f"{report.case_count:,}"
    if counts and len({c.cases for c in counts.values()}) == 1:
        results += f" ({cases:,} cases × {len(counts)} mode{'s' if len(counts) != 1 else ''})"
    errors = report.error_count
    info = report.metadata.get("heta_nb", {}) if isinstance(report.metadata, Mapping) else {}
    status = info.get("status") if isinstance(info, Mapping) else None
    results += f", {errors:,} error{'s' if errors != 1 else ''}" + (f", {status}" if status else "")
    if errors:
        kinds: dict[str, int] = {}
        for result in report.raw["case_results"]:
            if result["error"] is not None:
                kind = str(result["error"].get("error_type") or "error")
                kinds[kind] = kinds.get(kind, 0) + 1
        results += " (" + ", ".join(f"{k} {n}" for k, n in sorted(kinds.items(), key=lambda kv: -kv[1])[:3]) + ")"
    started = output.short_time(report.started_at)
    duration = report.duration_s
    if duration is not None:
        started += f", took {duration:.1f} s" if duration < 120 else f", took {compact_duration(duration)}"
    rows = [
        ("knowledge base", report.knowledge_base_name),
        ("benchmark", benchmark + (f" ({details})" if details else "")),
        ("modes", ", ".join(report.modes) or "(none)"),
        ("results", results),
        ("started", started),
    ]
    if report.report_key:
        rows.append(("stored as", report.report_key))
    return [f"Evaluation report {report.report_id!r}", *(f"  {label:<16}{one_line(value)}" for label, value in rows)]


def _grouped_notes(rows: list[tuple[str, str, str]]) -> list[str]:
    """Each distinct note once, followed by where it applies (every metric of a mode, ...)."""
    where: dict[str, list[tuple[str, str]]] = {}
    for mode, metric, note in rows:
        if note:
            where.setdefault(str(note), []).append((mode, metric))
    every_mode = list(dict.fromkeys(mode for mode, _, _ in rows))
    every_metric = list(dict.fromkeys(metric for _, metric, _ in rows))
    notes = []
    for note, places in where.items():
        if len(places) == len(rows) and len(rows) > 1:
            notes.append(f"{note} (every metric of every mode)")
            continue
        parts = []
        for mode in every_mode:
            metrics = [metric for m, metric in places if m == mode]
            if metrics:
                parts.append(
                    f"{mode}: {'every metric' if len(metrics) == len(every_metric) > 1 else ', '.join(metrics)}"
                )
        notes.append(f"{note} ({'; '.join(parts)})")
    return notes


def _pandas_options() -> contextlib.AbstractContextManager[Any]:
    import pandas as pd

    return pd.option_context("display.float_format", "{:.4f}".format, "display.width", 160)
