"""A :class:`~heta_nb.comparison.Comparison` as plain data: what its templates and exports read."""

from __future__ import annotations

from typing import Any

__all__ = ["plain_data"]


def plain_data(comparison: Any) -> dict[str, Any]:
    """Systems, families, the summary rows, warnings, notes, overlap and settings (dicts, lists,
    str, numbers): :meth:`Comparison.to_context`."""
    return {
        "systems": [
            {
                "name": s.name,
                "report_id": s.report_id,
                "mode": s.mode,
                "knowledge_base_name": s.knowledge_base_name,
                "benchmark": s.benchmark,
                "is_baseline": comparison.is_baseline(s.name),
                "baseline": comparison.baselines.get(s.name),
            }
            for s in comparison.system_info
        ],
        "baseline": comparison.baseline,
        "baselines": dict(comparison.baselines),
        "families": [
            {"system": f.system, "baseline": f.baseline, "size": f.size, "text": f.text}
            for f in comparison._families.values()
        ],
        "family_text": comparison.family_text,
        "metrics": list(comparison.metrics),
        "rows": comparison.summary_rows(),
        "warnings": list(comparison.warnings),
        "notes": list(comparison.notes),
        "overlap": comparison.overlap.to_dict(),
        "settings": {
            "resamples": comparison.resamples,
            "confidence": comparison.confidence,
            "seed": comparison.seed,
            "alpha": comparison.alpha,
            "tie_tolerance": comparison.tie_tolerance,
            "correction": comparison.correction,
            "family_size": comparison.family_size,
            "family": comparison.family_text,
            "include_skipped": comparison.include_skipped,
            "paired_by_mode": comparison.paired_by_mode,
        },
    }
