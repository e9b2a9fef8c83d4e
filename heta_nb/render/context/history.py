"""The render context of a history: reports (time order) × (mode, metric) cells, each change marked."""

from __future__ import annotations

import hashlib
import math
from collections.abc import Mapping
from typing import Any

from heta_nb._util.text import plural, shorten
from heta_nb._util.times import minute_utc
from heta_nb.comparison.history_text import change_marker
from heta_nb.stats.format import p_text

__all__ = ["MAX_COLUMNS", "MAX_ROWS", "history_context"]

NAME_CHARS = 60
NOTE_CHARS = 400
MAX_COLUMNS = 24
"""Columns (mode × metric) shown at most; ``frame()`` has them all."""
MAX_ROWS = 60
"""Reports shown at most (the newest); ``frame()`` has them all."""
MAX_REAL_LINES = 8


def _num(value: Any, sign: bool = False) -> str:
    if not isinstance(value, (int, float)) or isinstance(value, bool) or not math.isfinite(value):
        return "—"
    return f"{value:+.3f}" if sign else f"{value:.3f}"


def _change(row: Mapping[str, Any], alpha: float, pct: str) -> dict[str, Any]:
    """The change line of a cell: the difference and its marker, or the verdict's first words."""
    verdict = str(row["verdict"])
    if math.isfinite(row["change"]):
        p = row["p_adjusted"]
        title = (
            f"change from {row['previous']}: {_num(row['change'], True)} "
            f"[{_num(row['change_ci_low'], True)}, {_num(row['change_ci_high'], True)}] ({pct} CI, "
            f"n={row['change_n']:,} paired), p adj. {p_text(p, alpha) if math.isfinite(p) else '—'}: {verdict}"
        )
        marker = change_marker(row)
        direction = ("heta-better" if row["change"] > 0 else "heta-worse") if marker else ""
        return {
            "text": _num(row["change"], True),
            "marker": marker,
            "classes": direction,
            "title": shorten(title, NOTE_CHARS),
        }
    return {"text": verdict.split(":")[0], "marker": "", "classes": "heta-muted", "title": shorten(verdict, NOTE_CHARS)}


def _cell(row: Mapping[str, Any] | None, alpha: float, pct: str, first: bool) -> dict[str, Any]:
    if row is None:
        return {"present": False, "text": "—", "title": "not in this report", "change": None}
    change = None if first else _change(row, alpha, pct)
    if row["status"] != "scored" or not math.isfinite(row["mean"]):
        why = f"{row['mode']} {row['metric']}: {row['status']}: {row['reason']}"
        return {"present": False, "text": row["status"], "title": shorten(why, NOTE_CHARS), "change": change}
    ci = (
        f"{_num(row['ci_low'])}–{_num(row['ci_high'])}"
        if math.isfinite(row["ci_low"]) and math.isfinite(row["ci_high"])
        else ""
    )
    title = f"{row['mode']} {row['metric']}: mean {_num(row['mean'])} over n={row['n']:,}" + (
        f", {pct} CI {ci}" if ci else ""
    )
    return {"present": True, "mean": _num(row["mean"]), "ci": ci, "title": shorten(title, NOTE_CHARS), "change": change}


def history_context(data: Mapping[str, Any]) -> dict[str, Any]:
    """Plain data for ``history.html.j2`` from ``History.to_context()``.

    Args:
        data: the history as plain data (reports, modes, metrics, rows, settings, warnings).

    Returns:
        The column groups (modes), the metric columns (at most :data:`MAX_COLUMNS`), one row per
        report (the newest :data:`MAX_ROWS`) with its cells, the real changes in words, warnings;
        every text shortened, nothing escaped (the template does that).
    """
    settings = data["settings"]
    alpha = float(settings["alpha"])
    pct = f"{100 * float(settings['confidence']):g} %"
    by_key = {(r["report_id"], r["mode"], r["metric"]): r for r in data["rows"]}
    present = {(r["mode"], r["metric"]) for r in data["rows"]}
    columns = [(mode, metric) for mode in data["modes"] for metric in data["metrics"] if (mode, metric) in present]
    shown = columns[:MAX_COLUMNS]
    groups: list[dict[str, Any]] = []
    for mode, _ in shown:
        if groups and groups[-1]["raw"] == mode:
            groups[-1]["span"] += 1
        else:
            groups.append({"raw": mode, "name": shorten(mode, NAME_CHARS), "span": 1})
    reports = data["reports"]
    rows = []
    for index, report in enumerate(reports):
        if index < len(reports) - MAX_ROWS:
            continue
        report_id = report["report_id"]
        rows.append(
            {
                "when": minute_utc(report["started_at"]) or shorten(report["started_at"], NAME_CHARS),
                "report_id": shorten(report_id, NAME_CHARS),
                "recipe": shorten(report["recipe"], NAME_CHARS) if report["recipe"] != report_id else "",
                "benchmark": shorten(report["benchmark"], NAME_CHARS),
                "first": index == 0,
                "cells": [_cell(by_key.get((report_id, m, k)), alpha, pct, index == 0) for m, k in shown],
            }
        )
    real = [r for r in data["rows"] if r["real"]]
    real_lines = [
        {
            "text": f"{shorten(r['report_id'], NAME_CHARS)} ({minute_utc(r['started_at']) or r['started_at']}): "
            f"{shorten(r['mode'], NAME_CHARS)} {shorten(r['metric'], NAME_CHARS)} {change_marker(r)} "
            f"{_num(r['change'], True)} [{_num(r['change_ci_low'], True)}, {_num(r['change_ci_high'], True)}]",
            "classes": "heta-better" if r["change"] > 0 else "heta-worse",
        }
        for r in real[:MAX_REAL_LINES]
    ]
    if len(real) > MAX_REAL_LINES:
        real_lines.append({"text": f"… and {len(real) - MAX_REAL_LINES} more", "classes": ""})
    times = [minute_utc(r["started_at"]) or r["started_at"] for r in reports]
    key = "|".join([data["knowledge_base"], data["benchmark"], *(r["report_id"] for r in reports)])
    return {
        "id": "heta-hist-" + hashlib.sha1(key.encode("utf-8", "surrogatepass")).hexdigest()[:10],
        "title": f"History of {shorten(data['knowledge_base'], NAME_CHARS)} "
        f"on {shorten(data['benchmark'], NAME_CHARS)}",
        "count": plural(len(reports), "report"),
        "span": times[0] if len(times) == 1 else f"{times[0]} → {times[-1]}",
        "location": shorten(data["location"], NOTE_CHARS),
        "modes": [shorten(m, NAME_CHARS) for m in data["modes"]],
        "groups": groups,
        "metrics": [shorten(k, NAME_CHARS) for _, k in shown],
        "rows": rows,
        "more_columns": len(columns) - len(shown),
        "more_rows": max(0, len(reports) - MAX_ROWS),
        "real_lines": real_lines,
        "real": len(real),
        "single": len(reports) == 1,
        "alpha": f"{alpha:g}",
        "confidence_pct": pct,
        "method": f"{int(settings['resamples']):,} resamples, seed {settings['seed']}",
        "warnings": [shorten(w, NOTE_CHARS) for w in data["warnings"]],
    }
