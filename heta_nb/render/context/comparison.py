"""The render context of a :class:`~heta_nb.comparison.Comparison`: systems, paired
differences with their CIs and p-values, warnings, and the most improved / regressed cases."""

from __future__ import annotations

import hashlib
import math
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any
from urllib.parse import quote

from heta_nb._util.text import shorten
from heta_nb.comparison.headline import verdict_lines
from heta_nb.stats.format import p_text

if TYPE_CHECKING:  # pragma: no cover
    from heta_nb.comparison import Comparison

__all__ = ["comparison_context", "comparison_id"]

QUERY_CHARS = 140
NAME_CHARS = 80
NOTE_CHARS = 400


def _signed(value: float) -> str:
    return "—" if not math.isfinite(value) else f"{value:+.3f}"


def comparison_context(comparison: Comparison, *, extremes: int = 5, explorer_links: bool = False) -> dict[str, Any]:
    """Plain data for ``comparison.html.j2``.

    Args:
        comparison: the comparison.
        extremes: cases listed as most improved / most regressed per system and metric
            (for the first two metrics); 0 lists none.
        explorer_links: link each stage count to the page's explorer, filtered to its cases.

    Returns:
        Systems, one row per (system, metric) with its formatted difference, CI bar and
        p-value, settings, warnings, notes and the extreme cases.
    """
    data = comparison.to_context()
    rows = data["rows"]
    alpha = data["settings"]["alpha"]
    spans = [abs(v) for r in rows for v in (r["ci_low"], r["ci_high"]) if isinstance(v, float) and math.isfinite(v)]
    scale = max(spans) if spans else 1.0
    scale = scale or 1.0
    table = []
    for row in rows:
        lo, hi, diff = row["ci_low"], row["ci_high"], row["mean_diff"]
        finite = all(isinstance(v, float) and math.isfinite(v) for v in (lo, hi, diff))
        verdict = row["verdict"]
        direction = (
            "heta-better"
            if verdict.startswith("better")
            else "heta-worse"
            if verdict.startswith("worse")
            else "heta-muted"
            if verdict.startswith(("n/a", "not comparable", "underpowered"))
            else ""
        )
        table.append(
            {
                **row,
                "system": shorten(row["system"], NAME_CHARS),
                "metric": shorten(row["metric"], NAME_CHARS),
                "diff": _signed(diff),
                "ci": f"[{_signed(lo)}, {_signed(hi)}]" if finite else "—",
                "p": "—" if not math.isfinite(row["p_adjusted"]) else p_text(row["p_adjusted"], alpha),
                "p_raw": "—" if not math.isfinite(row["p_value"]) else p_text(row["p_value"], alpha),
                "mdd": "—"
                if not math.isfinite(row["min_detectable_difference"])
                else f"{row['min_detectable_difference']:.3f}",
                "mcnemar": "" if not math.isfinite(row["mcnemar_p"]) else p_text(row["mcnemar_p"], alpha),
                "direction": direction,
                "bar": {
                    "lo": round(60 + 56 * lo / scale, 2),
                    "hi": round(60 + 56 * hi / scale, 2),
                    "mid": round(60 + 56 * diff / scale, 2),
                    "label": f"difference {_signed(diff)}, CI {_signed(lo)} to {_signed(hi)}",
                }
                if finite
                else None,
            }
        )
    overlap = data["overlap"]
    per_system = {item["name"]: item for item in overlap.get("systems", [])}
    systems = []
    for system in data["systems"]:
        info = per_system.get(system["name"], {})
        clipped = {k: shorten(system[k], NAME_CHARS) for k in ("name", "report_id", "mode", "knowledge_base_name")}
        systems.append({**system, **clipped, "cases": info.get("cases", 0), "errors": info.get("errors", 0)})
    blocks = []
    if extremes:
        for name in comparison.systems:
            if comparison.is_baseline(name):
                continue
            for metric in comparison.differing_metrics(name)[:2]:  # the metrics that differ most
                sides = []
                for title, frame in (
                    ("most improved", comparison.most_improved(metric, n=extremes, system=name)),
                    ("most regressed", comparison.most_regressed(metric, n=extremes, system=name)),
                ):
                    records = frame.to_dict("records")
                    sides.append(
                        {
                            "title": title,
                            "rows": [
                                {
                                    "case_id": shorten(r.get("case_id"), NAME_CHARS),
                                    "query": shorten(r.get("query"), QUERY_CHARS),
                                    "base": r.get(comparison.baseline_of(name)),
                                    "value": r.get(name),
                                }
                                for r in records
                            ],
                        }
                    )
                blocks.append(
                    {
                        "system": shorten(name, NAME_CHARS),
                        "baseline": shorten(comparison.baseline_of(name), NAME_CHARS),
                        "metric": shorten(metric, NAME_CHARS),
                        "sides": sides,
                    }
                )
    settings = data["settings"]
    benchmarks = sorted({shorten(s["benchmark"], NAME_CHARS) for s in data["systems"]})
    aligned = overlap.get("common", 0)
    return {
        "id": _element_id(data["systems"]),
        "headline": [{**line, "text": shorten(line["text"], NOTE_CHARS)} for line in verdict_lines(rows)],
        "systems": systems,
        "baseline": shorten(data["baseline"], NAME_CHARS),
        "benchmarks": benchmarks,
        "aligned": f"{aligned:,}",
        "method": f"{settings['resamples']:,} resamples, seed {settings['seed']}",
        "confidence_pct": f"{100 * settings['confidence']:g} %",
        "correction": data["family_text"],
        "p_header": "p (adj.)" if settings["correction"] == "holm" else "p",
        "include_skipped": settings["include_skipped"],
        "scale": f"{scale:.3f}",
        "rows": table,
        "warnings": [shorten(w, NOTE_CHARS) for w in data["warnings"]],
        "notes": [shorten(n, NOTE_CHARS) for n in data["notes"]],
        "extremes": blocks,
        "why": _why(comparison.why(), explorer_links),
    }


