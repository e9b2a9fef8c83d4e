"""A comparison's verdict first: one line per system against the baseline ("large-chunks vs
small-chunks: 0 better, 1 worse (answer_f1, -0.026 [-0.042, -0.010]), 4 no detectable
difference") and the metrics that differ most (what the plots show)."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

__all__ = ["differing_metrics", "verdict_line", "verdict_lines"]


def _kind(row: Mapping[str, Any]) -> str:
    """``"better"``, ``"worse"``, ``"inconclusive"``, ``"underpowered"``, ``"na"``, ``"none"`` or
    ``"same"`` (no detectable difference) from a summary row's verdict."""
    verdict = str(row["verdict"])
    if verdict.startswith("n/a"):
        return "na"
    if verdict.startswith("not comparable"):
        return "incomparable"
    for word in ("better", "worse", "inconclusive", "underpowered"):
        if verdict.startswith(word):
            return word
    if verdict.startswith("no aligned"):
        return "none"
    return "same"


def _signed(value: float) -> str:
    return f"{value:+.3f}" if math.isfinite(value) else "n/a"


def _detail(row: Mapping[str, Any]) -> str:
    """``answer_f1, -0.026 [-0.042, -0.010]``."""
    ci = (
        f" [{_signed(row['ci_low'])}, {_signed(row['ci_high'])}]"
        if math.isfinite(row["ci_low"]) and math.isfinite(row["ci_high"])
        else ""
    )
    return f"{row['metric']}, {_signed(row['mean_diff'])}{ci}"


def verdict_line(system: str, baseline: str, rows: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """The verdict of one system against the baseline, from its summary rows.

    Returns:
        ``text`` (the plain line), ``tone`` (``"better"``, ``"worse"``, ``"mixed"`` or
        ``""``) and the metric lists ``better``, ``worse``, ``inconclusive``, ``underpowered``,
        ``na`` and the count ``same`` (no detectable difference); the words agree with each row's
        verdict, which is the significance test's (Holm-adjusted when corrected).
    """
    groups: dict[str, list[Mapping[str, Any]]] = {
        "better": [],
        "worse": [],
        "inconclusive": [],
        "underpowered": [],
        "na": [],
        "incomparable": [],
    }
    same = none = 0
    for row in rows:
        kind = _kind(row)
        if kind in groups:
            groups[kind].append(row)
        elif kind == "same":
            same += 1
        else:
            none += 1
    parts = []
    for word in ("better", "worse"):
        found = groups[word]
        details = "; ".join(_detail(r) for r in found[:3]) + ("; …" if len(found) > 3 else "")
        parts.append(f"{len(found)} {word}" + (f" ({details})" if found else ""))
    if groups["inconclusive"]:
        names = ", ".join(str(r["metric"]) for r in groups["inconclusive"][:4])
        parts.append(f"{len(groups['inconclusive'])} inconclusive ({names}: CI excludes 0, not significant)")
    if groups["underpowered"]:
        found = groups["underpowered"]
        names = ", ".join(f"{r['metric']} < {r['min_detectable_difference']:.3g}" for r in found[:4])
        more = ", …" if len(found) > 4 else ""
        parts.append(f"{len(found)} underpowered (cannot tell apart: {names}{more})")
    if same or not groups["underpowered"]:
        parts.append(f"{same} no detectable difference")
    if groups["na"]:
        parts.append(f"{len(groups['na'])} n/a ({', '.join(str(r['metric']) for r in groups['na'][:4])})")
    if groups["incomparable"]:
        named = ", ".join(str(r["metric"]) for r in groups["incomparable"][:4])
        parts.append(f"{len(groups['incomparable'])} not comparable ({named}: judge differs)")
    if none:
        parts.append(f"{none} without aligned cases")
    better, worse = bool(groups["better"]), bool(groups["worse"])
    tone = "mixed" if better and worse else "better" if better else "worse" if worse else ""
    return {
        "system": system,
        "baseline": baseline,
        "text": f"{system} vs {baseline}: " + ", ".join(parts),
        "tone": tone,
        "better": [str(r["metric"]) for r in groups["better"]],
        "worse": [str(r["metric"]) for r in groups["worse"]],
        "inconclusive": [str(r["metric"]) for r in groups["inconclusive"]],
        "underpowered": [str(r["metric"]) for r in groups["underpowered"]],
        "na": [str(r["metric"]) for r in groups["na"]],
        "incomparable": [str(r["metric"]) for r in groups["incomparable"]],
        "same": same,
    }


def verdict_lines(rows: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """:func:`verdict_line` for every system of ``rows`` (a comparison's summary rows), in
    order, each against its own baseline (the rows' ``baseline``)."""
    systems = list(dict.fromkeys(str(r["system"]) for r in rows))
    lines = []
    for name in systems:
        mine = [r for r in rows if r["system"] == name]
        lines.append(verdict_line(name, str(mine[0]["baseline"]), mine))
    return lines


def differing_metrics(rows: Sequence[Mapping[str, Any]], system: str) -> list[str]:
    """The metrics of ``system`` ordered by how clearly they differ from the baseline:
    significant ones first (smallest adjusted p), then inconclusive, then the rest by
    adjusted p; n/a metrics and metrics without aligned cases last."""

    def key(row: Mapping[str, Any]) -> tuple[int, float, float]:
        rank = {"better": 0, "worse": 0, "inconclusive": 1, "underpowered": 2, "same": 2}.get(_kind(row), 3)
        p = row["p_adjusted"]
        return (
            rank,
            p if math.isfinite(p) else 2.0,
            -abs(row["mean_diff"]) if math.isfinite(row["mean_diff"]) else 0.0,
        )

    chosen = [r for r in rows if r["system"] == system]
    return [str(r["metric"]) for r in sorted(chosen, key=key)]
