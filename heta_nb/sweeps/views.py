"""A leaderboard as plain data: its tidy rows, the wide table, the render context and the text table."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

from heta_nb._util.frames import frame as frame_of
from heta_nb._util.frames import with_python_strings_if_refused
from heta_nb.stats.format import p_text
from heta_nb.sweeps.board import Board, Cell, verdict_of

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd

__all__ = ["FRAME_COLUMNS", "board_context", "board_rows", "board_text", "board_why", "system_label", "wide_frame"]

FRAME_COLUMNS = (
    "benchmark",
    "recipe",
    "mode",
    "system",
    "metric",
    "n",
    "mean",
    "ci_low",
    "ci_high",
    "errors",
    "evaluator_errors",
    "status",
    "reason",
    "rank",
    "best",
    "is_baseline",
    "baseline",
    "n_paired",
    "mean_diff",
    "diff_ci_low",
    "diff_ci_high",
    "p_value",
    "p_adjusted",
    "significant",
    "family",
    "verdict",
    "min_detectable_difference",
    "wins",
    "ties",
    "losses",
    "report_id",
)
"""Columns of ``Leaderboard.frame()``: one row per (benchmark, recipe, mode, metric)."""


def system_label(board: Board, recipe: str, mode: str) -> str:
    """``recipe`` alone, or ``recipe · mode`` when the board has several modes."""
    return f"{recipe} · {mode}" if len(board.modes) > 1 else recipe


def _systems(board: Board) -> list[tuple[str, str]]:
    return [(r, m) for r in board.recipes for m in board.modes]


def board_rows(board: Board) -> list[dict[str, Any]]:
    """One dict per cell, keys :data:`FRAME_COLUMNS`, plain Python values (NaN where there is none)."""
    rows = []
    alpha = board.settings["alpha"]
    for b in board.benchmarks:
        for recipe, mode in _systems(board):
            for metric in board.metrics:
                cell = board.cells.get((b, recipe, mode, metric))
                if cell is None:
                    continue
                t = cell.test
                rows.append(
                    {
                        "benchmark": b,
                        "recipe": recipe,
                        "mode": mode,
                        "system": system_label(board, recipe, mode),
                        "metric": metric,
                        "n": cell.n,
                        "mean": cell.mean,
                        "ci_low": cell.ci_low,
                        "ci_high": cell.ci_high,
                        "errors": cell.errors,
                        "evaluator_errors": cell.evaluator_errors,
                        "status": cell.status or "missing",
                        "reason": cell.reason,
                        "rank": cell.rank,
                        "best": cell.best,
                        "is_baseline": cell.is_baseline,
                        "baseline": board.baselines[b],
                        "n_paired": t.n if t else 0,
                        "mean_diff": t.mean_diff if t else math.nan,
                        "diff_ci_low": t.ci_low if t else math.nan,
                        "diff_ci_high": t.ci_high if t else math.nan,
                        "p_value": t.p_value if t else math.nan,
                        "p_adjusted": t.p_value_adjusted if t else math.nan,
                        "significant": cell.significant,
                        "family": cell.family,
                        "verdict": verdict_of(cell, alpha),
                        "min_detectable_difference": cell.min_detectable_difference,
                        "wins": t.wins if t else 0,
                        "ties": t.ties if t else 0,
                        "losses": t.losses if t else 0,
                        "report_id": cell.report_id,
                    }
                )
    return rows


@with_python_strings_if_refused  # (a lone surrogate in a name)
def wide_frame(board: Board) -> pd.DataFrame:
    """Means: one row per system, columns ``(benchmark, metric)``, plus its ``mean rank``."""
    import pandas as pd

    columns = pd.MultiIndex.from_tuples([(b, m) for b in board.benchmarks for m in board.metrics])
    data = []
    index = []
    for recipe, mode in _systems(board):
        values = [board.cells.get((b, recipe, mode, m)) for b in board.benchmarks for m in board.metrics]
        data.append([c.mean if c is not None and c.present else math.nan for c in values])
        index.append(system_label(board, recipe, mode))
    frame = frame_of(data, index=pd.Index(index, name="system"), columns=columns)
    frame[("", "mean rank")] = [_mean_rank(board, r, m) for r, m in _systems(board)]
    return frame


def _mean_rank(board: Board, recipe: str, mode: str) -> float:
    ranks = [
        c.rank
        for b in board.benchmarks
        for m in board.metrics
        if (c := board.cells.get((b, recipe, mode, m))) is not None and c.rank is not None
    ]
    return sum(ranks) / len(ranks) if ranks else math.nan


def _num(value: float, sign: bool = False) -> str:
    if value is None or not math.isfinite(value):
        return "—"
    return f"{value:+.3f}" if sign else f"{value:.3f}"


def _absent(cell: Cell | None) -> str:
    """What an empty cell shows: its status (``n/a``, ``errored``...) or ``—`` without a report."""
    return cell.status if cell is not None and cell.status and cell.status != "scored" else "—"


def _marker(cell: Cell) -> str:
    return {1: "▲", -1: "▼"}.get(cell.direction, "")


def board_text(board: Board, *, max_columns: int = 12) -> str:
    """The leaderboard as a text table: the best of each column starred, ▲/▼ where a difference is real."""
    alpha = board.settings["alpha"]
    head = (
        f"Leaderboard: {len(board.recipes)} recipe(s) × {len(board.benchmarks)} benchmark(s) × "
        f"{len(board.metrics)} metric(s)"
        + (f", mode {board.modes[0]}" if len(board.modes) == 1 else f", {len(board.modes)} modes")
        + f"; baseline {_baselines(board)}; {board.family_text}, alpha {alpha:g}"
    )
    columns = [(b, m) for b in board.benchmarks for m in board.metrics]
    shown = columns[:max_columns]
    header1 = ["", *[b if i == 0 or shown[i - 1][0] != b else "" for i, (b, _) in enumerate(shown)], ""]
    header2 = ["system", *[m for _, m in shown], "mean rank"]
    table = [header1, header2]
    for recipe, mode in _systems(board):
        row = [system_label(board, recipe, mode)]
        for b, m in shown:
            cell = board.cells.get((b, recipe, mode, m))
            if cell is None or not cell.present:
                row.append(_absent(cell) + "   ")
                continue
            text = (
                _num(cell.mean) + ("*" if cell.best else " ") + (_marker(cell) or (" ·" if cell.is_baseline else "  "))
            )
            if cell.evaluator_errors:
                text += f" !{cell.evaluator_errors}"
            row.append(text)
        row.append(_num(_mean_rank(board, recipe, mode)).rstrip("0").rstrip("."))
        table.append(row)
    widths = [max(len(r[i]) for r in table) for i in range(len(header2))]
    lines = [head]
    for r in table:
        lines.append(
            "  ".join(c.ljust(w) if i == 0 else c.rjust(w) for i, (c, w) in enumerate(zip(r, widths))).rstrip()
        )
    if len(shown) < len(columns):
        lines.append(f"(showing {len(shown)} of {len(columns)} columns; frame() has them all)")
    lines.append(
        "* best in its column; ▲/▼ better/worse than the baseline (·) on that benchmark "
        f"(paired test, Holm-adjusted p < {alpha:g}); unmarked: no detectable difference, or underpowered "
        "(frame()'s verdict and min_detectable_difference say which); "
        "n/a: the mode cannot produce the metric (not ranked); !N: N evaluator errors"
    )
    absent = sorted({f"{c.metric} in {c.mode}: {c.status}: {c.reason}" for c in board.cells.values() if c.reason})
    lines.extend(f"  {line}" for line in absent[:8])
    real = [c for c in board.cells.values() if c.significant and c.test is not None]
    for cell in real[:12]:
        t = cell.test
        assert t is not None
        lines.append(
            f"  {system_label(board, cell.recipe, cell.mode)} on {cell.benchmark} {cell.metric}: "
            f"{_num(t.mean_diff, True)} [{_num(t.ci_low, True)}, {_num(t.ci_high, True)}], "
            f"p_adj {p_text(t.p_value_adjusted, alpha)}"
        )
    if len(real) > 12:
        lines.append(f"  and {len(real) - 12} more real difference(s)")
    for why in board_why(board)[:12]:  # the page has them all
        lines.append(f"why: {why['recipe']} vs {why['baseline']} on {why['benchmark']}:")
        lines.extend(f"  - {line}" for line in why["lines"])
    if board.warnings:
        lines.append(f"{len(board.warnings)} warning(s):")
        lines.extend(f"  - {w}" for w in board.warnings)
    lines.extend(f"note: {n}" for n in board.notes)
    return "\n".join(lines)


def _baselines(board: Board) -> str:
    names = list(dict.fromkeys(board.baselines.values()))
    if len(names) == 1:
        return names[0]
    return ", ".join(f"{r} ({b})" for b, r in board.baselines.items())


def board_context(board: Board) -> dict[str, Any]:
    """Everything the HTML view needs, as plain data (rendered by :mod:`heta_nb.render.context.leaderboard`)."""
    alpha = board.settings["alpha"]
    systems = []
    for recipe, mode in _systems(board):
        cells = []
        for b in board.benchmarks:
            for m in board.metrics:
                cell = board.cells.get((b, recipe, mode, m))
                if cell is None:
                    cells.append({"present": False, "benchmark": b, "metric": m})
                    continue
                t = cell.test
                cells.append(
                    {
                        "present": cell.present,
                        "status": cell.status,
                        "reason": cell.reason,
                        "evaluator_errors": cell.evaluator_errors,
                        "family": cell.family,
                        "benchmark": b,
                        "metric": m,
                        "n": cell.n,
                        "mean": cell.mean,
                        "ci_low": cell.ci_low,
                        "ci_high": cell.ci_high,
                        "errors": cell.errors,
                        "rank": cell.rank,
                        "best": cell.best,
                        "is_baseline": cell.is_baseline,
                        "direction": cell.direction,
                        "mean_diff": t.mean_diff if t else None,
                        "diff_ci": (t.ci_low, t.ci_high) if t else None,
                        "p_adjusted": t.p_value_adjusted if t else None,
                        "verdict": verdict_of(cell, alpha),
                        "mdd": cell.min_detectable_difference if t else None,
                    }
                )
        systems.append(
            {
                "name": system_label(board, recipe, mode),
                "recipe": recipe,
                "mode": mode,
                "is_baseline": all(board.baselines[b] == recipe for b in board.benchmarks),
                "mean_rank": _mean_rank(board, recipe, mode),
                "cells": cells,
            }
        )
    return {
        "benchmarks": list(board.benchmarks),
        "metrics": list(board.metrics),
        "modes": list(board.modes),
        "baselines": dict(board.baselines),
        "systems": systems,
        "settings": {**board.settings, "family_size": board.family_size, "family": board.family_text},
        "warnings": list(board.warnings),
        "notes": list(board.notes),
    }


def board_why(board: Board) -> list[dict[str, Any]]:
    """Why each recipe differs from its benchmark's baseline: per (benchmark, recipe), what differs
    between their recipes and where each mode's changed cases were lost or won (the comparisons'
    own :func:`~heta_nb.comparison.why.why_it_changed`, slices left to ``leaderboard.comparison()``)."""
    from heta_nb.comparison.why import why_it_changed

    found: dict[tuple[str, str], dict[str, Any]] = {}
    for (b, r, _mode), comparison in board.comparisons.items():
        why = why_it_changed(comparison, slices=False)
        entry = found.setdefault((b, r), {"benchmark": b, "recipe": r, "baseline": board.baselines[b], "lines": []})
        if not entry["lines"]:  # the same two reports in every mode: their recipes once
            entry["lines"].extend(line for pair in why["recipes"] for line in pair["lines"])
        entry["lines"].extend(why["stages"]["lines"])
    return list(found.values())