def _stage_link(system: str, stage: str) -> str:
    """``#system=...&label=stage%20%3D%20retrieval``: the page explorer's state for those cases."""
    return "#system=" + quote(system, safe="") + "&label=" + quote(f"stage = {stage}", safe="")


def _why(why: Mapping[str, Any], links: bool = False) -> dict[str, Any]:
    """:func:`heta_nb.comparison.why.why_it_changed`, shortened for the page (the text is escaped
    by the template)."""
    stages = why["stages"]
    return {
        "stage_lines": [shorten(line, NOTE_CHARS) for line in stages["lines"]],
        "stage_columns": stages["columns"],
        "stage_rows": [
            {
                **row,
                "system": shorten(row["system"], NAME_CHARS),
                "cells": [
                    (row["stages"][s], _stage_link(row["system"], s) if links and row["stages"][s] else "")
                    for s in stages["columns"]
                ],
            }
            for row in stages["counts"]
        ],
        "answer": stages["answer"],
        "evidence": stages["evidence"],
        "recipes": [
            {
                "title": shorten(f"{pair['candidate']} vs {pair['baseline']}", NAME_CHARS * 2),
                "lines": [shorten(line, NOTE_CHARS) for line in pair["lines"]],
            }
            for pair in why["recipes"]
        ],
        "slices": [shorten(line, NOTE_CHARS) for line in why["slices"]["lines"]],
        "slices_why_not": why["slices"]["why_not"],
    }


def _element_id(systems: Iterable[Mapping[str, Any]]) -> str:
    key = "|".join(s["name"] + ":" + str(s["report_id"]) for s in systems)
    return "heta-c-" + hashlib.sha1(key.encode("utf-8", "surrogatepass")).hexdigest()[:10]


def comparison_id(comparison: Comparison) -> str:
    """The element id of the comparison view (``heta-c-<10 hex>``): the same systems give the same id.

    Args:
        comparison: the comparison.

    Returns:
        The id :func:`comparison_context` gives, without building the rest of the context.
    """
    return _element_id(comparison.to_context()["systems"])
