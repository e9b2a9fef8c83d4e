"""The report view's context: the worst cases of each mode, error groups and drill-downs
(within a size budget) around the header and summary; and the report's plain-text summary."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from heta_nb._util.text import clip, clip_label, plural, shorten
from heta_nb.model import EvaluationCaseResult, EvaluationReport
from heta_nb.render.context.case import case_context, score_cell
from heta_nb.render.context.formatting import (
    clean_id_prefix,
    clip_name,
    default_id_prefix,
    format_ms,
    percent,
)
from heta_nb.render.context.header import header_context
from heta_nb.render.context.judges import judge_lines_text, judges_context
from heta_nb.render.context.scan import scan_report, worst_rows
from heta_nb.render.context.summary import headline_text, summary_context
from heta_nb.render.env import format_count
from heta_nb.render.limits import DEFAULT_LIMITS, RenderLimits
from heta_nb.reviews.place import reviews_line

__all__ = ["build_report_context", "report_text"]


def _errors_note(errors: int, groups: int, shown: int) -> str:
    """``12 errors in 3 groups, showing the 2 largest`` (``none`` without errors)."""
    if not errors:
        return "none"
    note = f"{plural(errors, 'error')} in {plural(groups, 'group')}"
    return note + (f", showing the {shown:,} largest" if groups > shown else "")


def _row(
    result: Mapping[str, Any],
    metrics: Sequence[str],
    limits: RenderLimits,
    anchor: str | None,
    not_applicable: Mapping[str, str] | None = None,
) -> dict[str, Any]:
    """One row of a mode's case table: id, query, status, latency and a cell per metric
    ("n/a" for a metric the mode cannot produce, with the stored value on hover)."""
    absent = not_applicable or {}
    scores: dict[str, Mapping[str, Any]] = {}
    for score in result["scores"]:
        scores.setdefault(score["name"], score)
    error = result["error"]
    return {
        "case_id": clip_label(result["case_id"], limits.max_name_chars),
        "query": clip(result["query"], limits.max_cell_chars),
        "ok": error is None,
        "status": "✓ ok" if error is None else "✗ " + shorten(error["error_type"], 40),
        "latency": format_ms(result["latency_ms"]),
        "cells": [
            _not_applicable_cell(score_cell(scores.get(metric), limits), absent[metric])
            if metric in absent and error is None
            else score_cell(scores.get(metric), limits)
            for metric in metrics
        ],
        "anchor": anchor,
    }


def _not_applicable_cell(cell: dict[str, str], reason: str) -> dict[str, str]:
    """A case-table cell of an n/a metric: "n/a", the reason and what Heta stored on hover."""
    return {
        "text": "n/a",
        "cls": "heta-na",
        "title": shorten(f"n/a: {reason}; stored value: {cell['title'] or cell['text']}", 200),
    }


def build_report_context(
    report: EvaluationReport,
    limits: RenderLimits | None = None,
    *,
    id_prefix: str | None = None,
) -> dict[str, Any]:
    """The plain-data context of the report view (pure: same report, same context).

    Args:
        report: the report.
        limits: what to show at most (default :class:`~heta_nb.render.limits.RenderLimits`).
        id_prefix: prefix of the element ids (default: derived from the report id).

    Returns:
        ``id``, ``header``, ``summary``, ``modes`` (one case table each), ``errors`` and
        ``details``; all strings are plain text, numbers are already formatted.
    """
    limits = limits or DEFAULT_LIMITS
    data = report.without_results().raw
    prefix = clean_id_prefix(id_prefix) if id_prefix else default_id_prefix(str(data.get("report_id")))
    scan = scan_report(report, limits)
    columns = scan.columns
    summaries = scan.summaries
    modes_all = scan.modes
    modes = modes_all[: limits.max_modes]
    metrics_all = scan.metrics
    metrics = metrics_all[: limits.max_metrics]
    total_errors = sum(scan.errors.values())
    numeric = {(s.mode, s.metric): s for s in summaries if s.kind != "text"}

    # Worst cases per mode, then the drill-downs: round-robin over the modes.
    chosen: dict[str, list[int]] = {}
    sort_metric: dict[str, str | None] = {}
    for mode in modes:
        metric = next((m for m in metrics_all if (mode, m) in numeric), None)
        sort_metric[mode] = metric
        chosen[mode] = worst_rows(columns, mode, metric, limits.max_cases_per_mode)
    anchors: dict[tuple[str, int], str] = {}
    order: list[tuple[str, int]] = []
    depth = 0
    while len(order) < limits.max_details:
        added = False
        for mode in modes:
            if depth < len(chosen[mode]) and len(order) < limits.max_details:
                order.append((mode, chosen[mode][depth]))
                added = True
        if not added:
            break
        depth += 1
    for number, key in enumerate(order, start=1):
        anchors[key] = f"{prefix}-case-{number}"

    opened: dict[int, dict[str, Any]] = {}

    def case_json(row: int) -> dict[str, Any]:
        found = opened.get(row)
        if found is None:
            found = opened[row] = report.case_result_json(row)
        return found

    tables: list[dict[str, Any]] = []
    present = {(s.mode, s.metric) for s in summaries}
    not_applicable = {(s.mode, s.metric): s.not_applicable for s in summaries if not s.applicable}
    for position, mode in enumerate(modes):
        mode_metrics = [m for m in metrics if (mode, m) in present]
        total = scan.cases.get(mode, 0)
        absent = {metric: why for (m, metric), why in not_applicable.items() if m == mode}
        rows = [_row(case_json(i), mode_metrics, limits, anchors.get((mode, i)), absent) for i in chosen[mode]]
        metric = sort_metric[mode]
        shown = len(rows)
        note = (f"showing {shown:,} of {total:,} cases" if shown < total else f"all {total:,} cases") + (
            f" · worst first by {shorten(metric, 40)} (errors first, skipped last)" if metric else " · errors first"
        )
        tables.append(
            {
                "mode": clip_label(mode, limits.max_name_chars),
                "testid": "heta-cases-" + shorten(mode, limits.max_name_chars),
                "anchor": f"{prefix}-mode-{position + 1}",
                "metrics": [{"name": clip_name(m, limits.max_name_chars)} for m in mode_metrics],
                "rows": rows,
                "shown": shown,
                "total": format_count(total),
                "note": note,
            }
        )

    groups = scan.groups
    error_groups = []
    for group in groups[: limits.max_error_groups]:
        error_groups.append(
            {
                "mode": clip_label(group.mode, limits.max_name_chars),
                "error_type": clip_label(group.error_type, limits.max_name_chars),
                "count": format_count(group.count),
                "share": percent(group.count, scan.cases.get(group.mode, 0)),
                "message": clip(columns.messages[group.first], limits.max_text_chars),
                "case_ids": [clip_label(i, limits.max_name_chars) for i in group.case_ids],
                "ids_more": max(0, group.count - len(group.case_ids)),
            }
        )

    listed = sum(len(rows) for rows in chosen.values())
    counts = {"cases": len(columns.case_ids), "results": columns.n, "errors": total_errors}
    context: dict[str, Any] = {
        "id": prefix,
        "header": {
            **header_context(report.without_results(), modes_all, counts, limits),
            "judges": judges_context(report, limits.max_name_chars),
            "reviews": reviews_line(report),
        },
        "summary": summary_context(report, scan, modes, metrics, limits),
        "modes": tables,
        "errors": {
            "groups": error_groups,
            "total": format_count(total_errors),
            "count": total_errors,
            "groups_total": len(groups),
            "note": _errors_note(total_errors, len(groups), len(error_groups)),
        },
    }

    # Drill-downs, in round-robin order, while the view stays within its size budget.
    budget = limits.max_output_chars - _STATIC_CHARS - sum(_weight(part) for part in context.values())
    details_by_mode: dict[str, list[dict[str, Any]]] = {}
    shown = 0
    for mode, index in order:
        detail = case_context(EvaluationCaseResult.from_raw(case_json(index)), limits, anchor=anchors[(mode, index)])
        budget -= _weight(detail)
        if budget < 0:
            break
        details_by_mode.setdefault(mode, []).append(detail)
        shown += 1
    if shown < len(order):
        kept = {detail["anchor"] for cases in details_by_mode.values() for detail in cases}
        for table in tables:
            for row in table["rows"]:
                if row["anchor"] not in kept:
                    row["anchor"] = None
    if shown < len(order):
        note = (
            f"details of {shown:,} of the {listed:,} listed cases (the worst of each mode; "
            f"more would take this view over about {limits.max_output_chars // 1000:,} KB)"
        )
    elif listed > shown:
        note = f"details of {shown:,} of the {listed:,} listed cases (the worst of each mode)"
    else:
        note = f"details of all {listed:,} listed cases"
    context["details"] = {
        "modes": [
            {"mode": clip_label(mode, limits.max_name_chars), "cases": details_by_mode[mode]}
            for mode in modes
            if mode in details_by_mode
        ],
        "shown": shown,
        "note": note,
    }
    return context


_STATIC_CHARS = 14_000
"""About what the stylesheet and fixed markup of the report view take."""


_ENCODE = json.JSONEncoder(ensure_ascii=False, check_circular=False, separators=(",", ":")).encode


def _weight(value: Any) -> int:
    """Roughly the characters a context becomes in HTML: its JSON size (C speed) with the
    escapes HTML adds, scaled for the markup around each item (calibrated on the fixtures)."""
    text = _ENCODE(value)
    escaped = len(text) + 3 * (text.count("<") + text.count(">") + text.count("&")) + 4 * text.count("'")
    return escaped * 13 // 10


def report_text(context: Mapping[str, Any]) -> str:
    """The concise ``text/plain`` summary of a report, made from its render context.

    Args:
        context: what :func:`build_report_context` returned.

    Returns:
        A few lines: identity, counts, status and the first metrics per mode.
    """
    header = context["header"]
    bench = header["benchmark"]

    lines = [
        f"EvaluationReport {shorten(header['report_id'], 60)}: "
        f"{shorten(bench['name'], 40)} {shorten(bench['version'], 20)}/{shorten(bench['split'], 20)}"
        f" ({shorten(bench['task_type'], 30)})",
        f"KB {shorten(header['knowledge_base_name'], 50)} · {header['cases']} cases · "
        f"{header['results']} results · {header['errors']} errors · {header['duration']}",
    ]
    banner = header["banner"]
    if banner:
        lines.append(f"status: {banner['status']} ({banner['progress']})")
    summary = context["summary"]
    lines.extend(headline_text(line) for line in summary["headline"][:8])  # the headline first
    lines.extend(judge_lines_text(header.get("judges")))
    if header.get("reviews"):
        lines.append(header["reviews"])
    metrics = [shorten(m["name"]["text"] + ("…" if m["name"]["more"] else ""), 22) for m in summary["metrics"][:4]]
    if summary["rows"]:
        width = min(24, max(4, *(len(shorten(r["mode"], 24)) for r in summary["rows"])))
        head = f"{'mode':<{width}}  {'results':>7}  {'errors':>6}" + "".join(
            f"  {m:>{max(len(m), 6)}}" for m in metrics
        )
        lines.append(head)
        for row in summary["rows"][:8]:
            cells = []
            for name, cell in zip(metrics, row["cells"][:4]):
                value = (
                    "—"
                    if cell is None
                    else "text"
                    if cell["text"]
                    else "n/a"
                    if cell["na"]
                    else cell["mean"] + ("*" if cell["best"] else "")
                )
                cells.append(f"  {value:>{max(len(name), 6)}}")
            lines.append(
                f"{shorten(row['mode'], width):<{width}}  {row['cases']:>7}  {row['error_count']:>6}" + "".join(cells)
            )
        extra = []
        if len(summary["rows"]) > 8:
            extra.append(f"+{len(summary['rows']) - 8} modes")
        hidden = len(summary["metrics"]) - len(metrics) + summary["metrics_more"]
        if hidden > 0:
            extra.append(f"+{hidden} metrics")
        if summary["has_best"]:
            extra.append("* best mean")
        extra.append("means of the scored values, skipped scores left out")
        if extra:
            lines.append("(" + "; ".join(extra) + ")")
    return "\n".join(lines)
