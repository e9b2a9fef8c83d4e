"""Standalone, offline, shareable HTML exports of reports and comparisons.

``to_html(obj, path)`` writes one self-contained file: the static view (readable with
JavaScript off), score-distribution figures as inline SVG images, an explorer of
**every** case (search, filter by mode / status / metric range, sortable columns),
and the manifests and versions needed to trace it. A Content-Security-Policy meta
tag forbids every remote load; the file references nothing outside itself.

Size discipline: texts are truncated and only the top results are kept, so the
file is smaller than the report.json it comes from (the full data stays in the
store). Files are written atomically. Reports, comparisons and leaderboards share one
page builder (:func:`heta_nb.render.standalone.standalone_document`); the views inside
come from :mod:`heta_nb.render`.
"""

from __future__ import annotations

import base64
import functools
import hashlib
import json
import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, overload

from heta_nb._util.atomic import write_atomically, write_target
from heta_nb._version import __version__
from heta_nb.explorer.case_data import CaseDataLimits
from heta_nb.explorer.page import comparison_page_data, page_script, page_styles, report_page_data
from heta_nb.model import EvaluationReport
from heta_nb.model.io import load_report
from heta_nb.model.parse import paused_gc
from heta_nb.render import RenderLimits, render_comparison_html, render_report_html
from heta_nb.render.context import comparison_id
from heta_nb.render.env import title_level
from heta_nb.render.figures import draw_svg, svg_display_width
from heta_nb.render.standalone import Page, standalone_document

if TYPE_CHECKING:  # pragma: no cover
    from heta_nb.comparison import Comparison

__all__ = ["ExportLimits", "export", "to_html"]

MANIFEST_CHARS = 60_000


@dataclass(frozen=True)
class ExportLimits:
    """How much of a report goes into a standalone file (the full data stays in the store)."""

    manifest_chars: int = MANIFEST_CHARS
    """Characters kept of each manifest shown for traceability."""
    figures: int = 3
    """Figures: the mean-per-mode summary, then one distribution per metric."""
    cases_per_mode: int = 25
    """Rows per mode in the static (no-JavaScript) case tables (with JavaScript, the explorer has every case)."""
    details: int = 10
    """Cases with a static drill-down (with JavaScript, every case opens from the embedded data)."""
    case_data: CaseDataLimits = CaseDataLimits()
    """What each case's details panel keeps (every case is embedded)."""
    review_sample: int = 60
    """Case results the page's review mode proposes (:func:`heta_nb.reviews.review_sample`)."""


def _figures(report: EvaluationReport, limits: ExportLimits) -> list[dict[str, str]]:
    """The report's figures as SVG drawn by :mod:`heta_nb.render.svg` (no matplotlib)."""
    from heta_nb.plots.style import mode_colors
    from heta_nb.render.svg import ModeValues, distribution_chart, summary_chart

    summaries = report.metric_summaries()
    numeric = [m.metric for m in summaries if m.kind != "text"]
    metrics = list(dict.fromkeys(numeric))
    modes = list(report.modes)
    colors = mode_colors(modes)
    figures: list[tuple[str, Callable[[], str]]] = []
    if metrics:
        shown = [s for s in summaries if s.metric in metrics[:8]]
        figures.append(
            (
                "mean score per mode with 95 % confidence intervals",
                lambda: summary_chart(shown, modes, colors, 0.95),
            )
        )
    columns = report.columns
    errors = {s.mode: s.errors for s in summaries}
    for metric in metrics[: max(0, limits.figures - 1)]:
        column = columns.metric(metric)
        kind = "number" if any(s.kind == "number" for s in summaries if s.metric == metric) else "bool"
        series = []
        for index, mode in enumerate(modes):
            here = column.numeric & (columns.mode[column.rows] == index)
            kept = here & ~column.skipped
            left_out = int(here.sum() - kept.sum())
            series.append(ModeValues(mode, column.values[kept], left_out, errors.get(mode, 0)))
        figures.append(
            (f"distribution of {metric} per mode", functools.partial(distribution_chart, metric, kind, series, colors))
        )
    return [_svg_entry(caption, draw) for caption, draw in figures]


