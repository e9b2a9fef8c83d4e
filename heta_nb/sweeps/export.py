"""A leaderboard outside the kernel: a standalone offline HTML page, and notebook sections.

``board`` is a :class:`~heta_nb.sweeps.leaderboard.Leaderboard` (not imported here: it
imports this module for its ``to_html`` and ``sections``).

The page is :mod:`heta_nb.export`'s (CSP-locked, nothing loaded from the network): the
static view, one heatmap per metric as inline SVG, and an explorer of every cell. The
sections are nbformat v4 cells whose stored outputs are what running them produces.
"""

from __future__ import annotations

import base64
import functools
import hashlib
import os
from typing import TYPE_CHECKING, Any

from heta_nb._version import __version__

if TYPE_CHECKING:
    from heta_nb.render.standalone import Page

__all__ = ["board_html", "board_sections", "figure_view"]

FIGURES = 4
"""Heatmaps on a standalone page (one per metric, the first ones)."""


def figure_view(board: Any, metric: str, kind: str = "heatmap") -> Any:
    """A heatmap (or dot plot) of ``metric`` as a notebook figure: SVG plus a one-line caption."""
    from heta_nb.notebook import FigureView
    from heta_nb.render.figures import draw_svg

    caption = f"{metric}: mean per system and benchmark ({kind})"
    svg, problem = draw_svg(lambda: board.plot(metric, kind=kind))
    return FigureView(svg, caption if svg is not None else f"{caption}: not drawn ({problem})")


_CELL_COLUMNS = (
    ("benchmark", "benchmark", False),
    ("system", "system", False),
    ("metric", "metric", False),
    ("n", "n", True),
    ("mean", "mean", True),
    ("ci_low", "ci low", True),
    ("ci_high", "ci high", True),
    ("rank", "rank", True),
    ("mean_diff", "mean diff", True),
    ("p_adjusted", "p adjusted", True),
    ("min_detectable_difference", "detects ≥", True),
    ("verdict", "verdict", False),
)


def _explorer(board: Any) -> dict[str, Any]:
    """Every cell of the board (system × benchmark × metric) as the page's explorer table."""
    from heta_nb.explorer.page import rows_page_data

    rows = [[row[key] for key, _, _ in _CELL_COLUMNS] for row in board.rows()]
    return rows_page_data("Leaderboard cells", "cells", _CELL_COLUMNS, rows, group=0, group_label="benchmark")


def board_html(board: Any, *, title: str | None = None) -> Page:
    """The standalone page of ``board`` (:func:`heta_nb.to_html` writes it)."""
    from heta_nb.explorer.page import page_script, page_styles
    from heta_nb.render import render_leaderboard_html
    from heta_nb.render.env import title_level
    from heta_nb.render.figures import draw_svg
    from heta_nb.render.standalone import standalone_document

    figures = []
    for metric in board.metrics[:FIGURES]:
        caption = f"{metric}: mean per system and benchmark (★ best, ▲▼ real differences from the baseline)"
        svg, problem = draw_svg(functools.partial(board.plot, metric))
        figures.append(
            {
                "data_uri": "data:image/svg+xml;base64," + base64.b64encode(svg.encode("utf-8")).decode("ascii")
                if svg is not None
                else "",
                "alt": caption,
                "caption": caption if svg is not None else f"{caption}: not drawn ({problem})",
                **_sizes(svg),
            }
        )
    key = "|".join([*board.benchmarks, *board.systems, *board.metrics])
    explorer = _explorer(board)
    with title_level(1):  # the page's title (no heading above it)
        fragment = render_leaderboard_html(board)
    page = standalone_document(
        title=title or f"heta_nb leaderboard · {', '.join(board.benchmarks)}",
        fragment=fragment,
        figures=figures,
        explorer=explorer,
        explorer_rows=explorer["tables"][""]["n"],
        explorer_noun="cells (system × benchmark × metric)",
        explorer_script=page_script(),
        explorer_styles=page_styles(),
        data_id="heta-explorer-lb-" + hashlib.sha1(key.encode("utf-8", "surrogatepass")).hexdigest()[:10],
        facts=[
            ("recipes", ", ".join(board.recipes)),
            ("benchmarks", ", ".join(board.benchmarks)),
            ("baselines", ", ".join(f"{b}: {r}" for b, r in board.baselines.items())),
            ("reports", ", ".join(r.report_key or r.report_id for r in board.reports)),
            ("exported by", f"heta_nb {__version__}"),
        ],
        manifests=[],
    )
    return page


