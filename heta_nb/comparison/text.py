"""A comparison as plain text: the verdict lines, what was compared, the family, one row per test."""

from __future__ import annotations

import math
from typing import Any

from heta_nb.comparison.why import why_lines
from heta_nb.stats.format import p_text

__all__ = ["comparison_text"]


def _num(value: float, *, sign: bool = False) -> str:
    if math.isnan(value):
        return "n/a"
    return f"{value:+.3f}" if sign else f"{value:.3f}"


def comparison_text(comparison: Any) -> str:
    """The :class:`~heta_nb.comparison.Comparison`'s ``repr`` (what ``heta-nb compare`` prints):
    verdict lines first, then why it changed (stages, recipe changes, slices that moved), a
    header naming the multiplicity family, a table with the unadjusted and adjusted p-values and
    each test's minimum detectable difference (``mdd``), the families when there are several, warnings and notes."""
    c = comparison
    pct = f"{c.confidence * 100:g}%"
    head = f"Comparison of {c.description()}; {c.family_text}"
    table = [("system", "metric", "n", "base", "mean", "diff", f"{pct} CI", "p", "p_adj", "mdd", "verdict")]
    for row in c.summary_rows():
        table.append(
            (
                row["system"],
                row["metric"],
                str(row["n"]),
                _num(row["baseline_mean"]),
                _num(row["mean"]),
                _num(row["mean_diff"], sign=True),
                f"[{_num(row['ci_low'], sign=True)}, {_num(row['ci_high'], sign=True)}]"
                if math.isfinite(row["ci_low"])
                else "n/a",
                p_text(row["p_value"], c.alpha),
                p_text(row["p_adjusted"], c.alpha),
                _num(row["min_detectable_difference"]),
                row["verdict"],
            )
        )
    widths = [max(len(r[i]) for r in table) for i in range(len(table[0]))]
    right = {2, 3, 4, 5, 7, 8, 9}
    lines = [*c.headline()]
    why = why_lines(c.why())
    if why:
        lines.append("why it changed:")
        lines.extend(f"  {line}" if line.startswith("  ") else f"  - {line}" for line in why)
    lines.append(head)
    for r in table:
        cells = [cell.rjust(w) if i in right else cell.ljust(w) for i, (cell, w) in enumerate(zip(r, widths))]
        lines.append("  ".join(cells).rstrip())
    families = [c.family(system) for system in c.candidates]
    if len(families) > 1:
        lines.append("families (corrected together):")
        lines.extend(f"  - {f.system}: {f.text}" for f in families)
    if c.warnings:
        lines.append(f"{len(c.warnings)} warning(s):")
        lines.extend(f"  - {w}" for w in c.warnings)
    if c.notes:
        lines.append("notes:")
        lines.extend(f"  - {note}" for note in c.notes)
    return "\n".join(lines)