def _svg_entry(caption: str, draw: Callable[[], str]) -> dict[str, str]:
    """A figure of a standalone page from SVG text (or why it could not be drawn)."""
    try:
        svg = draw()
    except (ValueError, OverflowError, FloatingPointError) as exc:
        lines = str(exc).strip().splitlines()
        problem = f"{type(exc).__name__}: {lines[0]}" if lines else type(exc).__name__
        return {"data_uri": "", "alt": caption, "caption": f"{caption}: not drawn ({problem})"}
    return _data_uri_entry(caption, svg)


def _data_uri_entry(caption: str, svg: str) -> dict[str, str]:
    """A figure as the page shows it: at most its own width, never so narrow its text falls under 10 px."""
    natural, smallest = svg_display_width(svg)
    return {
        "data_uri": "data:image/svg+xml;base64," + base64.b64encode(svg.encode("utf-8")).decode("ascii"),
        "alt": caption,
        "caption": caption,
        "width": f"{natural:.0f}px",
        "min_width": f"{smallest:.0f}px",
    }


def _figure_entry(caption: str, draw: Callable[[], Any]) -> dict[str, str]:
    """A matplotlib figure of a standalone page: its SVG as a data URI, or why it could not be drawn."""
    svg, problem = draw_svg(draw)
    if svg is None:
        return {"data_uri": "", "alt": caption, "caption": f"{caption}: not drawn ({problem})"}
    return _data_uri_entry(caption, svg)


def _manifest_block(title: str, value: Any, limit: int) -> dict[str, Any]:
    text = json.dumps(value, indent=2, ensure_ascii=False, sort_keys=False, default=str)
    return {"title": title, "text": text[:limit], "truncated": len(text) > limit, "size": len(text)}


def _report_document(report: EvaluationReport, limits: ExportLimits, title: str | None, benchmark: Any) -> Page:
    with title_level(2 if title else 1):  # the page's title: <h1>, or <h2> under the caller's heading
        fragment = render_report_html(
            report, RenderLimits(max_cases_per_mode=limits.cases_per_mode, max_details=limits.details)
        )
    info = report.metadata.get("heta_nb")
    writer = f"heta_nb {info.get('version')}" if isinstance(info, Mapping) else "heta-framework"
    facts = [
        ("report id", report.report_id),
        ("report key", report.report_key or "(not stored)"),
        ("schema version", report.schema_version),
        ("benchmark", f"{report.benchmark.key} ({report.benchmark.task_type})"),
        (
            "knowledge base",
            ", ".join(str(m.get("name")) for m in report.knowledge_base_manifests) or report.knowledge_base_name,
        ),
        ("started / finished", f"{report.started_at} / {report.finished_at}"),
        ("written by", writer),
        ("exported by", f"heta_nb {__version__}"),
    ]
    data = report.without_results().raw  # read only: json.dumps of three small parts, no case result opened
    manifests = [
        _manifest_block("Recipe manifest", data["recipe_manifest"], limits.manifest_chars),
        _manifest_block("Knowledge-base manifest", data["knowledge_base_manifest"], limits.manifest_chars),
        _manifest_block("Run metadata", data["metadata"], limits.manifest_chars),
    ]
    explorer = report_page_data(report, limits.case_data, benchmark, review=limits.review_sample)
    return standalone_document(
        title=title or f"heta_nb report {report.report_id} · {report.benchmark.key}",
        heading=title,
        fragment=fragment,
        figures=_figures(report, limits),
        explorer=explorer,
        explorer_rows=explorer["tables"][""]["n"],
        explorer_noun="case results",
        explorer_script=page_script(),
        explorer_styles=page_styles(),
        data_id="heta-explorer-" + hashlib.sha1(report.report_id.encode("utf-8", "surrogatepass")).hexdigest()[:10],
        facts=facts,
        manifests=manifests,
    )


