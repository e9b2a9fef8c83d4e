"""The render context of a leaderboard: systems × (benchmark, metric) cells, best per column, real differences."""

from __future__ import annotations

import hashlib
import math
from collections.abc import Mapping
from typing import Any

from heta_nb._util.text import shorten
from heta_nb.stats.format import p_text

__all__ = ["MAX_COLUMNS", "MAX_ROWS", "leaderboard_context"]

NAME_CHARS = 60
NOTE_CHARS = 400
MAX_COLUMNS = 24
"""Columns (benchmark × metric) shown at most; ``frame()`` has them all."""
MAX_ROWS = 60
"""Systems shown at most."""


def _num(value: Any, sign: bool = False) -> str:
    if not isinstance(value, (int, float)) or isinstance(value, bool) or not math.isfinite(value):
        return "—"
    return f"{value:+.3f}" if sign else f"{value:.3f}"


def _cell(cell: Mapping[str, Any], alpha: float, pct: str) -> dict[str, Any]:
    if not cell.get("present"):
        status = cell.get("status") or ""
        if status and status != "scored":  # n/a, errored...: said, never a number, never ranked
            why = f"{cell['metric']} on {cell['benchmark']}: {status}: {cell.get('reason', '')}"
            return {"present": False, "text": status, "title": shorten(why, NOTE_CHARS), "classes": "heta-lb-empty"}
        return {"present": False, "text": "—", "title": "no report or no score", "classes": "heta-lb-empty"}
    direction = cell["direction"]
    marker = {1: "▲", -1: "▼"}.get(direction, "")
    classes = ["heta-lb-cell"]
    if cell["best"]:
        classes.append("heta-lb-best")
    if direction > 0:
        classes.append("heta-better")
    elif direction < 0:
        classes.append("heta-worse")
    title = [f"{cell['metric']} on {cell['benchmark']}: mean {_num(cell['mean'])} over n={cell['n']:,}"]
    if cell.get("evaluator_errors"):
        title.append(f"{cell['evaluator_errors']:,} evaluator errors (left out)")
    if math.isfinite(cell["ci_low"]) and math.isfinite(cell["ci_high"]):
        title[0] += f", {pct} CI {_num(cell['ci_low'])}–{_num(cell['ci_high'])}"
    if cell["rank"] is not None:
        title.append(f"rank {cell['rank']}")
    if cell["is_baseline"]:
        title.append("the baseline")
    elif cell["mean_diff"] is not None:
        lo, hi = cell["diff_ci"]
        p = cell["p_adjusted"]
        title.append(
            f"vs baseline {_num(cell['mean_diff'], True)} [{_num(lo, True)}, {_num(hi, True)}], "
            f"p adj. {p_text(p, alpha) if isinstance(p, float) and math.isfinite(p) else '—'}: {cell['verdict']}"
        )
        if cell.get("family"):
            title.append(cell["family"])
    ci = (
        f"{_num(cell['ci_low'])}–{_num(cell['ci_high'])}"
        if math.isfinite(cell["ci_low"]) and math.isfinite(cell["ci_high"])
        else ""
    )
    return {
        "present": True,
        "mean": _num(cell["mean"]),
        "ci": ci,
        "marker": marker,
        "best": cell["best"],
        "baseline": cell["is_baseline"],
        "classes": " ".join(classes),
        "title": shorten("; ".join(title), NOTE_CHARS),
        "errors": cell["errors"],
        "evaluator_errors": cell.get("evaluator_errors", 0),
    }


def leaderboard_context(data: Mapping[str, Any]) -> dict[str, Any]:
    """Plain data for ``leaderboard.html.j2`` from ``Leaderboard.to_context()``.

    Args:
        data: the leaderboard as plain data (benchmarks, metrics, systems with their
            cells, baselines, settings, warnings, notes).

    Returns:
        The header groups, the rows (at most :data:`MAX_ROWS`) with their cells (at most
        :data:`MAX_COLUMNS` columns), what was left out, the legend's figures, warnings
        and notes; every text shortened, nothing escaped (the template does that).
    """
    settings = data["settings"]
    alpha = float(settings["alpha"])
    pct = f"{100 * float(settings['confidence']):g} %"
    columns = [(b, m) for b in data["benchmarks"] for m in data["metrics"]]
    shown = columns[:MAX_COLUMNS]
    groups: list[dict[str, Any]] = []
    for b, _ in shown:
        if groups and groups[-1]["raw"] == b:
            groups[-1]["span"] += 1
        else:
            baseline = data["baselines"].get(b, "")
            groups.append(
                {"raw": b, "name": shorten(b, NAME_CHARS), "span": 1, "baseline": shorten(baseline, NAME_CHARS)}
            )
    rows = []
    for system in data["systems"][:MAX_ROWS]:
        cells = [_cell(c, alpha, pct) for c in system["cells"][: len(shown)]]
        rank = system["mean_rank"]
        rows.append(
            {
                "name": shorten(system["name"], NAME_CHARS),
                "is_baseline": system["is_baseline"],
                "baseline_label": "baseline" if len(data["modes"]) <= 1 else "baseline in its mode",
                "mean_rank": f"{rank:.2f}".rstrip("0").rstrip(".")
                if isinstance(rank, float) and math.isfinite(rank)
                else "—",
                "cells": cells,
            }
        )
    real = sum(1 for s in data["systems"] for c in s["cells"] if c.get("present") and c.get("direction"))
    key = "|".join([*data["benchmarks"], *data["metrics"], *(s["name"] for s in data["systems"])])
    family = str(settings.get("family") or f"Holm over {int(settings.get('family_size', 0))} tests")
    return {
        "id": "heta-lb-" + hashlib.sha1(key.encode("utf-8", "surrogatepass")).hexdigest()[:10],
        "title": f"Leaderboard: {len(data['systems'])} system{'s' if len(data['systems']) != 1 else ''} × "
        f"{len(data['benchmarks'])} benchmark{'s' if len(data['benchmarks']) != 1 else ''}",
        "modes": [shorten(m, NAME_CHARS) for m in data["modes"]],
        "groups": groups,
        "metrics": [shorten(m, NAME_CHARS) for _, m in shown],
        "rows": rows,
        "more_columns": len(columns) - len(shown),
        "more_rows": max(0, len(data["systems"]) - MAX_ROWS),
        "real": real,
        "family": family,
        "alpha": f"{alpha:g}",
        "confidence_pct": pct,
        "method": f"{int(settings['resamples']):,} resamples, seed {settings['seed']}",
        "why": [
            {
                "title": shorten(f"{w['recipe']} vs {w['baseline']} on {w['benchmark']}", NAME_CHARS * 2),
                "lines": [shorten(line, NOTE_CHARS) for line in w["lines"]],
            }
            for w in data.get("why", [])[:MAX_ROWS]
        ],
        "warnings": [shorten(w, NOTE_CHARS) for w in data["warnings"]],
        "notes": [shorten(n, NOTE_CHARS) for n in data["notes"]],
    }
