"""Why it changed, as plain data every view reads: what differs between the recipes, where the
answer was lost (stages), and which slices moved. The text repr, the HTML view, the exports and
``heta-nb check``'s Markdown all read :func:`why_it_changed`, so they say the same thing."""

from __future__ import annotations

from typing import Any

from heta_nb.comparison.recipes import recipe_changes
from heta_nb.comparison.stages import STAGES, stage_counts, stage_lines

__all__ = ["pair_recipe_changes", "why_it_changed", "why_lines"]


def pair_recipe_changes(comparison: Any) -> list[Any]:
    """One :class:`~heta_nb.comparison.recipes.RecipeChanges` per compared report against its
    baseline report (none when the systems are modes of one report)."""
    reports = comparison.reports
    found: dict[tuple[int, int], Any] = {}
    for k, base in comparison.base_of.items():
        mine, theirs = comparison.system_info[k].report_index, comparison.system_info[base].report_index
        if mine == theirs or (theirs, mine) in found or not reports:
            continue
        names = _report_name(comparison, theirs), _report_name(comparison, mine)
        found[(theirs, mine)] = recipe_changes(
            reports[theirs], reports[mine], baseline_name=names[0], candidate_name=names[1]
        )
    return list(found.values())


def _report_name(comparison: Any, index: int) -> str:
    """The name a report goes by in the comparison (its systems' names without the mode)."""
    for system in comparison.system_info:
        if system.report_index == index:
            suffix = "/" + system.mode
            return str(system.name[: -len(suffix)] if system.name.endswith(suffix) else system.report_id)
    return str(index)


def why_it_changed(comparison: Any, *, slices: bool = True, slice_limit: int = 5) -> dict[str, Any]:
    """Plain data: ``recipes`` (per report pair: its change lines and records), ``stages`` (the
    stage lines, the count rows, the metrics read), ``slices`` (the slices that moved, when the
    comparison has a benchmark with labels; else why not)."""
    recipes = [
        {
            "baseline": changes.baseline,
            "candidate": changes.candidate,
            "lines": changes.lines(),
            "not_comparable": list(changes.not_comparable),
        }
        for changes in pair_recipe_changes(comparison)
    ]
    table = comparison.stages()
    counts = stage_counts(table)
    stages = {
        "answer": table.attrs.get("answer"),
        "evidence": table.attrs.get("evidence"),
        "lines": stage_lines(table),
        "columns": list(STAGES),
        "counts": [
            {
                "system": str(row["system"]),
                "mode": str(row["mode"]),
                "direction": str(row["direction"]),
                "total": int(row["total"]),
                "stages": {s: int(row[s]) for s in STAGES},
            }
            for row in counts.to_dict("records")
        ],
    }
    moved: dict[str, Any] = {"lines": [], "rows": [], "why_not": ""}
    benchmark = comparison.benchmark
    has_labels = benchmark is not None and any(getattr(c, "labels", None) for c in getattr(benchmark, "cases", ()))
    if not slices:
        moved["why_not"] = "slices not computed"
    elif not has_labels:
        moved["why_not"] = "slices need the benchmark's case labels: compare(..., benchmark=...)"
    else:
        from heta_nb.comparison.slices import slice_lines

        frame = comparison.slices()
        moved["lines"] = slice_lines(frame, limit=slice_limit)
        moved["rows"] = frame[frame["significant"]].head(slice_limit).to_dict("records")
        moved["correction"] = frame.attrs.get("correction", "")
    return {"recipes": recipes, "stages": stages, "slices": moved}


def why_lines(why: dict[str, Any]) -> list[str]:
    """:func:`why_it_changed` as text lines (the stage line first, as the repr shows it)."""
    lines = [*why["stages"]["lines"]]
    for pair in why["recipes"]:
        lines.append(f"what differs, {pair['candidate']} vs {pair['baseline']}:")
        lines.extend(f"  - {line}" for line in pair["lines"])
    if why["slices"]["lines"]:
        lines.append("slices:")
        lines.extend(f"  - {line}" for line in why["slices"]["lines"])
    return lines