def _source_code(board: Any, source: Any) -> str:
    options = {k: v for k, v in board.arguments.items() if v is not None and k not in ("sweep",)}
    for key, default in (("seed", 0), ("alpha", 0.05), ("resamples", 10_000), ("confidence", 0.95)):
        if options.get(key) == default:
            options.pop(key)
    if options.get("include_skipped") is False:
        options.pop("include_skipped")
    call = "".join(f", {k}={v!r}" for k, v in options.items())
    if isinstance(source, (list, tuple)):
        return f"board = heta_nb.Leaderboard.from_reports({[str(s) for s in source]!r}{call})"
    location = source if source is not None else board.store
    if location is None:
        raise ValueError("the board has no store: pass source= (a store, or a list of report files)")
    location = location if isinstance(location, (str, os.PathLike)) else getattr(location, "location", location)
    sweep = board.arguments.get("sweep")
    sweep_arg = f", sweep={sweep!r}" if sweep else ""
    return f"board = heta_nb.Leaderboard.from_store({os.fspath(location)!r}{sweep_arg}{call})"


def board_sections(board: Any, source: Any = None) -> list[Any]:
    """Markdown and code cells presenting ``board``; code cells store the outputs they produce.

    Args:
        board: the leaderboard.
        source: what the cells reload it from (default: its store), or a list of report files.
    """
    import nbformat.v4 as v4

    from heta_nb._util.unicode import valid_text
    from heta_nb.notebook import display_bundle, md_escape, table_view
    from heta_nb.stats.format import p_text

    names = "|".join(["leaderboard", *board.benchmarks, *board.systems])
    key = hashlib.sha1(names.encode("utf-8", "surrogatepass")).hexdigest()[:10]  # (a name may hold a lone surrogate)
    cells: list[Any] = []
    alpha = board.arguments.get("alpha", 0.05)

    def add(cell: Any) -> None:
        cell["id"] = f"heta-{key}-{len(cells):02d}"
        cells.append(cell)

    def code(source_text: str, value: Any) -> None:
        count = sum(1 for c in cells if c.cell_type == "code") + 1
        cell = v4.new_code_cell(valid_text(source_text), execution_count=count)
        cell["outputs"] = [v4.new_output("execute_result", data=display_bundle(value), execution_count=count)]
        add(cell)

    lines = [
        f"## Leaderboard: {len(board.recipes)} recipes × {len(board.benchmarks)} benchmarks",
        "",
        "Baseline "
        + (
            f"**{md_escape(next(iter(board.baselines.values())))}** on every benchmark"
            if len(set(board.baselines.values())) == 1
            else ", ".join(f"**{md_escape(r)}** on {md_escape(b)}" for b, r in board.baselines.items())
        )
        + f". Each recipe is compared with it case by case, mode by mode; {board.family_text} "
        f"(α = {alpha:g}).",
        "",
    ]
    real = [row for row in board.rows() if row["significant"]]
    for row in real[:12]:
        lines.append(
            f"- {md_escape(row['system'])} is {'better' if row['mean_diff'] > 0 else 'worse'} than "
            f"{md_escape(row['baseline'])} on {md_escape(row['benchmark'])} {md_escape(row['metric'])}: "
            f"{row['mean_diff']:+.3f} (95 % CI {row['diff_ci_low']:+.3f} to {row['diff_ci_high']:+.3f}, "
            f"adjusted p={p_text(row['p_adjusted'], alpha)}, n={row['n_paired']})"
        )
    if not real:
        lines.append(f"- No difference from the baseline is detectable at the {alpha:.0%} level after correction.")
    lines.extend(f"- Warning: {md_escape(w)}" for w in board.warnings)
    add(v4.new_markdown_cell("\n".join(lines)))
    code(f"import heta_nb\n\n{_source_code(board, source)}\nboard", board)
    code("heta_nb.notebook.table_view(board.frame(wide=True))", table_view(board.frame(wide=True)))
    if board.metrics:
        first = board.metrics[0]
        add(v4.new_markdown_cell(f"### {md_escape(first)} per system and benchmark"))
        code(f"board.figure({first!r})", figure_view(board, first))
    return cells


def _sizes(svg: str | None) -> dict[str, str]:
    """The figure's own width and the narrowest that keeps its text >= 10 px (the page's CSS reads them)."""
    from heta_nb.render.figures import svg_display_width

    if svg is None:
        return {}
    natural, smallest = svg_display_width(svg)
    return {"width": f"{natural:.0f}px", "min_width": f"{smallest:.0f}px"}