def _comparison_figures(comparison: Comparison, limits: ExportLimits) -> list[dict[str, str]]:
    figures = []
    for name in comparison.candidates:
        base = comparison.baseline_of(name)
        for metric in comparison.differing_metrics(name)[: max(1, limits.figures // 2)]:  # those that differ
            if comparison.verdict(name, metric).startswith("n/a"):
                continue  # not tested: nothing to draw
            figures.append(
                _figure_entry(
                    f"{metric}: {name} against {base}, case by case",
                    functools.partial(comparison.plot_paired, metric, system=name),
                )
            )
            figures.append(
                _figure_entry(
                    f"{metric}: per-case differences {name} − {base}",
                    functools.partial(comparison.plot_deltas, metric, system=name),
                )
            )
    return figures


def _comparison_document(comparison: Comparison, limits: ExportLimits, title: str | None, benchmark: Any) -> Page:
    figures = _comparison_figures(comparison, limits)
    explorer = comparison_page_data(comparison, limits.case_data, benchmark)
    facts = [
        ("systems", ", ".join(comparison.systems)),
        ("baseline", comparison.baseline),
        ("exported by", f"heta_nb {__version__}"),
    ]
    with title_level(2 if title else 1):
        fragment = render_comparison_html(comparison, explorer_links=True)
    return standalone_document(
        title=title or f"heta_nb comparison · {', '.join(comparison.systems)}",
        heading=title,
        fragment=fragment,
        figures=figures,
        explorer=explorer,
        explorer_rows=max((table["n"] for table in explorer["tables"].values()), default=0),
        explorer_noun="aligned cases (Pairs: each system against its baseline; Grid: every system at once)",
        explorer_script=page_script(),
        explorer_styles=page_styles(),
        data_id="heta-explorer-" + comparison_id(comparison),
        facts=facts,
        manifests=[],
    )


@overload
def to_html(
    obj: Any,
    path: None = None,
    *,
    limits: ExportLimits | None = None,
    title: str | None = None,
    benchmark: Any = None,
) -> str: ...


@overload
def to_html(
    obj: Any,
    path: str | os.PathLike[str],
    *,
    limits: ExportLimits | None = None,
    title: str | None = None,
    benchmark: Any = None,
) -> Path: ...


def to_html(
    obj: Any,
    path: str | os.PathLike[str] | None = None,
    *,
    limits: ExportLimits | None = None,
    title: str | None = None,
    benchmark: Any = None,
) -> str | Path:
    """A standalone HTML document for a report or a comparison; written to ``path`` if given.

    Args:
        obj: an :class:`EvaluationReport` (or anything ``load_report`` accepts) or a
            :class:`~heta_nb.comparison.Comparison`.
        path: where to write (atomically; missing folders made, a folder refused); None: only return it.
        limits: how much to include (texts are truncated; the full data stays in the store).
        title: the document title.
        benchmark: the benchmark the report was run on: each case's expected answers and
            evidence, and its retrieved chunks judged from them (report.json keeps no gold
            data; without it, chunks are judged from the evaluators' metadata).

    Returns:
        The path written; without ``path``, the HTML text. (A notebook cell ending in
        ``to_html(report, "report.html")`` shows the path, not tens of MB of text; the
        file is written without the page ever being one text in memory.)
    """
    limits = limits or ExportLimits()
    from heta_nb.comparison import Comparison

    if path is not None:  # a FIFO or a device is refused before the page is rendered (write_atomically refuses it too)
        write_target(path)

    page: Page | str
    with paused_gc():  # every case's details: a million short-lived containers and no cycles
        if isinstance(obj, Comparison):
            page = _comparison_document(obj, limits, title, benchmark)
        elif callable(getattr(obj, "standalone_document", None)):  # a view made above this module (a Leaderboard)
            page = obj.standalone_document(limits, title)
        else:
            page = _report_document(load_report(obj), limits, title, benchmark)
    if path is None:
        return page if isinstance(page, str) else page.text()
    return write_atomically(path, [page.encode("utf-8")] if isinstance(page, str) else page.chunks())


def export(obj: Any, path: str | os.PathLike[str]) -> Path:
    """Write ``obj`` to ``path`` by extension: ``.html`` standalone page or ``.ipynb`` notebook."""
    target = Path(path)
    suffix = target.suffix.lower()
    if suffix in (".html", ".htm"):
        to_html(obj, target)
    elif suffix == ".ipynb":
        from heta_nb.notebook import to_notebook

        to_notebook(obj, target)
    else:
        raise ValueError(f"{target}: unknown export format {suffix or '(none)'!r}; use .html or .ipynb")
    return target
